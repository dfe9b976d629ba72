/*
 * wmpi_coll.c: the public WaitIO-MPI collectives. Each checks its arguments, converts
 * element counts to bytes, takes the communicator's next collective tag(s) and runs the
 * King version on a universe (wmpi_king.c) or the WaitIO-only version on any other group
 * (wmpi_flat.c). Like MPI, every member calls the same collectives in the same order with
 * matching arguments; arguments significant at the root only are checked at the root.
 * gather and allgather take one count and one datatype (the published prototypes).
 */
#include <limits.h>
#include <stdlib.h>

#include "wmpi_int.h"

/* Entry points: the communicator record, checking root is one of its ranks. */
static struct wmpi_comm *wmpi_coll_comm(const char *call, WAITIO_MPI_Comm comm, int root)
{
    struct wmpi_comm *c = wmpi_comm_get(call, comm);

    if (c && (root < 0 || root >= c->size)) {
        wmpi_err(call, "root %d outside communicator of size %d", root, c->size);
        return NULL;
    }
    return c;
}

/* waitio_mpi_bcast: count elements of buf from root to every member. */
int waitio_mpi_bcast(void *buf, int count, WAITIO_MPI_Datatype dt, int root, WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_bcast";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, root);
    size_t bytes;

    if (!c || wmpi_bytes(call, count, dt, &bytes))
        return 1;
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_bcast(call, c, buf, bytes, root, wmpi_next_tag(c));
    return wmpi_flat_bcast(call, c, buf, bytes, root, wmpi_next_tag(c));
}
WMPI_ALIAS(WAITIO_MPI_Bcast, waitio_mpi_bcast);

/* The reduction of reduce and allreduce, once arguments are known good. */
static int wmpi_reduce_any(const char *call, struct wmpi_comm *c, const void *sbuf, void *rbuf,
                           int count, WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, int root)
{
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_reduce(call, c, sbuf, rbuf, count, dt, op, root, wmpi_next_tag(c));
    return wmpi_flat_reduce(call, c, sbuf, rbuf, count, dt, op, root, wmpi_next_tag(c));
}

/* Entry points of reductions: (dt, op) supported and count sane. */
static int wmpi_reduce_args(const char *call, int count, WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op)
{
    MPI_Datatype mdt;
    MPI_Op mop;
    size_t bytes;

    return wmpi_op_check(call, dt, op, &mdt, &mop) || wmpi_bytes(call, count, dt, &bytes);
}

/* waitio_mpi_reduce: rbuf (root only) = op over every member's sbuf, element-wise. */
int waitio_mpi_reduce(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                      WAITIO_MPI_Op op, int root, WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_reduce";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, root);

    if (!c || wmpi_reduce_args(call, count, dt, op))
        return 1;
    return wmpi_reduce_any(call, c, sbuf, rbuf, count, dt, op, root);
}
WMPI_ALIAS(WAITIO_MPI_Reduce, waitio_mpi_reduce);

/* waitio_mpi_allreduce: reduce to rank 0, then broadcast from it (spec 9.2). */
int waitio_mpi_allreduce(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                         WAITIO_MPI_Op op, WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_allreduce";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, 0);
    size_t bytes;
    int rc;

    if (!c || wmpi_reduce_args(call, count, dt, op) || wmpi_bytes(call, count, dt, &bytes))
        return 1;
    rc = wmpi_reduce_any(call, c, sbuf, rbuf, count, dt, op, 0);
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_bcast(call, c, rbuf, bytes, 0, wmpi_next_tag(c)) || rc;
    return wmpi_flat_bcast(call, c, rbuf, bytes, 0, wmpi_next_tag(c)) || rc;
}
WMPI_ALIAS(WAITIO_MPI_Allreduce, waitio_mpi_allreduce);

/* The gather of gather and allgather: every member's sbytes, packed in rank order. */
static int wmpi_gather_any(const char *call, struct wmpi_comm *c, const void *sbuf, int sbytes,
                           void *rbuf, int root)
{
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_gatherv(call, c, sbuf, sbytes, rbuf, 1, NULL, NULL, root,
                                 wmpi_next_tag(c));
    return wmpi_flat_gatherv(call, c, sbuf, sbytes, rbuf, 1, NULL, NULL, root, wmpi_next_tag(c));
}

/* waitio_mpi_gather: rbuf (root only) gets size x count elements, member r's at r x count. */
int waitio_mpi_gather(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt, int root,
                      WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_gather";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, root);
    int sbytes;

    if (!c || wmpi_int_bytes(call, count, dt, &sbytes))
        return 1;
    return wmpi_gather_any(call, c, sbuf, sbytes, rbuf, root);
}
WMPI_ALIAS(WAITIO_MPI_Gather, waitio_mpi_gather);

/* waitio_mpi_allgather: gather to rank 0, then broadcast the size x count elements. */
int waitio_mpi_allgather(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                         WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_allgather";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, 0);
    size_t total;
    int sbytes, rc;

    if (!c || wmpi_int_bytes(call, count, dt, &sbytes))
        return 1;
    total = (size_t)sbytes * (size_t)c->size;
    rc = wmpi_gather_any(call, c, sbuf, sbytes, rbuf, 0);
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_bcast(call, c, rbuf, total, 0, wmpi_next_tag(c)) || rc;
    return wmpi_flat_bcast(call, c, rbuf, total, 0, wmpi_next_tag(c)) || rc;
}
WMPI_ALIAS(WAITIO_MPI_Allgather, waitio_mpi_allgather);

