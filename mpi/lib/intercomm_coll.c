/*
 * intercomm_coll.c: the blocking collectives on intercommunicators that move one buffer
 * per group: MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather (coll_api.c
 * sends them here when the communicator has a remote group); intercomm_blocks.c has those
 * with a block per rank. The non-blocking ones stop the job (inter_refuse, intercomm.c).
 *
 * Each is a collective on the local group's intracommunicator (c->local), with the two
 * leaders (local rank 0 of each group) or the root exchanging over the intercommunicator's
 * collective context under the call's tag block (coll_tag_block: every member of both
 * groups takes one per call, so the counts agree). MPI's intercommunicator rules: the
 * root's group passes MPI_ROOT at the root and MPI_PROC_NULL elsewhere, the other group
 * the root's rank in it; results are the other group's data.
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* Task context: one message on ic's collective context (a blocking send or receive). */
static int send1(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm ic)
{
    MPI_Request r;
    int rc = p2p_isend(buf, count, dt, dest, tag, ic, 1, 0, &r);
    return rc == MPI_SUCCESS ? req_wait(&r, MPI_STATUS_IGNORE) : rc;
}

static int recv1(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm ic)
{
    MPI_Request r;
    int rc = p2p_irecv(buf, count, dt, src, tag, ic, 1, &r);
    return rc == MPI_SUCCESS ? req_wait(&r, MPI_STATUS_IGNORE) : rc;
}

/* Task context; see mpi_impl.h. */
int inter_swap1(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int peer, int tag, MPI_Comm ic)
{
    MPI_Request r[2];
    int rc = p2p_irecv(rbuf, rcount, rdt, peer, tag, ic, 1, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = p2p_isend(sbuf, scount, sdt, peer, tag, ic, 1, 0, &r[1]);
    int rc2 = rc == MPI_SUCCESS ? req_wait(&r[1], MPI_STATUS_IGNORE) : rc;
    rc = req_wait(&r[0], MPI_STATUS_IGNORE);
    return rc2 != MPI_SUCCESS ? rc2 : rc;
}

/* Task context; see mpi_impl.h. */
void *inter_tmp_alloc(int count, MPI_Datatype dt, void **base)
{
    size_t span = count > 0 ? (size_t)dt_true_extent(dt) + (size_t)(count - 1) * dt_extent(dt) : 1;
    *base = malloc(span ? span : 1);
    return *base ? (char *)*base - dt_true_lb(dt) : NULL;
}

/* Task context, collective over both groups of ic. */
int inter_barrier(MPI_Comm ic)
{
    int tag = coll_tag_block(ic), rc = MPI_Barrier(ic->local);
    if (rc == MPI_SUCCESS && ic->rank == 0) /* every member of both groups is in */
        rc = inter_swap1(NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE, 0, tag, ic);
    return rc == MPI_SUCCESS ? MPI_Barrier(ic->local) : rc;
}

/* Task context; see mpi_impl.h. MPI's root rules for a rooted collective on ic: 1 at the root (MPI_ROOT),
 * 0 for the root's group's others (MPI_PROC_NULL), -1 in the other group (a valid remote
 * root), or MPI_ERR_ROOT. */
int inter_root_role(int root, MPI_Comm ic)
{
    if (root == MPI_ROOT)
        return 1;
    if (root == MPI_PROC_NULL)
        return 0;
    return root >= 0 && root < ic->remote->size ? -1 : MPI_ERR_ROOT;
}

/* Task context, collective over both groups of ic. */
int inter_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm ic)
{
    int tag = coll_tag_block(ic), me = inter_root_role(root, ic);
    if (me == MPI_ERR_ROOT)
        return me;
    if (me >= 0)
        return me ? send1(buf, count, dt, 0, tag, ic) : MPI_SUCCESS;
    int rc = ic->rank == 0 ? recv1(buf, count, dt, root, tag, ic) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? MPI_Bcast(buf, count, dt, 0, ic->local) : rc;
}

/* Task context, collective over both groups of ic: the other group's data reduced to
 * its leader (*base: the buffer to free; the result at the return value). */
static int reduce_local(const void *sbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm ic,
                        void **tmp, void **base)
{
    *tmp = inter_tmp_alloc(count, dt, base);
    if (!*tmp)
        return MPI_ERR_NO_MEM;
    return MPI_Reduce(sbuf, *tmp, count, dt, op, 0, ic->local);
}

/* Task context, collective over both groups of ic. */
int inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm ic)
{
    int tag = coll_tag_block(ic), me = inter_root_role(root, ic);
    if (me == MPI_ERR_ROOT)
        return me;
    if (me >= 0)
        return me ? recv1(rbuf, count, dt, 0, tag, ic) : MPI_SUCCESS;
    void *tmp, *base;
    int rc = reduce_local(sbuf, count, dt, op, ic, &tmp, &base);
    if (rc == MPI_SUCCESS && ic->rank == 0)
        rc = send1(tmp, count, dt, root, tag, ic);
    free(base);
    return rc;
}

/* Task context, collective over both groups of ic. */
int inter_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm ic)
{
    int tag = coll_tag_block(ic);
    void *tmp, *base;
    int rc = reduce_local(sbuf, count, dt, op, ic, &tmp, &base);
    if (rc == MPI_SUCCESS && ic->rank == 0)
        rc = inter_swap1(tmp, count, dt, rbuf, count, dt, 0, tag, ic);
    free(base);
    return rc == MPI_SUCCESS ? MPI_Bcast(rbuf, count, dt, 0, ic->local) : rc;
}

/* Task context, collective over both groups of ic: rbuf gets the other group's blocks. */
int inter_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                    MPI_Datatype rdt, MPI_Comm ic)
{
    int tag = coll_tag_block(ic), n = ic->size;
    size_t block = (size_t)scount * dt_size(sdt);
    char *mine = malloc(block * (size_t)n + 1);
    if (!mine)
        return MPI_ERR_NO_MEM;
    /* This group's blocks, packed, at its leader; swapped for the other group's. */
    char *packed = malloc(block + 1);
    int rc = packed ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        dt_pack(sbuf, scount, sdt, packed);
        rc = MPI_Gather(packed, (int)block, MPI_BYTE, mine, (int)block, MPI_BYTE, 0, ic->local);
    }
    int rtotal = rcount * ic->remote->size;
    if (rc == MPI_SUCCESS && ic->rank == 0)
        rc = inter_swap1(mine, (int)(block * (size_t)n), MPI_BYTE, rbuf, rtotal, rdt, 0, tag, ic);
    free(packed);
    free(mine);
    return rc == MPI_SUCCESS ? MPI_Bcast(rbuf, rtotal, rdt, 0, ic->local) : rc;
}
