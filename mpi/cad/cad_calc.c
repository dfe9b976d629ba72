/*
 * cad_calc.c: the CALC kernels: inout[i] = in[i] op inout[i] for MPI's predefined ops on
 * the basic types, in place. They run in interrupt context (the executor calls them where
 * the RECV that feeds them completed), so they are plain loops: no allocation, no locks,
 * no libc beyond memcpy.
 *
 * Buffers come from the application and need not be aligned to their type (MPI does not
 * promise it), so every element is loaded and stored with a fixed-size memcpy, which the
 * compiler turns into one plain move. Integer arithmetic is done in an unsigned type at
 * least as wide as `unsigned int`: MPI's reductions wrap on overflow, and signed overflow
 * (or uint16_t * uint16_t promoted to int) would be undefined behaviour in C.
 */
#include "cad_internal.h"
#include <string.h>

typedef int (*kernel_fn)(int op, const char *in, char *io, uint64_t n);

/* One pass over the elements: a, b are in[i], inout[i]; `expr` is the result. */
#define LOOP(T, expr)                                                                              \
    for (uint64_t i = 0; i < n; i++) {                                                             \
        T a, b, r;                                                                                 \
        memcpy(&a, in + i * sizeof(T), sizeof(T));                                                 \
        memcpy(&b, io + i * sizeof(T), sizeof(T));                                                 \
        r = (expr);                                                                                \
        memcpy(io + i * sizeof(T), &r, sizeof(T));                                                 \
    }                                                                                              \
    return 0

/* Integers: every op but MINLOC/MAXLOC. U is the unsigned type the arithmetic wraps in. */
#define INT_KERNEL(name, T, U)                                                                     \
    static int name(int op, const char *in, char *io, uint64_t n)                                  \
    {                                                                                              \
        switch (op) {                                                                              \
        case CAD_OP_SUM:                                                                           \
            LOOP(T, (T)((U)a + (U)b));                                                             \
        case CAD_OP_PROD:                                                                          \
            LOOP(T, (T)((U)a * (U)b));                                                             \
        case CAD_OP_MIN:                                                                           \
            LOOP(T, a < b ? a : b);                                                                \
        case CAD_OP_MAX:                                                                           \
            LOOP(T, a > b ? a : b);                                                                \
        case CAD_OP_LAND:                                                                          \
            LOOP(T, (T)(a && b));                                                                  \
        case CAD_OP_LOR:                                                                           \
            LOOP(T, (T)(a || b));                                                                  \
        case CAD_OP_LXOR:                                                                          \
            LOOP(T, (T)(!a != !b));                                                                \
        case CAD_OP_BAND:                                                                          \
            LOOP(T, (T)(a & b));                                                                   \
        case CAD_OP_BOR:                                                                           \
            LOOP(T, (T)(a | b));                                                                   \
        case CAD_OP_BXOR:                                                                          \
            LOOP(T, (T)(a ^ b));                                                                   \
        }                                                                                          \
        return -CAD_EOPTYPE;                                                                       \
    }

INT_KERNEL(k_int8, int8_t, uint32_t)
INT_KERNEL(k_int16, int16_t, uint32_t)
INT_KERNEL(k_int32, int32_t, uint32_t)
INT_KERNEL(k_int64, int64_t, uint64_t)
INT_KERNEL(k_uint8, uint8_t, uint32_t)
INT_KERNEL(k_uint16, uint16_t, uint32_t)
INT_KERNEL(k_uint32, uint32_t, uint32_t)
INT_KERNEL(k_uint64, uint64_t, uint64_t)

#define FLOAT_KERNEL(name, T)                                                                      \
    static int name(int op, const char *in, char *io, uint64_t n)                                  \
    {                                                                                              \
        switch (op) {                                                                              \
        case CAD_OP_SUM:                                                                           \
            LOOP(T, a + b);                                                                        \
        case CAD_OP_PROD:                                                                          \
            LOOP(T, a *b);                                                                         \
        case CAD_OP_MIN:                                                                           \
            LOOP(T, a < b ? a : b);                                                                \
        case CAD_OP_MAX:                                                                           \
            LOOP(T, a > b ? a : b);                                                                \
        }                                                                                          \
        return -CAD_EOPTYPE;                                                                       \
    }

FLOAT_KERNEL(k_float, float)
FLOAT_KERNEL(k_double, double)
FLOAT_KERNEL(k_long_double, long double)

/* Complex numbers as (re, im) pairs of T, C's layout for _Complex. The product is written
 * out rather than using _Complex, whose multiplication calls libgcc's __mulsc3 family. */
#define COMPLEX_KERNEL(name, T)                                                                    \
    static int name(int op, const char *in, char *io, uint64_t n)                                  \
    {                                                                                              \
        if (op != CAD_OP_SUM && op != CAD_OP_PROD)                                                 \
            return -CAD_EOPTYPE;                                                                   \
        for (uint64_t i = 0; i < n; i++) {                                                         \
            T a[2], b[2], r[2];                                                                    \
            memcpy(a, in + i * sizeof a, sizeof a);                                                \
            memcpy(b, io + i * sizeof b, sizeof b);                                                \
            if (op == CAD_OP_SUM) {                                                                \
                r[0] = a[0] + b[0];                                                                \
                r[1] = a[1] + b[1];                                                                \
            } else {                                                                               \
                r[0] = a[0] * b[0] - a[1] * b[1];                                                  \
                r[1] = a[0] * b[1] + a[1] * b[0];                                                  \
            }                                                                                      \
            memcpy(io + i * sizeof r, r, sizeof r);                                                \
        }                                                                                          \
        return 0;                                                                                  \
    }

COMPLEX_KERNEL(k_c_float, float)
COMPLEX_KERNEL(k_c_double, double)
COMPLEX_KERNEL(k_c_long_double, long double)

