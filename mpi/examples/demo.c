/*
 * demo.c: the job `make run` starts (2 nodes x 2 ranks by default). Plain MPI: it builds
 * as well with Debian's mpicc.
 *
 *   1. ping-pong between rank 0 and its neighbour on the same node (PVAS: one memcpy)
 *      and between rank 0 and the first rank of the next node (TCP, matched in the NIC
 *      interrupt): half round-trip latency and bandwidth;
 *   2. a 1-D halo exchange: each rank owns a slab of a heat-equation grid, trades edge
 *      cells with both neighbours every step (MPI_Sendrecv), and the global residual is
 *      checked against a serial computation of the same grid;
 *   3. MPI_Allreduce of a vector, checked, and timed.
 * Rank 0 prints a table; every check prints ok or FAILED, and the exit code says which.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Half round-trip time (us) of `iters` ping-pongs of `len` bytes between a and b: the
 * median of the round trips, each timed on its own (as make bench does: on a host whose
 * cores are shared, a few round trips wait for the host's scheduler, and a mean would
 * report those rather than the path). Meaningful at a. */
static double pingpong(int a, int b, int len, int iters)
{
    char *buf = calloc(1, (size_t)len + 1);
    double *t = calloc((size_t)iters, sizeof *t);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -10; i < iters; i++) { /* ten warm-up rounds */
        double t0 = MPI_Wtime();
        if (me == a) {
            MPI_Send(buf, len, MPI_BYTE, b, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, len, MPI_BYTE, b, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == b) {
            MPI_Recv(buf, len, MPI_BYTE, a, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, len, MPI_BYTE, a, 1, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    double med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    free(t);
    free(buf);
    return med / 2 * 1e6;
}

/* Heat equation on N cells with fixed ends, `steps` Jacobi steps. Returns 1 if the
 * distributed grid equals the serial one exactly (same operations in the same order). */
static int halo(int n, int steps, double *us_per_step)
{
    int lo = (int)((long)n * me / np), hi = (int)((long)n * (me + 1) / np), m = hi - lo;
    double *u = calloc((size_t)m + 2, sizeof *u), *v = calloc((size_t)m + 2, sizeof *v);
    for (int i = 0; i < m; i++)
        u[i + 1] = (lo + i) % 17 == 0 ? 100.0 : 0.0;
    int left = me > 0 ? me - 1 : MPI_PROC_NULL, right = me < np - 1 ? me + 1 : MPI_PROC_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 2, &u[m + 1], 1, MPI_DOUBLE, right, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[m], 1, MPI_DOUBLE, right, 3, &u[0], 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (left == MPI_PROC_NULL)
            u[0] = 0;
        if (right == MPI_PROC_NULL)
            u[m + 1] = 0;
        for (int i = 1; i <= m; i++)
            v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        double *t = u;
        u = v;
        v = t;
    }
    *us_per_step = (MPI_Wtime() - t0) / steps * 1e6;
    /* Gather the grid on rank 0 and compare with a serial run. */
    int *counts = malloc(sizeof(int) * (size_t)np), *displs = malloc(sizeof(int) * (size_t)np);
    for (int r = 0; r < np; r++) {
        displs[r] = (int)((long)n * r / np);
        counts[r] = (int)((long)n * (r + 1) / np) - displs[r];
    }
    double *all = me == 0 ? malloc(sizeof(double) * (size_t)n) : 0;
    MPI_Gatherv(&u[1], m, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (me == 0) {
        double *a = calloc((size_t)n + 2, sizeof *a), *b = calloc((size_t)n + 2, sizeof *b);
        for (int i = 0; i < n; i++)
            a[i + 1] = i % 17 == 0 ? 100.0 : 0.0;
        for (int s = 0; s < steps; s++) {
            for (int i = 1; i <= n; i++)
                b[i] = a[i] + 0.25 * (a[i - 1] - 2 * a[i] + a[i + 1]);
            double *t = a;
            a = b;
            b = t;
        }
        for (int i = 0; i < n; i++)
            ok &= a[i + 1] == all[i];
        free(a);
        free(b);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(counts);
    free(displs);
    free(u);
    free(v);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len, failed = 0;
    MPI_Get_processor_name(name, &len);
    /* Who shares rank 0's node: the names tell (same processor name = same node). */
    char *names = malloc((size_t)np * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    int near = -1, far = -1;
    for (int r = 1; r < np; r++) {
        int same = strcmp(names + r * MPI_MAX_PROCESSOR_NAME, names) == 0;
        if (same && near < 0)
            near = r;
        if (!same && far < 0)
            far = r;
    }
    if (me == 0)
        printf("demo: %d ranks; rank 0 on %s; same-node peer %d, other-node peer %d\n", np, name,
               near, far);

    static const int sizes[] = {0, 1024, 65536, 1048576};
    double lat[2][4];
    for (int k = 0; k < 2; k++) {
        int peer = k == 0 ? near : far;
        for (int s = 0; s < 4; s++)
            lat[k][s] = peer < 0 ? -1 : pingpong(0, peer, sizes[s], sizes[s] > 65536 ? 10 : 200);
    }
    double step_us;
    int halo_ok = halo(4096, 200, &step_us);

    int n = 100000;
    double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++)
        x[i] = me + i % 7;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double ar_us = (MPI_Wtime() - t0) * 1e6;
    int ar_ok = 1;
    for (int i = 0; i < n; i++)
        ar_ok &= y[i] == (double)np * (np - 1) / 2 + (double)np * (i % 7);
    MPI_Allreduce(MPI_IN_PLACE, &ar_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

    if (me == 0) {
        printf("demo: ping-pong, half round trip (us) and bandwidth (MB/s), medians\n");
        printf("demo:   %-10s %12s %12s\n", "bytes", "same node", "other node");
        for (int s = 0; s < 4; s++) {
            char a[32], b[32];
            for (int k = 0; k < 2; k++) {
                char *o = k ? b : a;
                if (lat[k][s] < 0)
                    snprintf(o, 32, "-");
                else if (sizes[s] >= 65536)
                    snprintf(o, 32, "%.0f MB/s", sizes[s] / lat[k][s]);
                else
                    snprintf(o, 32, "%.1f us", lat[k][s]);
            }
            printf("demo:   %-10d %12s %12s\n", sizes[s], a, b);
        }
        printf("demo: halo exchange, 4096 cells, 200 steps: %.1f us/step, grid %s\n", step_us,
               halo_ok ? "ok" : "FAILED");
        printf("demo: allreduce of %d doubles: %.0f us, result %s\n", n, ar_us,
               ar_ok ? "ok" : "FAILED");
    }
    failed = !halo_ok || !ar_ok;
    free(names);
    free(x);
    free(y);
    MPI_Finalize();
    return failed;
}
