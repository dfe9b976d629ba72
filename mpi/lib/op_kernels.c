/*
 * op_kernels.c: the loops of the predefined reductions, one per (operation, C type), and
 * which MPI type gets which (MPI-3.1 section 5.9.2):
 *
 *   MAX MIN              integers, floating point
 *   SUM PROD             integers, floating point, complex
 *   LAND LOR LXOR        integers, C_BOOL
 *   BAND BOR BXOR        integers (MPI_BYTE included)
 *   MINLOC MAXLOC        the value-index pairs
 *
 * "Integers" are the C integer types, INT8_T..UINT64_T, AINT, OFFSET, COUNT, and, as in
 * Open MPI (the reference the test programs are compared with), MPI_CHAR and MPI_BYTE for
 * every integer operation. WCHAR and PACKED take none.
 *
 * Elements are loaded and stored with memcpy: derived types can place them anywhere, and
 * the compiler turns fixed-size copies into plain loads. Integer sums and products are
 * computed unsigned, so that they wrap instead of overflowing (undefined in C).
 */
#include "op_impl.h"
#include <string.h>

/* y = EXPR(x, y) over n elements of T; x from in (the earlier operand), y from inout. */
#define LOOP(T, EXPR)                                                                              \
    for (size_t i = 0; i < n; i++) {                                                               \
        T x, y;                                                                                    \
        memcpy(&x, in + i * sizeof(T), sizeof x);                                                  \
        memcpy(&y, inout + i * sizeof(T), sizeof y);                                               \
        y = (T)(EXPR);                                                                             \
        memcpy(inout + i * sizeof(T), &y, sizeof y);                                               \
    }

#define KERNEL(N, T, EXPR)                                                                         \
    static void N(const char *in, char *inout, size_t n, int packed)                               \
    {                                                                                              \
        LOOP(T, EXPR)                                                                              \
    }

/* U: the unsigned type the arithmetic is done in (at least unsigned int: narrower types
 * would be promoted to int and could overflow in a product). */
