/*
 * coll_alltoallw.c: MPI_Alltoallw (blocking), the all-to-all whose every block has its own
 * count, byte displacement and datatype.
 *
 * Not a CAD graph: the graphs move bytes of one element type per collective, and this
 * one has a type per block. So it is point-to-point on the communicator's collective
 * context under the call's own block of tags (coll_tag_block): a receive from every rank,
 * then a send to every rank, starting with the right-hand neighbour so that not everyone
 * sends to rank 0 first, then a wait for all. MPI_IN_PLACE: every block of recvbuf is
 * packed first and sent from that copy, then received over in place.
 * Across IMPI clients it is refused (LAM has no such collective on its context).
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* Task context: argument checks of one side's n blocks. MPI error code. */
static int check_side(int n, const int counts[], const int displs[], const MPI_Datatype types[])
{
    if (!counts || !displs || !types)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
        int rc = dt_check(types[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Task context, collective over c; the arguments checked. MPI error code. */
static int alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                     const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                     const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm c)
{
    int n = c->size, tag = coll_tag_block(c), rc = MPI_SUCCESS, nreq = 0;
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(2 * n));
    size_t *off = NULL;
    char *copy = NULL;
    if (!reqs)
        return MPI_ERR_NO_MEM;
    if (sbuf == MPI_IN_PLACE) {
        /* Pack every block before any receive may overwrite it. */
        size_t total = 0;
        off = malloc(sizeof *off * (size_t)(n + 1));
        for (int i = 0; off && i < n; i++) {
            off[i] = total;
            total += (size_t)rcounts[i] * dt_size(rtypes[i]);
        }
        copy = off ? malloc(total ? total : 1) : NULL;
        if (!copy) {
            free(off);
            free(reqs);
            return MPI_ERR_NO_MEM;
        }
        for (int i = 0; i < n; i++)
            dt_pack((char *)rbuf + rdispls[i], rcounts[i], rtypes[i], copy + off[i]);
    }
    for (int k = 0; rc == MPI_SUCCESS && k < n; k++) {
        int i = (c->rank + n - k) % n; /* from the left first: my right sends to me first */
        rc = p2p_irecv((char *)rbuf + rdispls[i], rcounts[i], rtypes[i], i, tag, c, 1, &reqs[nreq]);
        nreq += rc == MPI_SUCCESS;
    }
    for (int k = 0; rc == MPI_SUCCESS && k < n; k++) {
        int i = (c->rank + k) % n;
        if (copy)
            rc = p2p_isend(copy + off[i], (int)((size_t)rcounts[i] * dt_size(rtypes[i])), MPI_BYTE,
                           i, tag, c, 1, 0, &reqs[nreq]);
        else
            rc = p2p_isend((const char *)sbuf + sdispls[i], scounts[i], stypes[i], i, tag, c, 1, 0,
                           &reqs[nreq]);
        nreq += rc == MPI_SUCCESS;
    }
    /* HAZARD: after an error, what was started still runs: wait for it before freeing. */
    for (int i = 0; i < nreq; i++) {
        int w = req_wait(&reqs[i], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = w;
    }
    free(copy);
    free(off);
    free(reqs);
    return rc;
}

/* Task context, collective over c. */
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallw";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, fn);
    if (comm->clients)
        return err_raise(comm, world_refuse(fn, "an all-to-all with a datatype per block"), fn);
    int rc = check_side(comm->size, recvcounts, rdispls, recvtypes);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = check_side(comm->size, sendcounts, sdispls, sendtypes);
    if (rc == MPI_SUCCESS)
        rc = alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, comm);
    return err_raise(comm, rc, fn);
}
