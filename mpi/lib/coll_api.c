/*
 * coll_api.c: the MPI entry points of the collectives, blocking and non-blocking: argument
 * checks and error reporting around coll_nb.c / coll_nbv.c, which start each collective
 * as a CAD graph. A blocking collective is its non-blocking twin and a wait, so every
 * algorithm exists once (mpi/cad/cad_alg*.c).
 */
#include "coll_impl.h"
#include <stdlib.h>

/* 1 if c is a live intercommunicator: the blocking collectives go to intercomm_coll.c and
 * intercomm_blocks.c (their own argument rules: MPI_ROOT, MPI_PROC_NULL, remote roots). */
static int inter(MPI_Comm c, const char *fn)
{
    return mpi_ready(fn) && comm_valid(c) && c->remote;
}

/* The blocking form: the started collective, waited for. */
static int waited(int rc, MPI_Request *r)
{
    return rc == MPI_SUCCESS ? req_wait(r, MPI_STATUS_IGNORE) : rc;
}

int MPI_Barrier(MPI_Comm c)
{
    MPI_Request r;
    if (inter(c, "MPI_Barrier"))
        return err_raise(c, inter_barrier(c), "MPI_Barrier");
    CHECK(c, NOROOT, "MPI_Barrier");
    return err_raise(c, waited(coll_ibarrier(c, &r), &r), "MPI_Barrier");
}

int MPI_Ibarrier(MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Ibarrier");
    return err_raise(c, coll_ibarrier(c, req), "MPI_Ibarrier");
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c)
{
    MPI_Request r;
    if (inter(c, "MPI_Bcast")) {
        CHECKB(c, count, dt, "MPI_Bcast");
        return err_raise(c, inter_bcast(buf, count, dt, root, c), "MPI_Bcast");
    }
    CHECK(c, root, "MPI_Bcast");
    CHECKB(c, count, dt, "MPI_Bcast");
    return err_raise(c, waited(coll_ibcast(buf, count, dt, root, c, &r), &r), "MPI_Bcast");
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, root, "MPI_Ibcast");
    CHECKB(c, count, dt, "MPI_Ibcast");
    return err_raise(c, coll_ibcast(buf, count, dt, root, c, req), "MPI_Ibcast");
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Reduce")) {
        CHECKB(c, count, dt, "MPI_Reduce");
        CHECKOP(c, op, dt, "MPI_Reduce");
        return err_raise(c, inter_reduce(s, r, count, dt, op, root, c), "MPI_Reduce");
    }
    CHECK(c, root, "MPI_Reduce");
    CHECKB(c, count, dt, "MPI_Reduce");
    CHECKOP(c, op, dt, "MPI_Reduce");
    return err_raise(c, waited(coll_ireduce(s, r, count, dt, op, root, c, &q), &q), "MPI_Reduce");
}

int MPI_Ireduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm c,
                MPI_Request *req)
{
    CHECK(c, root, "MPI_Ireduce");
    CHECKB(c, count, dt, "MPI_Ireduce");
    CHECKOP(c, op, dt, "MPI_Ireduce");
    return err_raise(c, coll_ireduce(s, r, count, dt, op, root, c, req), "MPI_Ireduce");
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Allreduce")) {
        CHECKB(c, count, dt, "MPI_Allreduce");
        CHECKOP(c, op, dt, "MPI_Allreduce");
        return err_raise(c, inter_allreduce(s, r, count, dt, op, c), "MPI_Allreduce");
    }
    CHECK(c, NOROOT, "MPI_Allreduce");
    CHECKB(c, count, dt, "MPI_Allreduce");
    CHECKOP(c, op, dt, "MPI_Allreduce");
    return err_raise(c, waited(coll_iallreduce(s, r, count, dt, op, c, &q), &q), "MPI_Allreduce");
}

int MPI_Iallreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                   MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Iallreduce");
    CHECKB(c, count, dt, "MPI_Iallreduce");
    CHECKOP(c, op, dt, "MPI_Iallreduce");
    return err_raise(c, coll_iallreduce(s, r, count, dt, op, c, req), "MPI_Iallreduce");
}

int MPI_Gather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root,
               MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Gather"))
        return err_raise(c, inter_gs(1, s, sc, sdt, r, rc, 0, 0, rdt, root, c), "MPI_Gather");
    CHECK(c, root, "MPI_Gather");
    return err_raise(c, waited(coll_igs(1, 0, s, sc, sdt, r, rc, 0, 0, rdt, rdt, root, c, &q), &q),
                     "MPI_Gather");
}

int MPI_Igather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                int root, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, root, "MPI_Igather");
    return err_raise(c, coll_igs(1, 0, s, sc, sdt, r, rc, 0, 0, rdt, rdt, root, c, req),
                     "MPI_Igather");
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                const int displs[], MPI_Datatype rdt, int root, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Gatherv"))
        return err_raise(c, inter_gs(1, s, sc, sdt, r, 0, rcs, displs, rdt, root, c),
                         "MPI_Gatherv");
    CHECK(c, root, "MPI_Gatherv");
    return err_raise(
        c, waited(coll_igs(1, 1, s, sc, sdt, r, 0, rcs, displs, rdt, rdt, root, c, &q), &q),
        "MPI_Gatherv");
}