#define INT_KERNELS(N, T, U)                                                                       \
    KERNEL(N##_max, T, x > y ? x : y)                                                              \
    KERNEL(N##_min, T, x < y ? x : y)                                                              \
    KERNEL(N##_sum, T, ((U)x + (U)y))                                                              \
    KERNEL(N##_prod, T, ((U)x * (U)y))                                                             \
    KERNEL(N##_land, T, (x && y))                                                                  \
    KERNEL(N##_lor, T, x || y)                                                                     \
    KERNEL(N##_lxor, T, !x != !y)                                                                  \
    KERNEL(N##_band, T, (x & y))                                                                   \
    KERNEL(N##_bor, T, x | y)                                                                      \
    KERNEL(N##_bxor, T, x ^ y)                                                                     \
    static op_kernel_fn *const N##_ops[OP_NKERNELS] = {                                            \
        [OP_MAX] = N##_max,   [OP_MIN] = N##_min,   [OP_SUM] = N##_sum,   [OP_PROD] = N##_prod,    \
        [OP_LAND] = N##_land, [OP_LOR] = N##_lor,   [OP_LXOR] = N##_lxor, [OP_BAND] = N##_band,    \
        [OP_BOR] = N##_bor,   [OP_BXOR] = N##_bxor,                                                \
    };

INT_KERNELS(i8, int8_t, unsigned)
INT_KERNELS(u8, uint8_t, unsigned)
INT_KERNELS(i16, int16_t, unsigned)
INT_KERNELS(u16, uint16_t, unsigned)
INT_KERNELS(i32, int32_t, uint32_t)
INT_KERNELS(u32, uint32_t, uint32_t)
INT_KERNELS(i64, int64_t, uint64_t)
INT_KERNELS(u64, uint64_t, uint64_t)

#define FLOAT_KERNELS(N, T)                                                                        \
    KERNEL(N##_max, T, x > y ? x : y)                                                              \
    KERNEL(N##_min, T, x < y ? x : y)                                                              \
    KERNEL(N##_sum, T, x + y)                                                                      \
    KERNEL(N##_prod, T, (x * y))                                                                   \
    static op_kernel_fn *const N##_ops[OP_NKERNELS] = {                                            \
        [OP_MAX] = N##_max, [OP_MIN] = N##_min, [OP_SUM] = N##_sum, [OP_PROD] = N##_prod};

FLOAT_KERNELS(f32, float)
FLOAT_KERNELS(f64, double)
FLOAT_KERNELS(f80, long double)

/* Complex numbers as (re, im) pairs of reals: C's complex product may call libgcc, which
 * the unikernel does not link. */
#define COMPLEX_KERNELS(N, R)                                                                      \
    typedef struct {                                                                               \
        R re, im;                                                                                  \
    } N##_t;                                                                                       \
    static N##_t N##_add(N##_t a, N##_t b)                                                         \
    {                                                                                              \
        return (N##_t){a.re + b.re, a.im + b.im};                                                  \
    }                                                                                              \
    static N##_t N##_mul(N##_t a, N##_t b)                                                         \
    {                                                                                              \
        return (N##_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};                      \
    }                                                                                              \
    static void N##_sum(const char *in, char *inout, size_t n, int packed)                         \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            N##_t x, y;                                                                            \
            memcpy(&x, in + i * sizeof x, sizeof x);                                               \
            memcpy(&y, inout + i * sizeof y, sizeof y);                                            \
            y = N##_add(x, y);                                                                     \
            memcpy(inout + i * sizeof y, &y, sizeof y);                                            \
        }                                                                                          \
    }                                                                                              \
    static void N##_prod(const char *in, char *inout, size_t n, int packed)                        \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            N##_t x, y;                                                                            \
            memcpy(&x, in + i * sizeof x, sizeof x);                                               \
            memcpy(&y, inout + i * sizeof y, sizeof y);                                            \
            y = N##_mul(x, y);                                                                     \
            memcpy(inout + i * sizeof y, &y, sizeof y);                                            \
        }                                                                                          \
    }                                                                                              \
    static op_kernel_fn *const N##_ops[OP_NKERNELS] = {[OP_SUM] = N##_sum, [OP_PROD] = N##_prod};

COMPLEX_KERNELS(c32, float)
COMPLEX_KERNELS(c64, double)
COMPLEX_KERNELS(c80, long double)

/* C_BOOL through unsigned char: any non-zero byte is true (a _Bool load of another value
 * would be undefined), the result is 0 or 1. */
KERNEL(bool_land, unsigned char, (x && y))
KERNEL(bool_lor, unsigned char, x || y)
KERNEL(bool_lxor, unsigned char, !x != !y)
static op_kernel_fn *const bool_ops[OP_NKERNELS] = {
    [OP_LAND] = bool_land, [OP_LOR] = bool_lor, [OP_LXOR] = bool_lxor};

/* MINLOC/MAXLOC on pairs of struct ST, value type V. On equal values the lower index wins
 * (MPI's rule, for both). Packed pairs are the value then the index, without padding. */
#define PAIR_KERNELS(N, ST, V)                                                                     \
    static void N##_loc(const char *in, char *inout, size_t n, int packed, int max)                \
    {                                                                                              \
        size_t step = packed ? sizeof(V) + sizeof(int) : sizeof(ST);                               \
        size_t io = packed ? sizeof(V) : offsetof(ST, i);                                          \
        for (size_t k = 0; k < n; k++) {                                                           \
            const char *a = in + k * step;                                                         \
            char *b = inout + k * step;                                                            \
            V xv, yv;                                                                              \
            int xi, yi;                                                                            \
            memcpy(&xv, a, sizeof xv);                                                             \
            memcpy(&xi, a + io, sizeof xi);                                                        \
            memcpy(&yv, b, sizeof yv);                                                             \
            memcpy(&yi, b + io, sizeof yi);                                                        \
            if (max ? xv > yv : xv < yv) {                                                         \
                memcpy(b, &xv, sizeof xv);                                                         \
                memcpy(b + io, &xi, sizeof xi);                                                    \
            } else if (xv == yv && xi < yi) {                                                      \
                memcpy(b + io, &xi, sizeof xi);                                                    \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void N##_minloc(const char *in, char *inout, size_t n, int packed)                      \
    {                                                                                              \
        N##_loc(in, inout, n, packed, 0);                                                          \
    }                                                                                              \
    static void N##_maxloc(const char *in, char *inout, size_t n, int packed)                      \
    {                                                                                              \
        N##_loc(in, inout, n, packed, 1);                                                          \
    }                                                                                              \
    static op_kernel_fn *const N##_ops[OP_NKERNELS] = {                                            \
        [OP_MINLOC] = N##_minloc, [OP_MAXLOC] = N##_maxloc};

PAIR_KERNELS(float_int, struct dt_float_int, float)
PAIR_KERNELS(double_int, struct dt_double_int, double)
PAIR_KERNELS(long_int, struct dt_long_int, long)
PAIR_KERNELS(two_int, struct dt_2int, int)
PAIR_KERNELS(short_int, struct dt_short_int, short)
PAIR_KERNELS(ldouble_int, struct dt_ldouble_int, long double)

/* The integer kernels of a C integer type by its size and signedness. */
static op_kernel_fn *const *int_ops(size_t size, int is_signed)
{
    switch (size) {
    case 1:
        return is_signed ? i8_ops : u8_ops;
    case 2:
        return is_signed ? i16_ops : u16_ops;
    case 4:
        return is_signed ? i32_ops : u32_ops;
    case 8:
        return is_signed ? i64_ops : u64_ops;
    default:
        return NULL;
    }
}

static op_kernel_fn *const *type_ops(int code)
{
    switch (code) {
    case DT_CHAR:
        return int_ops(1, (char)-1 < 0);
    case DT_SCHAR:
    case DT_INT8:
        return i8_ops;
    case DT_UCHAR:
    case DT_BYTE:
    case DT_UINT8:
        return u8_ops;
    case DT_SHORT:
        return int_ops(sizeof(short), 1);
    case DT_USHORT:
        return int_ops(sizeof(short), 0);
    case DT_INT16:
        return i16_ops;
    case DT_UINT16:
        return u16_ops;
    case DT_INT:
        return int_ops(sizeof(int), 1);
    case DT_UINT:
        return int_ops(sizeof(int), 0);
    case DT_INT32:
        return i32_ops;
    case DT_UINT32:
        return u32_ops;
    case DT_LONG:
        return int_ops(sizeof(long), 1);
    case DT_ULONG:
        return int_ops(sizeof(long), 0);
    case DT_LLONG:
        return int_ops(sizeof(long long), 1);
    case DT_ULLONG:
        return int_ops(sizeof(long long), 0);
    case DT_INT64:
        return i64_ops;
    case DT_UINT64:
        return u64_ops;
    case DT_AINT:
        return int_ops(sizeof(MPI_Aint), 1);
    case DT_COUNT:
        return int_ops(sizeof(MPI_Count), 1);
    case DT_OFFSET:
        return int_ops(sizeof(MPI_Offset), 1);
    case DT_FLOAT:
        return f32_ops;
    case DT_DOUBLE:
        return f64_ops;
    case DT_LDOUBLE:
        return f80_ops;
    case DT_CFLOAT:
        return c32_ops;
    case DT_CDOUBLE:
        return c64_ops;
    case DT_CLDOUBLE:
        return c80_ops;
    case DT_BOOL:
        return bool_ops;
    case DT_FLOAT_INT:
        return float_int_ops;
    case DT_DOUBLE_INT:
        return double_int_ops;
    case DT_LONG_INT:
        return long_int_ops;
    case DT_2INT:
        return two_int_ops;
    case DT_SHORT_INT:
        return short_int_ops;
    case DT_LDOUBLE_INT:
        return ldouble_int_ops;
    default: /* WCHAR, PACKED, derived */
        return NULL;
    }
}

/* Task context. */
op_kernel_fn *op_kernel(int op, int code)
{
    op_kernel_fn *const *ops = type_ops(code);
    return ops && op >= 0 && op < OP_NKERNELS ? ops[op] : NULL;
}
