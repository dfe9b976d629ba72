/*
 * wio_bench.c: WaitIO ping-pong benchmark between PB 0 and PB 1, written against the public
 * API only (<mpi.h>, "waitio.h"), so the same source builds with mpicc -lwaitio and with
 * mpi/bin/ukmpicc -lwaitio. Run by tests/bench/waitio.bench.sh.
 *
 *   wio_bench lat [SMALL_ITERS]      half round trip, PB 0 rank 0 <-> PB 1 rank 0, every
 *                                    size of bench_common.h; each round trip timed alone
 *   wio_bench bw [MSGS [RUNS]]       PB 0 rank i streams MSGS messages of 4 MiB to PB 1
 *                                    rank i (every i both PBs have), all pairs at once,
 *                                    then waits for a 0-byte ack; RUNS times
 *
 * Only PB 0 rank 0 prints (bench_common.h's lines); PBs beyond 1 and processes without a
 * partner just join and finalize. Times are MPI_Wtime on PB 0, medians over the
 * round trips (lat) or the runs (bw).
 */
#include <mpi.h>
#include "waitio.h"
#include <stdio.h>
#include <string.h>

#include "bench_common.h"

#define INIT_TIMEOUT_S 60
#define MAX_PBS        16
#define MAX_RUNS       64

int truef(int pbid, int n)
{
    return 1;
}

static waitio_group_t g;

/* Blocking send/receive of one message to/from group rank `peer`; aborts on error. */
static void xfer(int send, int peer, char *buf, size_t n, waitio_tag_t tag)
{
    waitio_req_t req;
    int rc =
        send ? waitio_isend(g, peer, buf, n, tag, &req) : waitio_irecv(g, peer, buf, n, tag, &req);

    if (rc || waitio_wait(&req)) {
        fprintf(stderr, "wio_bench: %s of %zu bytes with group rank %d failed\n",
                send ? "send" : "receive", n, peer);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Half round trips: `first` (PB 0) sends, the peer echoes. */
static void lat(int first, int peer, int small, char *buf)
{
    static double t[4096];

    for (unsigned k = 0; k < LAT_NSIZES; k++) {
        size_t n = lat_sizes[k];
        int iters = lat_iters(n, small);

        if (iters > (int)(sizeof t / sizeof *t))
            iters = sizeof t / sizeof *t;
        for (int i = -LAT_WARMUP; i < iters; i++) {
            double t0 = MPI_Wtime();
            xfer(first, peer, buf, n, DATA_TAG);
            xfer(!first, peer, buf, n, DATA_TAG);
            if (i >= 0)
                t[i] = MPI_Wtime() - t0;
        }
        if (first)
            printf("bench: lat bytes=%zu half_rtt_us=%.2f iters=%d\n", n,
                   median(t, iters) * 1e6 / 2, iters);
    }
}

/* Streams: every pair at once; PB 0's processes start together (its own MPI_Barrier). */
static void bw(int sender, int peer, int msgs, int runs, int pairs, char *buf)
{
    double agg[MAX_RUNS], rate[MAX_RUNS];
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int r = -1; r < runs; r++) { /* run -1 is the warm-up: connections open there */
        int m = r < 0 ? 1 : msgs;
        double t = 0, tmax = 0, rsum = 0;

        if (sender)
            MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < m && peer >= 0; i++)
            xfer(sender, peer, buf, BW_BYTES, DATA_TAG);
        if (peer >= 0)
            xfer(!sender, peer, buf, 0, BW_ACK_TAG);
        if (!sender || r < 0)
            continue;
        t = MPI_Wtime() - t0;
        double mine = peer >= 0 ? (double)m * BW_BYTES / t / MB : 0;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mine, &rsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        agg[r] = (double)pairs * m * BW_BYTES / tmax / MB;
        rate[r] = rsum / pairs;
    }
    if (sender && rank == 0)
        printf("bench: bw pairs=%d bytes=%d pair_MBps=%.1f agg_MBps=%.1f runs=%d\n", pairs,
               BW_BYTES, median(rate, runs), median(agg, runs), runs);
}

int main(int argc, char **argv)
{
    int nprocs[MAX_PBS], order[MAX_PBS], npb, pb, rank;
    waitio_filter_func_t func[MAX_PBS];
    const char *mode = argc > 1 ? argv[1] : "lat";
    int a2 = argc > 2 ? atoi(argv[2]) : 0, a3 = argc > 3 ? atoi(argv[3]) : 0;
    char *buf = malloc(LAT_MAX);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!buf || waitio_init(INIT_TIMEOUT_S) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 0x5a, LAT_MAX);
    npb = waitio_get_nprocs(nprocs);
    waitio_pb_rank(&pb);
    if (npb < 2 || npb > MAX_PBS) {
        fprintf(stderr, "wio_bench: needs 2..%d PBs, has %d\n", MAX_PBS, npb);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* PB 0 first, then PB 1: group rank = rank in PB 0, or nprocs[0] + rank in PB 1. */
    for (int i = 0; i < npb; i++) {
        func[i] = i < 2 ? truef : NULL;
        order[i] = i < 2 ? i + 1 : 0;
    }
    g = waitio_create_group(0, func, order);
    if (pb < 2 && !g)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int pairs = nprocs[0] < nprocs[1] ? nprocs[0] : nprocs[1];
    int peer = pb > 1 || rank >= pairs ? -1 : pb == 0 ? nprocs[0] + rank : rank;

    if (strcmp(mode, "bw") == 0) {
        int runs = a3 > 0 ? a3 : 3;
        if (pb < 2)
            bw(pb == 0, peer, a2 > 0 ? a2 : 8, runs > MAX_RUNS ? MAX_RUNS : runs, pairs, buf);
    } else if (pb < 2 && rank == 0) {
        lat(pb == 0, peer, a2 > 0 ? a2 : 200, buf);
    }
    fflush(stdout);
    waitio_finalize();
    MPI_Finalize();
    return 0;
}
