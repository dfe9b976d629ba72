/*
 * topo_cart.c: Cartesian topologies: MPI_Cart_create, MPI_Cartdim_get, MPI_Cart_get,
 * MPI_Cart_rank, MPI_Cart_coords, MPI_Cart_shift, MPI_Cart_sub, MPI_Cart_map.
 *
 * Ranks are laid out in row-major order (the last dimension varies fastest), as MPI
 * specifies; no reordering (topo.c).
 */
#include "topo_impl.h"
#include <stdlib.h>

#define DIMS(t)    ((t)->v)
#define PERIODS(t) ((t)->v + (t)->ndims)

/* Task context: comm's Cartesian topology, or NULL (then *rc is the error). */
static struct topo *cart_of(MPI_Comm comm, int *rc)
{
    if (!comm_valid(comm)) {
        *rc = MPI_ERR_COMM;
        return NULL;
    }
    if (!comm->topo || comm->topo->kind != MPI_CART) {
        *rc = MPI_ERR_TOPOLOGY;
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return comm->topo;
}

/* Task context: the number of processes of a grid (MPI_ERR_DIMS if a dimension is not
 * positive or the product exceeds limit). */
static int grid_size(int ndims, const int dims[], int limit, int *n)
{
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return MPI_ERR_DIMS;
        p *= dims[i];
        if (p > limit)
            return MPI_ERR_DIMS;
    }
    *n = (int)p;
    return MPI_SUCCESS;
}

/* Task context, collective over comm_old. */
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    (void)reorder;
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm_old))
        return err_raise(comm_old, MPI_ERR_COMM, fn);
    if (ndims < 0 || (ndims > 0 && (!dims || !periods)) || !comm_cart)
        return err_raise(comm_old, MPI_ERR_ARG, fn);
    int n, rc = grid_size(ndims, dims, comm_old->size, &n);
    if (rc != MPI_SUCCESS)
        return err_raise(comm_old, rc, fn);
    struct topo *t = topo_new(MPI_CART, 2 * ndims);
    if (!t)
        return err_raise(comm_old, MPI_ERR_NO_MEM, fn);
    t->ndims = ndims;
    for (int i = 0; i < ndims; i++) {
        DIMS(t)[i] = dims[i];
        PERIODS(t)[i] = periods[i] != 0;
    }
    return err_raise(comm_old, topo_attach(comm_old, n, t, comm_cart), fn);
}

/* Task context. */
int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    int rc;
    struct topo *t = cart_of(comm, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Cartdim_get");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

/* Task context: the coordinates of rank in t (maxdims of them at most). */
static void coords_of(const struct topo *t, int rank, int maxdims, int coords[])
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        if (i < maxdims)
            coords[i] = rank % DIMS(t)[i];
        rank /= DIMS(t)[i];
    }
}

/* Task context. */
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    int rc;
    struct topo *t = cart_of(comm, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Cart_get");
    if (maxdims < 0)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Cart_get");
    for (int i = 0; i < t->ndims && i < maxdims; i++) {
        dims[i] = DIMS(t)[i];
        periods[i] = PERIODS(t)[i];
    }
    coords_of(t, comm->rank, maxdims, coords);
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    int rc;
    struct topo *t = cart_of(comm, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Cart_coords");
    if (rank < 0 || rank >= comm->size)
        return err_raise(comm, MPI_ERR_RANK, "MPI_Cart_coords");
    if (maxdims < t->ndims)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Cart_coords");
    coords_of(t, rank, maxdims, coords);
    return MPI_SUCCESS;
}

/* Task context: the rank at coords (periodic dimensions wrap), or MPI_PROC_NULL when a
 * coordinate is outside a non-periodic dimension. */
static int rank_at(const struct topo *t, const int coords[])
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i], d = DIMS(t)[i];
        if (PERIODS(t)[i])
            c = ((c % d) + d) % d;
        else if (c < 0 || c >= d)
            return MPI_PROC_NULL;
        r = r * d + c;
    }
    return r;
}

/* Task context. A coordinate outside a non-periodic dimension is an error (MPI). */
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    int rc;
    struct topo *t = cart_of(comm, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Cart_rank");
    int r = rank_at(t, coords);
    if (r == MPI_PROC_NULL)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Cart_rank");
    *rank = r;
    return MPI_SUCCESS;
}

/* Task context: the rank distance between neighbours along dimension i of t. */
static int stride(const struct topo *t, int i)
{
    int s = 1;
    for (int j = i + 1; j < t->ndims; j++)
        s *= DIMS(t)[j];
    return s;
}

/* Task context: the rank disp steps from rank along dimension d (MPI_PROC_NULL off a
 * non-periodic edge). */
static int step(const struct topo *t, int rank, int d, int disp)
{
    int n = DIMS(t)[d], st = stride(t, d), c = rank / st % n;
    long long to = (long long)c + disp;
    if (PERIODS(t)[d])
        to = ((to % n) + n) % n;
    else if (to < 0 || to >= n)
        return MPI_PROC_NULL;
    return rank + ((int)to - c) * st;
}

/* Task context; see topo_impl.h (also the neighbourhood collectives' order). */
void cart_shift_of(const struct topo *t, int rank, int direction, int disp, int *src, int *dst)
{
    *dst = step(t, rank, direction, disp);
    *src = step(t, rank, direction, -disp);
}

/* Task context. */
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    int rc;
    struct topo *t = cart_of(comm, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Cart_shift");
    if (direction < 0 || direction >= t->ndims || !rank_source || !rank_dest)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Cart_shift");
    cart_shift_of(t, comm->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

/* Task context, collective over comm: the sub-grids that keep the dimensions flagged in
 * remain_dims; the ranks of one sub-grid share their coordinates in the others. */
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    int rc;
    struct topo *t = cart_of(comm, &rc);
    if (!t)
        return err_raise(comm, rc, fn);
    int nd = t->ndims, keep = 0, color = 0;
    for (int i = 0; i < nd; i++) {
        if (remain_dims[i])
            keep++;
        else
            color = color * DIMS(t)[i] + comm->rank / stride(t, i) % DIMS(t)[i];
    }
    struct topo *s = topo_new(MPI_CART, 2 * keep);
    if (!s)
        return err_raise(comm, MPI_ERR_NO_MEM, fn);
    s->ndims = keep;
    for (int i = 0, j = 0; i < nd; i++)
        if (remain_dims[i]) {
            DIMS(s)[j] = DIMS(t)[i];
            PERIODS(s)[j++] = PERIODS(t)[i];
        }
    /* Row-major order within the sub-grid is the parent's rank order. */
    rc = MPI_Comm_split(comm, color, comm->rank, newcomm);
    if (rc != MPI_SUCCESS) {
        topo_free(s);
        return rc;
    }
    (*newcomm)->topo = s;
    return MPI_SUCCESS;
}

/* Task context. Without reordering, a process keeps its rank if the grid includes it. */
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    (void)periods;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Cart_map");
    int n, rc = grid_size(ndims, dims, comm->size, &n);
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, "MPI_Cart_map");
    *newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
