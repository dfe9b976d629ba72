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

/* Task context: the peer and tag checks of a send, receive or probe on live communicator
 * comm; `wild` allows MPI_ANY_SOURCE and MPI_ANY_TAG (receives and probes). */
MPI_HOT int peer_ok(MPI_Comm comm, int peer, int tag, int wild)
{
    /* Peers of an intercommunicator are ranks of its remote group. */
    int size = comm->remote ? comm->remote->size : comm->size;
    if (peer != MPI_PROC_NULL && !(wild && peer == MPI_ANY_SOURCE) && (peer < 0 || peer >= size))
        return MPI_ERR_RANK;
    if (tag < 0 && !(wild && tag == MPI_ANY_TAG))
        return MPI_ERR_TAG;
    return MPI_SUCCESS;
}

/* Task context: the checks of a probe. */
static int check_peer(MPI_Comm comm, int peer, int tag, int wild)
{
    return comm_valid(comm) ? peer_ok(comm, peer, tag, wild) : MPI_ERR_COMM;
}

/* Task context: every check of a send or receive of `count` elements of dt with `peer`, in
 * MPI's order of error classes (communicator, count, type, rank, tag), and where the data
 * lies (*s). */
MPI_HOT int check_transfer(MPI_Comm comm, int count, MPI_Datatype dt, int peer, int tag, int wild,
                           struct dt_span *s)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    if (count < 0)
        return MPI_ERR_COUNT;
    int rc = dt_span(dt, count, s);
    return rc != MPI_SUCCESS ? rc : peer_ok(comm, peer, tag, wild);
}

/* Task context: start engine send e of `bytes` contiguous bytes at data to `dest`. The
 * source is our rank in our group: on an intercommunicator that is our rank in the
 * receiver's remote group, as the receiver names us. MPI error code. */
MPI_HOT int engine_send(struct mpe_req *e, const void *data, size_t bytes, int dest, int tag,
                        MPI_Comm comm, int ctxoff, int flags)
{
    MPI_Group to = comm->remote ? comm->remote : comm->group;
    return err_engine_class(-mpi_engine->isend(e, data, bytes, to->world[dest], comm->ctx + ctxoff,
                                               comm->rank, tag, flags));
}

/* Task context: set up r as a `kind` request whose arguments passed check_transfer; 1 if
 * it is already complete (MPI_PROC_NULL), 0 if the engine must start it. */
static int begin(MPI_Request r, int kind, int peer, MPI_Comm comm)
{
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
    struct dt_span s;
    int rc = check_transfer(comm, count, dt, dest, tag, 0, &s);
    if (rc != MPI_SUCCESS || begin(r, REQ_SEND, dest, comm))
        return rc;
    const void *data = (const char *)buf + s.lb;
    if (!s.contig) {
        r->tmp = malloc(s.bytes);
        if (!r->tmp)
            return MPI_ERR_NO_MEM;
        dt_pack(buf, count, dt, r->tmp);
        data = r->tmp;
    }
    return engine_send(&r->e, data, s.bytes, dest, tag, comm, ctxoff, flags);
}

