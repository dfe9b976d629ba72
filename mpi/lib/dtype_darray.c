/*
 * dtype_darray.c: MPI_Type_create_darray, the part of a global array that one process of
 * a grid owns under block, cyclic or no distribution per dimension (MPI-3.1 4.1.4).
 *
 * Built like the subarray (dtype_make.c): the combiner and arguments are kept for
 * MPI_Type_get_contents, and an equivalent type made of simpler ones is the type's impl.
 * One level per dimension, fastest-varying first: the process's blocks along the
 * dimension (an hindexed type of the level below) resized to the whole dimension, so the
 * next level's displacements are multiples of it. The process grid is row-major whatever
 * the array order (MPI's rule).
 */
#include "dtype_impl.h"
#include <stdlib.h>

/* Task context: the checks of one dimension. MPI error code. */
static int dim_check(int gsize, int distrib, int darg, int psize)
{
    if (gsize <= 0 || psize <= 0)
        return MPI_ERR_ARG;
    if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
        return MPI_ERR_ARG;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        return psize == 1 ? MPI_SUCCESS : MPI_ERR_ARG;
    case MPI_DISTRIBUTE_BLOCK: /* the blocks must cover the dimension */
        return darg == MPI_DISTRIBUTE_DFLT_DARG || (long long)darg * psize >= gsize ? MPI_SUCCESS
                                                                                    : MPI_ERR_ARG;
    case MPI_DISTRIBUTE_CYCLIC:
        return MPI_SUCCESS;
    default:
        return MPI_ERR_ARG;
    }
}

/* Task context: the level of one dimension over `inner` (extent `step` bytes, lb 0): the
 * blocks process coordinate `coord` owns, resized to gsize * step. *out NULL on failure
 * (MPI error code returned). */
static int dim_type(int gsize, int distrib, int darg, int psize, int coord, MPI_Datatype inner,
                    MPI_Aint step, MPI_Datatype *out)
{
    int b; /* block length */
    if (distrib == MPI_DISTRIBUTE_NONE)
        b = gsize;
    else if (distrib == MPI_DISTRIBUTE_BLOCK)
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
    else
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    /* Block starts: coord * b, then every psize * b for cyclic. */
    int cyclic = distrib == MPI_DISTRIBUTE_CYCLIC;
    int nmax = cyclic ? gsize / (psize * b) + 1 : 1, n = 0;
    int *blens = malloc(sizeof(int) * (size_t)nmax);
    MPI_Aint *disps = malloc(sizeof(MPI_Aint) * (size_t)nmax);
    *out = NULL;
    if (!blens || !disps) {
        free(blens);
        free(disps);
        return MPI_ERR_NO_MEM;
    }
    long long s = distrib == MPI_DISTRIBUTE_NONE ? 0 : (long long)coord * b;
    for (; s < gsize && n < nmax; s += (long long)psize * b) {
        blens[n] = (int)(gsize - s < b ? gsize - s : b);
        disps[n++] = (MPI_Aint)s * step;
        if (!cyclic)
            break;
    }
    MPI_Datatype h;
    int rc = MPI_Type_create_hindexed(n, blens, disps, inner, &h);
    free(blens);
    free(disps);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Type_create_resized(h, 0, (MPI_Aint)gsize * step, out);
    MPI_Type_free(&h);
    return rc;
}

/* Task context: the equivalent type (impl), or an MPI error code. */
static int build(int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                 const int psizes[], int order, MPI_Datatype old, MPI_Datatype *out)
{
    int *coord = malloc(sizeof(int) * (size_t)ndims);
    if (!coord)
        return MPI_ERR_NO_MEM;
    for (int i = ndims - 1, r = rank; i >= 0; i--) { /* row-major process grid */
        coord[i] = r % psizes[i];
        r /= psizes[i];
    }
    MPI_Datatype t = old;
    MPI_Aint step = dt_extent(old);
    int rc = MPI_SUCCESS;
    for (int k = 0; rc == MPI_SUCCESS && k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k; /* fastest-varying first */
        MPI_Datatype u;
        rc = dim_type(gsizes[d], distribs[d], dargs[d], psizes[d], coord[d], t, step, &u);
        if (t != old)
            MPI_Type_free(&t);
        t = u;
        step *= gsizes[d];
    }
    free(coord);
    *out = t;
    return rc;
}

/* Task context. */
int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray";
    int rc = dt_valid(oldtype) ? MPI_SUCCESS : MPI_ERR_TYPE;
    if (rc == MPI_SUCCESS &&
        (size <= 0 || rank < 0 || rank >= size || ndims <= 0 || !newtype || !array_of_gsizes ||
         !array_of_distribs || !array_of_dargs || !array_of_psizes ||
         (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)))
        rc = MPI_ERR_ARG;
    long long procs = 1;
    for (int i = 0; rc == MPI_SUCCESS && i < ndims; i++) {
        rc = dim_check(array_of_gsizes[i], array_of_distribs[i], array_of_dargs[i],
                       array_of_psizes[i]);
        procs *= array_of_psizes[i];
        if (procs > size)
            rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS && procs != size)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    MPI_Datatype impl;
    rc = build(rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes,
               order, oldtype, &impl);
    if (rc != MPI_SUCCESS)
        return err_raise(NULL, rc, fn);
    MPI_Datatype t = dt_alloc(MPI_COMBINER_DARRAY, 4 * ndims + 4, 0, 1);
    if (t) {
        int *v = t->ints;
        v[0] = size;
        v[1] = rank;
        v[2] = ndims;
        for (int i = 0; i < ndims; i++) {
            v[3 + i] = array_of_gsizes[i];
            v[3 + ndims + i] = array_of_distribs[i];
            v[3 + 2 * ndims + i] = array_of_dargs[i];
            v[3 + 3 * ndims + i] = array_of_psizes[i];
        }
        v[3 + 4 * ndims] = order;
        t->types[0] = oldtype;
        t->impl = impl;
        t = dt_finish(t); /* its own reference on impl */
    }
    MPI_Type_free(&impl);
    if (!t)
        return err_raise(NULL, MPI_ERR_NO_MEM, fn);
    *newtype = t;
    return MPI_SUCCESS;
}
