/*
 * dtype_make.c: the MPI_Type_ constructors, MPI_Type_commit and MPI_Type_free. A
 * constructor checks its arguments, records them (dt_alloc) and lets dt_finish compute the
 * rest; the layout is flattened only at commit (dtype_flat.c), as only committed types
 * move data.
 */
#include "dtype_impl.h"
#include <string.h>

/* The builders below take checked arguments and return a finished type or NULL (out of
 * memory); the subarray constructor uses them for its intermediate types too. */

static MPI_Datatype mk_contiguous(int count, MPI_Datatype old)
{
    MPI_Datatype t = dt_alloc(MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    if (!t)
        return NULL;
    t->ints[0] = count;
    t->types[0] = old;
    return dt_finish(t);
}

static MPI_Datatype mk_hvector(int count, int blen, MPI_Aint stride, MPI_Datatype old)
{
    MPI_Datatype t = dt_alloc(MPI_COMBINER_HVECTOR, 2, 1, 1);
    if (!t)
        return NULL;
    t->ints[0] = count, t->ints[1] = blen;
    t->addrs[0] = stride;
    t->types[0] = old;
    return dt_finish(t);
}

static MPI_Datatype mk_hindexed_block(int count, int blen, const MPI_Aint *disps, MPI_Datatype old)
{
    MPI_Datatype t = dt_alloc(MPI_COMBINER_HINDEXED_BLOCK, 2, count, 1);
    if (!t)
        return NULL;
    t->ints[0] = count, t->ints[1] = blen;
    memcpy(t->addrs, disps, (size_t)count * sizeof *disps);
    t->types[0] = old;
    return dt_finish(t);
}

static MPI_Datatype mk_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent)
{
    MPI_Datatype t = dt_alloc(MPI_COMBINER_RESIZED, 0, 2, 1);
    if (!t)
        return NULL;
    t->addrs[0] = lb, t->addrs[1] = extent;
    t->types[0] = old;
    return dt_finish(t);
}

/* The common checks: a live old type and somewhere to put the new one. */
static int check_old(MPI_Datatype old, MPI_Datatype *newtype)
{
    if (!dt_valid(old))
        return MPI_ERR_TYPE;
    return newtype ? MPI_SUCCESS : MPI_ERR_ARG;
}

static int done(MPI_Datatype t, MPI_Datatype *newtype, const char *fn)
{
    if (!t)
        return err_raise(NULL, MPI_ERR_NO_MEM, fn);
    *newtype = t;
    return MPI_SUCCESS;
}

static int check_blens(int count, const int *blens)
{
    if (count > 0 && !blens)
        return MPI_ERR_ARG;
    for (int i = 0; i < count; i++)
        if (blens[i] < 0)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    int rc = count < 0 ? MPI_ERR_COUNT : check_old(oldtype, newtype);
    if (rc)
        return err_raise(NULL, rc, fn);
    return done(mk_contiguous(count, oldtype), newtype, fn);
}

/* Task context. */
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_vector";
    int rc = count < 0         ? MPI_ERR_COUNT
             : blocklength < 0 ? MPI_ERR_ARG
                               : check_old(oldtype, newtype);
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_VECTOR, 3, 0, 1);
    if (t) {
        t->ints[0] = count, t->ints[1] = blocklength, t->ints[2] = stride;
        t->types[0] = oldtype;
        t = dt_finish(t);
    }
    return done(t, newtype, fn);
}

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                   MPI_Datatype *newtype, const char *fn)
{
    int rc = count < 0         ? MPI_ERR_COUNT
             : blocklength < 0 ? MPI_ERR_ARG
                               : check_old(oldtype, newtype);
    if (rc)
        return err_raise(NULL, rc, fn);
    return done(mk_hvector(count, blocklength, stride, oldtype), newtype, fn);
}

/* Task context. */
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return hvector(count, blocklength, stride, oldtype, newtype, "MPI_Type_create_hvector");
}

/* Task context. */
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return hvector(count, blocklength, stride, oldtype, newtype, "MPI_Type_hvector");
}

