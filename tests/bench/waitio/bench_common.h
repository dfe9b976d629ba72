/*
 * bench_common.h: what the two ping-pong benchmarks of tests/bench/waitio.bench.sh share
 * (wio_bench.c over WaitIO, mpi_bench.c over Open MPI), so both measure exactly the same
 * pattern: message sizes, iteration counts, the median, and the output lines
 *   bench: lat bytes=N half_rtt_us=T iters=I
 *   bench: bw pairs=P bytes=N pair_MBps=R agg_MBps=A runs=K
 */
#ifndef WIO_BENCH_COMMON_H
#define WIO_BENCH_COMMON_H

#include <stdlib.h>

/* The half round trip sizes: both sides of the eager/rendezvous limit (128 B) and of the
 * 64 KiB data chunk, up to 4 MiB. */
static const size_t lat_sizes[] = {0, 8, 128, 129, 1024, 65536, 1 << 20, 4 << 20};
#define LAT_NSIZES (sizeof lat_sizes / sizeof *lat_sizes)
#define LAT_MAX    (4 << 20)
#define LAT_WARMUP 3 /* round trips before timing: the connection opens on the first */
#define BW_BYTES   (4 << 20)
#define BW_ACK_TAG 2
#define DATA_TAG   1
#define MB         1e6

/* Round trips timed at `bytes` when `small` are timed at 1 KiB and below: fewer for
 * large messages, so every size costs about the same wall time. Any thread. */
static inline int lat_iters(size_t bytes, int small)
{
    int n = bytes <= 1024        ? small
            : bytes <= 65536     ? small / 4
            : bytes <= (1 << 20) ? small / 16
                                 : small / 32;
    return n < 3 ? 3 : n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorts v in place; caller owns v). */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
