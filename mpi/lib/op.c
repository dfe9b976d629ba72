/*
 * op.c: reduction operations: the predefined ones, user ones (MPI_Op_create), and
 * applying them (op_apply on buffers laid out as the datatype says, op_apply_packed on
 * packed data; see mpi_impl.h). The loops themselves are in op_kernels.c.
 */
#include "op_impl.h"
#include <stdlib.h>
#include <string.h>

#define OP_PRE(var, cd) struct mpi_op_s var = {OP_MAGIC, 1, 1, cd, 1, NULL}

/* MPI: every predefined operation is commutative. */
OP_PRE(mpi_op_max_, OP_MAX);
OP_PRE(mpi_op_min_, OP_MIN);
OP_PRE(mpi_op_sum_, OP_SUM);
OP_PRE(mpi_op_prod_, OP_PROD);
OP_PRE(mpi_op_land_, OP_LAND);
OP_PRE(mpi_op_band_, OP_BAND);
OP_PRE(mpi_op_lor_, OP_LOR);
OP_PRE(mpi_op_bor_, OP_BOR);
OP_PRE(mpi_op_lxor_, OP_LXOR);
OP_PRE(mpi_op_bxor_, OP_BXOR);
OP_PRE(mpi_op_minloc_, OP_MINLOC);
OP_PRE(mpi_op_maxloc_, OP_MAXLOC);
OP_PRE(mpi_op_replace_, OP_REPLACE);
OP_PRE(mpi_op_no_op_, OP_NO_OP);

static char *at(const void *base, MPI_Aint off)
{
    return (char *)((uintptr_t)base + (uintptr_t)off);
}

static int op_valid(MPI_Op op)
{
    return op && op->magic == OP_MAGIC && op->refs > 0;
}

/* Task context. */
void op_retain(MPI_Op op)
{
    if (op && !op->predefined)
        op->refs++;
}

/* Task context. */
void op_release(MPI_Op op)
{
    if (!op || op->predefined || --op->refs > 0)
        return;
    op->magic = 0;
    free(op);
}

/* Task context. */
int op_commutative(MPI_Op op)
{
    return op->commute;
}

/* Task context. */
int op_check(MPI_Op op, MPI_Datatype dt)
{
    if (!op_valid(op) || op->code == OP_REPLACE || op->code == OP_NO_OP)
        return MPI_ERR_OP;
    if (dt_check(dt))
        return MPI_ERR_TYPE;
    if (op->code == OP_USER)
        return MPI_SUCCESS;
    MPI_Datatype b = dt_basic(dt);
    struct op_kern k;
    return b && op_kernel(op->code, b->code, &k) ? MPI_SUCCESS : MPI_ERR_TYPE;
}

struct run_ctx {
    struct op_kern k;
    int replace; /* MPI_REPLACE */
    const void *in;
    void *inout;
};

/* One run of n elements of a predefined type, at the same offset in both buffers. */
static void run(void *ctx, MPI_Aint off, MPI_Datatype leaf, size_t n)
{
    struct run_ctx *c = ctx;
    if (!c->replace)
        op_kernel_run(&c->k, at(c->in, off), at(c->inout, off), n, 0);
    else /* the data bytes: up to the last element's end, not its padding */
        memcpy(at(c->inout, off), at(c->in, off),
               (n - 1) * (size_t)dt_extent(leaf) + leaf->true_ub);
}

/* Task context. */
int op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    if (!op_valid(op))
        return MPI_ERR_OP;
    if (count <= 0 || op->code == OP_NO_OP)
        return MPI_SUCCESS;
    if (op->code == OP_USER) {
        int len = count;
        MPI_Datatype d = dt;
        op->fn((void *)in, inout, &len, &d);
        return MPI_SUCCESS;
    }
    struct run_ctx c = {.replace = op->code == OP_REPLACE, .in = in, .inout = inout};
    if (!c.replace) {
        MPI_Datatype b = dt_basic(dt);
        if (!b || !op_kernel(op->code, b->code, &c.k))
            return MPI_ERR_OP;
    }
    dt_runs(dt, (size_t)count, run, &c);
    return MPI_SUCCESS;
}

/* A user op on packed data: unpack both operands into temporaries laid out as dt, apply,
 * pack the result back. The temporaries cover the data bytes of count elements. */
static int user_packed(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    MPI_Aint ext = dt_extent(dt), last = (MPI_Aint)(count - 1) * ext;
    MPI_Aint lo = dt_true_lb(dt) + (last < 0 ? last : 0);
    MPI_Aint hi = dt_true_lb(dt) + dt_true_extent(dt) + (last > 0 ? last : 0);
    size_t span = (size_t)(hi - lo), bytes = (size_t)count * dt_size(dt);
    char *a = malloc(span ? span : 1), *b = malloc(span ? span : 1);
    if (!a || !b) {
        free(a);
        free(b);
        return MPI_ERR_NO_MEM;
    }
    char *ba = at(a, -lo), *bb = at(b, -lo); /* buffers whose data starts at a and b */
    dt_unpack(in, bytes, ba, count, dt);
    dt_unpack(inout, bytes, bb, count, dt);
    int len = count;
    MPI_Datatype d = dt;
    op->fn(ba, bb, &len, &d);
    dt_pack(bb, count, dt, inout);
    free(a);
    free(b);
    return MPI_SUCCESS;
}

/* Task context. */
int op_apply_packed(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    if (!op_valid(op))
        return MPI_ERR_OP;
    if (count <= 0 || op->code == OP_NO_OP)
        return MPI_SUCCESS;
    if (op->code == OP_USER)
        return user_packed(op, in, inout, count, dt);
    size_t bytes = (size_t)count * dt_size(dt);
    if (op->code == OP_REPLACE) {
        memcpy(inout, in, bytes);
        return MPI_SUCCESS;
    }
    /* Packed, elements of dt are just its basic elements one after the other. */
    MPI_Datatype b = dt_basic(dt);
    struct op_kern k;
    if (!b || !op_kernel(op->code, b->code, &k))
        return MPI_ERR_OP;
    op_kernel_run(&k, in, inout, bytes / dt_size(b), 1);
    return MPI_SUCCESS;
}

/* --- MPI_Op_ --------------------------------------------------------------------------- */

/* Task context. */
int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn || !op)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Op_create");
    MPI_Op o = malloc(sizeof *o);
    if (!o)
        return err_raise(NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
    *o = (struct mpi_op_s){OP_MAGIC, 1, 0, OP_USER, commute != 0, user_fn};
    *op = o;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Op_free(MPI_Op *op)
{
    if (!op)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Op_free");
    if (!op_valid(*op) || (*op)->predefined)
        return err_raise(NULL, MPI_ERR_OP, "MPI_Op_free");
    op_release(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Op_commutative(MPI_Op op, int *commute)
{
    if (!op_valid(op))
        return err_raise(NULL, MPI_ERR_OP, "MPI_Op_commutative");
    if (!commute)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Op_commutative");
    *commute = op->commute;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    static const char fn[] = "MPI_Reduce_local";
    int rc = count < 0 ? MPI_ERR_COUNT : op_check(op, datatype);
    /* NULL is MPI_BOTTOM (absolute displacements): legal; MPI_IN_PLACE is not. */
    if (!rc && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE))
        rc = MPI_ERR_BUFFER;
    if (rc)
        return err_raise(NULL, rc, fn);
    return err_raise(NULL, op_apply(op, inbuf, inoutbuf, count, datatype), fn);
}
