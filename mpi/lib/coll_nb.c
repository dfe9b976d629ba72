/*
 * coll_nb.c: the collectives as the MPI calls describe them, turned into a description in
 * packed bytes (struct cad_coll) and started as a graph (coll_run.c). Arguments are
 * checked by the callers (coll_api.c); everything here is task context and returns an
 * MPI error class, with *req the started collective.
 *
 * Buffers: a contiguous datatype's data is used in place (from buf + lb); any other is
 * packed into a temporary of the request at the start (data the graph reads) and/or
 * unpacked from one after completion (data it writes): coll_run.c's move list. Reductions run as the engine's
 * CALC kernels when the op is predefined on the type's one basic type (op_kernel, the same
 * kernels the library's own reductions use); otherwise (user ops, MINLOC/MAXLOC pairs,
 * which travel packed) the graph parks the CALC for the rank's own context, which applies
 * the op with op_apply_packed.
 */
#include "coll_impl.h"
#include "dtype_impl.h"
#include "op_impl.h"
#include <stdlib.h>
#include <string.h>

static size_t up64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static size_t bytes_of(int count, MPI_Datatype dt)
{
    return (size_t)count * dt_size(dt);
}

/* Room a buffer needs among the request's temporaries. */
static size_t temp_need(const void *buf, int count, MPI_Datatype dt)
{
    return buf && buf != MPI_IN_PLACE && count > 0 && !dt_contig(dt) ? up64(bytes_of(count, dt))
                                                                     : 0;
}

/* Data the graph reads. */
static const void *in_buf(struct coll_req *q, const void *buf, int count, MPI_Datatype dt)
{
    if (!buf || count <= 0)
        return buf;
    if (dt_contig(dt))
        return (const char *)buf + dt_lb(dt);
    void *t = coll_temp(q, bytes_of(count, dt));
    coll_pack_at_start(q, buf, count, dt, t);
    return t;
}

/* Data the graph writes (and reads first, with `also_in`). */
static void *out_buf(struct coll_req *q, void *buf, int count, MPI_Datatype dt, int also_in)
{
    if (!buf || count <= 0)
        return buf;
    if (dt_contig(dt))
        return (char *)buf + dt_lb(dt);
    size_t b = bytes_of(count, dt);
    void *t = coll_temp(q, b);
    if (also_in)
        coll_pack_at_start(q, buf, count, dt, t);
    coll_unpack_later(q, t, b, buf, count, dt);
    return t;
}

/* The reduction part of d: `count` elements of dt combined with op. Sets d->bytes. Returns
 * 1 if the op must run in the rank's context (q->op/q->dt to be set by the caller). */
static int reduction(struct cad_coll *d, MPI_Op op, MPI_Datatype dt, int count)
{
    d->bytes = bytes_of(count, dt);
    d->commutative = op_commutative(op);
    MPI_Datatype b = dt_basic(dt);
    struct op_kern k;
    if (b && op->code < OP_NKERNELS && op_kernel(op->code, b->code, &k) && !k.pair) {
        d->op = k.op;
        d->dtype = k.dtype;
        d->count = (uint64_t)count * (dt->size / b->size);
        return 0;
    }
    d->op = CAD_OP_USER;
    d->dtype = CAD_T_DERIVED;
    d->count = (uint64_t)count;
    d->user_op = 0;
    return 1;
}

/* Allocate and start: the common tail of every collective below. `use_op` from
 * reduction(). */
static int start(struct cad_coll *d, struct coll_req *q, int use_op, MPI_Op op, MPI_Datatype dt,
                 MPI_Request *req)
{
    if (use_op) {
        q->op = op;
        q->dt = dt;
    }
    return coll_issue(q, d, req);
}

int coll_ibarrier(MPI_Comm c, MPI_Request *req)
{
    struct cad_coll d = {.kind = CAD_K_BARRIER};
    int err = MPI_SUCCESS;
    struct coll_req *q = coll_alloc(c, &d, 0, 0, &err);
    return q ? coll_issue(q, &d, req) : err;
}

int coll_ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c, MPI_Request *req)
{
    struct cad_coll d = {.kind = CAD_K_BCAST, .root = root, .bytes = bytes_of(count, dt)};
    int err = MPI_SUCCESS;
    struct coll_req *q = coll_alloc(c, &d, temp_need(buf, count, dt), 1, &err);
    if (!q)
        return err;
    if (c->rank == root)
        d.sbuf = d.rbuf = (void *)in_buf(q, buf, count, dt);
    else
        d.sbuf = d.rbuf = out_buf(q, buf, count, dt, 0);
    return coll_issue(q, &d, req);
}

/* Reduce (root >= 0), Allreduce (root -1), Scan and Exscan (kind). */
static int ireduce_kind(int kind, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                        MPI_Op op, int root, MPI_Comm c, MPI_Request *req)
{
    struct cad_coll d = {.kind = kind, .root = root < 0 ? 0 : root};
    int use_op = reduction(&d, op, dt, count);
    int gets = kind != CAD_K_REDUCE || c->rank == root; /* this rank receives a result */
    d.in_place = sbuf == MPI_IN_PLACE;
    int err = MPI_SUCCESS;
    size_t need =
        (d.in_place ? 0 : temp_need(sbuf, count, dt)) + (gets ? temp_need(rbuf, count, dt) : 0);
    struct coll_req *q = coll_alloc(c, &d, need, 3, &err); /* sbuf in; rbuf in and out */
    if (!q)
        return err;
    d.sbuf = d.in_place ? 0 : in_buf(q, sbuf, count, dt);
    d.rbuf = gets ? out_buf(q, rbuf, count, dt, d.in_place) : 0;
    return start(&d, q, use_op, op, dt, req);
}

int coll_ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm c, MPI_Request *req)
{
    return ireduce_kind(CAD_K_REDUCE, sbuf, rbuf, count, dt, op, root, c, req);
}

int coll_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                    MPI_Request *req)
{
    return ireduce_kind(CAD_K_ALLREDUCE, sbuf, rbuf, count, dt, op, -1, c, req);
}

int coll_iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int exclusive,
               MPI_Comm c, MPI_Request *req)
{
    return ireduce_kind(exclusive ? CAD_K_EXSCAN : CAD_K_SCAN, sbuf, rbuf, count, dt, op, -1, c,
                        req);
}

int coll_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm c, MPI_Request *req)
{
    int n = c->size, total = 0;
    for (int i = 0; i < n; i++)
        total += rcounts[i];
    struct cad_coll d = {.kind = CAD_K_REDUCE_SCATTER};
    int use_op = reduction(&d, op, dt, total);
    d.in_place = sbuf == MPI_IN_PLACE;
    int mine = rcounts[c->rank], err = MPI_SUCCESS;
    /* In place, rbuf holds the whole input and the result lands at its start. */
    int rcount = d.in_place ? total : mine;
    uint64_t *counts = malloc(sizeof(uint64_t) * (size_t)n); /* read by the plan */
    if (!counts)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        counts[i] = bytes_of(rcounts[i], dt);
    d.counts = counts;
    size_t need = (d.in_place ? 0 : temp_need(sbuf, total, dt)) + temp_need(rbuf, rcount, dt);
    struct coll_req *q = coll_alloc(c, &d, need, 3, &err); /* sbuf in; rbuf in and out */
    if (!q) {
        free(counts);
        return err;
    }
    q->owned = counts;
    d.sbuf = d.in_place ? 0 : in_buf(q, sbuf, total, dt);
    d.rbuf = out_buf(q, rbuf, rcount, dt, d.in_place);
    return start(&d, q, use_op, op, dt, req);
}
