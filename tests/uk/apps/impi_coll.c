/*
 * impi_coll.c: the collectives across IMPI clients end to end through the library
 * (mpi/lib/coll_run.c picks CAD_A_IMPI or CAD_A_LAMBASIC for a communicator that spans
 * clients), on a job
 * that UKMPI_IMPI_FAKE_CLIENTS splits into pretend clients (every rank still ours; see
 * mpi/lib/world.c). Barrier, bcast (small and 70 000 bytes), reduce and allreduce from
 * every root with the data checked on every rank, a non-commutative user op (2x2 integer
 * matrices, whose product shows any reordering), in place, blocking and non-blocking (also
 * several outstanding at once); the ones LAM runs through lam_basic (CAD_A_LAMBASIC:
 * gather, scatter, allgather, alltoall, scan, exscan, reduce_scatter); then what LAM
 * cannot do across clients must fail with MPI_ERR_UNSUPPORTED_OPERATION (MPI_Comm_dup on
 * MPI_COMM_WORLD) while MPI_COMM_SELF still works. Each
 * failed check prints "impi_coll: FAIL ..."; rank 0 ends with "impi_coll: N ranks ok"
 * (counted with an IMPI allreduce) and MPI_Finalize runs the IMPI barrier once more.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N      12    /* ints (3 matrices) per vector */
#define BIG    70000 /* a bcast above 64 KiB: several packets on any wire */
#define ROUNDS 3

static int me, np, bad;

static void check(int ok, const char *what, int root, int i)
{
    if (!ok && bad++ < 10)
        printf("impi_coll: FAIL rank %d: %s root %d element %d\n", me, what, root, i);
}

static int val(int r, int i)
{
    return (r * 131 + i * 17) % 23 - 11;
}

/* inout = in * inout for each 2x2 matrix (in: the lower ranks' part, MPI's order). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k + 4 <= *len; k += 4) {
        int c[4] = {a[k] * b[k] + a[k + 1] * b[k + 2], a[k] * b[k + 1] + a[k + 1] * b[k + 3],
                    a[k + 2] * b[k] + a[k + 3] * b[k + 2],
                    a[k + 2] * b[k + 1] + a[k + 3] * b[k + 3]};
        memcpy(b + k, c, sizeof c);
    }
}

/* The reference: x_0 op x_1 op ... op x_{np-1}, as sums or matrix products. */
static void expected(int ordered, int *want)
{
    int x[N];
    for (int i = 0; i < N; i++)
        want[i] = val(np - 1, i);
    for (int r = np - 2; r >= 0; r--) {
        for (int i = 0; i < N; i++)
            x[i] = val(r, i);
        if (ordered) {
            int len = N;
            matmul(x, want, &len, 0);
        } else {
            for (int i = 0; i < N; i++)
                want[i] += x[i];
        }
    }
}

