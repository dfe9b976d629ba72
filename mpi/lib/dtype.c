/*
 * dtype.c: datatype objects: the predefined types, the life of derived ones (allocation,
 * reference counts, destruction), their bounds and sizes computed from the constructor,
 * and the dt_ queries of mpi_impl.h. The MPI_Type_ constructors are in dtype_make.c, the
 * flattened form and packing in dtype_flat.c.
 */
#include "dtype_impl.h"
#include <stdlib.h>
#include <string.h>

/* --- predefined types ---------------------------------------------------------------- */

/* A basic type: one block of sizeof(ctype) bytes, its own basic type. */
#define DT_BASIC(var, ctype, cd, nm)                                                               \
    struct mpi_dtype_s var = {                                                                     \
        .magic = DT_MAGIC,                                                                         \
        .refs = 1,                                                                                 \
        .predefined = 1,                                                                           \
        .committed = 1,                                                                            \
        .code = cd,                                                                                \
        .combiner = MPI_COMBINER_NAMED,                                                            \
        .size = sizeof(ctype),                                                                     \
        .ub = sizeof(ctype),                                                                       \
        .true_ub = sizeof(ctype),                                                                  \
        .align = _Alignof(ctype),                                                                  \
        .nbasic = 1,                                                                               \
        .basic = &var,                                                                             \
        .flat = 1,                                                                                 \
        .contig = 1,                                                                               \
        .nsegs = 1,                                                                                \
        .segs = var.inl,                                                                           \
        .inl = {{0, 0, sizeof(ctype), 1, sizeof(ctype)}},                                          \
        .name = nm,                                                                                \
    }

/* A value-index pair with the layout of the C struct st, the extent of the struct,
 * padding included. MINLOC/MAXLOC take it as one basic type, and like Open MPI (the
 * reference) MPI_Get_elements counts a pair as one element: its data bytes are one
 * segment of that unit when value and index are adjacent, which is all but SHORT_INT
 * (short, 2 bytes of padding, int: two segments; a SHORT_INT cut after its value then
 * counts as an element, a corner case left as it is). */
#define PAIR_V(st)   sizeof(((st *)0)->v)
#define PAIR_ADJ(st) (offsetof(st, i) == PAIR_V(st))
#define DT_PAIR(var, st, cd, nm)                                                                   \
    struct mpi_dtype_s var = {                                                                     \
        .magic = DT_MAGIC,                                                                         \
        .refs = 1,                                                                                 \
        .predefined = 1,                                                                           \
        .committed = 1,                                                                            \
        .code = cd,                                                                                \
        .combiner = MPI_COMBINER_NAMED,                                                            \
        .size = PAIR_V(st) + sizeof(int),                                                          \
        .ub = sizeof(st),                                                                          \
        .true_ub = offsetof(st, i) + sizeof(int),                                                  \
        .align = _Alignof(st),                                                                     \
        .nbasic = 1,                                                                               \
        .basic = &var,                                                                             \
        .flat = 1,                                                                                 \
        .contig = sizeof(st) == PAIR_V(st) + sizeof(int),                                          \
        .nsegs = PAIR_ADJ(st) ? 1 : 2,                                                             \
        .segs = var.inl,                                                                           \
        .inl = {{0, 0, PAIR_ADJ(st) ? PAIR_V(st) + sizeof(int) : PAIR_V(st), 1,                    \
                 PAIR_ADJ(st) ? PAIR_V(st) + sizeof(int) : PAIR_V(st)},                            \
                {offsetof(st, i), 0, sizeof(int), 1, sizeof(int)}},                                \
        .name = nm,                                                                                \
    }

/* C has no complex type we rely on (its arithmetic may need libgcc): pairs of reals. */
typedef struct {
    float re, im;
} dt_cfloat;
typedef struct {
    double re, im;
} dt_cdouble;
typedef struct {
    long double re, im;
} dt_cldouble;

