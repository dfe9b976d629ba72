/*
 * mpibench.c: the MPI benchmark of tests/bench/mpi.bench.sh and tests/bench/nbc.bench.sh.
 * One standard MPI program, built twice: with mpi/bin/ukmpicc for our unikernel
 * (qemu/ukrun) and with Debian's mpicc for the Open MPI baseline in Linux guests. Only MPI
 * and libc (stdio, stdlib, string, clock_gettime) are used, so both builds measure the same
 * code; our MPIX extensions only where <mpix.h> is (nbc.c). Built from every .c file of
 * this directory (this file: main and the point-to-point modes; nbc.c: the non-blocking
 * collective modes; mpibench.h what they share).
 *
 *   mpibench [-n ITERS] [-r REPS] [-d DELAY_MS] [-p A,B] [-k KEYS] MODE...
 *
 *   -n ITERS   ping-pong round trips for sizes <= 1 KiB; 64 KiB does ITERS/5, 1 MiB
 *              ITERS/20 (at least 10), after a 10 % warm-up (the first size: at least 200).
 *              Default $MPIBENCH_ITERS or 1000.
 *   -r REPS    repetitions of waitcpu, overlap, bcasttime and cadlat, iterations of is
 *              (medians reported). Default $MPIBENCH_REPS or 10.
 *   -d MS      waitcpu: how long the sender delays its message. Default 100.
 *   -p A,B     the two ranks of pingpong (A starts) and waitcpu (A sends, B waits).
 *              Default 0,1. The other ranks only join the barriers.
 *   -k KEYS    is: keys per rank. Default 65536.
 *
 * Modes, run in the order given:
 *   pingpong  half round trip (median and minimum over the round trips, each timed on its
 *             own) for 0, 8, 1024, 65536 and 1048576 bytes; for 64 KiB and 1 MiB also
 *             the ping-pong bandwidth, bytes / median half round trip.
 *   waitcpu   B posts MPI_Irecv and calls MPI_Wait; A spins on MPI_Wtime for DELAY_MS,
 *             then sends 8 bytes. B measures the wall time of the MPI_Wait and the CPU time
 *             its process consumed meanwhile (CLOCK_PROCESS_CPUTIME_ID): a library that
 *             busy-polls uses ~100 % of the wait, one that blocks uses ~0 %.
 *   overlap, bcasttime, cadlat
 *             MPI_Ibcast of 64 KiB and 1 MiB: the CPU time left to computation while it
 *             runs, its completion time against a point-to-point tree, and (ours) the
 *             latency of interrupt-driven progress. See nbc.c.
 *   limits    the floors of same-node messages: a flag ping-pong in shared memory between
 *             A and B without MPI (only where ranks share an address space: -DMPIBENCH_SAS)
 *             and a 1 MiB memcpy at A; where a 0-byte message's time goes (split). See
 *             limits.c.
 *   is        an integer bucket sort of KEYS keys per rank over all ranks (NAS IS's idea:
 *             MPI_Alltoall of counts, MPI_Alltoallv of keys, local sort), verified; the
 *             median time of one sort. See is.c. mpibench exits 3 when the sort is wrong.
 *   none      nothing: MPI_Init and MPI_Finalize only.
 *
 * Output, printed by rank 0 only, one line per result, key=value (MBps = 10^6 bytes/s):
 *   # mpibench ranks=2 lib="Open MPI v4.1.4" hosts=n0,n1 wtime_us=0.150
 *   pingpong bytes=65536 iters=200 half_rtt_us=128.10 min_us=120.55 MBps=511.6
 *   waitcpu delay_ms=100 reps=10 wall_ms=100.21 cpu_ms=100.02 cpu_pct=99.8
 *   is ranks=4 keys=65536 maxkey=524288 iters=10 time_ms=12.30 ... verified=1 (see is.c)
 *   # nbc ..., overlap ..., bcasttime ..., cadstats ..., cadlat ...    (see nbc.c)
 *   limit flagpp ..., limit memcpy ...                                 (see limits.c)
 */
#include "mpibench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef CLOCK_PROCESS_CPUTIME_ID
/* newlib defines it (as 2, Linux's value too) and declares clock_gettime() only for
 * targets it knows to have POSIX CPU-time clocks. A libc without the clock makes
 * clock_gettime() fail, and waitcpu then prints cpu_ms=na. */
