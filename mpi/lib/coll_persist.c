/*
 * coll_persist.c: MPI-4's persistent collectives (MPI_Bcast_init and friends). Each init
 * call checks its arguments as the MPI_I* twin does and builds the collective's graph once
 * (coll_nb.c / coll_nbv.c under coll_persistent): an inactive persistent request. Every
 * MPI_Start then only packs what the graph reads, makes its local copies and hands the
 * same graph to the engine (coll_run.c's coll_go); completion unpacks and leaves the
 * request inactive; MPI_Request_free frees the graph. So a loop of MPI_Start/MPI_Wait pays
 * the planning and building of a collective once, as KACC's pre-built graphs do.
 *
 * Tags: the request keeps the block of tags its init took on the communicator's collective
 * context (coll_tag_block) for all its starts. Inits are collective calls, made in the
 * same order on every rank, so all agree on the block, and no other collective of the
 * communicator uses it. Two starts of one request never overlap (MPI_Start of an active
 * request is refused), and every message of start k between two ranks is sent before any
 * of start k + 1 (a rank starts again only once its own part completed). MPI's
 * non-overtaking order for one sender, tag and context then matches each receive of start
 * k with start k's message, even where the receiver is still in start k when start k + 1's
 * messages arrive. The IMPI algorithms' fixed tags rely on the same order already.
 *
 * Info hints are accepted and ignored. Intercommunicators are refused as by MPI_I*.
 */
#include "coll_impl.h"
#include <stdlib.h>

int MPI_Barrier_init(MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Barrier_init");
    PERSIST(c, "MPI_Barrier_init", coll_ibarrier(c, req));
}

int MPI_Bcast_init(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c, MPI_Info info,
                   MPI_Request *req)
{
    (void)info;
    CHECK(c, root, "MPI_Bcast_init");
    CHECKB(c, count, dt, "MPI_Bcast_init");
    PERSIST(c, "MPI_Bcast_init", coll_ibcast(buf, count, dt, root, c, req));
}

int MPI_Reduce_init(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root,
                    MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, root, "MPI_Reduce_init");
    CHECKB(c, count, dt, "MPI_Reduce_init");
    CHECKOP(c, op, dt, "MPI_Reduce_init");
    PERSIST(c, "MPI_Reduce_init", coll_ireduce(s, r, count, dt, op, root, c, req));
}

int MPI_Allreduce_init(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                       MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Allreduce_init");
    CHECKB(c, count, dt, "MPI_Allreduce_init");
    CHECKOP(c, op, dt, "MPI_Allreduce_init");
    PERSIST(c, "MPI_Allreduce_init", coll_iallreduce(s, r, count, dt, op, c, req));
}

int MPI_Gather_init(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                    int root, MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, root, "MPI_Gather_init");
    PERSIST(c, "MPI_Gather_init", coll_igs(1, 0, s, sc, sdt, r, rc, 0, 0, rdt, rdt, root, c, req));
}

int MPI_Gatherv_init(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                     const int displs[], MPI_Datatype rdt, int root, MPI_Comm c, MPI_Info info,
                     MPI_Request *req)
{
    (void)info;
    CHECK(c, root, "MPI_Gatherv_init");
    PERSIST(c, "MPI_Gatherv_init",
            coll_igs(1, 1, s, sc, sdt, r, 0, rcs, displs, rdt, rdt, root, c, req));
}

int MPI_Scatter_init(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                     int root, MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, root, "MPI_Scatter_init");
    PERSIST(c, "MPI_Scatter_init", coll_igs(0, 0, s, sc, sdt, r, rc, 0, 0, rdt, sdt, root, c, req));
}

int MPI_Scatterv_init(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r,
                      int rc, MPI_Datatype rdt, int root, MPI_Comm c, MPI_Info info,
                      MPI_Request *req)
{
    (void)info;
    CHECK(c, root, "MPI_Scatterv_init");
    PERSIST(c, "MPI_Scatterv_init",
            coll_igs(0, 1, s, 0, sdt, r, rc, scs, displs, rdt, sdt, root, c, req));
}

int MPI_Allgather_init(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                       MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Allgather_init");
    PERSIST(c, "MPI_Allgather_init", coll_iallgather(s, sc, sdt, r, rc, 0, 0, rdt, c, req));
}

int MPI_Allgatherv_init(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[],
                        const int displs[], MPI_Datatype rdt, MPI_Comm c, MPI_Info info,
                        MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Allgatherv_init");
    PERSIST(c, "MPI_Allgatherv_init", coll_iallgather(s, sc, sdt, r, 0, rcs, displs, rdt, c, req));
}

int MPI_Alltoall_init(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
                      MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Alltoall_init");
    PERSIST(c, "MPI_Alltoall_init", coll_ialltoall(s, sc, 0, 0, sdt, r, rc, 0, 0, rdt, c, req));
}

int MPI_Alltoallv_init(const void *s, const int scs[], const int sds[], MPI_Datatype sdt, void *r,
                       const int rcs[], const int rds[], MPI_Datatype rdt, MPI_Comm c,
                       MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Alltoallv_init");
    PERSIST(c, "MPI_Alltoallv_init",
            coll_ialltoall(s, 0, scs, sds, sdt, r, 0, rcs, rds, rdt, c, req));
}

int MPI_Reduce_scatter_init(const void *s, void *r, const int rcs[], MPI_Datatype dt, MPI_Op op,
                            MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Reduce_scatter_init");
    CHECKOP(c, op, dt, "MPI_Reduce_scatter_init");
    PERSIST(c, "MPI_Reduce_scatter_init", coll_ireduce_scatter(s, r, rcs, dt, op, c, req));
}

int MPI_Reduce_scatter_block_init(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op,
                                  MPI_Comm c, MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Reduce_scatter_block_init");
    CHECKB(c, rc, dt, "MPI_Reduce_scatter_block_init");
    CHECKOP(c, op, dt, "MPI_Reduce_scatter_block_init");
    PERSIST(c, "MPI_Reduce_scatter_block_init",
            coll_ireduce_scatter_block(s, r, rc, dt, op, c, req));
}

int MPI_Scan_init(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                  MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Scan_init");
    CHECKB(c, count, dt, "MPI_Scan_init");
    CHECKOP(c, op, dt, "MPI_Scan_init");
    PERSIST(c, "MPI_Scan_init", coll_iscan(s, r, count, dt, op, 0, c, req));
}

int MPI_Exscan_init(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                    MPI_Info info, MPI_Request *req)
{
    (void)info;
    CHECK(c, NOROOT, "MPI_Exscan_init");
    CHECKB(c, count, dt, "MPI_Exscan_init");
    CHECKOP(c, op, dt, "MPI_Exscan_init");
    PERSIST(c, "MPI_Exscan_init", coll_iscan(s, r, count, dt, op, 1, c, req));
}
