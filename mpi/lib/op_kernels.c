/*
 * op_kernels.c: which predefined reduction applies to which MPI type (MPI-3.1 section
 * 5.9.2), and the way to the loops themselves, which are the CAD executor's CALC kernels
 * (mpi/cad/cad_calc.c): the library and the kernel run the same code, once.
 *
 *   MAX MIN              integers, floating point
 *   SUM PROD             integers, floating point, complex
 *   LAND LOR LXOR        integers, C_BOOL
 *   BAND BOR BXOR        integers (MPI_BYTE included)
 *   MINLOC MAXLOC        the value-index pairs
 *
 * "Integers" are the C integer types, INT8_T..UINT64_T, AINT, OFFSET, COUNT, and, as in
 * Open MPI (the reference the test programs are compared with), MPI_CHAR and MPI_BYTE for
 * every integer operation. WCHAR and PACKED take none. Each MPI type maps to the CAD
 * element type of its representation, and cad_op_defined's table is MPI's.
 */
#include "op_impl.h"
#include "cad.h"
#include <stddef.h>
#include <string.h>

/* The CAD element type of a C integer type by its size and signedness. */
static int int_type(size_t size, int is_signed)
{
    switch (size) {
    case 1:
        return is_signed ? CAD_T_INT8 : CAD_T_UINT8;
    case 2:
        return is_signed ? CAD_T_INT16 : CAD_T_UINT16;
    case 4:
        return is_signed ? CAD_T_INT32 : CAD_T_UINT32;
    case 8:
        return is_signed ? CAD_T_INT64 : CAD_T_UINT64;
    default:
        return 0;
    }
}

static int cad_type(int code)
{
    switch (code) {
    case DT_CHAR:
        return int_type(1, (char)-1 < 0);
    case DT_SCHAR:
    case DT_INT8:
        return CAD_T_INT8;
    case DT_UCHAR:
    case DT_BYTE: /* every integer op, as Open MPI: not CAD_T_BYTE's bitwise ones only */
    case DT_UINT8:
        return CAD_T_UINT8;
    case DT_SHORT:
        return int_type(sizeof(short), 1);
    case DT_USHORT:
        return int_type(sizeof(short), 0);
    case DT_INT16:
        return CAD_T_INT16;
    case DT_UINT16:
        return CAD_T_UINT16;
    case DT_INT:
        return int_type(sizeof(int), 1);
    case DT_UINT:
        return int_type(sizeof(int), 0);
    case DT_INT32:
        return CAD_T_INT32;
    case DT_UINT32:
        return CAD_T_UINT32;
    case DT_LONG:
        return int_type(sizeof(long), 1);
    case DT_ULONG:
        return int_type(sizeof(long), 0);
    case DT_LLONG:
        return int_type(sizeof(long long), 1);
    case DT_ULLONG:
        return int_type(sizeof(long long), 0);
    case DT_INT64:
        return CAD_T_INT64;
    case DT_UINT64:
        return CAD_T_UINT64;
    case DT_AINT:
        return int_type(sizeof(MPI_Aint), 1);
    case DT_COUNT:
        return int_type(sizeof(MPI_Count), 1);
    case DT_OFFSET:
        return int_type(sizeof(MPI_Offset), 1);
    case DT_FLOAT:
        return CAD_T_FLOAT;
    case DT_DOUBLE:
        return CAD_T_DOUBLE;
    case DT_LDOUBLE:
        return CAD_T_LONG_DOUBLE;
    case DT_CFLOAT:
        return CAD_T_C_FLOAT_COMPLEX;
    case DT_CDOUBLE:
        return CAD_T_C_DOUBLE_COMPLEX;
    case DT_CLDOUBLE:
        return CAD_T_C_LONG_DOUBLE_COMPLEX;
    case DT_BOOL:
        return CAD_T_BOOL;
    case DT_FLOAT_INT:
        return CAD_T_FLOAT_INT;
    case DT_DOUBLE_INT:
        return CAD_T_DOUBLE_INT;
    case DT_LONG_INT:
        return CAD_T_LONG_INT;
    case DT_2INT:
        return CAD_T_2INT;
    case DT_SHORT_INT:
        return CAD_T_SHORT_INT;
    case DT_LDOUBLE_INT:
        return CAD_T_LONG_DOUBLE_INT;
    default: /* WCHAR, PACKED, derived */
        return 0;
    }
}

