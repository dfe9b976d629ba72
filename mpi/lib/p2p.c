/*
 * p2p.c: point-to-point communication on top of the node's engine.
 *
 * The engine moves bytes: a contiguous datatype is handed over in place (zero copies
 * besides the engine's one), a non-contiguous one is packed into a temporary buffer first
 * (sends) or received into one and unpacked when the request completes (receives).
 */
#include "mpi_impl.h"
#include <stdlib.h>
#include <string.h>

static int check_comm_dt(MPI_Comm comm, int count, MPI_Datatype dt)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    if (count < 0)
        return MPI_ERR_COUNT;
    return dt_check(dt);
}

/* Task context: the checks every send, receive and probe makes; `wild` allows
 * MPI_ANY_SOURCE and MPI_ANY_TAG (receives and probes). */
static int check_peer(MPI_Comm comm, int peer, int tag, int wild)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    /* Peers of an intercommunicator are ranks of its remote group. */
    int size = comm->remote ? comm->remote->size : comm->size;
    if (peer != MPI_PROC_NULL && !(wild && peer == MPI_ANY_SOURCE) && (peer < 0 || peer >= size))
        return MPI_ERR_RANK;
    if (tag < 0 && !(wild && tag == MPI_ANY_TAG))
        return MPI_ERR_TAG;
    return MPI_SUCCESS;
}

/* Task context: check and set up r as a `kind` request; 1 if it is already complete
 * (MPI_PROC_NULL) or *rc is an error, 0 if the engine must start it. */
static int begin(MPI_Request r, int kind, int count, MPI_Datatype dt, int peer, int tag,
                 MPI_Comm comm, int *rc)
{
    *rc = check_comm_dt(comm, count, dt);
    if (*rc == MPI_SUCCESS)
        *rc = check_peer(comm, peer, tag, kind == REQ_RECV);
    if (*rc != MPI_SUCCESS)
        return 1;
    r->comm = comm;
    r->kind = (uint8_t)kind;
    r->e.done = 0;
    if (peer != MPI_PROC_NULL)
        return 0;
    r->kind = REQ_NULL_PROC;
    r->e.done = 1;
    return 1;
}

/* Task context: start send r (fresh, or an inactive persistent one). */
static int start_send(MPI_Request r, const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                      MPI_Comm comm, int ctxoff, int flags)
{
    int rc;
    if (begin(r, REQ_SEND, count, dt, dest, tag, comm, &rc))
        return rc;
    size_t bytes = (size_t)count * dt_size(dt);
    const void *data = (const char *)buf + dt_lb(dt);
    if (bytes && !dt_contig(dt)) {
        r->tmp = malloc(bytes);
        if (!r->tmp)
            return MPI_ERR_NO_MEM;
        dt_pack(buf, count, dt, r->tmp);
        data = r->tmp;
    }
    /* The source is our rank in our group: on an intercommunicator that is our rank in
     * the receiver's remote group, as the receiver names us. */
    MPI_Group to = comm->remote ? comm->remote : comm->group;
    rc = mpi_engine->isend(&r->e, data, bytes, to->world[dest], comm->ctx + ctxoff, comm->rank, tag,
                           flags);
    return err_engine_class(-rc);
}

/* Task context: start receive r (fresh, or an inactive persistent one). */
static int start_recv(MPI_Request r, void *buf, int count, MPI_Datatype dt, int src, int tag,
                      MPI_Comm comm, int ctxoff)
{
    int rc;
    if (begin(r, REQ_RECV, count, dt, src, tag, comm, &rc))
        return rc;
    size_t bytes = (size_t)count * dt_size(dt);
    void *data = (char *)buf + dt_lb(dt);
    if (bytes && !dt_contig(dt)) {
        r->tmp = malloc(bytes);
        if (!r->tmp)
            return MPI_ERR_NO_MEM;
        r->ubuf = buf;
        r->ucount = count;
        r->dt = dt;
        dt_retain(dt); /* until finish() unpacks: the program may free the type first */
        data = r->tmp;
    }
    rc = mpi_engine->irecv(&r->e, data, bytes, comm->ctx + ctxoff, src, tag);
    return err_engine_class(-rc);
}

/* Task context; see mpi_impl.h. On error nothing is left allocated. */
int p2p_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              int ctxoff, int flags, MPI_Request *req)
{
    MPI_Request r = req_alloc();
    if (!r)
        return MPI_ERR_NO_MEM;
    int rc = start_send(r, buf, count, dt, dest, tag, comm, ctxoff, flags);
    if (rc != MPI_SUCCESS)
        req_discard(r);
    else
        *req = r;
    return rc;
}

int p2p_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, int ctxoff,
              MPI_Request *req)
{
    MPI_Request r = req_alloc();
    if (!r)
        return MPI_ERR_NO_MEM;
    int rc = start_recv(r, buf, count, dt, src, tag, comm, ctxoff);
    if (rc != MPI_SUCCESS)
        req_discard(r);
    else
        *req = r;
    return rc;
}

