/*
 * req.c: requests: completion (wait and test in all their forms), cancel, free,
 * persistent requests (point-to-point here; collectives in coll_persist.c).
 *
 * Waiting spins briefly, then sleeps (mpi_idle, init.c): a rank that finds nothing
 * complete polls for UKMPI_SPIN_NS (50 us by default), then sleeps in the engine's block()
 * (its CPU halts) until the engine completes one of its requests or a message arrives for
 * it, and looks again. MPI_Test* look, and when nothing is done give the platform its
 * turn (mpi_poll) and look once more.
 */
#include "mpi_impl.h"
#include <stdlib.h>
#include <string.h>

static MPI_Request free_reqs; /* recycled request objects */
static MPI_Request detached;  /* freed by the program while still active */

/* Task context. */
MPI_Request req_alloc(void)
{
    MPI_Request r = free_reqs;
    if (r)
        free_reqs = r->next;
    else
        r = malloc(sizeof *r);
    if (r)
        memset(r, 0, sizeof *r);
    return r;
}

/* Task context: drop what a receive kept until it completes: the buffer it receives a
 * non-contiguous message into, and its reference on the datatype to unpack with (the
 * program may free the type while the receive is pending, MPI-3.1 4.1.9). */
static void drop_unpack(MPI_Request r)
{
    if (!r->tmp && !r->dt)
        return; /* the common case: a contiguous transfer */
    free(r->tmp);
    r->tmp = 0;
    dt_release(r->dt);
    r->dt = 0;
}

/* Task context: back to the free list; a persistent request's datatype reference goes. */
static void req_release(MPI_Request r)
{
    if (r->pdt)
        dt_release(r->pdt);
    r->pdt = 0;
    r->next = free_reqs;
    free_reqs = r;
}

void req_discard(MPI_Request r)
{
    drop_unpack(r);
    req_release(r);
}

/* A collective is asked through coll_poll, which also runs what the rank must run for it
 * (user ops) and, with UKMPI_CAD_PROGRESS=poll, progresses it. */
static int done(MPI_Request r)
{
    if (r->kind == REQ_COLL)
        return coll_poll(r);
    return __atomic_load_n(&r->e.done, __ATOMIC_ACQUIRE) != 0;
}

/* A request completed: unpack, fill the status, and release it (or, for a persistent
 * one, make it inactive). Returns the request's MPI error class. */
static int finish(MPI_Request *rp, MPI_Status *st)
{
    MPI_Request r = *rp;
    int rc = r->kind == REQ_COLL ? coll_finish(r) : err_engine_class(r->e.err);
    if (r->kind == REQ_RECV && r->tmp) {
        /* A matched message (mprobe.c) arrived whole before the program named its buffer,
         * which may be smaller; any other receive was posted with the buffer's size. */
        size_t room = (size_t)r->ucount * dt_size(r->dt);
        if (r->e.count > room) {
            r->e.count = room;
            if (rc == MPI_SUCCESS)
                rc = MPI_ERR_TRUNCATE;
        }
        dt_unpack(r->tmp, r->e.count, r->ubuf, r->ucount, r->dt);
    }
    drop_unpack(r);
    if (r->bsend)
        bsend_release(r->bsend);
    r->bsend = 0;
    if (r->kind == REQ_RECV) {
        req_recv_status(st, &r->e, rc);
    } else if (st) {
        if (r->kind == REQ_NULL_PROC) {
            st->MPI_SOURCE = MPI_PROC_NULL;
            st->MPI_TAG = MPI_ANY_TAG;
            st->mpi_count_ = 0;
        }
        st->mpi_cancelled_ = r->e.cancelled;
        st->MPI_ERROR = rc;
    }
    if (r->persistent) {
        r->active = 0;
    } else {
        req_release(r);
        *rp = MPI_REQUEST_NULL;
    }
    return rc;
}

/* An inactive (or null) request counts as complete with an empty status. */
static int inactive(MPI_Request r)
{
    return !r || (r->persistent && !r->active);
}

static void empty_status(MPI_Status *st)
{
    if (st) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        st->MPI_ERROR = MPI_SUCCESS;
        st->mpi_cancelled_ = 0;
        st->mpi_count_ = 0;
    }
}

/* Reclaim detached requests that have completed since. */
static void reap(void)
{
    MPI_Request *pp = &detached;
    while (*pp) {
        MPI_Request r = *pp;
        if (done(r)) {
            *pp = r->next;
            MPI_Request t = r;
            t->persistent = 0;
            finish(&t, MPI_STATUS_IGNORE);
        } else {
            pp = &r->next;
        }
    }
}

