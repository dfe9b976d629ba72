/*
 * mprobe.c: matched probe: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv.
 *
 * The engine's interface has no "take this unexpected message" call, and needs none: the
 * probe finds the message (source S, tag T) with mpe_iprobe, and a receive for exactly
 * (S, T) is posted at once into a buffer of the message's length. That receive matches
 * the very message probed: messages from one source are matched in order, so an earlier
 * one from S with tag T would have been found by the probe first; a receive posted
 * before could not have left it unexpected; and only this rank takes messages out of its
 * unexpected queue, so nothing else can between the two calls. From then on no other
 * receive or probe can see it. MPI_Mrecv/MPI_Imrecv complete that receive and unpack
 * its buffer into the program's (req.c's finish does, as for any non-contiguous
 * receive), so a matched message costs one copy more than a plain receive; rendezvous
 * messages move while the program decides where they go.
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* A matched message: the receive that holds it. */
struct mpi_message_s {
    MPI_Request req;
};

/* Task context: the checks of a probe (like p2p.c's for MPI_Probe). */
static int check_probe(int src, int tag, MPI_Comm comm)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    int size = comm->remote ? comm->remote->size : comm->size; /* intercomm: remote ranks */
    if (src != MPI_PROC_NULL && src != MPI_ANY_SOURCE && (src < 0 || src >= size))
        return MPI_ERR_RANK;
    if (tag < 0 && tag != MPI_ANY_TAG)
        return MPI_ERR_TAG;
    return MPI_SUCCESS;
}

/* Task context: one look for a message matching (src, tag) on comm; if there is one,
 * take it out of matching into a new message object (*flag 1, *msg and st set).
 * MPI error code. */
static int look(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *st)
{
    struct mpe_status s;
    *flag = mpi_engine->iprobe(comm->ctx, src, tag, &s);
    if (!*flag)
        return MPI_SUCCESS;
    struct mpi_message_s *m = malloc(sizeof *m);
    MPI_Request r = req_alloc();
    void *tmp = malloc(s.len ? s.len : 1);
    if (!m || !r || !tmp) {
        free(m);
        free(tmp);
        if (r)
            req_discard(r);
        *flag = 0;
        return MPI_ERR_NO_MEM;
    }
    r->kind = REQ_RECV;
    r->comm = comm;
    r->tmp = tmp;
    r->dt = MPI_BYTE; /* until MPI_Imrecv names the program's buffer */
    r->ucount = 0;
    /* Exactly (S, T): see the top of the file for why this is the message probed. */
    int rc = mpi_engine->irecv(&r->e, tmp, s.len, comm->ctx, s.src, s.tag);
    if (rc != 0) {
        free(m);
        req_discard(r);
        *flag = 0;
        return err_engine_class(-rc);
    }
    m->req = r;
    *msg = m;
    if (st) {
        st->MPI_SOURCE = s.src;
        st->MPI_TAG = s.tag;
        st->MPI_ERROR = MPI_SUCCESS;
        st->mpi_cancelled_ = 0;
        st->mpi_count_ = s.len;
    }
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *st)
{
    if (!mpi_ready("MPI_Improbe"))
        return MPI_ERR_OTHER;
    int rc = check_probe(src, tag, comm);
    if (rc == MPI_SUCCESS && (!flag || !msg))
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Improbe");
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        *msg = MPI_MESSAGE_NO_PROC;
        p2p_null_status(st);
        return MPI_SUCCESS;
    }
    rc = look(src, tag, comm, flag, msg, st);
    if (rc == MPI_SUCCESS && !*flag) {
        mpi_poll();
        rc = look(src, tag, comm, flag, msg, st);
    }
    return err_raise(comm, rc, "MPI_Improbe");
}

/* Task context. Waits between looks like MPI_Probe (mpi_idle). */
int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
    if (!mpi_ready("MPI_Mprobe"))
        return MPI_ERR_OTHER;
    int rc = check_probe(src, tag, comm), flag = 0;
    if (rc == MPI_SUCCESS && !msg)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Mprobe");
    if (src == MPI_PROC_NULL) {
        *msg = MPI_MESSAGE_NO_PROC;
        p2p_null_status(st);
        return MPI_SUCCESS;
    }
    struct mpi_wait w = MPI_WAIT_INIT;
    while ((rc = look(src, tag, comm, &flag, msg, st)) == MPI_SUCCESS && !flag)
        mpi_idle(&w);
    return err_raise(comm, rc, "MPI_Mprobe");
}

/* Task context: MPI_Imrecv without raising (MPI error code). *msg becomes
 * MPI_MESSAGE_NULL; the request owns the message's buffer and unpacks it into buf when it
 * completes (a message larger than count elements of dt completes with MPI_ERR_TRUNCATE,
 * req.c). */
static int imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (!msg || *msg == MPI_MESSAGE_NULL || !req)
        return MPI_ERR_REQUEST;
    int rc = count < 0 ? MPI_ERR_COUNT : dt_check(dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*msg == MPI_MESSAGE_NO_PROC) {
        MPI_Request r = req_alloc();
        if (!r)
            return MPI_ERR_NO_MEM;
        r->kind = REQ_NULL_PROC;
        r->comm = MPI_COMM_WORLD;
        r->e.done = 1;
        *req = r;
    } else {
        MPI_Request r = (*msg)->req;
        r->ubuf = buf;
        r->ucount = count;
        r->dt = dt; /* replaces MPI_BYTE, which holds no reference */
        dt_retain(dt);
        free(*msg);
        *req = r;
    }
    *msg = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

/* Task context: the communicator of *msg, for errors (NULL: the world's handler). */
static MPI_Comm msg_comm(const MPI_Message *msg)
{
    if (!msg || *msg == MPI_MESSAGE_NULL || *msg == MPI_MESSAGE_NO_PROC)
        return NULL;
    return (*msg)->req->comm;
}

/* Task context. */
int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
    if (!mpi_ready("MPI_Imrecv"))
        return MPI_ERR_OTHER;
    MPI_Comm comm = msg_comm(msg);
    return err_raise(comm, imrecv(buf, count, dt, msg, req), "MPI_Imrecv");
}

/* Task context. */
int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *st)
{
    if (!mpi_ready("MPI_Mrecv"))
        return MPI_ERR_OTHER;
    MPI_Comm comm = msg_comm(msg);
    MPI_Request r;
    int rc = imrecv(buf, count, dt, msg, &r);
    if (rc == MPI_SUCCESS)
        rc = req_wait(&r, st);
    return err_raise(comm, rc, "MPI_Mrecv");
}
