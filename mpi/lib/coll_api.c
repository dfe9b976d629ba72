/*
 * coll_api.c: the MPI entry points of the blocking collectives: argument checks and
 * error reporting around coll.c's algorithms.
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* Checks common to every collective: the library is up, the communicator is live, the
 * root (if any: root >= -1 means "check it") names a rank. */
static int check(MPI_Comm c, int root, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(c))
        return MPI_ERR_COMM;
    if (root != -100 && (root < 0 || root >= c->size))
        return MPI_ERR_ROOT;
    return MPI_SUCCESS;
}

static int check_buf(int count, MPI_Datatype dt)
{
    return count < 0 ? MPI_ERR_COUNT : dt_check(dt);
}

#define NOROOT (-100)
#define CHECK(c, root, fn)                                                                         \
    do {                                                                                           \
        int rc_ = check(c, root, fn);                                                              \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return err_raise(c, rc_, fn);                                                          \
    } while (0)
#define CHECKB(c, count, dt, fn)                                                                   \
    do {                                                                                           \
        int rc_ = check_buf(count, dt);                                                            \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return err_raise(c, rc_, fn);                                                          \
    } while (0)

int MPI_Barrier(MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Barrier");
    return err_raise(c, coll_barrier(c), "MPI_Barrier");
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c)
{
    CHECK(c, root, "MPI_Bcast");
    CHECKB(c, count, dt, "MPI_Bcast");
    return err_raise(c, coll_bcast(buf, count, dt, root, c), "MPI_Bcast");
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm c)
{
    CHECK(c, root, "MPI_Reduce");
    CHECKB(c, count, dt, "MPI_Reduce");
    return err_raise(c, coll_reduce(s, r, count, dt, op, root, c), "MPI_Reduce");
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Allreduce");
    CHECKB(c, count, dt, "MPI_Allreduce");
    return err_raise(c, coll_allreduce(s, r, count, dt, op, c), "MPI_Allreduce");
}

int MPI_Gather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root,
               MPI_Comm c)
{
    CHECK(c, root, "MPI_Gather");
    return err_raise(c, coll_gather(s, sc, sdt, r, rc, rdt, root, c), "MPI_Gather");
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                const int displs[], MPI_Datatype rdt, int root, MPI_Comm c)
{
    CHECK(c, root, "MPI_Gatherv");
    return err_raise(c, coll_gatherv(s, sc, sdt, r, rcs, displs, rdt, root, c), "MPI_Gatherv");
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                int root, MPI_Comm c)
{
    CHECK(c, root, "MPI_Scatter");
    return err_raise(c, coll_scatter(s, sc, sdt, r, rc, rdt, root, c), "MPI_Scatter");
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r,
                 int rc, MPI_Datatype rdt, int root, MPI_Comm c)
{
    CHECK(c, root, "MPI_Scatterv");
    return err_raise(c, coll_scatterv(s, scs, displs, sdt, r, rc, rdt, root, c), "MPI_Scatterv");
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                  MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Allgather");
    return err_raise(c, coll_allgather(s, sc, sdt, r, rc, rdt, c), "MPI_Allgather");
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                   const int displs[], MPI_Datatype rdt, MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Allgatherv");
    return err_raise(c, coll_allgatherv(s, sc, sdt, r, rcs, displs, rdt, c), "MPI_Allgatherv");
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                 MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Alltoall");
    return err_raise(c, coll_alltoall(s, sc, sdt, r, rc, rdt, c), "MPI_Alltoall");
}

int MPI_Alltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype sdt, void *r,
                  const int rcs[], const int rds[], MPI_Datatype rdt, MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Alltoallv");
    return err_raise(c, coll_alltoallv(s, scs, sds, sdt, r, rcs, rds, rdt, c), "MPI_Alltoallv");
}

int MPI_Reduce_scatter(const void *s, void *r, const int rcs[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Reduce_scatter");
    return err_raise(c, coll_reduce_scatter(s, r, rcs, dt, op, c), "MPI_Reduce_scatter");
}

int MPI_Reduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Reduce_scatter_block");
    int *counts = malloc(sizeof(int) * (size_t)c->size);
    if (!counts)
        return err_raise(c, MPI_ERR_NO_MEM, "MPI_Reduce_scatter_block");
    for (int i = 0; i < c->size; i++)
        counts[i] = rc;
    int e = coll_reduce_scatter(s, r, counts, dt, op, c);
    free(counts);
    return err_raise(c, e, "MPI_Reduce_scatter_block");
}

int MPI_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Scan");
    CHECKB(c, count, dt, "MPI_Scan");
    return err_raise(c, coll_scan(s, r, count, dt, op, 0, c), "MPI_Scan");
}

int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    CHECK(c, NOROOT, "MPI_Exscan");
    CHECKB(c, count, dt, "MPI_Exscan");
    return err_raise(c, coll_scan(s, r, count, dt, op, 1, c), "MPI_Exscan");
}