int MPI_Igatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                 const int displs[], MPI_Datatype rdt, int root, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, root, "MPI_Igatherv");
    return err_raise(c, coll_igs(1, 1, s, sc, sdt, r, 0, rcs, displs, rdt, rdt, root, c, req),
                     "MPI_Igatherv");
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                int root, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Scatter"))
        return err_raise(c, inter_gs(0, s, sc, sdt, r, rc, 0, 0, rdt, root, c), "MPI_Scatter");
    CHECK(c, root, "MPI_Scatter");
    return err_raise(c, waited(coll_igs(0, 0, s, sc, sdt, r, rc, 0, 0, rdt, sdt, root, c, &q), &q),
                     "MPI_Scatter");
}

int MPI_Iscatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                 int root, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, root, "MPI_Iscatter");
    return err_raise(c, coll_igs(0, 0, s, sc, sdt, r, rc, 0, 0, rdt, sdt, root, c, req),
                     "MPI_Iscatter");
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r,
                 int rc, MPI_Datatype rdt, int root, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Scatterv"))
        return err_raise(c, inter_gs(0, s, 0, sdt, r, rc, scs, displs, rdt, root, c),
                         "MPI_Scatterv");
    CHECK(c, root, "MPI_Scatterv");
    return err_raise(
        c, waited(coll_igs(0, 1, s, 0, sdt, r, rc, scs, displs, rdt, sdt, root, c, &q), &q),
        "MPI_Scatterv");
}

int MPI_Iscatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r,
                  int rc, MPI_Datatype rdt, int root, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, root, "MPI_Iscatterv");
    return err_raise(c, coll_igs(0, 1, s, 0, sdt, r, rc, scs, displs, rdt, sdt, root, c, req),
                     "MPI_Iscatterv");
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                  MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Allgather")) {
        CHECKB(c, sc, sdt, "MPI_Allgather");
        CHECKB(c, rc, rdt, "MPI_Allgather");
        return err_raise(c, inter_allgather(s, sc, sdt, r, rc, rdt, c), "MPI_Allgather");
    }
    CHECK(c, NOROOT, "MPI_Allgather");
    return err_raise(c, waited(coll_iallgather(s, sc, sdt, r, rc, 0, 0, rdt, c, &q), &q),
                     "MPI_Allgather");
}

int MPI_Iallgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                   MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Iallgather");
    return err_raise(c, coll_iallgather(s, sc, sdt, r, rc, 0, 0, rdt, c, req), "MPI_Iallgather");
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                   const int displs[], MPI_Datatype rdt, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Allgatherv")) {
        CHECKB(c, sc, sdt, "MPI_Allgatherv");
        return err_raise(c, inter_allgatherv(s, sc, sdt, r, rcs, displs, rdt, c), "MPI_Allgatherv");
    }
    CHECK(c, NOROOT, "MPI_Allgatherv");
    return err_raise(c, waited(coll_iallgather(s, sc, sdt, r, 0, rcs, displs, rdt, c, &q), &q),
                     "MPI_Allgatherv");
}

int MPI_Iallgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                    const int displs[], MPI_Datatype rdt, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Iallgatherv");
    return err_raise(c, coll_iallgather(s, sc, sdt, r, 0, rcs, displs, rdt, c, req),
                     "MPI_Iallgatherv");
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                 MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Alltoall")) {
        CHECKB(c, sc, sdt, "MPI_Alltoall");
        CHECKB(c, rc, rdt, "MPI_Alltoall");
        return err_raise(c, inter_alltoall(s, sc, 0, 0, sdt, 0, r, rc, 0, 0, rdt, 0, c),
                         "MPI_Alltoall");
    }
    CHECK(c, NOROOT, "MPI_Alltoall");
    return err_raise(c, waited(coll_ialltoall(s, sc, 0, 0, sdt, r, rc, 0, 0, rdt, c, &q), &q),
                     "MPI_Alltoall");
}

int MPI_Ialltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                  MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Ialltoall");
    return err_raise(c, coll_ialltoall(s, sc, 0, 0, sdt, r, rc, 0, 0, rdt, c, req),
                     "MPI_Ialltoall");
}

int MPI_Alltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype sdt, void *r,
                  const int rcs[], const int rds[], MPI_Datatype rdt, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Alltoallv"))
        return err_raise(c, inter_alltoall(s, 0, scs, sds, sdt, 0, r, 0, rcs, rds, rdt, 0, c),
                         "MPI_Alltoallv");
    CHECK(c, NOROOT, "MPI_Alltoallv");
    return err_raise(c, waited(coll_ialltoall(s, 0, scs, sds, sdt, r, 0, rcs, rds, rdt, c, &q), &q),
                     "MPI_Alltoallv");
}

