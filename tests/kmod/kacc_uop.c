/*
 * kacc_uop.c: non-blocking reductions with user-defined ops (MPI_Op_create), the graphs
 * kacc runs while the process runs the ops (tests/kmod/kacc_mpi.sh, case uop). A
 * commutative op (plus1: inout = in + inout + 1, applied exactly size - 1 times per
 * element) and a non-commutative one (colls_common.h's 2x2 matrix product: rank order
 * shows), Iallreduce and Ireduce at every root, several counts, completed by MPI_Wait,
 * by an MPI_Test loop, and three outstanding at once by MPI_Waitall. A plain MPI program
 * (harness.h): Open MPI's output is the reference. Rank 0 prints one line per check and
 * "# conformance kacc_uop: N checks, M failed".
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi/progs/harness.h"
#include "../mpi/progs/colls_common.h"

#define OUTSTANDING 3

static const int ucounts[] = {1, 5, 3000};
#define NCOUNTS ((int)(sizeof ucounts / sizeof ucounts[0]))

static void plus1(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i] + 1;
}

/* Complete rq, by MPI_Wait or by an MPI_Test loop. */
static void complete(MPI_Request *rq, int by_test)
{
    int flag = 0;
    if (!by_test)
        MPI_Wait(rq, MPI_STATUS_IGNORE);
    while (by_test && !flag)
        MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
}

/* Reports the check of an Iallreduce (root < 0) or an Ireduce to root with op `what`. */
static void report_reduce(const char *what, int n, int root, int by_test)
{
    char name[80];
    snprintf(name, sizeof name, "%s %s count %d%s", root < 0 ? "Iallreduce" : "Ireduce", what, n,
             by_test ? ", Test loop" : "");
    if (root >= 0)
        snprintf(name + strlen(name), sizeof name - strlen(name), ", root %d", root);
    report(name);
}

/* plus1 over n ints: Iallreduce (root < 0) or Ireduce to root. */
static void check_plus1(int n, int root, int by_test)
{
    int *in = malloc(n * sizeof *in), *out = malloc((n + 1) * sizeof *out);
    MPI_Op op;
    MPI_Request rq;
    MPI_Op_create(plus1, 1, &op);
    for (int j = 0; j < n; j++)
        in[j] = v(me, j, 10) % 1000;
    out[n] = SENT;
    if (root < 0)
        MPI_Iallreduce(in, out, n, MPI_INT, op, MPI_COMM_WORLD, &rq);
    else
        MPI_Ireduce(in, out, n, MPI_INT, op, root, MPI_COMM_WORLD, &rq);
    complete(&rq, by_test);
    for (int j = 0; j < n && (root < 0 || me == root); j++) {
        int want = np - 1;
        for (int r = 0; r < np; r++)
            want += v(r, j, 10) % 1000;
        if (out[j] != want) {
            fail("element %d is %d, expected %d", j, out[j], want);
            break;
        }
    }
    EXPECT(root >= 0 && me != root ? 1 : out[n] == SENT, "past the end");
    MPI_Op_free(&op);
    free(in);
    free(out);
    report_reduce("plus1 (commutative)", n, root, by_test);
}

/* The matrix product over n matrices: Iallreduce (root < 0) or Ireduce to root. */
static void check_matmul(MPI_Datatype m4, int n, int root, int by_test)
{
    unsigned *a = malloc(4 * n * sizeof *a), *b = malloc((4 * n + 1) * sizeof *b), w[4];
    MPI_Op op;
    MPI_Request rq;
    MPI_Op_create(matmul, 0, &op);
    for (int j = 0; j < n; j++)
        mat(me, j, a + 4 * j);
    b[4 * n] = (unsigned)SENT;
    if (root < 0)
        MPI_Iallreduce(a, b, n, m4, op, MPI_COMM_WORLD, &rq);
    else
        MPI_Ireduce(a, b, n, m4, op, root, MPI_COMM_WORLD, &rq);
    complete(&rq, by_test);
    for (int j = 0; j < n && (root < 0 || me == root); j++) {
        prod(0, np, j, w);
        if (memcmp(w, b + 4 * j, sizeof w)) {
            fail("element %d wrong (rank order?)", j);
            break;
        }
    }
    EXPECT(root >= 0 && me != root ? 1 : b[4 * n] == (unsigned)SENT, "past the end");
    MPI_Op_free(&op);
    free(a);
    free(b);
    report_reduce("matrix product (not commutative)", n, root, by_test);
}

/* OUTSTANDING Iallreduces with the matrix product at once, one Waitall. */
static void check_outstanding(MPI_Datatype m4)
{
    enum { N = 64 };
    unsigned a[OUTSTANDING][4 * N], b[OUTSTANDING][4 * N], w[4];
    MPI_Op op;
    MPI_Request rq[OUTSTANDING];
    MPI_Op_create(matmul, 0, &op);
    for (int k = 0; k < OUTSTANDING; k++) {
        for (int j = 0; j < N; j++)
            mat(me, j + k, a[k] + 4 * j);
        MPI_Iallreduce(a[k], b[k], N, m4, op, MPI_COMM_WORLD, &rq[k]);
    }
    MPI_Waitall(OUTSTANDING, rq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < OUTSTANDING; k++)
        for (int j = 0; j < N; j++) {
            prod(0, np, j + k, w);
            if (memcmp(w, b[k] + 4 * j, sizeof w)) {
                fail("request %d element %d wrong", k, j);
                break;
            }
        }
    MPI_Op_free(&op);
    report("3 Iallreduce matrix products outstanding, Waitall");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "kacc_uop"))
        return 0;
    MPI_Datatype m4;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &m4);
    MPI_Type_commit(&m4);
    for (int i = 0; i < NCOUNTS; i++) {
        check_plus1(ucounts[i], -1, i % 2);
        check_matmul(m4, ucounts[i], -1, i % 2);
    }
    for (int root = 0; root < np; root++) {
        check_plus1(ucounts[root % NCOUNTS], root, root % 2);
        check_matmul(m4, ucounts[root % NCOUNTS], root, !(root % 2));
    }
    check_outstanding(m4);
    MPI_Type_free(&m4);
    return finish("kacc_uop");
}