#define CLOCK_PROCESS_CPUTIME_ID ((clockid_t)2)
int clock_gettime(clockid_t clock_id, struct timespec *tp);
#endif

int rank, nranks;
char *buf;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Process CPU time in seconds, or -1 if the libc has no such clock. */
static double cpu_s(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return -1.0;
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The results of a measurement made by rank `from` reach rank 0, which prints them. */
void to_rank0(double *v, int n, int from)
{
    if (from == 0)
        return;
    if (rank == from)
        MPI_Send(v, n, MPI_DOUBLE, 0, TAG_RES, MPI_COMM_WORLD);
    else if (rank == 0)
        MPI_Recv(v, n, MPI_DOUBLE, from, TAG_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void bench_pingpong(int iters, int a, int b)
{
    static const int sizes[] = {0, 8, 1024, 65536, MAXMSG};
    double *t = malloc(sizeof(double) * (iters > 10 ? iters : 10));

    for (int s = 0; s < 5; s++) {
        int sz = sizes[s];
        int it = sz <= 1024 ? iters : sz <= 65536 ? iters / 5 : iters / 20;
        if (it < 10)
            it = 10;
        int warm = it / 10 < 2 ? 2 : it / 10;
        if (s == 0 && warm < 200)
            warm = 200; /* the first exchanges also pay for connection setup and code warm-up */
        double res[2] = {0, 0};

        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == a || rank == b) {
            int peer = rank == a ? b : a;
            for (int i = -warm; i < it; i++) {
                double t0 = MPI_Wtime();
                if (rank == a) {
                    MPI_Send(buf, sz, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD);
                    MPI_Recv(buf, sz, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, sz, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, sz, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD);
                }
                if (i >= 0)
                    t[i] = (MPI_Wtime() - t0) * 0.5e6; /* half round trip, us */
            }
            if (rank == a) {
                res[0] = median(t, it);
                res[1] = t[0]; /* sorted by median() */
            }
        }
        to_rank0(res, 2, a);
        if (rank == 0) {
            printf("pingpong bytes=%d iters=%d half_rtt_us=%.2f min_us=%.2f", sz, it, res[0],
                   res[1]);
            if (sz >= 65536)
                printf(" MBps=%.1f", sz / res[0]);
            printf("\n");
            fflush(stdout);
        }
    }
    free(t);
}

static void bench_waitcpu(int reps, double delay_ms, int a, int b)
{
    double *wall = malloc(sizeof(double) * reps), *cpu = malloc(sizeof(double) * reps);
    double res[2] = {0, 0};
    char msg[8] = "waitcpu";

    for (int r = -1; r < reps; r++) { /* r = -1: warm-up, connections made */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == a) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < delay_ms * 1e-3)
                ;
            MPI_Send(msg, sizeof msg, MPI_BYTE, b, TAG_WC, MPI_COMM_WORLD);
        } else if (rank == b) {
            MPI_Request rq;
            MPI_Irecv(msg, sizeof msg, MPI_BYTE, a, TAG_WC, MPI_COMM_WORLD, &rq);
            double c0 = cpu_s(), t0 = MPI_Wtime();
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            double t1 = MPI_Wtime(), c1 = cpu_s();
            if (r >= 0) {
                wall[r] = (t1 - t0) * 1e3;
                cpu[r] = c0 < 0 || c1 < 0 ? -1.0 : (c1 - c0) * 1e3;
            }
        }
    }
    if (rank == b) {
        res[0] = median(wall, reps);
        res[1] = median(cpu, reps);
    }
    to_rank0(res, 2, b);
    if (rank == 0) {
        printf("waitcpu delay_ms=%g reps=%d wall_ms=%.2f", delay_ms, reps, res[0]);
        if (res[1] < 0)
            printf(" cpu_ms=na cpu_pct=na\n");
        else
            printf(" cpu_ms=%.2f cpu_pct=%.1f\n", res[1], res[0] > 0 ? 100 * res[1] / res[0] : 0);
        fflush(stdout);
    }
    free(wall);
    free(cpu);
}