int MPI_Ialltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype sdt, void *r,
                   const int rcs[], const int rds[], MPI_Datatype rdt, MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Ialltoallv");
    return err_raise(c, coll_ialltoall(s, 0, scs, sds, sdt, r, 0, rcs, rds, rdt, c, req),
                     "MPI_Ialltoallv");
}

int MPI_Reduce_scatter(const void *s, void *r, const int rcs[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Reduce_scatter")) {
        CHECKOP(c, op, dt, "MPI_Reduce_scatter");
        return err_raise(c, inter_reduce_scatter(s, r, 0, rcs, dt, op, c), "MPI_Reduce_scatter");
    }
    CHECK(c, NOROOT, "MPI_Reduce_scatter");
    CHECKOP(c, op, dt, "MPI_Reduce_scatter");
    return err_raise(c, waited(coll_ireduce_scatter(s, r, rcs, dt, op, c, &q), &q),
                     "MPI_Reduce_scatter");
}

int MPI_Ireduce_scatter(const void *s, void *r, const int rcs[], MPI_Datatype dt, MPI_Op op,
                        MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Ireduce_scatter");
    CHECKOP(c, op, dt, "MPI_Ireduce_scatter");
    return err_raise(c, coll_ireduce_scatter(s, r, rcs, dt, op, c, req), "MPI_Ireduce_scatter");
}

/* The block variant: every rank gets rc elements. */
int coll_ireduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op,
                               MPI_Comm c, MPI_Request *req)
{
    int *counts = malloc(sizeof(int) * (size_t)c->size);
    if (!counts)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->size; i++)
        counts[i] = rc;
    int e = coll_ireduce_scatter(s, r, counts, dt, op, c, req); /* copies the counts */
    free(counts);
    return e;
}

int MPI_Reduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    MPI_Request q;
    if (inter(c, "MPI_Reduce_scatter_block")) {
        CHECKB(c, rc, dt, "MPI_Reduce_scatter_block");
        CHECKOP(c, op, dt, "MPI_Reduce_scatter_block");
        return err_raise(c, inter_reduce_scatter(s, r, rc, 0, dt, op, c),
                         "MPI_Reduce_scatter_block");
    }
    CHECK(c, NOROOT, "MPI_Reduce_scatter_block");
    CHECKB(c, rc, dt, "MPI_Reduce_scatter_block");
    CHECKOP(c, op, dt, "MPI_Reduce_scatter_block");
    return err_raise(c, waited(coll_ireduce_scatter_block(s, r, rc, dt, op, c, &q), &q),
                     "MPI_Reduce_scatter_block");
}

int MPI_Ireduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op,
                              MPI_Comm c, MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Ireduce_scatter_block");
    CHECKB(c, rc, dt, "MPI_Ireduce_scatter_block");
    CHECKOP(c, op, dt, "MPI_Ireduce_scatter_block");
    return err_raise(c, coll_ireduce_scatter_block(s, r, rc, dt, op, c, req),
                     "MPI_Ireduce_scatter_block");
}

int MPI_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    MPI_Request q;
    CHECK(c, NOROOT, "MPI_Scan");
    CHECKB(c, count, dt, "MPI_Scan");
    CHECKOP(c, op, dt, "MPI_Scan");
    return err_raise(c, waited(coll_iscan(s, r, count, dt, op, 0, c, &q), &q), "MPI_Scan");
}

int MPI_Iscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
              MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Iscan");
    CHECKB(c, count, dt, "MPI_Iscan");
    CHECKOP(c, op, dt, "MPI_Iscan");
    return err_raise(c, coll_iscan(s, r, count, dt, op, 0, c, req), "MPI_Iscan");
}

int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    MPI_Request q;
    CHECK(c, NOROOT, "MPI_Exscan");
    CHECKB(c, count, dt, "MPI_Exscan");
    CHECKOP(c, op, dt, "MPI_Exscan");
    return err_raise(c, waited(coll_iscan(s, r, count, dt, op, 1, c, &q), &q), "MPI_Exscan");
}

int MPI_Iexscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                MPI_Request *req)
{
    CHECK(c, NOROOT, "MPI_Iexscan");
    CHECKB(c, count, dt, "MPI_Iexscan");
    CHECKOP(c, op, dt, "MPI_Iexscan");
    return err_raise(c, coll_iscan(s, r, count, dt, op, 1, c, req), "MPI_Iexscan");
}

/* For comm.c: context agreement and split. */
int coll_allreduce_max_int(int *v, MPI_Comm comm)
{
    MPI_Request q;
    return waited(coll_iallreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MAX, comm, &q), &q);
}

int coll_allgather_ints(const int *mine, int n, int *all, MPI_Comm comm)
{
    MPI_Request q;
    return waited(coll_iallgather(mine, n, MPI_INT, all, n, 0, 0, MPI_INT, comm, &q), &q);
}
