/*
 * dtype_impl.h: the datatype object, shared by the datatype files (dtype*.c) and the
 * reductions (op.c, which looks at the basic type's code). Other modules use the dt_
 * functions of mpi_impl.h only.
 *
 * A type keeps two descriptions of its layout:
 *
 *  - its constructor: the combiner and the arguments it was made with (ints, addrs, types,
 *    exactly what MPI_Type_get_contents returns), holding a reference on every inner type.
 *    Any layout can be walked through it, recursively (dt_block() enumerates the blocks).
 *  - once committed, its flattened form: the data bytes of one element as a list of
 *    segments, each a run of `count` equal blocks of `len` bytes `stride` apart, in typemap
 *    order, with adjacent and equally spaced blocks merged. A vector of doubles is then one
 *    segment whatever its count; a contiguous type is one block. Packing walks the list.
 *    When the list would exceed DT_MAX_SEGS (a contiguous of a million structs, say), the
 *    type keeps no list and packing walks the constructor instead, down to inner types
 *    that have one.
 *
 * Every segment also records the size of the basic elements it holds (`unit`; merging
 * only joins equal units), so that a partial unpack stops on an element boundary and
 * MPI_Get_elements counts elements in a partial one.
 */
#ifndef MPI_DTYPE_IMPL_H
#define MPI_DTYPE_IMPL_H
#include "mpi_impl.h"

#define DT_MAGIC    0x44547970u /* "DTyp": set while the object is alive */
#define DT_MAX_SEGS 65536

/* The predefined types, in the order of dtype.c's table. DT_DERIVED for the others. */
enum dt_code {
    DT_CHAR,
    DT_SCHAR,
    DT_UCHAR,
    DT_BYTE,
    DT_SHORT,
    DT_USHORT,
    DT_INT,
    DT_UINT,
    DT_LONG,
    DT_ULONG,
    DT_LLONG,
    DT_ULLONG,
    DT_FLOAT,
    DT_DOUBLE,
    DT_LDOUBLE,
    DT_WCHAR,
    DT_BOOL,
    DT_INT8,
    DT_INT16,
    DT_INT32,
    DT_INT64,
    DT_UINT8,
    DT_UINT16,
    DT_UINT32,
    DT_UINT64,
    DT_AINT,
    DT_COUNT,
    DT_OFFSET,
    DT_CFLOAT,
    DT_CDOUBLE,
    DT_CLDOUBLE,
    DT_PACKED,
    DT_FLOAT_INT, /* the MINLOC/MAXLOC pairs: keep them last */
    DT_DOUBLE_INT,
    DT_LONG_INT,
    DT_2INT,
    DT_SHORT_INT,
    DT_LDOUBLE_INT,
    DT_NCODES,
    DT_DERIVED = -1
};

struct dt_seg {
    MPI_Aint disp;   /* first block, from the element's origin */
    MPI_Aint stride; /* from one block to the next (count > 1) */
    size_t len;      /* bytes per block */
    size_t count;    /* blocks */
    size_t unit;     /* size of the basic elements in the blocks */
};

struct mpi_dtype_s {
    uint32_t magic;
    int refs;       /* the user's handle, outer types, pending operations */
    int predefined; /* never freed */
    int committed;
    int code;     /* enum dt_code */
    int combiner; /* MPI_COMBINER_* */
    size_t size;  /* data bytes of one element */
    MPI_Aint lb, ub, true_lb, true_ub;
    int sticky_lb, sticky_ub; /* bounds set by MPI_Type_create_resized: outer types keep them */
    size_t align;             /* strictest alignment of the basic types (struct padding) */
    size_t nbasic;            /* basic elements in one element */
    MPI_Datatype basic;       /* the one basic type, or NULL */
    /* constructor arguments, one allocation (MPI_Type_get_contents order) */
    int nints, naddrs, ntypes;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
    MPI_Datatype impl; /* subarray: the equivalent type built from vectors */
    /* flattened form: valid when flat; segs NULL if the list would be too long */
    int flat, contig;
    size_t nsegs;
    struct dt_seg *segs;
    struct dt_seg inl[2]; /* predefined types' segments */
    char name[MPI_MAX_OBJECT_NAME];
    struct attr *attrs; /* cached attributes (attr.c) */
};

/* The C layouts of the MINLOC/MAXLOC pair types. */
struct dt_float_int {
    float v;
    int i;
};
struct dt_double_int {
    double v;
    int i;
};
struct dt_long_int {
    long v;
    int i;
};
struct dt_2int {
    int v;
    int i;
};
struct dt_short_int {
    short v;
    int i;
};
struct dt_ldouble_int {
    long double v;
    int i;
};

/* Task context. Blocks of a derived type's constructor: block j of dt is `*blen` elements
 * of `*child` placed one extent apart from byte displacement `*disp`. */
size_t dt_nblocks(MPI_Datatype dt);
void dt_block(MPI_Datatype dt, size_t j, MPI_Aint *disp, size_t *blen, MPI_Datatype *child);

/* Task context. 1 if dt is a live type object (predefined, or made and not yet
 * destroyed); committed or not. */
int dt_valid(MPI_Datatype dt);

/* Task context. A derived type with room for its constructor's arguments (dt->ints,
 * dt->addrs, dt->types, for the caller to fill in), or NULL if out of memory; then
 * dt_finish takes the references on the inner types and computes size, bounds and basic
 * type (dtype.c). */
MPI_Datatype dt_alloc(int combiner, int nints, int naddrs, int ntypes);
MPI_Datatype dt_finish(MPI_Datatype t);

/* Task context. Computes the flattened form and dt->contig (dtype_flat.c). Cannot fail:
 * without memory for the list the type simply keeps none. */
void dt_flatten(MPI_Datatype dt);

/* Task context. Basic elements in the first `bytes` bytes of packed elements of dt, in
 * *elems; returns 0 if the bytes end inside a basic element (MPI_Get_elements then says
 * MPI_UNDEFINED). */
int dt_count_elements(MPI_Datatype dt, size_t bytes, size_t *elems);
/* Task context. Packed bytes of the first `elems` basic elements of elements of dt (the
 * converse, for MPI_Status_set_elements). */
size_t dt_elements_bytes(MPI_Datatype dt, size_t elems);

/* Task context. Calls fn(ctx, off, leaf, n) for every run of n consecutive elements of a
 * predefined type `leaf` (n * extent(leaf) bytes at byte offset off from the buffer) in
 * `count` elements of dt, in typemap order. */
void dt_runs(MPI_Datatype dt, size_t count,
             void (*fn)(void *ctx, MPI_Aint off, MPI_Datatype leaf, size_t n), void *ctx);

#endif