static void reductions(MPI_Op mat)
{
    int in[N], out[N], want[N];
    for (int ordered = 0; ordered < 2; ordered++) {
        MPI_Op op = ordered ? mat : MPI_SUM;
        expected(ordered, want);
        for (int root = 0; root < np; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                for (int i = 0; i < N; i++)
                    in[i] = out[i] = val(me, i);
                int ip = inplace && me == root;
                MPI_Reduce(ip ? MPI_IN_PLACE : in, out, N, MPI_INT, op, root, MPI_COMM_WORLD);
                for (int i = 0; me == root && i < N; i++)
                    check(out[i] == want[i], ordered ? "reduce matmul" : "reduce sum", root, i);
            }
        for (int i = 0; i < N; i++)
            in[i] = out[i] = val(me, i);
        MPI_Allreduce(MPI_IN_PLACE, out, N, MPI_INT, op, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            check(out[i] == want[i], ordered ? "allreduce matmul" : "allreduce sum", 0, i);
        MPI_Request r;
        memset(out, 0, sizeof out);
        MPI_Iallreduce(in, out, N, MPI_INT, op, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            check(out[i] == want[i], ordered ? "iallreduce matmul" : "iallreduce sum", 0, i);
    }
}

static void bcasts(void)
{
    static unsigned char big[BIG];
    int v[N];
    for (int root = 0; root < np; root++) {
        for (int i = 0; i < N; i++)
            v[i] = me == root ? val(root, i) : -99;
        MPI_Bcast(v, N, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            check(v[i] == val(root, i), "bcast", root, i);
        for (int i = 0; i < BIG; i++)
            big[i] = me == root ? (unsigned char)(i * 7 + root) : 0;
        MPI_Request r;
        MPI_Ibcast(big, BIG, MPI_BYTE, root, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < BIG; i++)
            if (big[i] != (unsigned char)(i * 7 + root)) {
                check(0, "ibcast 70000", root, i);
                break;
            }
    }
}

/* Several non-blocking ones outstanding at once (the library runs them one at a time:
 * LAM's fixed tags cannot tell them apart), waited for in reverse order. */
static void overlapped(MPI_Op mat)
{
    int in[N], sum[N], prod[N], got[N], want[N], root = np - 1;
    MPI_Request r[4];
    for (int i = 0; i < N; i++)
        in[i] = val(me, i);
    for (int i = 0; i < N; i++)
        got[i] = me == root ? val(root, i) : -99;
    MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    MPI_Iallreduce(in, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    MPI_Ibcast(got, N, MPI_INT, root, MPI_COMM_WORLD, &r[2]);
    MPI_Iallreduce(in, prod, N, MPI_INT, mat, MPI_COMM_WORLD, &r[3]);
    for (int k = 3; k >= 0; k--)
        MPI_Wait(&r[k], MPI_STATUS_IGNORE);
    expected(0, want);
    for (int i = 0; i < N; i++)
        check(sum[i] == want[i], "overlapped iallreduce sum", 0, i);
    expected(1, want);
    for (int i = 0; i < N; i++)
        check(prod[i] == want[i], "overlapped iallreduce matmul", 0, i);
    for (int i = 0; i < N; i++)
        check(got[i] == val(root, i), "overlapped ibcast", root, i);
}

/* The collectives LAM runs through lam_basic (CAD_A_LAMBASIC: LAM's context and tags
 * between the pretend clients), the data checked on every rank: gather and scatter from
 * every root, allgather, alltoall, scan, exscan, reduce_scatter. */
static int bv(int r, int d)
{
    return r * 1000 + d;
}

static void lambasic(void)
{
    int x, all[64], out[64], cnt[64], want;
    for (int root = 0; root < np; root++) {
        x = bv(me, root);
        MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; me == root && i < np; i++)
            check(all[i] == bv(i, root), "gather", root, i);
        for (int i = 0; i < np; i++)
            all[i] = bv(root, i);
        MPI_Scatter(all, 1, MPI_INT, &x, 1, MPI_INT, root, MPI_COMM_WORLD);
        check(x == bv(root, me), "scatter", root, 0);
    }
    x = bv(me, 0);
    MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < np; i++)
        check(all[i] == bv(i, 0), "allgather", 0, i);
    for (int i = 0; i < np; i++)
        all[i] = bv(me, i);
    MPI_Alltoall(all, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < np; i++)
        check(out[i] == bv(i, me), "alltoall", 0, i);
    x = me + 1;
    MPI_Scan(&x, &want, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(want == (me + 1) * (me + 2) / 2, "scan", 0, want);
    MPI_Exscan(&x, &want, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(!me || want == me * (me + 1) / 2, "exscan", 0, want);
    for (int i = 0; i < np; i++)
        cnt[i] = 1, all[i] = (me + 1) * (i + 1);
    MPI_Reduce_scatter(all, &x, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(x == np * (np + 1) / 2 * (me + 1), "reduce_scatter", 0, x);
}

/* What LAM cannot do across clients fails, with the class that says so. */
static void refusals(void)
{
    int x = me, all[64], cls = -1, one = 1, sum = 0;
    MPI_Comm dup;
    MPI_Error_class(MPI_Comm_dup(MPI_COMM_WORLD, &dup), &cls);
    check(cls == MPI_ERR_UNSUPPORTED_OPERATION, "comm_dup refused", 0, cls);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF); /* one client: ours */
    check(sum == 1, "allreduce on MPI_COMM_SELF", 0, sum);
    MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_SELF);
    check(all[0] == me, "gather on MPI_COMM_SELF", 0, all[0]);
}

int main(int argc, char **argv)
{
    MPI_Op mat;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op_create(matmul, 0, &mat);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request r;
        MPI_Ibarrier(MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        bcasts();
        reductions(mat);
        overlapped(mat);
    }
    lambasic();
    refusals();
    int ok = !bad, nok = 0;
    MPI_Reduce(&ok, &nok, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("impi_coll: %d of %d ranks ok\n", nok, np);
    MPI_Op_free(&mat);
    MPI_Finalize();
    return bad ? 1 : 0;
}