/* Task context; see mpi_impl.h. */
int req_wait(MPI_Request *rp, MPI_Status *st)
{
    if (inactive(*rp)) {
        empty_status(st);
        return MPI_SUCCESS;
    }
    struct mpi_wait w = MPI_WAIT_INIT;
    while (!done(*rp))
        mpi_idle(&w);
    return finish(rp, st);
}

void req_finalize(void)
{
    struct mpi_wait w = MPI_WAIT_INIT;
    while (detached) {
        reap();
        if (detached)
            mpi_idle(&w);
    }
}

static MPI_Comm req_comm(MPI_Request r)
{
    return r ? r->comm : MPI_COMM_WORLD;
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    if (!mpi_ready("MPI_Wait"))
        return MPI_ERR_OTHER;
    MPI_Comm c = req_comm(*req);
    return err_raise(c, req_wait(req, st), "MPI_Wait");
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    if (!mpi_ready("MPI_Test"))
        return MPI_ERR_OTHER;
    MPI_Comm c = req_comm(*req);
    if (inactive(*req)) {
        *flag = 1;
        empty_status(st);
        return MPI_SUCCESS;
    }
    *flag = done(*req) || (mpi_poll(), done(*req));
    return *flag ? err_raise(c, finish(req, st), "MPI_Test") : MPI_SUCCESS;
}

/* Multiple completion: errors go to each status and the call returns MPI_ERR_IN_STATUS. */
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    if (!mpi_ready("MPI_Waitall"))
        return MPI_ERR_OTHER;
    int err = 0;
    MPI_Comm c = MPI_COMM_WORLD;
    for (int i = 0; i < n; i++) {
        if (reqs[i])
            c = reqs[i]->comm;
        MPI_Status tmp, *st = sts ? &sts[i] : &tmp;
        if (req_wait(&reqs[i], st) != MPI_SUCCESS)
            err = 1;
    }
    return err ? err_raise(c, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}

static int all_done(int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++)
        if (!inactive(reqs[i]) && !done(reqs[i]))
            return 0;
    return 1;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    if (!mpi_ready("MPI_Testall"))
        return MPI_ERR_OTHER;
    *flag = all_done(n, reqs) || (mpi_poll(), all_done(n, reqs));
    return *flag ? MPI_Waitall(n, reqs, sts) : MPI_SUCCESS;
}

/* Index of a completed active request, MPI_UNDEFINED if none is active, or -1. */
static int find_done(int n, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < n; i++) {
        if (inactive(reqs[i]))
            continue;
        active = 1;
        if (done(reqs[i]))
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st)
{
    if (!mpi_ready("MPI_Waitany"))
        return MPI_ERR_OTHER;
    int i;
    struct mpi_wait w = MPI_WAIT_INIT;
    while ((i = find_done(n, reqs)) == -1)
        mpi_idle(&w);
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(st);
        return MPI_SUCCESS;
    }
    MPI_Comm c = reqs[i]->comm;
    return err_raise(c, finish(&reqs[i], st), "MPI_Waitany");
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st)
{
    if (!mpi_ready("MPI_Testany"))
        return MPI_ERR_OTHER;
    int i = find_done(n, reqs);
    if (i == -1) {
        mpi_poll();
        i = find_done(n, reqs);
    }
    *flag = i != -1;
    *index = i == -1 ? MPI_UNDEFINED : i;
    if (i < 0) {
        if (i == MPI_UNDEFINED)
            empty_status(st);
        return MPI_SUCCESS;
    }
    MPI_Comm c = reqs[i]->comm;
    return err_raise(c, finish(&reqs[i], st), "MPI_Testany");
}

/* Completes every request that is done now; *outcount 0 if none, MPI_UNDEFINED if no
 * request is active. */
