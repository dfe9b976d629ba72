/*
 * darray.c: MPI conformance of MPI_Type_create_darray: 2-D and 3-D arrays under block
 * (default and explicit block size), cyclic (default and cyclic(k)) and no distribution,
 * in C and Fortran order, on a row-major process grid of all ranks. Each rank packs the
 * global array (element = its global index) through its type and compares the result
 * with the elements the distribution gives it, in array order; the sizes add up to the
 * whole array; the type is MPI_COMBINER_DARRAY with the array's extent. Only rank 0
 * prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The owner coordinate of index g of a dimension (MPI-3.1 4.1.4). */
static int owner(int g, int gsize, int distrib, int darg, int psize)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 0;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        return g / b;
    }
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (g / b) % psize;
}

static void check_one(int nd, const int *gs, const int *dist, const int *darg, const int *ps,
                      int order, const char *what)
{
    int total = 1, coord[3], r = me;
    for (int i = 0; i < nd; i++)
        total *= gs[i];
    for (int i = nd - 1; i >= 0; i--) {
        coord[i] = r % ps[i];
        r /= ps[i];
    }
    int *a = malloc(total * sizeof(int)), *want = malloc(total * sizeof(int)), nwant = 0;
    for (int i = 0; i < total; i++)
        a[i] = i;
    /* Walk the array in memory order; idx[] are the indexes of each dimension. */
    for (int lin = 0; lin < total; lin++) {
        int idx[3], rem = lin, mine = 1;
        for (int k = 0; k < nd; k++) {
            int d = order == MPI_ORDER_C ? nd - 1 - k : k;
            idx[d] = rem % gs[d];
            rem /= gs[d];
        }
        for (int d = 0; d < nd; d++)
            mine &= owner(idx[d], gs[d], dist[d], darg[d], ps[d]) == coord[d];
        if (mine)
            want[nwant++] = lin;
    }
    MPI_Datatype t;
    MPI_Type_create_darray(np, me, nd, gs, dist, darg, ps, order, MPI_INT, &t);
    MPI_Type_commit(&t);
    int size = -1, ni, na, nt, comb = -1, sum = 0;
    MPI_Aint lb = -1, ext = -1;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    EXPECT(comb == MPI_COMBINER_DARRAY && ni == 4 * nd + 4, "%s: combiner %d, %d ints", what, comb,
           ni);
    EXPECT(size == nwant * (int)sizeof(int), "%s: size %d, expected %d", what, size,
           nwant * (int)sizeof(int));
    EXPECT(lb == 0 && ext == (MPI_Aint)total * (MPI_Aint)sizeof(int), "%s: lb %ld extent %ld", what,
           (long)lb, (long)ext);
    int *got = malloc((nwant + 1) * sizeof(int)), pos = 0;
    MPI_Pack(a, 1, t, got, (nwant + 1) * (int)sizeof(int), &pos, MPI_COMM_SELF);
    int wrong = 0;
    for (int i = 0; i < nwant && pos == size; i++)
        wrong += got[i] != a[want[i]];
    EXPECT(pos == size && wrong == 0, "%s: packed %d bytes, %d elements wrong", what, pos, wrong);
    MPI_Allreduce(&size, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(sum == total * (int)sizeof(int), "%s: sizes add up to %d bytes of %d", what, sum,
           total * (int)sizeof(int));
    MPI_Type_free(&t);
    free(a);
    free(want);
    free(got);
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "darray"))
        return 0;
    int ps[3] = {0, 0, 1};
    MPI_Dims_create(np, 2, ps);
    int D = MPI_DISTRIBUTE_DFLT_DARG;
    {
        int gs[2] = {9, 7}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            darg[2] = {D, 2};
        check_one(2, gs, dist, darg, ps, MPI_ORDER_C, "C block x cyclic(2)");
        report("darray 9x7, C order: block x cyclic(2)");
        check_one(2, gs, dist, darg, ps, MPI_ORDER_FORTRAN, "Fortran block x cyclic(2)");
        report("darray 9x7, Fortran order: block x cyclic(2)");
    }
    {
        int gs[2] = {10, 5}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
            darg[2] = {D, 3};
        /* An explicit block of 3 covers 5 only with 2 or more processes in dimension 1. */
        if (ps[1] < 2)
            darg[1] = D;
        check_one(2, gs, dist, darg, ps, MPI_ORDER_C, "C cyclic x block(3)");
        report("darray 10x5, C order: cyclic x block(3 or default)");
    }
    {
        int gs[3] = {4, 6, 3}, p3[3] = {ps[0], ps[1], 1},
            dist[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
            darg[3] = {3, D, D};
        check_one(3, gs, dist, darg, p3, MPI_ORDER_FORTRAN, "Fortran 3-D");
        check_one(3, gs, dist, darg, p3, MPI_ORDER_C, "C 3-D");
        report("darray 4x6x3, both orders: cyclic(3) x block x none");
    }
    return finish("darray");
}