static void usage_exit(const char *why)
{
    if (rank == 0)
        fprintf(stderr,
                "mpibench: %s\nusage: mpibench [-n ITERS] [-r REPS] [-d DELAY_MS] [-p A,B] "
                "[-k KEYS] pingpong|waitcpu|overlap|bcasttime|cadlat|limits|is|none...\n",
                why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && atoi(v) > 0 ? atoi(v) : def;
}

int main(int argc, char **argv)
{
    int iters, reps, a = 0, b = 1, nmodes = 0, nbc = 0, len, nkeys = 65536, rc = 0;
    double delay_ms = 100;
    const char *modes[16];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    iters = env_int("MPIBENCH_ITERS", 1000);
    reps = env_int("MPIBENCH_REPS", 10);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] == '-' && o[1] && !o[2] && strchr("nrdpk", o[1])) {
            if (i + 1 >= argc)
                usage_exit("option without a value");
            const char *v = argv[++i];
            if (o[1] == 'n')
                iters = atoi(v);
            else if (o[1] == 'r')
                reps = atoi(v);
            else if (o[1] == 'd')
                delay_ms = atof(v);
            else if (o[1] == 'k')
                nkeys = atoi(v);
            else if (sscanf(v, "%d,%d", &a, &b) != 2)
                usage_exit("-p wants A,B");
        } else if (o[0] == '-') {
            usage_exit("unknown option");
        } else if (strcmp(o, "pingpong") && strcmp(o, "waitcpu") && strcmp(o, "overlap") &&
                   strcmp(o, "bcasttime") && strcmp(o, "cadlat") && strcmp(o, "limits") &&
                   strcmp(o, "is") && strcmp(o, "none")) {
            usage_exit("unknown mode");
        } else if (nmodes < 16) {
            nbc += !strcmp(o, "overlap") || !strcmp(o, "bcasttime") || !strcmp(o, "cadlat");
            modes[nmodes++] = o;
        }
    }
    if (nranks < 2)
        usage_exit("needs at least 2 ranks");
    if (a < 0 || b < 0 || a >= nranks || b >= nranks || a == b)
        usage_exit("-p: two different ranks of the job");
    if (iters < 1 || reps < 1 || delay_ms < 0 || nkeys < 1)
        usage_exit("-n, -r and -k must be positive");
    if (nmodes == 0)
        usage_exit("no mode given");

    char name[MPI_MAX_PROCESSOR_NAME], *names = malloc((size_t)nranks * MPI_MAX_PROCESSOR_NAME);
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name, &len);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(ver, &len);
        ver[strcspn(ver, "\n,\"")] = 0;
        for (char *p = ver; *p; p++)
            if (*p == '\t')
                *p = ' ';
        printf("# mpibench ranks=%d lib=\"%s\" hosts=", nranks, ver);
        for (int i = 0; i < nranks; i++)
            printf("%s%s", i ? "," : "", names + (size_t)i * MPI_MAX_PROCESSOR_NAME);
        /* every ping-pong sample contains one MPI_Wtime call: its cost is part of it */
        double w0 = MPI_Wtime(), w1 = w0;
        for (int i = 0; i < 1000; i++)
            w1 = MPI_Wtime();
        printf(" wtime_us=%.3f\n", (w1 - w0) * 1e3);
        fflush(stdout);
    }
    free(names);

    buf = malloc(MAXMSG);
    memset(buf, rank + 1, MAXMSG);
    if (nbc)
        nbc_header();
    for (int m = 0; m < nmodes; m++) {
        if (!strcmp(modes[m], "pingpong"))
            bench_pingpong(iters, a, b);
        else if (!strcmp(modes[m], "waitcpu"))
            bench_waitcpu(reps, delay_ms, a, b);
        else if (!strcmp(modes[m], "overlap"))
            bench_overlap(reps);
        else if (!strcmp(modes[m], "bcasttime"))
            bench_bcasttime(reps);
        else if (!strcmp(modes[m], "cadlat"))
            bench_cadlat(reps);
        else if (!strcmp(modes[m], "limits"))
            bench_limits(iters, a, b);
        else if (!strcmp(modes[m], "is") && !rc)
            rc = bench_is(nkeys, reps);
    }
    free(buf);
    MPI_Finalize();
    return rc;
}
