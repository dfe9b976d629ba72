/*
 * knlbench.c: the knl board's MPI figures (tests/bench/knl.bench.sh), rank 0 prints one
 * "knlbench KEY=VALUE..." line per mode:
 *   pingpong   half round trip of 8 bytes between ranks 0 and 1, median over ITERS (us)
 *   allreduce  MPI_Allreduce of one double over all ranks, median over ITERS (us)
 *   copy       STREAM-like copy: every rank copies COPY_MIB MiB from one heap array to
 *              another, all at once between barriers; MB/s of the slowest rank, median
 *              over REPS (where the heap is comes from the job's mem= policy)
 * usage: knlbench MODE...
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS    200
#define REPS     5
#define COPY_MIB 8

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static void pingpong(int rank)
{
    static double t[ITERS];
    char buf[8] = {0};
    for (int i = 0; i < ITERS; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, sizeof buf, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, sizeof buf, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, sizeof buf, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
        t[i] = (MPI_Wtime() - t0) * 1e6 / 2;
    }
    if (rank == 0)
        printf("knlbench pingpong_us=%.2f\n", median(t, ITERS));
}

static void allreduce(int rank)
{
    static double t[ITERS];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < ITERS; i++) {
        double in = rank + i, out;
        double t0 = MPI_Wtime();
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t[i] = (MPI_Wtime() - t0) * 1e6;
    }
    if (rank == 0)
        printf("knlbench allreduce_us=%.2f\n", median(t, ITERS));
}

static void copy(int rank)
{
    size_t n = (size_t)COPY_MIB << 20;
    char *a = malloc(n), *b = malloc(n);
    double t[REPS];
    if (!a || !b) {
        printf("knlbench copy: rank %d: malloc failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(a, rank + 1, n);
    memset(b, 0, n); /* both touched: every page mapped before the first timing */
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), mine, slowest;
        memcpy(b, a, n);
        mine = MPI_Wtime() - t0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[r] = (double)n / slowest / 1e6;
    }
    if (rank == 0)
        printf("knlbench copy_MBps=%.1f\n", median(t, REPS));
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "pingpong") && size >= 2)
            pingpong(rank);
        else if (!strcmp(argv[i], "allreduce"))
            allreduce(rank);
        else if (!strcmp(argv[i], "copy"))
            copy(rank);
        else if (rank == 0)
            printf("knlbench: unknown mode %s (or too few ranks)\n", argv[i]);
    }
    MPI_Finalize();
    return 0;
}
