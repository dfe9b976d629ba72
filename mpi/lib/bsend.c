/*
 * bsend.c: buffered sends (MPI_Buffer_attach/detach, MPI_Bsend, MPI_Ibsend, and the starts
 * of MPI_Bsend_init requests).
 *
 * The message is packed into the attached buffer and sent from there with a standard
 * send; the block is released when that send completes. Blocks are carved first-fit from
 * the buffer, each costing MPI_BSEND_OVERHEAD bytes of bookkeeping, kept in address order.
 * Completed sends are reaped lazily: before every allocation and in detach, which waits
 * for all of them (as MPI requires).
 */
#include "mpi_impl.h"
#include <stdint.h>
#include <stdlib.h>

struct bblock {
    struct bblock *next; /* in address order */
    size_t size;         /* bytes of the block, header included */
    MPI_Request req;     /* the send, while it runs (ours, not the program's) */
    int program_owns;    /* MPI_Ibsend: the program waits on req; we only watch `done` */
};

static char *buf_base;
static size_t buf_size;
static struct bblock *blocks;

int MPI_Buffer_attach(void *buffer, int size)
{
    if (buf_base || size < 0)
        return err_raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach");
    buf_base = buffer;
    buf_size = (size_t)size;
    return MPI_SUCCESS;
}

/* Task context: free the blocks whose send has completed; with `wait`, wait for all
 * (an MPI_Ibsend's request is the program's: its MPI_Wait releases the block). */
static void reap(int wait)
{
    struct bblock **pp = &blocks;
    while (*pp) {
        struct bblock *b = *pp;
        if (b->req && !b->program_owns &&
            (wait || __atomic_load_n(&b->req->e.done, __ATOMIC_ACQUIRE)))
            req_wait(&b->req, MPI_STATUS_IGNORE); /* finish() calls bsend_release(b) */
        struct mpi_wait w = MPI_WAIT_INIT;
        while (wait && b->req)
            mpi_idle(&w);
        if (!b->req)
            *pp = b->next;
        else
            pp = &b->next;
    }
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    reap(1);
    *(void **)buffer_addr = buf_base;
    *size = (int)buf_size;
    buf_base = 0;
    buf_size = 0;
    return MPI_SUCCESS;
}

/* Task context (finish() of the send's request): the block may be reused. */
void bsend_release(void *block)
{
    struct bblock *b = block;
    b->req = 0;
    b->program_owns = 0;
}

/* First fit between the blocks in use; NULL if the buffer has no room. */
static struct bblock *alloc_block(size_t need)
{
    need = (need + MPI_BSEND_OVERHEAD + 15) & ~(size_t)15;
    reap(0);
    char *start = buf_base ? (char *)(((uintptr_t)buf_base + 15) & ~(uintptr_t)15) : 0;
    char *end = buf_base + buf_size;
    struct bblock **pp = &blocks;
    char *at = start;
    for (;;) {
        char *limit = *pp ? (char *)*pp : end;
        if (start && (size_t)(limit - at) >= need) {
            struct bblock *b = (struct bblock *)at;
            b->size = need;
            b->next = *pp;
            b->req = 0;
            b->program_owns = 0;
            *pp = b;
            return b;
        }
        if (!*pp)
            return 0;
        at = (char *)*pp + (*pp)->size;
        pp = &(*pp)->next;
    }
}

/* Task context: the buffered send itself, without raising (MPI error code); req as
 * bsend's. */
static int bsend_core(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    int rc = dt_check(dt);
    if (rc != MPI_SUCCESS || count < 0)
        return rc != MPI_SUCCESS ? rc : MPI_ERR_COUNT;
    size_t bytes = (size_t)count * dt_size(dt);
    struct bblock *b = alloc_block(bytes);
    if (!b)
        return MPI_ERR_BUFFER;
    void *data = (char *)b + MPI_BSEND_OVERHEAD;
    dt_pack(buf, count, dt, data);
    MPI_Request r;
    rc = p2p_isend(data, (int)bytes, MPI_BYTE, dest, tag, comm, 0, 0, &r);
    if (rc != MPI_SUCCESS) {
        bsend_release(b);
        reap(0);
        return rc;
    }
    r->bsend = b;
    b->req = r;
    if (req) {
        b->program_owns = 1;
        *req = r;
    }
    return MPI_SUCCESS;
}

/* Task context: MPI_Bsend (req NULL: the library owns the send) or MPI_Ibsend. */
static int bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                 MPI_Request *req, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    return err_raise(comm, bsend_core(buf, count, dt, dest, tag, comm, req), fn);
}

/* Task context; see mpi_impl.h. The send runs on the library's own request. */
int bsend_start(MPI_Request r)
{
    int rc = bsend_core(r->pbuf, r->pcount, r->pdt, r->peer, r->ptag, r->comm, NULL);
    if (rc == MPI_SUCCESS) {
        r->e.err = 0;
        __atomic_store_n(&r->e.done, 1, __ATOMIC_RELEASE);
    }
    return rc;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return bsend(buf, count, dt, dest, tag, comm, 0, "MPI_Bsend");
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return bsend(buf, count, dt, dest, tag, comm, req, "MPI_Ibsend");
}
