/*
 * op_impl.h: the reduction operation object, shared by op.c (objects, op_ functions,
 * MPI_Op_*) and op_kernels.c (the loops of the predefined operations).
 */
#ifndef MPI_OP_IMPL_H
#define MPI_OP_IMPL_H
#include "dtype_impl.h"

#define OP_MAGIC 0x4f704f70u /* "OpOp": set while the object is alive */

/* The predefined operations with kernels come first, in this order. */
enum op_code {
    OP_MAX,
    OP_MIN,
    OP_SUM,
    OP_PROD,
    OP_LAND,
    OP_BAND,
    OP_LOR,
    OP_BOR,
    OP_LXOR,
    OP_BXOR,
    OP_MINLOC,
    OP_MAXLOC,
    OP_NKERNELS,
    OP_REPLACE = OP_NKERNELS,
    OP_NO_OP,
    OP_USER
};

struct mpi_op_s {
    uint32_t magic;
    int refs;       /* the user's handle and pending operations */
    int predefined; /* never freed */
    int code;       /* enum op_code */
    int commute;
    MPI_User_function *fn; /* OP_USER */
};

/* The kernel of a predefined operation on a predefined type (op_kernels.c): the CAD
 * executor's CALC op and element type (mpi/cad/cad_calc.c runs both). */
struct op_kern {
    int op, dtype;
    int pair; /* a MINLOC/MAXLOC pair type */
};

/* Task context. 1 and *k filled for predefined operation `op` (< OP_NKERNELS) on
 * predefined type `code` (enum dt_code), 0 where MPI does not define the operation. */
int op_kernel(int op, int code, struct op_kern *k);
/* Task context. inout[i] = in[i] op inout[i] for n consecutive elements. With `packed`,
 * the MINLOC/MAXLOC pairs are packed (value then index, no padding) instead of laid out as
 * their C struct; other types are the same both ways. */
void op_kernel_run(const struct op_kern *k, const char *in, char *inout, size_t n, int packed);

#endif
