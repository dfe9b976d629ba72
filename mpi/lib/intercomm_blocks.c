/*
 * intercomm_blocks.c: the blocking collectives on intercommunicators whose buffers hold
 * one block per rank of the other group: MPI_Gather(v), MPI_Scatter(v), MPI_Allgatherv,
 * MPI_Alltoall(v,w), and the reduce-scatters (coll_api.c sends them here when the
 * communicator has a remote group; intercomm_coll.c has the others).
 *
 * Each block travels on its own, straight between the two ranks it concerns, over the
 * intercommunicator's collective context under the call's tag block (every member of both
 * groups takes one per call, so the counts agree); every pair exchanges its block even
 * when it is empty, so both sides always agree on what to wait for. That is m x n
 * messages for an all-to-all between groups of m and n: simple and right, not fast. The
 * reduce-scatters reduce in each group, swap at the leaders and scatter.
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* One side (sending or receiving) of a rank's part in a block collective: the block for
 * remote rank i is `count(i)` elements of `type(i)` at `buf` + displacement. */
struct iside {
    const void *buf;
    int count;                  /* each block's count when counts is NULL */
    const int *counts, *displs; /* v-variants: per block (displs in elements of dt) */
    MPI_Datatype dt;
    const MPI_Datatype *types; /* Alltoallw: per block, displs then in bytes */
    int peer;                  /* >= 0: one block, at buf, for that remote rank only */
    int same;                  /* the one block at buf goes to every remote rank */
    int active;                /* 0: this side moves nothing */
};

/* Task context: remote rank i's block of side s. */
static char *block(const struct iside *s, int i, int *count, MPI_Datatype *dt)
{
    *dt = s->types ? s->types[i] : s->dt;
    *count = s->counts ? s->counts[i] : s->count;
    if (s->peer >= 0 || s->same)
        return (char *)s->buf;
    long off = s->counts ? s->displs[i] : (long)i * s->count;
    return (char *)s->buf + (s->types ? off : off * (long)dt_extent(*dt));
}

/* Task context, collective over both groups of ic: every block of `out` sent to its
 * remote rank and every block of `in` received from its remote rank, all at once. */
static int exchange(const struct iside *out, const struct iside *in, MPI_Comm ic)
{
    int tag = coll_tag_block(ic), n = ic->remote->size, k = 0, rc = MPI_SUCCESS, count;
    MPI_Datatype dt;
    MPI_Request *r = malloc(sizeof *r * 2 * (size_t)n);
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; in->active && i < n && rc == MPI_SUCCESS; i++) {
        int from = in->peer >= 0 ? in->peer : i;
        char *b = block(in, i, &count, &dt);
        rc = p2p_irecv(b, count, dt, from, tag, ic, 1, &r[k]);
        k += rc == MPI_SUCCESS;
        if (in->peer >= 0)
            break;
    }
    for (int i = 0; out->active && i < n && rc == MPI_SUCCESS; i++) {
        int to = out->peer >= 0 ? out->peer : i;
        char *b = block(out, i, &count, &dt);
        rc = p2p_isend(b, count, dt, to, tag, ic, 1, 0, &r[k]);
        k += rc == MPI_SUCCESS;
        if (out->peer >= 0)
            break;
    }
    for (int i = 0; i < k; i++) { /* every started request ends, even after an error */
        int w = req_wait(&r[i], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = w;
    }
    free(r);
    return rc;
}

/* Task context, collective over both groups of ic: gather = 1 (else scatter); the root's
 * blocks are `count` each, or counts/displs (NULL counts). */
int inter_gs(int gather, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
             const int *counts, const int *displs, MPI_Datatype rdt, int root, MPI_Comm ic)
{
    int me = inter_root_role(root, ic);
    if (me == MPI_ERR_ROOT)
        return MPI_ERR_ROOT;
    struct iside one = {.peer = root, .active = me == -1};
    struct iside many = {.count = gather ? rcount : scount,
                         .counts = counts,
                         .displs = displs,
                         .peer = -1,
                         .active = me == 1};
    if (gather) {
        one.buf = sbuf, one.count = scount, one.dt = sdt;
        many.buf = rbuf, many.dt = rdt;
        return exchange(&one, &many, ic);
    }
    one.buf = rbuf, one.count = rcount, one.dt = rdt;
    many.buf = sbuf, many.dt = sdt;
    return exchange(&many, &one, ic);
}

