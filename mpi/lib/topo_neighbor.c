/*
 * topo_neighbor.c: the blocking neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w)) on Cartesian, graph and distributed graph communicators.
 *
 * Point-to-point on the communicator's collective context: one receive per in-neighbour
 * into its block of recvbuf, one send per out-neighbour, then a wait for all. The
 * neighbours' order is MPI's (MPI-3.1 7.6): for a Cartesian grid, per dimension the
 * process at -1 then the one at +1 (MPI_PROC_NULL off a non-periodic edge: its block is
 * left alone); for a graph, the node's edges; for a distributed graph, its sources and
 * its destinations.
 *
 * Tags: each call takes the next block of collective tags (coll_tag_block). On a grid,
 * the same process can be the -1 and the +1 neighbour (a periodic dimension of size 1 or
 * 2), so the message to the -1 side and the one to the +1 side get different tags, and a
 * receive from the -1 side expects the tag its sender used for ITS +1 side. Graphs use
 * one tag: repeated edges between two processes are matched in order (MPI's
 * non-overtaking), which is the order both sides list them in.
 */
#include "topo_impl.h"
#include <stdlib.h>

/* Who to talk to: n peers, each with its tag for sending and for receiving. */
struct nbrs {
    int nin, nout;
    int *in, *out;       /* ranks (MPI_PROC_NULL allowed) */
    int *intag, *outtag; /* offsets from the call's tag block */
};

/* Task context: comm's neighbours (arrays malloc'd in one block at n->in; the caller
 * frees it). MPI error code. */
static int nbrs_of(MPI_Comm comm, struct nbrs *n)
{
    const struct topo *t = comm->topo;
    if (!t)
        return MPI_ERR_TOPOLOGY;
    const int *in = NULL, *out = NULL;
    int first = 0;
    switch (t->kind) {
    case MPI_CART:
        n->nin = n->nout = 2 * t->ndims;
        break;
    case MPI_GRAPH:
        graph_neighbors_of(t, comm->rank, &first, &n->nin);
        n->nout = n->nin;
        in = out = t->v + t->nnodes + first;
        break;
    default: /* MPI_DIST_GRAPH */
        n->nin = t->indeg;
        n->nout = t->outdeg;
        in = t->v;
        out = t->v + t->indeg;
        break;
    }
    int *a = malloc(sizeof(int) * (size_t)(2 * (n->nin + n->nout) + 1));
    if (!a)
        return MPI_ERR_NO_MEM;
    n->in = a;
    n->out = a + n->nin;
    n->intag = n->out + n->nout;
    n->outtag = n->intag + n->nin;
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->ndims; d++) {
            int lo, hi;
            cart_shift_of(t, comm->rank, d, 1, &lo, &hi);
            n->in[2 * d] = n->out[2 * d] = lo;
            n->in[2 * d + 1] = n->out[2 * d + 1] = hi;
            n->outtag[2 * d] = 2 * d;         /* to my -1 side */
            n->outtag[2 * d + 1] = 2 * d + 1; /* to my +1 side */
            n->intag[2 * d] = 2 * d + 1;      /* my -1 neighbour sent to its +1 side */
            n->intag[2 * d + 1] = 2 * d;
        }
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n->nin; i++) {
        n->in[i] = in[i];
        n->intag[i] = 0;
    }
    for (int i = 0; i < n->nout; i++) {
        n->out[i] = out[i];
        n->outtag[i] = 0;
    }
    return MPI_SUCCESS;
}

/* One side's blocks, one per neighbour. The forms: every neighbour the same block (the
 * send side of allgather), `count` elements of dt one after the other (allgather's
 * receive side, alltoall), counts[k] elements of dt at displs[k] elements (the v forms),
 * counts[k] elements of dts[k] at bdispls[k] bytes (alltoallw). */
enum blk_form { BLK_SAME, BLK_REGULAR, BLK_V, BLK_W };
struct blocks {
    enum blk_form form;
    char *buf;
    int count;
    MPI_Datatype dt;
    const int *counts, *displs;
    const MPI_Aint *bdispls;
    const MPI_Datatype *dts;
};

/* Task context: block k of b: its address, count and type. */
static char *block(const struct blocks *b, int k, int *count, MPI_Datatype *dt)
{
    switch (b->form) {
    case BLK_SAME:
        *count = b->count;
        *dt = b->dt;
        return b->buf;
    case BLK_REGULAR:
        *count = b->count;
        *dt = b->dt;
        return b->buf + (MPI_Aint)k * b->count * dt_extent(b->dt);
    case BLK_V:
        *count = b->counts[k];
        *dt = b->dt;
        return b->buf + (MPI_Aint)b->displs[k] * dt_extent(b->dt);
    default: /* BLK_W */
        *count = b->counts[k];
        *dt = b->dts[k];
        return b->buf + b->bdispls[k];
    }
}