/* Task context. */
int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_indexed";
    int rc = count < 0 ? MPI_ERR_COUNT : check_old(oldtype, newtype);
    if (!rc)
        rc = check_blens(count, array_of_blocklengths);
    if (!rc && count > 0 && !array_of_displacements)
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_INDEXED, 1 + 2 * count, 0, 1);
    if (t) {
        t->ints[0] = count;
        for (int i = 0; i < count; i++) {
            t->ints[1 + i] = array_of_blocklengths[i];
            t->ints[1 + count + i] = array_of_displacements[i];
        }
        t->types[0] = oldtype;
        t = dt_finish(t);
    }
    return done(t, newtype, fn);
}

static int hindexed(int count, const int *blens, const MPI_Aint *disps, MPI_Datatype oldtype,
                    MPI_Datatype *newtype, const char *fn)
{
    int rc = count < 0 ? MPI_ERR_COUNT : check_old(oldtype, newtype);
    if (!rc)
        rc = check_blens(count, blens);
    if (!rc && count > 0 && !disps)
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_HINDEXED, 1 + count, count, 1);
    if (t) {
        t->ints[0] = count;
        for (int i = 0; i < count; i++) {
            t->ints[1 + i] = blens[i];
            t->addrs[i] = disps[i];
        }
        t->types[0] = oldtype;
        t = dt_finish(t);
    }
    return done(t, newtype, fn);
}

/* Task context. */
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype,
                    "MPI_Type_create_hindexed");
}

/* Task context. */
int MPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype,
                    "MPI_Type_hindexed");
}

/* Task context. */
int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_indexed_block";
    int rc = count < 0         ? MPI_ERR_COUNT
             : blocklength < 0 ? MPI_ERR_ARG
                               : check_old(oldtype, newtype);
    if (!rc && count > 0 && !array_of_displacements)
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_INDEXED_BLOCK, 2 + count, 0, 1);
    if (t) {
        t->ints[0] = count, t->ints[1] = blocklength;
        memcpy(t->ints + 2, array_of_displacements, (size_t)count * sizeof(int));
        t->types[0] = oldtype;
        t = dt_finish(t);
    }
    return done(t, newtype, fn);
}

/* Task context. */
int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed_block";
    int rc = count < 0         ? MPI_ERR_COUNT
             : blocklength < 0 ? MPI_ERR_ARG
                               : check_old(oldtype, newtype);
    if (!rc && count > 0 && !array_of_displacements)
        rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(NULL, rc, fn);
    return done(mk_hindexed_block(count, blocklength, array_of_displacements, oldtype), newtype,
                fn);
}

static int mk_struct(int count, const int *blens, const MPI_Aint *disps, const MPI_Datatype *types,
                     MPI_Datatype *newtype, const char *fn)
{
    int rc = count < 0 ? MPI_ERR_COUNT : newtype ? check_blens(count, blens) : MPI_ERR_ARG;
    if (!rc && count > 0 && (!disps || !types))
        rc = MPI_ERR_ARG;
    for (int i = 0; !rc && i < count; i++)
        if (!dt_valid(types[i]))
            rc = MPI_ERR_TYPE;
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_STRUCT, 1 + count, count, count);
    if (t) {
        t->ints[0] = count;
        for (int i = 0; i < count; i++) {
            t->ints[1 + i] = blens[i];
            t->addrs[i] = disps[i];
            t->types[i] = types[i];
        }
        t = dt_finish(t);
    }
    return done(t, newtype, fn);
}

/* Task context. */
int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return mk_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype,
                     "MPI_Type_create_struct");
}

/* Task context. */
int MPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                    MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return mk_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype,
                     "MPI_Type_struct");
}

/* Task context. */
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    int rc = check_old(oldtype, newtype);
    if (rc)
        return err_raise(NULL, rc, fn);
    return done(mk_resized(oldtype, lb, extent), newtype, fn);
}