/* Task context, collective over both groups of ic: our block to every remote rank, theirs
 * into rbuf at counts/displs (MPI_Allgatherv). */
int inter_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int *counts,
                     const int *displs, MPI_Datatype rdt, MPI_Comm ic)
{
    struct iside out = {
        .buf = sbuf, .count = scount, .dt = sdt, .peer = -1, .same = 1, .active = 1};
    struct iside in = {
        .buf = rbuf, .counts = counts, .displs = displs, .dt = rdt, .peer = -1, .active = 1};
    return exchange(&out, &in, ic);
}

/* Task context, collective over both groups of ic: MPI_Alltoall (counts NULL),
 * MPI_Alltoallv, MPI_Alltoallw (types non-NULL: displacements in bytes). */
int inter_alltoall(const void *sbuf, int scount, const int *scounts, const int *sdispls,
                   MPI_Datatype sdt, const MPI_Datatype *stypes, void *rbuf, int rcount,
                   const int *rcounts, const int *rdispls, MPI_Datatype rdt,
                   const MPI_Datatype *rtypes, MPI_Comm ic)
{
    struct iside out = {.buf = sbuf,
                        .count = scount,
                        .counts = scounts,
                        .displs = sdispls,
                        .dt = sdt,
                        .types = stypes,
                        .peer = -1,
                        .active = 1};
    struct iside in = {.buf = rbuf,
                       .count = rcount,
                       .counts = rcounts,
                       .displs = rdispls,
                       .dt = rdt,
                       .types = rtypes,
                       .peer = -1,
                       .active = 1};
    return exchange(&out, &in, ic);
}

/* Task context, collective over both groups of ic: MPI_Reduce_scatter (counts: this
 * group's result sizes) or, with counts NULL, MPI_Reduce_scatter_block (`count` each).
 * Each group reduces what it holds for the other at its leader; the leaders swap; each
 * scatters what it got. */
int inter_reduce_scatter(const void *sbuf, void *rbuf, int count, const int *counts,
                         MPI_Datatype dt, MPI_Op op, MPI_Comm ic)
{
    int tag = coll_tag_block(ic), n = ic->size, mine = 0, theirs = 0;
    int *displs = counts ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (counts && !displs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        if (displs)
            displs[i] = mine;
        mine += counts ? counts[i] : count;
    }
    int rc = MPI_SUCCESS;
    if (ic->rank == 0) /* the other group's total: what our sbuf holds for it */
        rc = inter_swap1(&mine, 1, MPI_INT, &theirs, 1, MPI_INT, 0, tag, ic);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(&theirs, 1, MPI_INT, 0, ic->local);
    void *rbase = NULL, *gbase = NULL;
    char *red = rc == MPI_SUCCESS ? inter_tmp_alloc(theirs, dt, &rbase) : NULL;
    char *got = rc == MPI_SUCCESS ? inter_tmp_alloc(mine, dt, &gbase) : NULL;
    if (rc == MPI_SUCCESS && (!red || !got))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Reduce(sbuf, red, theirs, dt, op, 0, ic->local);
    if (rc == MPI_SUCCESS && ic->rank == 0)
        rc = inter_swap1(red, theirs, dt, got, mine, dt, 0, tag, ic);
    if (rc == MPI_SUCCESS)
        rc = counts
                 ? MPI_Scatterv(got, counts, displs, dt, rbuf, counts[ic->rank], dt, 0, ic->local)
                 : MPI_Scatter(got, count, dt, rbuf, count, dt, 0, ic->local);
    free(rbase);
    free(gbase);
    free(displs);
    return rc;
}