DT_BASIC(mpi_dt_char_, char, DT_CHAR, "MPI_CHAR");
DT_BASIC(mpi_dt_signed_char_, signed char, DT_SCHAR, "MPI_SIGNED_CHAR");
DT_BASIC(mpi_dt_unsigned_char_, unsigned char, DT_UCHAR, "MPI_UNSIGNED_CHAR");
DT_BASIC(mpi_dt_byte_, unsigned char, DT_BYTE, "MPI_BYTE");
DT_BASIC(mpi_dt_short_, short, DT_SHORT, "MPI_SHORT");
DT_BASIC(mpi_dt_unsigned_short_, unsigned short, DT_USHORT, "MPI_UNSIGNED_SHORT");
DT_BASIC(mpi_dt_int_, int, DT_INT, "MPI_INT");
DT_BASIC(mpi_dt_unsigned_, unsigned, DT_UINT, "MPI_UNSIGNED");
DT_BASIC(mpi_dt_long_, long, DT_LONG, "MPI_LONG");
DT_BASIC(mpi_dt_unsigned_long_, unsigned long, DT_ULONG, "MPI_UNSIGNED_LONG");
DT_BASIC(mpi_dt_long_long_, long long, DT_LLONG, "MPI_LONG_LONG_INT");
DT_BASIC(mpi_dt_unsigned_long_long_, unsigned long long, DT_ULLONG, "MPI_UNSIGNED_LONG_LONG");
DT_BASIC(mpi_dt_float_, float, DT_FLOAT, "MPI_FLOAT");
DT_BASIC(mpi_dt_double_, double, DT_DOUBLE, "MPI_DOUBLE");
DT_BASIC(mpi_dt_long_double_, long double, DT_LDOUBLE, "MPI_LONG_DOUBLE");
DT_BASIC(mpi_dt_wchar_, wchar_t, DT_WCHAR, "MPI_WCHAR");
DT_BASIC(mpi_dt_c_bool_, _Bool, DT_BOOL, "MPI_C_BOOL");
DT_BASIC(mpi_dt_int8_, int8_t, DT_INT8, "MPI_INT8_T");
DT_BASIC(mpi_dt_int16_, int16_t, DT_INT16, "MPI_INT16_T");
DT_BASIC(mpi_dt_int32_, int32_t, DT_INT32, "MPI_INT32_T");
DT_BASIC(mpi_dt_int64_, int64_t, DT_INT64, "MPI_INT64_T");
DT_BASIC(mpi_dt_uint8_, uint8_t, DT_UINT8, "MPI_UINT8_T");
DT_BASIC(mpi_dt_uint16_, uint16_t, DT_UINT16, "MPI_UINT16_T");
DT_BASIC(mpi_dt_uint32_, uint32_t, DT_UINT32, "MPI_UINT32_T");
DT_BASIC(mpi_dt_uint64_, uint64_t, DT_UINT64, "MPI_UINT64_T");
DT_BASIC(mpi_dt_aint_, MPI_Aint, DT_AINT, "MPI_AINT");
DT_BASIC(mpi_dt_count_, MPI_Count, DT_COUNT, "MPI_COUNT");
DT_BASIC(mpi_dt_offset_, MPI_Offset, DT_OFFSET, "MPI_OFFSET");
DT_BASIC(mpi_dt_c_float_complex_, dt_cfloat, DT_CFLOAT, "MPI_C_FLOAT_COMPLEX");
DT_BASIC(mpi_dt_c_double_complex_, dt_cdouble, DT_CDOUBLE, "MPI_C_DOUBLE_COMPLEX");
DT_BASIC(mpi_dt_c_long_double_complex_, dt_cldouble, DT_CLDOUBLE, "MPI_C_LONG_DOUBLE_COMPLEX");
DT_BASIC(mpi_dt_packed_, unsigned char, DT_PACKED, "MPI_PACKED");
DT_PAIR(mpi_dt_float_int_, struct dt_float_int, DT_FLOAT_INT, "MPI_FLOAT_INT");
DT_PAIR(mpi_dt_double_int_, struct dt_double_int, DT_DOUBLE_INT, "MPI_DOUBLE_INT");
DT_PAIR(mpi_dt_long_int_, struct dt_long_int, DT_LONG_INT, "MPI_LONG_INT");
DT_PAIR(mpi_dt_2int_, struct dt_2int, DT_2INT, "MPI_2INT");
DT_PAIR(mpi_dt_short_int_, struct dt_short_int, DT_SHORT_INT, "MPI_SHORT_INT");
DT_PAIR(mpi_dt_long_double_int_, struct dt_ldouble_int, DT_LDOUBLE_INT, "MPI_LONG_DOUBLE_INT");

/* --- the constructor's blocks ---------------------------------------------------------- */

/* Task context. */
size_t dt_nblocks(MPI_Datatype dt)
{
    switch (dt->combiner) {
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
        return (size_t)dt->ints[0];
    case MPI_COMBINER_NAMED:
        return 0;
    default: /* contiguous, dup, resized, subarray */
        return 1;
    }
}