/* Task context. */
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    int rc = check_old(oldtype, newtype);
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_DUP, 0, 0, 1);
    if (t) {
        t->types[0] = oldtype;
        t = dt_finish(t);
        if (oldtype->committed) { /* MPI: the copy is committed if the original is */
            dt_flatten(t);
            t->committed = 1;
        }
    }
    rc = done(t, newtype, fn);
    /* MPI: the copy callbacks of the original's attributes run on the duplicate. */
    if (rc == MPI_SUCCESS && attr_type_copy_all && oldtype->attrs) {
        rc = attr_type_copy_all(oldtype, *newtype);
        if (rc != MPI_SUCCESS) {
            MPI_Type_free(newtype);
            return err_raise(NULL, rc, fn);
        }
    }
    return rc;
}

/* The subarray as MPI defines it, built from the types above: one (h)vector level per
 * dimension, slowest dimension outermost, moved to the start corner and resized to the
 * whole array (lb 0, extent = the array's). */
static MPI_Datatype mk_subarray(int n, const int *sizes, const int *subs, const int *starts,
                                int order, MPI_Datatype old)
{
    MPI_Aint ext = old->ub - old->lb, step = ext, off = 0;
    MPI_Datatype t = NULL, u;
    for (int k = 0; k < n; k++) {
        int d = order == MPI_ORDER_C ? n - 1 - k : k; /* fastest-varying first */
        u = k == 0 ? mk_contiguous(subs[d], old) : mk_hvector(subs[d], 1, step, t);
        off += starts[d] * step;
        step *= sizes[d];
        dt_release(t);
        if (!(t = u))
            return NULL;
    }
    u = mk_hindexed_block(1, 1, &off, t);
    dt_release(t);
    if (!(t = u))
        return NULL;
    u = mk_resized(t, 0, step);
    dt_release(t);
    return u;
}

/* Task context. */
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray";
    int rc = check_old(oldtype, newtype);
    if (!rc && (ndims <= 0 || !array_of_sizes || !array_of_subsizes || !array_of_starts ||
                (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)))
        rc = MPI_ERR_ARG;
    for (int i = 0; !rc && i < ndims; i++)
        if (array_of_sizes[i] <= 0 || array_of_subsizes[i] <= 0 ||
            array_of_subsizes[i] > array_of_sizes[i] || array_of_starts[i] < 0 ||
            array_of_starts[i] > array_of_sizes[i] - array_of_subsizes[i])
            rc = MPI_ERR_ARG;
    if (rc)
        return err_raise(NULL, rc, fn);
    MPI_Datatype impl =
        mk_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype);
    MPI_Datatype t = impl ? dt_alloc(MPI_COMBINER_SUBARRAY, 3 * ndims + 2, 0, 1) : NULL;
    if (t) {
        t->ints[0] = ndims;
        for (int i = 0; i < ndims; i++) {
            t->ints[1 + i] = array_of_sizes[i];
            t->ints[1 + ndims + i] = array_of_subsizes[i];
            t->ints[1 + 2 * ndims + i] = array_of_starts[i];
        }
        t->ints[1 + 3 * ndims] = order;
        t->types[0] = oldtype;
        t->impl = impl;
        t = dt_finish(t); /* its own reference on impl */
    }
    dt_release(impl);
    return done(t, newtype, fn);
}

/* Task context. */
int MPI_Type_commit(MPI_Datatype *datatype)
{
    if (!datatype)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Type_commit");
    if (!dt_valid(*datatype))
        return err_raise(NULL, MPI_ERR_TYPE, "MPI_Type_commit");
    dt_flatten(*datatype);
    (*datatype)->committed = 1;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Type_free(MPI_Datatype *datatype)
{
    if (!datatype)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Type_free");
    if (!dt_valid(*datatype) || (*datatype)->predefined)
        return err_raise(NULL, MPI_ERR_TYPE, "MPI_Type_free");
    /* MPI: the delete callbacks run when the program frees the type. */
    if (attr_type_delete_all && (*datatype)->attrs) {
        int rc = attr_type_delete_all(*datatype);
        if (rc != MPI_SUCCESS)
            return err_raise(NULL, rc, "MPI_Type_free");
    }
    dt_release(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