/* Root of scatterv/gatherv: per-rank element counts and displacements of dt turned into
 * bytes (*cntp ints, *dspp size_t; the caller frees both). */
static int wmpi_v_bytes(const char *call, const struct wmpi_comm *c, const int *counts,
                        const int *displs, WAITIO_MPI_Datatype dt, int **cntp, size_t **dspp)
{
    size_t size;
    int *cnt;
    size_t *dsp;

    *cntp = NULL;
    *dspp = NULL;
    if (!counts || !displs)
        return wmpi_err(call, "NULL counts or displacements at the root");
    if (wmpi_type_bytes(call, dt, &size))
        return 1;
    cnt = malloc(c->size * sizeof(*cnt));
    dsp = malloc(c->size * sizeof(*dsp));
    *cntp = cnt;
    *dspp = dsp;
    if (!cnt || !dsp)
        return wmpi_err(call, "out of memory");
    for (int r = 0; r < c->size; r++) {
        if (wmpi_int_bytes(call, counts[r], dt, &cnt[r]))
            return 1;
        if (displs[r] < 0)
            return wmpi_err(call, "negative displacement %d for rank %d", displs[r], r);
        dsp[r] = (size_t)displs[r] * size;
    }
    return 0;
}

/* waitio_mpi_scatter: root's sbuf holds size x scount elements of stype; member r gets
 * part r as rcount elements of rtype (same byte size). */
int waitio_mpi_scatter(void *sbuf, int scount, WAITIO_MPI_Datatype stype, void *rbuf, int rcount,
                       WAITIO_MPI_Datatype rtype, int root, WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_scatter";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, root);
    int rbytes, sbytes;

    if (!c || wmpi_int_bytes(call, rcount, rtype, &rbytes))
        return 1;
    if (c->rank == root) {
        if (wmpi_int_bytes(call, scount, stype, &sbytes))
            return 1;
        if (sbytes != rbytes)
            return wmpi_err(call, "root sends %d bytes per rank but receives %d", sbytes, rbytes);
    }
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_scatterv(call, c, sbuf, 1, NULL, NULL, rbuf, rbytes, root,
                                  wmpi_next_tag(c));
    return wmpi_flat_scatterv(call, c, sbuf, 1, NULL, NULL, rbuf, rbytes, root, wmpi_next_tag(c));
}
WMPI_ALIAS(WAITIO_MPI_Scatter, waitio_mpi_scatter);

/* waitio_mpi_scatterv: member r gets scounts[r] elements of stype from root's sbuf at
 * displs[r] (in elements), as rcount elements of rtype. */
int waitio_mpi_scatterv(const void *sbuf, const int *scounts, const int *displs,
                        WAITIO_MPI_Datatype stype, void *rbuf, int rcount,
                        WAITIO_MPI_Datatype rtype, int root, WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_scatterv";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, root);
    int rbytes, *cnt = NULL, rc;
    size_t *dsp = NULL;

    if (!c || wmpi_int_bytes(call, rcount, rtype, &rbytes))
        return 1;
    if (c->rank == root && wmpi_v_bytes(call, c, scounts, displs, stype, &cnt, &dsp)) {
        free(cnt), free(dsp);
        return 1;
    }
    if (c->kind == WMPI_UNIVERSE)
        rc = wmpi_king_scatterv(call, c, sbuf, 0, cnt, dsp, rbuf, rbytes, root, wmpi_next_tag(c));
    else
        rc = wmpi_flat_scatterv(call, c, sbuf, 0, cnt, dsp, rbuf, rbytes, root, wmpi_next_tag(c));
    free(cnt), free(dsp);
    return rc;
}
WMPI_ALIAS(WAITIO_MPI_Scatterv, waitio_mpi_scatterv);

/* waitio_mpi_gatherv: root's rbuf gets member r's scount elements at displs[r] (elements
 * of rtype, rcounts[r] of them). */
int waitio_mpi_gatherv(const void *sbuf, int scount, WAITIO_MPI_Datatype stype, void *rbuf,
                       const int *rcounts, const int *displs, WAITIO_MPI_Datatype rtype, int root,
                       WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_gatherv";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, root);
    int sbytes, *cnt = NULL, rc;
    size_t *dsp = NULL;

    if (!c || wmpi_int_bytes(call, scount, stype, &sbytes))
        return 1;
    if (c->rank == root && wmpi_v_bytes(call, c, rcounts, displs, rtype, &cnt, &dsp)) {
        free(cnt), free(dsp);
        return 1;
    }
    if (c->kind == WMPI_UNIVERSE)
        rc = wmpi_king_gatherv(call, c, sbuf, sbytes, rbuf, 0, cnt, dsp, root, wmpi_next_tag(c));
    else
        rc = wmpi_flat_gatherv(call, c, sbuf, sbytes, rbuf, 0, cnt, dsp, root, wmpi_next_tag(c));
    free(cnt), free(dsp);
    return rc;
}
WMPI_ALIAS(WAITIO_MPI_Gatherv, waitio_mpi_gatherv);

/* waitio_mpi_barrier: returns once every member has entered it. */
int waitio_mpi_barrier(WAITIO_MPI_Comm comm)
{
    static const char call[] = "waitio_mpi_barrier";
    struct wmpi_comm *c = wmpi_coll_comm(call, comm, 0);

    if (!c)
        return 1;
    if (c->kind == WMPI_UNIVERSE)
        return wmpi_king_barrier(call, c, wmpi_next_tag(c));
    return wmpi_flat_barrier(call, c, wmpi_next_tag(c));
}
WMPI_ALIAS(WAITIO_MPI_Barrier, waitio_mpi_barrier);