/* Task context. */
void dt_block(MPI_Datatype dt, size_t j, MPI_Aint *disp, size_t *blen, MPI_Datatype *child)
{
    const int *in = dt->ints;
    MPI_Datatype c = dt->ntypes ? dt->types[0] : dt->impl;
    MPI_Aint ext = c->ub - c->lb; /* displacements of the non-h types count extents */
    int n = dt->nints ? in[0] : 0;

    *child = c;
    switch (dt->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        *disp = 0, *blen = (size_t)in[0];
        break;
    case MPI_COMBINER_VECTOR:
        *disp = (MPI_Aint)j * in[2] * ext, *blen = (size_t)in[1];
        break;
    case MPI_COMBINER_HVECTOR:
        *disp = (MPI_Aint)j * dt->addrs[0], *blen = (size_t)in[1];
        break;
    case MPI_COMBINER_INDEXED:
        *disp = (MPI_Aint)in[1 + n + j] * ext, *blen = (size_t)in[1 + j];
        break;
    case MPI_COMBINER_HINDEXED:
        *disp = dt->addrs[j], *blen = (size_t)in[1 + j];
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        *disp = (MPI_Aint)in[2 + j] * ext, *blen = (size_t)in[1];
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        *disp = dt->addrs[j], *blen = (size_t)in[1];
        break;
    case MPI_COMBINER_STRUCT:
        *disp = dt->addrs[j], *blen = (size_t)in[1 + j], *child = dt->types[j];
        break;
    default: /* dup, resized, subarray (through impl): the inner type once */
        *disp = 0, *blen = 1;
        if (dt->impl)
            *child = dt->impl;
        break;
    }
}

/* --- life of a derived type ------------------------------------------------------------ */

/* Task context. A derived type with room for its constructor's arguments, not yet
 * filled in; NULL if out of memory. */
MPI_Datatype dt_alloc(int combiner, int nints, int naddrs, int ntypes)
{
    /* addresses and handles first: their alignment is the struct's, the ints' is less */
    size_t bytes = sizeof(struct mpi_dtype_s) + (size_t)naddrs * sizeof(MPI_Aint) +
                   (size_t)ntypes * sizeof(MPI_Datatype) + (size_t)nints * sizeof(int);
    MPI_Datatype t = malloc(bytes);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->magic = DT_MAGIC;
    t->refs = 1;
    t->code = DT_DERIVED;
    t->combiner = combiner;
    t->nints = nints, t->naddrs = naddrs, t->ntypes = ntypes;
    t->addrs = (MPI_Aint *)(t + 1);
    t->types = (MPI_Datatype *)(t->addrs + naddrs);
    t->ints = (int *)(t->types + ntypes);
    return t;
}

static MPI_Aint amin(MPI_Aint a, MPI_Aint b)
{
    return a < b ? a : b;
}

static MPI_Aint amax(MPI_Aint a, MPI_Aint b)
{
    return a > b ? a : b;
}

/* Size, bounds and basic type from the blocks. MPI's rules: lb and ub are the lowest and
 * highest byte of the typemap, except that bounds set explicitly (create_resized) are
 * sticky: when any inner type has one, only those count. Without a sticky ub the extent
 * is rounded up to the strictest alignment of the basic types, so that an array of a
 * struct type matches an array of the C struct it describes ({double; int}: extent 16).
 * Open MPI (the reference) rounds every derived type so, not only structs: so do we. */
