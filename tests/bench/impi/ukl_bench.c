/*
 * ukl_bench.c: the MPI program of tests/bench/uk_impi.bench.sh, built twice: with
 * mpi/bin/ukmpicc (the unikernel job, IMPI client 0) and with LAM's mpicc (LAM, client 1;
 * and both clients of the LAM<->LAM baseline). MPI-1 and libc only (LAM 7.1.4), so both
 * builds measure the same code. Traffic is between rank 0 (client 0) and the last rank
 * (client 1); the other ranks only join the barriers.
 *
 *   ukl_bench ITERS REPS RUNS
 *
 *   ITERS  0-byte ping-pong round trips (1 KiB: ITERS/8, at least 10), after a tenth as
 *          many (at least 5) warm-up round trips; each round trip is timed on its own
 *   REPS   64 KiB messages per bandwidth run (4 MiB: REPS/16, at least 2); 0: only the
 *          0-byte latency (the relay profile of uk_impi.bench.sh: small packets only)
 *   RUNS   bandwidth runs per size and direction; the median is printed
 *
 * Output, rank 0 only, one line per figure (MB = 10^6 bytes):
 *   ukl lat bytes=N iters=I half_rtt_us=MEDIAN min_us=MIN mean_us=MEAN
 *   ukl bw bytes=N dir=up|down reps=R runs=U MBps=MEDIAN
 * up: rank 0 -> last rank (client 0 -> client 1); down: the other way. A bandwidth run is
 * timed by rank 0 and includes one 1-byte message (up: the receiver's ack after the last
 * message; down: rank 0's go before the first), so both directions pay the same extra
 * one-way latency.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LAT_BIG  1024       /* the second latency size */
#define BW_SMALL (64 << 10) /* bandwidth sizes */
#define BW_BIG   (4 << 20)  /* also the buffer size */
#define BIG_DIV  16         /* 4 MiB runs send REPS / 16 messages: 4 times the bytes */
#define MIN_BIG  2
#define MIN_WARM 5
#define LAT_DIV  8 /* 1 KiB ping-pongs: ITERS / 8 (LAM's can wait for delayed ACKs) */
#define MIN_LAT  10
#define TAG_DATA 1
#define TAG_SYNC 2

static int rank, last;
static char *buf;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Any rank: sorts v (n > 0) and returns its median. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* All ranks: ping-pong of `bytes` between rank 0 and the last; rank 0 prints. t: ITERS
 * doubles, owned by the caller. */
static void bench_lat(int bytes, int iters, double *t)
{
    int warm = iters / 10 < MIN_WARM ? MIN_WARM : iters / 10;
    MPI_Status st;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0 && rank != last)
        return;
    for (int i = -warm; i < iters; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, last, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, last, TAG_DATA, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &st);
            MPI_Send(buf, bytes, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) * 0.5e6; /* half round trip, us */
    }
    if (rank == 0) {
        double sum = 0;
        for (int i = 0; i < iters; i++)
            sum += t[i];
        double med = median(t, iters);
        printf("ukl lat bytes=%d iters=%d half_rtt_us=%.2f min_us=%.2f mean_us=%.2f\n", bytes,
               iters, med, t[0], sum / iters);
        fflush(stdout);
    }
}

/* All ranks: RUNS runs of `reps` messages of `bytes`, rank 0 -> last (up) or last -> 0;
 * rank 0 prints the median. t: RUNS doubles, owned by the caller. */
static void bench_bw(int bytes, int reps, int runs, int up, double *t)
{
    int src = up ? 0 : last, dst = up ? last : 0;
    char sync = 0;
    MPI_Status st;

    for (int r = 0; r < runs; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (!up && rank == 0)
            MPI_Send(&sync, 1, MPI_BYTE, last, TAG_SYNC, MPI_COMM_WORLD);
        if (!up && rank == last)
            MPI_Recv(&sync, 1, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD, &st);
        for (int i = 0; i < reps; i++) {
            if (rank == src)
                MPI_Send(buf, bytes, MPI_BYTE, dst, TAG_DATA, MPI_COMM_WORLD);
            else if (rank == dst)
                MPI_Recv(buf, bytes, MPI_BYTE, src, TAG_DATA, MPI_COMM_WORLD, &st);
        }
        if (up && rank == last)
            MPI_Send(&sync, 1, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD);
        if (up && rank == 0)
            MPI_Recv(&sync, 1, MPI_BYTE, last, TAG_SYNC, MPI_COMM_WORLD, &st);
        t[r] = (double)bytes * reps / (MPI_Wtime() - t0) / 1e6;
    }
    if (rank == 0) {
        printf("ukl bw bytes=%d dir=%s reps=%d runs=%d MBps=%.1f\n", bytes, up ? "up" : "down",
               reps, runs, median(t, runs));
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    last = size - 1;
    int iters = argc > 1 ? atoi(argv[1]) : 0, reps = argc > 2 ? atoi(argv[2]) : 0;
    int runs = argc > 3 ? atoi(argv[3]) : 0;
    if (iters < 1 || reps < 0 || runs < 1 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: ukl_bench ITERS REPS RUNS (see the source)\n");
        MPI_Finalize();
        return 2;
    }
    double *t = malloc(sizeof(double) * (size_t)(iters > runs ? iters : runs));
    buf = calloc(BW_BIG, 1);
    if (!t || !buf)
        MPI_Abort(MPI_COMM_WORLD, 1);

    bench_lat(0, iters, t);
    if (reps > 0) {
        bench_lat(LAT_BIG, iters / LAT_DIV < MIN_LAT ? MIN_LAT : iters / LAT_DIV, t);
        int big = reps / BIG_DIV < MIN_BIG ? MIN_BIG : reps / BIG_DIV;
        for (int up = 1; up >= 0; up--) {
            bench_bw(BW_SMALL, reps, runs, up, t);
            bench_bw(BW_BIG, big, runs, up, t);
        }
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