/* Task context: start receive r (fresh, or an inactive persistent one). */
MPI_HOT int start_recv(MPI_Request r, void *buf, int count, MPI_Datatype dt, int src, int tag,
                       MPI_Comm comm, int ctxoff)
{
    struct dt_span s;
    int rc = check_transfer(comm, count, dt, src, tag, 1, &s);
    if (rc != MPI_SUCCESS || begin(r, REQ_RECV, src, comm))
        return rc;
    void *data = (char *)buf + s.lb;
    if (!s.contig) {
        r->tmp = malloc(s.bytes);
        if (!r->tmp)
            return MPI_ERR_NO_MEM;
        r->ubuf = buf;
        r->ucount = count;
        r->dt = dt;
        dt_retain(dt); /* until finish() unpacks: the program may free the type first */
        data = r->tmp;
    }
    return err_engine_class(-mpi_engine->irecv(&r->e, data, s.bytes, comm->ctx + ctxoff, src, tag));
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

/* Task context: wait for engine request e (on the caller's stack) and return its MPI error
 * class. The engine writes e until it sets e->done, and never after. */
MPI_HOT int engine_wait(struct mpe_req *e)
{
    struct mpi_wait w = MPI_WAIT_INIT;
    while (!__atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
        mpi_idle(&w);
    return err_engine_class(e->err);
}

/* Task context: MPI_Send and its modes. A contiguous message to a rank waits for its
 * engine request in this frame: the common blocking send makes no request object, nor
 * any call that cannot do its work. The rest goes through one. */
MPI_HOT int send_wait(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      int flags, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    struct dt_span s;
    int rc = check_transfer(comm, count, dt, dest, tag, 0, &s);
    if (rc == MPI_SUCCESS && s.contig && dest != MPI_PROC_NULL) {
        struct mpe_req e;
        rc = engine_send(&e, (const char *)buf + s.lb, s.bytes, dest, tag, comm, 0, flags);
        if (rc == MPI_SUCCESS)
            rc = engine_wait(&e);
    } else if (rc == MPI_SUCCESS) {
        MPI_Request r;
        rc = p2p_isend(buf, count, dt, dest, tag, comm, 0, flags, &r);
        if (rc == MPI_SUCCESS)
            rc = req_wait(&r, MPI_STATUS_IGNORE);
    }
    return err_raise(comm, rc, fn);
}

/* Task context: MPI_Recv's fast case, as send_wait's: a contiguous receive from a rank (or
 * any source) of `s` at buf, the request in this frame. MPI error code, *st filled. */
MPI_HOT int recv_now(void *buf, const struct dt_span *s, int src, int tag, MPI_Comm comm,
                     MPI_Status *st)
{
    struct mpe_req e;
    int rc = err_engine_class(
        -mpi_engine->irecv(&e, (char *)buf + s->lb, s->bytes, comm->ctx, src, tag));
    if (rc != MPI_SUCCESS)
        return rc;
    rc = engine_wait(&e);
    req_recv_status(st, &e, rc);
    return rc;
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
    struct dt_span s;
    int rc = check_transfer(comm, count, dt, src, tag, 1, &s);
    if (rc == MPI_SUCCESS && s.contig && src != MPI_PROC_NULL) {
        rc = recv_now(buf, &s, src, tag, comm, st);
    } else if (rc == MPI_SUCCESS) {
        MPI_Request r;
        rc = p2p_irecv(buf, count, dt, src, tag, comm, 0, &r);
        if (rc == MPI_SUCCESS)
            rc = req_wait(&r, st);
    }
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
    int rc = !comm_valid(comm) ? MPI_ERR_COMM : count < 0 ? MPI_ERR_COUNT : dt_check(dt);
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

/* Task context: 1 (and *st filled) if a message matching (src, tag) is there, else 0. */
static int probe_status(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    struct mpe_status s;
    if (!mpi_engine->iprobe(comm->ctx, src, tag, &s))
        return 0;
    if (st) {
        st->MPI_SOURCE = s.src;
        st->MPI_TAG = s.tag;
        st->MPI_ERROR = MPI_SUCCESS;
        st->mpi_cancelled_ = 0;
        st->mpi_count_ = s.len;
    }
    return 1;
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
    *flag = probe_status(src, tag, comm, st) || (mpi_poll(), probe_status(src, tag, comm, st));
    return MPI_SUCCESS;
}

/* Task context. Waits between looks like a request wait (mpi_idle: spins, then sleeps;
 * every arrival for this rank wakes it). */
int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    if (!mpi_ready("MPI_Probe"))
        return MPI_ERR_OTHER;
    int rc = check_peer(comm, src, tag, 1);
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Probe");
    if (src == MPI_PROC_NULL) {
        p2p_null_status(st);
        return MPI_SUCCESS;
    }
    struct mpi_wait w = MPI_WAIT_INIT;
    while (!probe_status(src, tag, comm, st))
        mpi_idle(&w);
    return MPI_SUCCESS;
}