/* Task context: the argument checks of a side's first n blocks. MPI error code. */
static int blocks_check(const struct blocks *b, int n)
{
    if (b->form == BLK_SAME || b->form == BLK_REGULAR)
        return b->count < 0 ? MPI_ERR_COUNT : dt_check(b->dt);
    if (n > 0 &&
        (!b->counts || !(b->form == BLK_V ? (const void *)b->displs : (const void *)b->bdispls)))
        return MPI_ERR_ARG;
    if (b->form == BLK_W && n > 0 && !b->dts)
        return MPI_ERR_ARG;
    int rc = b->form == BLK_V ? dt_check(b->dt) : MPI_SUCCESS;
    for (int k = 0; rc == MPI_SUCCESS && k < n; k++)
        rc = b->counts[k] < 0   ? MPI_ERR_COUNT
             : b->form == BLK_W ? dt_check(b->dts[k])
                                : MPI_SUCCESS;
    return rc;
}

/* Task context, collective over comm: what every neighbourhood collective is: block k of
 * the receive side from in-neighbour k, block k of the send side to out-neighbour k. MPI
 * error code. */
static int exchange(const struct blocks *sb, const struct blocks *rb, MPI_Comm comm)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    struct nbrs n;
    int rc = nbrs_of(comm, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = blocks_check(sb, n.nout);
    if (rc == MPI_SUCCESS)
        rc = blocks_check(rb, n.nin);
    if (rc != MPI_SUCCESS) {
        free(n.in);
        return rc;
    }
    int tag = coll_tag_block(comm), nreq = 0, count;
    MPI_Datatype dt;
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(n.nin + n.nout + 1));
    if (!reqs)
        rc = MPI_ERR_NO_MEM;
    for (int i = 0; rc == MPI_SUCCESS && i < n.nin; i++) {
        char *p = block(rb, i, &count, &dt);
        rc = p2p_irecv(p, count, dt, n.in[i], tag + n.intag[i], comm, 1, &reqs[nreq]);
        nreq += rc == MPI_SUCCESS;
    }
    for (int i = 0; rc == MPI_SUCCESS && i < n.nout; i++) {
        char *p = block(sb, i, &count, &dt);
        rc = p2p_isend(p, count, dt, n.out[i], tag + n.outtag[i], comm, 1, 0, &reqs[nreq]);
        nreq += rc == MPI_SUCCESS;
    }
    /* HAZARD: on an error after some were started, they still run; wait for them, so no
     * request outlives the buffers. */
    for (int i = 0; i < nreq; i++) {
        int w = req_wait(&reqs[i], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = w;
    }
    free(reqs);
    free(n.in);
    return rc;
}

/* Task context, collective over comm. */
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_allgather";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    struct blocks sb = {
        .form = BLK_SAME, .buf = (char *)sendbuf, .count = sendcount, .dt = sendtype};
    struct blocks rb = {.form = BLK_REGULAR, .buf = recvbuf, .count = recvcount, .dt = recvtype};
    return err_raise(comm, exchange(&sb, &rb, comm), fn);
}

/* Task context, collective over comm. */
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_allgatherv";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    struct blocks sb = {
        .form = BLK_SAME, .buf = (char *)sendbuf, .count = sendcount, .dt = sendtype};
    struct blocks rb = {
        .form = BLK_V, .buf = recvbuf, .counts = recvcounts, .displs = displs, .dt = recvtype};
    return err_raise(comm, exchange(&sb, &rb, comm), fn);
}

/* Task context, collective over comm. */
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoall";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    struct blocks sb = {
        .form = BLK_REGULAR, .buf = (char *)sendbuf, .count = sendcount, .dt = sendtype};
    struct blocks rb = {.form = BLK_REGULAR, .buf = recvbuf, .count = recvcount, .dt = recvtype};
    return err_raise(comm, exchange(&sb, &rb, comm), fn);
}

/* Task context, collective over comm. */
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoallv";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    struct blocks sb = {.form = BLK_V,
                        .buf = (char *)sendbuf,
                        .counts = sendcounts,
                        .displs = sdispls,
                        .dt = sendtype};
    struct blocks rb = {
        .form = BLK_V, .buf = recvbuf, .counts = recvcounts, .displs = rdispls, .dt = recvtype};
    return err_raise(comm, exchange(&sb, &rb, comm), fn);
}

/* Task context, collective over comm. Displacements in bytes. */
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Neighbor_alltoallw";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    struct blocks sb = {.form = BLK_W,
                        .buf = (char *)sendbuf,
                        .counts = sendcounts,
                        .bdispls = sdispls,
                        .dts = sendtypes};
    struct blocks rb = {
        .form = BLK_W, .buf = recvbuf, .counts = recvcounts, .bdispls = rdispls, .dts = recvtypes};
    return err_raise(comm, exchange(&sb, &rb, comm), fn);
}