static int cad_op(int op)
{
    static const int map[OP_NKERNELS] = {
        [OP_MAX] = CAD_OP_MAX,   [OP_MIN] = CAD_OP_MIN,       [OP_SUM] = CAD_OP_SUM,
        [OP_PROD] = CAD_OP_PROD, [OP_LAND] = CAD_OP_LAND,     [OP_BAND] = CAD_OP_BAND,
        [OP_LOR] = CAD_OP_LOR,   [OP_BOR] = CAD_OP_BOR,       [OP_LXOR] = CAD_OP_LXOR,
        [OP_BXOR] = CAD_OP_BXOR, [OP_MINLOC] = CAD_OP_MINLOC, [OP_MAXLOC] = CAD_OP_MAXLOC,
    };
    return op >= 0 && op < OP_NKERNELS ? map[op] : 0;
}

/* Task context. */
int op_kernel(int op, int code, struct op_kern *k)
{
    int t = cad_type(code), o = cad_op(op);
    if (!t || !o || !cad_op_defined(o, t))
        return 0;
    k->op = o;
    k->dtype = t;
    k->pair = code >= DT_FLOAT_INT && code <= DT_LDOUBLE_INT;
    return 1;
}

/* Packed MINLOC/MAXLOC pairs are the value then the index (an int), no padding; the
 * kernels take their C struct (value at 0, index at `ioff`): go through struct-laid
 * temporaries, a batch at a time. */
static const struct {
    int dtype;
    size_t vsz, ioff;
} pairs[] = {
    {CAD_T_FLOAT_INT, sizeof(float), offsetof(struct dt_float_int, i)},
    {CAD_T_DOUBLE_INT, sizeof(double), offsetof(struct dt_double_int, i)},
    {CAD_T_LONG_INT, sizeof(long), offsetof(struct dt_long_int, i)},
    {CAD_T_2INT, sizeof(int), offsetof(struct dt_2int, i)},
    {CAD_T_SHORT_INT, sizeof(short), offsetof(struct dt_short_int, i)},
    {CAD_T_LONG_DOUBLE_INT, sizeof(long double), offsetof(struct dt_ldouble_int, i)},
};

static void packed_pairs(const struct op_kern *k, const char *in, char *inout, size_t n)
{
    enum { BATCH = 64, MAXSZ = sizeof(struct dt_ldouble_int) };
    _Alignas(16) char a[BATCH * MAXSZ], b[BATCH * MAXSZ];
    size_t p = 0;
    while (pairs[p].dtype != k->dtype)
        p++;
    size_t ssz = cad_type_size(k->dtype), vsz = pairs[p].vsz, ioff = pairs[p].ioff;
    size_t psz = vsz + sizeof(int);
    for (size_t done = 0; done < n; done += BATCH) {
        size_t m = n - done < BATCH ? n - done : BATCH;
        for (size_t i = 0; i < m; i++) {
            const char *x = in + (done + i) * psz, *y = inout + (done + i) * psz;
            memcpy(a + i * ssz, x, vsz);
            memcpy(a + i * ssz + ioff, x + vsz, sizeof(int));
            memcpy(b + i * ssz, y, vsz);
            memcpy(b + i * ssz + ioff, y + vsz, sizeof(int));
        }
        cad_calc_apply(k->op, k->dtype, a, b, m);
        for (size_t i = 0; i < m; i++) {
            char *y = inout + (done + i) * psz;
            memcpy(y, b + i * ssz, vsz);
            memcpy(y + vsz, b + i * ssz + ioff, sizeof(int));
        }
    }
}

/* Task context. */
void op_kernel_run(const struct op_kern *k, const char *in, char *inout, size_t n, int packed)
{
    if (k->pair && packed)
        packed_pairs(k, in, inout, n);
    else
        cad_calc_apply(k->op, k->dtype, in, inout, n);
}