static void dt_compute(MPI_Datatype t)
{
    MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0, slb = 0, sub = 0;
    int have = 0, have_true = 0, first = 1;
    size_t nb = dt_nblocks(t), step = 1;

    /* A vector's blocks differ only by their displacement, which grows (or shrinks)
     * steadily: the first and the last block give the bounds, the others count alike. */
    if ((t->combiner == MPI_COMBINER_VECTOR || t->combiner == MPI_COMBINER_HVECTOR) && nb > 2) {
        MPI_Aint d;
        size_t b;
        MPI_Datatype c;
        dt_block(t, 0, &d, &b, &c);
        t->size = (nb - 2) * b * c->size;
        t->nbasic = (nb - 2) * b * c->nbasic;
        step = nb - 1;
    }
    t->align = 1;
    for (size_t j = 0; j < nb; j += step) {
        MPI_Aint d;
        size_t b;
        MPI_Datatype c;
        dt_block(t, j, &d, &b, &c);
        if (c->align > t->align)
            t->align = c->align;
        if (first || t->basic != c->basic)
            t->basic = first ? c->basic : NULL;
        first = 0;
        if (b == 0)
            continue;
        t->size += b * c->size;
        t->nbasic += b * c->nbasic;
        MPI_Aint ext = c->ub - c->lb, span = (MPI_Aint)(b - 1) * ext;
        MPI_Aint lo = d + amin(0, span), hi = d + amax(0, span);
        if (c->sticky_lb) {
            slb = t->sticky_lb ? amin(slb, lo + c->lb) : lo + c->lb;
            t->sticky_lb = 1;
        }
        if (c->sticky_ub) {
            sub = t->sticky_ub ? amax(sub, hi + c->ub) : hi + c->ub;
            t->sticky_ub = 1;
        }
        lb = have ? amin(lb, lo + c->lb) : lo + c->lb;
        ub = have ? amax(ub, hi + c->ub) : hi + c->ub;
        have = 1;
        if (c->size > 0) {
            tlb = have_true ? amin(tlb, lo + c->true_lb) : lo + c->true_lb;
            tub = have_true ? amax(tub, hi + c->true_ub) : hi + c->true_ub;
            have_true = 1;
        }
    }
    t->lb = t->sticky_lb ? slb : lb;
    t->ub = t->sticky_ub ? sub : ub;
    t->true_lb = tlb, t->true_ub = tub;
    if (!t->sticky_ub) {
        MPI_Aint ext = t->ub - t->lb, a = (MPI_Aint)t->align;
        if (ext > 0 && ext % a)
            t->ub += a - ext % a;
    }
    if (t->combiner == MPI_COMBINER_RESIZED) {
        t->lb = t->addrs[0], t->ub = t->addrs[0] + t->addrs[1];
        t->sticky_lb = t->sticky_ub = 1;
    }
}

/* Task context. Completes a type from dt_alloc whose arguments are filled in: takes a
 * reference on its inner types and computes its size and bounds. */
MPI_Datatype dt_finish(MPI_Datatype t)
{
    for (int i = 0; i < t->ntypes; i++)
        dt_retain(t->types[i]);
    dt_retain(t->impl);
    dt_compute(t);
    return t;
}

/* Task context. */
void dt_retain(MPI_Datatype dt)
{
    if (dt && !dt->predefined)
        dt->refs++;
}

/* Task context. */
void dt_release(MPI_Datatype dt)
{
    if (!dt || dt->predefined || --dt->refs > 0)
        return;
    for (int i = 0; i < dt->ntypes; i++)
        dt_release(dt->types[i]);
    dt_release(dt->impl);
    if (dt->segs != dt->inl)
        free(dt->segs);
    dt->magic = 0; /* a handle used after this fails dt_valid while the memory lasts */
    free(dt);
}

/* --- queries --------------------------------------------------------------------------- */

/* Task context. */
int dt_valid(MPI_Datatype dt)
{
    return dt && dt->magic == DT_MAGIC && dt->refs > 0;
}

/* Task context. */
int dt_check(MPI_Datatype dt)
{
    return dt_valid(dt) && dt->committed ? MPI_SUCCESS : MPI_ERR_TYPE;
}

/* Task context. */
size_t dt_size(MPI_Datatype dt)
{
    return dt->size;
}

/* Task context. */
MPI_Aint dt_extent(MPI_Datatype dt)
{
    return dt->ub - dt->lb;
}

/* Task context. */
MPI_Aint dt_lb(MPI_Datatype dt)
{
    return dt->lb;
}

/* Task context. */
MPI_Aint dt_true_lb(MPI_Datatype dt)
{
    return dt->true_lb;
}

/* Task context. */
MPI_Aint dt_true_extent(MPI_Datatype dt)
{
    return dt->true_ub - dt->true_lb;
}

/* Task context. */
int dt_contig(MPI_Datatype dt)
{
    if (!dt->flat)
        dt_flatten(dt);
    return dt->contig;
}

/* Task context; see mpi_impl.h. */
int dt_span(MPI_Datatype dt, int count, struct dt_span *s)
{
    if (!dt_valid(dt) || !dt->committed)
        return MPI_ERR_TYPE;
    if (!dt->flat)
        dt_flatten(dt);
    s->bytes = (size_t)count * dt->size;
    s->lb = dt->lb;
    s->contig = dt->contig || !s->bytes;
    return MPI_SUCCESS;
}

/* Task context. */
MPI_Datatype dt_basic(MPI_Datatype dt)
{
    return dt->basic;
}
