/*
 * mpi_bench.c: the Open MPI baseline of wio_bench.c, the same pattern over MPI point to
 * point in one job of 2 x P processes: rank i (i < P) is PB 0's rank i, rank P + i is
 * PB 1's. Run by tests/bench/waitio.bench.sh with the TCP BTL only.
 *
 *   mpi_bench lat [SMALL_ITERS]      half round trip, rank 0 <-> rank P
 *   mpi_bench bw [MSGS [RUNS]]       rank i streams MSGS x 4 MiB to rank P + i, all at once
 *
 * Rank 0 prints bench_common.h's lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "bench_common.h"

#define MAX_RUNS 64

/* Half round trips between rank 0 and `peer`. */
static void lat(int first, int peer, int small, char *buf)
{
    static double t[4096];

    for (unsigned k = 0; k < LAT_NSIZES; k++) {
        int n = (int)lat_sizes[k], iters = lat_iters(lat_sizes[k], small);

        if (iters > (int)(sizeof t / sizeof *t))
            iters = sizeof t / sizeof *t;
        for (int i = -LAT_WARMUP; i < iters; i++) {
            double t0 = MPI_Wtime();
            if (first) {
                MPI_Send(buf, n, MPI_CHAR, peer, DATA_TAG, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_CHAR, peer, DATA_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, n, MPI_CHAR, peer, DATA_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_CHAR, peer, DATA_TAG, MPI_COMM_WORLD);
            }
            if (i >= 0)
                t[i] = MPI_Wtime() - t0;
        }
        if (first)
            printf("bench: lat bytes=%d half_rtt_us=%.2f iters=%d\n", n, median(t, iters) * 1e6 / 2,
                   iters);
    }
}

/* Streams: the senders start together (a barrier among them). */
static void bw(MPI_Comm senders, int sender, int peer, int msgs, int runs, int pairs, char *buf)
{
    double agg[MAX_RUNS], rate[MAX_RUNS];
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int r = -1; r < runs; r++) {
        int m = r < 0 ? 1 : msgs;
        double t, tmax = 0, rsum = 0;

        if (sender)
            MPI_Barrier(senders);
        double t0 = MPI_Wtime();
        for (int i = 0; i < m; i++)
            if (sender)
                MPI_Send(buf, BW_BYTES, MPI_CHAR, peer, DATA_TAG, MPI_COMM_WORLD);
            else
                MPI_Recv(buf, BW_BYTES, MPI_CHAR, peer, DATA_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        if (sender)
            MPI_Recv(buf, 0, MPI_CHAR, peer, BW_ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(buf, 0, MPI_CHAR, peer, BW_ACK_TAG, MPI_COMM_WORLD);
        if (!sender || r < 0)
            continue;
        t = MPI_Wtime() - t0;
        double mine = (double)m * BW_BYTES / t / MB;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, senders);
        MPI_Reduce(&mine, &rsum, 1, MPI_DOUBLE, MPI_SUM, 0, senders);
        agg[r] = (double)pairs * m * BW_BYTES / tmax / MB;
        rate[r] = rsum / pairs;
    }
    if (rank == 0)
        printf("bench: bw pairs=%d bytes=%d pair_MBps=%.1f agg_MBps=%.1f runs=%d\n", pairs,
               BW_BYTES, median(rate, runs), median(agg, runs), runs);
}

int main(int argc, char **argv)
{
    int rank, size;
    const char *mode = argc > 1 ? argv[1] : "lat";
    int a2 = argc > 2 ? atoi(argv[2]) : 0, a3 = argc > 3 ? atoi(argv[3]) : 0;
    char *buf = malloc(LAT_MAX);
    MPI_Comm senders;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!buf || size < 2 || size % 2)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 0x5a, LAT_MAX);
    int pairs = size / 2, sender = rank < pairs, peer = sender ? rank + pairs : rank - pairs;
    MPI_Comm_split(MPI_COMM_WORLD, sender, rank, &senders);
    if (strcmp(mode, "bw") == 0) {
        int runs = a3 > 0 ? a3 : 3;
        bw(senders, sender, peer, a2 > 0 ? a2 : 8, runs > MAX_RUNS ? MAX_RUNS : runs, pairs, buf);
    } else if (rank == 0 || rank == pairs) {
        lat(rank == 0, peer, a2 > 0 ? a2 : 200, buf);
    }
    fflush(stdout);
    MPI_Comm_free(&senders);
    MPI_Finalize();
    return 0;
}