static int some(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    int k = 0, active = 0, err = 0;
    MPI_Comm c = MPI_COMM_WORLD;
    for (int i = 0; i < n; i++) {
        if (inactive(reqs[i]))
            continue;
        active = 1;
        if (!done(reqs[i]))
            continue;
        c = reqs[i]->comm;
        MPI_Status tmp, *st = sts ? &sts[k] : &tmp;
        if (finish(&reqs[i], st) != MPI_SUCCESS)
            err = 1;
        idx[k++] = i;
    }
    *outcount = active ? k : MPI_UNDEFINED;
    return err ? err_raise(c, MPI_ERR_IN_STATUS, "MPI_Waitsome") : MPI_SUCCESS;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!mpi_ready("MPI_Waitsome"))
        return MPI_ERR_OTHER;
    int i;
    struct mpi_wait w = MPI_WAIT_INIT;
    while ((i = find_done(n, reqs)) == -1)
        mpi_idle(&w);
    return some(n, reqs, outcount, idx, sts);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[])
{
    if (!mpi_ready("MPI_Testsome"))
        return MPI_ERR_OTHER;
    int rc = some(n, reqs, outcount, idx, sts);
    if (rc != MPI_SUCCESS || *outcount)
        return rc;
    mpi_poll();
    return some(n, reqs, outcount, idx, sts);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    if (inactive(req)) {
        *flag = 1;
        empty_status(st);
        return MPI_SUCCESS;
    }
    *flag = done(req) || (mpi_poll(), done(req));
    if (*flag && st) {
        st->MPI_SOURCE = req->kind == REQ_RECV ? req->e.src : MPI_ANY_SOURCE;
        st->MPI_TAG = req->kind == REQ_RECV ? req->e.tag : MPI_ANY_TAG;
        st->MPI_ERROR = err_engine_class(req->e.err);
        st->mpi_cancelled_ = req->e.cancelled;
        st->mpi_count_ = req->kind == REQ_RECV ? req->e.count : 0;
    }
    return MPI_SUCCESS;
}

/* Receives still posted are cancelled; sends are not (MPI lets cancel fail, and a send
 * already on its way to another node cannot be taken back): the send completes normally
 * and MPI_Test_cancelled reports false. */
int MPI_Cancel(MPI_Request *req)
{
    if (!mpi_ready("MPI_Cancel"))
        return MPI_ERR_OTHER;
    MPI_Request r = *req;
    if (!r)
        return err_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel");
    if (r->kind == REQ_COLL) /* MPI: erroneous on a non-blocking collective's request */
        return err_raise(r->comm, MPI_ERR_REQUEST, "MPI_Cancel");
    if (r->kind == REQ_RECV && !done(r))
        mpi_engine->cancel(&r->e);
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *req)
{
    if (!mpi_ready("MPI_Request_free"))
        return MPI_ERR_OTHER;
    MPI_Request r = *req;
    if (!r)
        return err_raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free");
    *req = MPI_REQUEST_NULL;
    if (inactive(r) && r->kind == REQ_COLL) { /* persistent: nothing to unpack */
        coll_discard(r);
        req_release(r);
    } else if (inactive(r) || done(r)) {
        r->persistent = 0;
        finish(&r, MPI_STATUS_IGNORE);
    } else {
        r->next = detached; /* the engine still writes it: keep it until it is done */
        detached = r;
    }
    reap();
    return MPI_SUCCESS;
}

/* Persistent requests: the arguments are kept and each MPI_Start issues them again. */
static int persist(const void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                   int kind, int flags, MPI_Request *req, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, fn);
    MPI_Request r = req_alloc();
    if (!r)
        return err_raise(comm, MPI_ERR_NO_MEM, fn);
    r->persistent = 1;
    r->kind = r->pkind = kind;
    r->comm = comm;
    r->pbuf = buf;
    r->pcount = count;
    r->pdt = dt;
    dt_retain(dt); /* each MPI_Start uses it, even after the program frees it */
    r->peer = peer;
    r->ptag = tag;
    r->pflags = flags;
    *req = r;
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    return persist(buf, count, dt, dest, tag, comm, REQ_SEND, 0, req, "MPI_Send_init");
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return persist(buf, count, dt, dest, tag, comm, REQ_SEND, MPE_SYNC, req, "MPI_Ssend_init");
}

/* Ready mode promises a posted receive; a standard send is right then (as MPI_Rsend). */
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return persist(buf, count, dt, dest, tag, comm, REQ_SEND, 0, req, "MPI_Rsend_init");
}

/* Each MPI_Start is an MPI_Bsend (bsend_start): the request completes once the data is
 * in the attached buffer. */
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    int rc = persist(buf, count, dt, dest, tag, comm, REQ_SEND, 0, req, "MPI_Bsend_init");
    if (rc == MPI_SUCCESS)
        (*req)->pbuffered = 1;
    return rc;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    return persist(buf, count, dt, src, tag, comm, REQ_RECV, 0, req, "MPI_Recv_init");
}

int MPI_Start(MPI_Request *req)
{
    if (!mpi_ready("MPI_Start"))
        return MPI_ERR_OTHER;
    MPI_Request p = *req;
    if (!p || !p->persistent || p->active)
        return err_raise(p ? p->comm : 0, MPI_ERR_REQUEST, "MPI_Start");
    int rc = p->pbuffered ? bsend_start(p) : p->kind == REQ_COLL ? coll_start(p) : p2p_start(p);
    if (rc != MPI_SUCCESS)
        return err_raise(p->comm, rc, "MPI_Start");
    p->active = 1;
    return MPI_SUCCESS;
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++) {
        int rc = MPI_Start(&reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
