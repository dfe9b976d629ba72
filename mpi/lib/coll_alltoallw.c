/*
 * coll_alltoallw.c: MPI_Ialltoallw and MPI_Alltoallw, the all-to-all whose every block
 * has its own count, byte displacement and datatype.
 *
 * The CAD graphs move bytes, so this is the all-to-all-v graph over packed blocks: each
 * send block is packed with its own type into the request's temporaries (block i at the
 * sum of the sizes before it), each receive block gets its place there and is unpacked
 * with its own type when the collective completes (coll_finish). MPI_IN_PLACE: the blocks
 * of recvbuf are packed first, then received over. The blocking form is the non-blocking
 * one and a wait, like every collective of the library.
 */
#include "coll_impl.h"
#include <stdlib.h>

/* Task context: argument checks of one side's n blocks. MPI error code. */
static int check_side(int n, const int counts[], const int displs[], const MPI_Datatype types[])
{
    if (n > 0 && (!counts || !displs || !types))
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

/* Task context: each block's packed bytes into c[n] and offset into d[n]; the total. */
static size_t layout(int n, const int counts[], const MPI_Datatype types[], uint64_t *c,
                     uint64_t *d)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        c[i] = (uint64_t)counts[i] * dt_size(types[i]);
        d[i] = total;
        total += c[i];
    }
    return total;
}

/* Task context, collective over c; the arguments checked. MPI error code. */
static int ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                      const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                      const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm c,
                      MPI_Request *req)
{
    int n = c->size, err = MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE) { /* the blocks to send are the receive blocks */
        sbuf = rbuf;
        scounts = rcounts;
        sdispls = rdispls;
        stypes = rtypes;
    }
    uint64_t *arr = malloc(sizeof(uint64_t) * 4 * (size_t)(n ? n : 1));
    if (!arr)
        return MPI_ERR_NO_MEM;
    size_t stotal = layout(n, scounts, stypes, arr, arr + n);
    size_t rtotal = layout(n, rcounts, rtypes, arr + 2 * n, arr + 3 * n);
    struct cad_coll d = {.kind = CAD_K_ALLTOALL,
                         .counts = arr,
                         .displs = arr + n,
                         .rcounts = arr + 2 * n,
                         .rdispls = arr + 3 * n};
    size_t temps = ((stotal + 63) & ~(size_t)63) + ((rtotal + 63) & ~(size_t)63);
    struct coll_req *q = coll_alloc(c, &d, temps, 2 * n, &err); /* each block in and out */
    if (!q) {
        free(arr);
        return err;
    }
    q->owned = arr;
    char *s = coll_temp(q, stotal), *r = coll_temp(q, rtotal);
    for (int i = 0; i < n; i++) {
        if (scounts[i] > 0)
            coll_pack_at_start(q, (const char *)sbuf + sdispls[i], scounts[i], stypes[i],
                               s + arr[n + i]);
        if (rcounts[i] > 0)
            coll_unpack_later(q, r + arr[3 * n + i], arr[2 * n + i], (char *)rbuf + rdispls[i],
                              rcounts[i], rtypes[i]);
    }
    d.sbuf = s;
    d.rbuf = r;
    return coll_issue(q, &d, req);
}

/* Task context: the common checks. MPI error code. */
static int check(const void *sbuf, const int scounts[], const int sdispls[],
                 const MPI_Datatype stypes[], const int rcounts[], const int rdispls[],
                 const MPI_Datatype rtypes[], MPI_Comm c, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(c))
        return MPI_ERR_COMM;
    inter_refuse(c, fn);
    int rc = check_side(c->size, rcounts, rdispls, rtypes);
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = check_side(c->size, scounts, sdispls, stypes);
    return rc;
}

/* Task context, collective over comm. */
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    static const char fn[] = "MPI_Ialltoallw";
    int rc =
        check(sendbuf, sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes, comm, fn);
    if (rc == MPI_SUCCESS)
        rc = ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes, comm, request);
    return err_raise(comm, rc, fn);
}

/* Task context, collective over comm: MPI-4's persistent form (coll_persist.c). */
int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    static const char fn[] = "MPI_Alltoallw_init";
    (void)info;
    int rc =
        check(sendbuf, sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes, comm, fn);
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, fn);
    PERSIST(comm, fn,
            ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, comm, request));
}

/* Task context, collective over comm. */
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    static const char fn[] = "MPI_Alltoallw";
    MPI_Request r;
    if (mpi_ready(fn) && comm_valid(comm) && comm->remote) { /* intercomm_blocks.c */
        int n = comm->remote->size;
        int rc = check_side(n, recvcounts, rdispls, recvtypes);
        if (rc == MPI_SUCCESS)
            rc = check_side(n, sendcounts, sdispls, sendtypes);
        if (rc == MPI_SUCCESS)
            rc =
                inter_alltoall(sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes,
                               recvbuf, 0, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
        return err_raise(comm, rc, fn);
    }
    int rc =
        check(sendbuf, sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes, comm, fn);
    if (rc == MPI_SUCCESS)
        rc = ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes, comm, &r);
    if (rc == MPI_SUCCESS)
        rc = req_wait(&r, MPI_STATUS_IGNORE);
    return err_raise(comm, rc, fn);
}
