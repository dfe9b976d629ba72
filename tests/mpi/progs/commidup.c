/*
 * commidup.c: MPI conformance of MPI_Comm_idup and MPI_Comm_test_inter: duplicates made
 * by MPI_Comm_idup (one waited for, three outstanding at once then MPI_Waitall) are
 * congruent with their parent, have their own matching context, carry the parent's
 * attributes through the copy callbacks, and are intracommunicators. Only rank 0 prints.
 * Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void check_idup(void)
{
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Request r;
    int k, flag = 0, cmp = -1, inter = -1;
    void *v = 0;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, k, (void *)(long)(me + 5));
    MPI_Comm_idup(MPI_COMM_WORLD, &d, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    EXPECT(r == MPI_REQUEST_NULL && d != MPI_COMM_NULL, "Wait left the request or no comm");
    MPI_Comm_compare(MPI_COMM_WORLD, d, &cmp);
    EXPECT(cmp == MPI_CONGRUENT, "compare %d", cmp);
    MPI_Comm_get_attr(d, k, &v, &flag);
    EXPECT(flag && v == (void *)(long)(me + 5), "attribute on the idup: flag %d", flag);
    MPI_Comm_test_inter(d, &inter);
    EXPECT(inter == 0, "Comm_test_inter %d", inter);
    /* Own context: the dup's message is received first although sent second. */
    int right = (me + 1) % np, a = 1, b = 2, x = -1, y = -1;
    MPI_Request s[2];
    MPI_Isend(&a, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &s[0]);
    MPI_Isend(&b, 1, MPI_INT, right, 9, d, &s[1]);
    MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 9, d, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
    EXPECT(x == 1 && y == 2, "contexts mixed: world got %d, dup got %d", x, y);
    MPI_Comm_free(&d);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k);
    MPI_Comm_free_keyval(&k);
    report("Comm_idup + Wait: congruent, own context, attributes copied, not inter");
}

static void check_several(void)
{
    MPI_Comm d[3];
    MPI_Request r[3];
    int sum[3] = {-1, -1, -1}, inter = -1;
    for (int i = 0; i < 3; i++)
        MPI_Comm_idup(MPI_COMM_WORLD, &d[i], &r[i]);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 3; i++) {
        MPI_Allreduce(&me, &sum[i], 1, MPI_INT, MPI_SUM, d[i]);
        EXPECT(sum[i] == np * (np - 1) / 2, "Allreduce on dup %d: %d", i, sum[i]);
    }
    MPI_Comm_test_inter(MPI_COMM_WORLD, &inter);
    EXPECT(inter == 0, "Comm_test_inter(WORLD) %d", inter);
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&d[i]);
    report("three Comm_idup outstanding, Waitall, collectives on each");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "commidup"))
        return 0;
    check_idup();
    check_several();
    return finish("commidup");
}