/* Task context: (re)start persistent request r with its saved arguments. */
int p2p_start(MPI_Request r)
{
    if (r->pkind == REQ_SEND)
        return start_send(r, r->pbuf, r->pcount, r->pdt, r->peer, r->ptag, r->comm, 0, r->pflags);
    return start_recv(r, (void *)r->pbuf, r->pcount, r->pdt, r->peer, r->ptag, r->comm, 0);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    if (!mpi_ready("MPI_Isend"))
        return MPI_ERR_OTHER;
    return err_raise(comm, p2p_isend(buf, count, dt, dest, tag, comm, 0, 0, req), "MPI_Isend");
}

int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    if (!mpi_ready("MPI_Issend"))
        return MPI_ERR_OTHER;
    return err_raise(comm, p2p_isend(buf, count, dt, dest, tag, comm, 0, MPE_SYNC, req),
                     "MPI_Issend");
}

/* Ready mode only promises that the receive is posted; a standard send does the right
 * thing in that case, so it is one. */
int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    if (!mpi_ready("MPI_Irsend"))
        return MPI_ERR_OTHER;
    return err_raise(comm, p2p_isend(buf, count, dt, dest, tag, comm, 0, 0, req), "MPI_Irsend");
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    if (!mpi_ready("MPI_Irecv"))
        return MPI_ERR_OTHER;
    return err_raise(comm, p2p_irecv(buf, count, dt, src, tag, comm, 0, req), "MPI_Irecv");
}

static int send_wait(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                     int flags, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    MPI_Request r;
    int rc = p2p_isend(buf, count, dt, dest, tag, comm, 0, flags, &r);
    if (rc == MPI_SUCCESS)
        rc = req_wait(&r, MPI_STATUS_IGNORE);
    return err_raise(comm, rc, fn);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_wait(buf, count, dt, dest, tag, comm, 0, "MPI_Send");
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_wait(buf, count, dt, dest, tag, comm, MPE_SYNC, "MPI_Ssend");
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_wait(buf, count, dt, dest, tag, comm, 0, "MPI_Rsend");
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    if (!mpi_ready("MPI_Recv"))
        return MPI_ERR_OTHER;
    MPI_Request r;
    int rc = p2p_irecv(buf, count, dt, src, tag, comm, 0, &r);
    if (rc == MPI_SUCCESS)
        rc = req_wait(&r, st);
    return err_raise(comm, rc, "MPI_Recv");
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
    if (!mpi_ready("MPI_Sendrecv"))
        return MPI_ERR_OTHER;
    MPI_Request rr, sr;
    int rc = p2p_irecv(rbuf, rcount, rdt, src, rtag, comm, 0, &rr);
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Sendrecv");
    rc = p2p_isend(sbuf, scount, sdt, dest, stag, comm, 0, 0, &sr);
    int rc2 = rc == MPI_SUCCESS ? req_wait(&sr, MPI_STATUS_IGNORE) : rc;
    rc = req_wait(&rr, st);
    return err_raise(comm, rc2 != MPI_SUCCESS ? rc2 : rc, "MPI_Sendrecv");
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *st)
{
    if (!mpi_ready("MPI_Sendrecv_replace"))
        return MPI_ERR_OTHER;
    int rc = check_comm_dt(comm, count, dt);
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Sendrecv_replace");
    /* Send from a packed copy, receive into the buffer itself. */
    size_t bytes = (size_t)count * dt_size(dt);
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return err_raise(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
    dt_pack(buf, count, dt, copy);
    rc = MPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, stag, buf, count, dt, src, rtag, comm, st);
    free(copy);
    return rc;
}

static int probe_status(int src, int tag, MPI_Comm comm, MPI_Status *st, int *flag)
{
    struct mpe_status s;
    *flag = mpi_engine->iprobe(comm->ctx, src, tag, &s);
    if (*flag && st) {
        st->MPI_SOURCE = s.src;
        st->MPI_TAG = s.tag;
        st->MPI_ERROR = MPI_SUCCESS;
        st->mpi_cancelled_ = 0;
        st->mpi_count_ = s.len;
    }
    return MPI_SUCCESS;
}

void p2p_null_status(MPI_Status *st)
{
    if (st) {
        st->MPI_SOURCE = MPI_PROC_NULL;
        st->MPI_TAG = MPI_ANY_TAG;
        st->MPI_ERROR = MPI_SUCCESS;
        st->mpi_cancelled_ = 0;
        st->mpi_count_ = 0;
    }
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    if (!mpi_ready("MPI_Iprobe"))
        return MPI_ERR_OTHER;
    int rc = check_peer(comm, src, tag, 1);
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Iprobe");
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        p2p_null_status(st);
        return MPI_SUCCESS;
    }
    return probe_status(src, tag, comm, st, flag);
}

/* Task context. Waits between looks like a request wait (mpi_idle: spins, then sleeps;
 * every arrival for this rank wakes it). */
int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    if (!mpi_ready("MPI_Probe"))
        return MPI_ERR_OTHER;
    int rc = check_peer(comm, src, tag, 1), flag = 0;
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Probe");
    if (src == MPI_PROC_NULL) {
        p2p_null_status(st);
        return MPI_SUCCESS;
    }
    uint64_t since = 0;
    while (probe_status(src, tag, comm, st, &flag) == MPI_SUCCESS && !flag)
        mpi_idle(&since);
    return MPI_SUCCESS;
}
