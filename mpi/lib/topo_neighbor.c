/*
 * topo_neighbor.c: the blocking neighbourhood collectives, MPI_Neighbor_allgather and
 * MPI_Neighbor_alltoall, on Cartesian, graph and distributed graph communicators.
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

/* Task context, collective over comm: the exchange both functions are; `each` says
 * whether every out-neighbour gets its own block of sendbuf (alltoall) or all get the
 * same (allgather). MPI error code. */
static int exchange(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                    MPI_Datatype rdt, MPI_Comm comm, int each)
{
    if (!comm_valid(comm))
        return MPI_ERR_COMM;
    if (scount < 0 || rcount < 0)
        return MPI_ERR_COUNT;
    int rc = dt_check(sdt);
    if (rc == MPI_SUCCESS)
        rc = dt_check(rdt);
    if (rc != MPI_SUCCESS)
        return rc;
    struct nbrs n;
    rc = nbrs_of(comm, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    int tag = coll_tag_block(comm);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(n.nin + n.nout + 1));
    int nreq = 0;
    if (!reqs)
        rc = MPI_ERR_NO_MEM;
    MPI_Aint rstride = (MPI_Aint)rcount * dt_extent(rdt);
    MPI_Aint sstride = each ? (MPI_Aint)scount * dt_extent(sdt) : 0;
    for (int i = 0; rc == MPI_SUCCESS && i < n.nin; i++) {
        rc = p2p_irecv((char *)rbuf + i * rstride, rcount, rdt, n.in[i], tag + n.intag[i], comm, 1,
                       &reqs[nreq]);
        nreq += rc == MPI_SUCCESS;
    }
    for (int i = 0; rc == MPI_SUCCESS && i < n.nout; i++) {
        rc = p2p_isend((const char *)sbuf + i * sstride, scount, sdt, n.out[i], tag + n.outtag[i],
                       comm, 1, 0, &reqs[nreq]);
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
    if (!mpi_ready("MPI_Neighbor_allgather"))
        return MPI_ERR_OTHER;
    return err_raise(comm,
                     exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0),
                     "MPI_Neighbor_allgather");
}

/* Task context, collective over comm. */
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!mpi_ready("MPI_Neighbor_alltoall"))
        return MPI_ERR_OTHER;
    return err_raise(comm,
                     exchange(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1),
                     "MPI_Neighbor_alltoall");
}