/* C's _Bool as bytes: a byte other than 0 or 1 is not a valid _Bool, and application data
 * may hold one, so the values are read as uint8_t and any non-zero byte is true. */
static int k_bool(int op, const char *in, char *io, uint64_t n)
{
    switch (op) {
    case CAD_OP_LAND:
        LOOP(uint8_t, (uint8_t)(a && b));
    case CAD_OP_LOR:
        LOOP(uint8_t, (uint8_t)(a || b));
    case CAD_OP_LXOR:
        LOOP(uint8_t, (uint8_t)(!a != !b));
    }
    return -CAD_EOPTYPE;
}

static int k_byte(int op, const char *in, char *io, uint64_t n)
{
    switch (op) {
    case CAD_OP_BAND:
        LOOP(uint8_t, (uint8_t)(a & b));
    case CAD_OP_BOR:
        LOOP(uint8_t, (uint8_t)(a | b));
    case CAD_OP_BXOR:
        LOOP(uint8_t, (uint8_t)(a ^ b));
    }
    return -CAD_EOPTYPE;
}

/* MINLOC/MAXLOC (MPI 4.0, 6.9.4): the winning value with its index; on a tie, the smaller
 * index. Only the value and index fields are written, not the struct's padding. */
#define PAIR_KERNEL(name, P)                                                                       \
    static int name(int op, const char *in, char *io, uint64_t n)                                  \
    {                                                                                              \
        if (op != CAD_OP_MINLOC && op != CAD_OP_MAXLOC)                                            \
            return -CAD_EOPTYPE;                                                                   \
        for (uint64_t i = 0; i < n; i++) {                                                         \
            P a, b;                                                                                \
            char *p = io + i * sizeof(P);                                                          \
            memcpy(&a.v, in + i * sizeof(P) + offsetof(P, v), sizeof a.v);                         \
            memcpy(&a.i, in + i * sizeof(P) + offsetof(P, i), sizeof a.i);                         \
            memcpy(&b.v, p + offsetof(P, v), sizeof b.v);                                          \
            memcpy(&b.i, p + offsetof(P, i), sizeof b.i);                                          \
            int wins = op == CAD_OP_MINLOC ? a.v < b.v : a.v > b.v;                                \
            if (wins) {                                                                            \
                b.v = a.v;                                                                         \
                b.i = a.i;                                                                         \
            } else if (a.v == b.v && a.i < b.i) {                                                  \
                b.i = a.i;                                                                         \
            }                                                                                      \
            memcpy(p + offsetof(P, v), &b.v, sizeof b.v);                                          \
            memcpy(p + offsetof(P, i), &b.i, sizeof b.i);                                          \
        }                                                                                          \
        return 0;                                                                                  \
    }

PAIR_KERNEL(k_float_int, struct cad_float_int)
PAIR_KERNEL(k_double_int, struct cad_double_int)
PAIR_KERNEL(k_long_int, struct cad_long_int)
PAIR_KERNEL(k_2int, struct cad_2int)
PAIR_KERNEL(k_short_int, struct cad_short_int)
PAIR_KERNEL(k_long_double_int, struct cad_long_double_int)

static const kernel_fn kernels[CAD_T_COUNT] = {
    [CAD_T_INT8] = k_int8,
    [CAD_T_INT16] = k_int16,
    [CAD_T_INT32] = k_int32,
    [CAD_T_INT64] = k_int64,
    [CAD_T_UINT8] = k_uint8,
    [CAD_T_UINT16] = k_uint16,
    [CAD_T_UINT32] = k_uint32,
    [CAD_T_UINT64] = k_uint64,
    [CAD_T_FLOAT] = k_float,
    [CAD_T_DOUBLE] = k_double,
    [CAD_T_LONG_DOUBLE] = k_long_double,
    [CAD_T_C_FLOAT_COMPLEX] = k_c_float,
    [CAD_T_C_DOUBLE_COMPLEX] = k_c_double,
    [CAD_T_C_LONG_DOUBLE_COMPLEX] = k_c_long_double,
    [CAD_T_BOOL] = k_bool,
    [CAD_T_BYTE] = k_byte,
    [CAD_T_FLOAT_INT] = k_float_int,
    [CAD_T_DOUBLE_INT] = k_double_int,
    [CAD_T_LONG_INT] = k_long_int,
    [CAD_T_2INT] = k_2int,
    [CAD_T_SHORT_INT] = k_short_int,
    [CAD_T_LONG_DOUBLE_INT] = k_long_double_int,
};

/* Any context; see cad.h. */
int cad_calc_apply(int op, int dtype, const void *in, void *inout, uint64_t count)
{
    if (!cad_op_defined(op, dtype) || !kernels[dtype])
        return -CAD_EOPTYPE;
    return count ? kernels[dtype](op, in, inout, count) : 0;
}

/* Any context, interrupt included. The op/type and size checks repeat the validator's:
 * they are cheap, and a graph changed after validation must not make a kernel run wild. */
int cad_calc_run(const struct cad_node *n)
{
    if (!n || n->type != CAD_CALC)
        return -CAD_EINVAL;
    const struct cad_calcop *c = &n->u.c;
    if (c->op == CAD_OP_USER)
        return CAD_CALC_DEFERRED;
    if (!cad_op_defined(c->op, c->dtype) || !kernels[c->dtype])
        return -CAD_EOPTYPE;
    uint64_t bytes;
    if (__builtin_mul_overflow(c->count, cad_type_size(c->dtype), &bytes) || bytes != c->bytes)
        return -CAD_ECOUNT;
    return cad_calc_apply(c->op, c->dtype, (const void *)(uintptr_t)c->in,
                          (void *)(uintptr_t)c->inout, c->count);
}
