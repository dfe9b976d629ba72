/*
 * cadlat.c: mpibench's cadlat mode (see nbc.c for the others), ours only: the latency of
 * interrupt-driven progress. After Ibcasts of 1 MiB from rank 0, overlapped with 4 x 4
 * multiplies and MPI_Test like nbc.c's overlap mode (the job's algorithm: nbc.bench.sh
 * reports its chain jobs), every rank reads MPIX_Cad_latency: one sample per SEND started
 * because a RECV of the same graph completed inside the NIC interrupt, TSC cycles from that
 * interrupt's entry to the SEND handed on (us by MPIX_Tsc_hz). Rank 0 prints the count,
 * median and 99th percentile (nearest rank) of each non-root rank and of all of them.
 *
 * Measured on MPI_COMM_WORLD (ranks are placed on nodes in blocks, so a chain crosses
 * nodes only at node boundaries) and, with several nodes, on a communicator that
 * interleaves them (ranks ordered by (index among their node's ranks, node); rank 0 stays
 * the root): there every hop of a chain crosses nodes, and every forwarding rank receives
 * from its NIC. Without our <mpix.h> (or without MPI_Ibcast) the mode says so and returns.
 */
#include "mpibench.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(UKMPI_MPIX) && !defined(MPIBENCH_NO_IBCAST)
#define LATMAX 4096 /* latency samples the engine keeps per rank */

/* Sorted v[0..n): nearest-rank percentile p (0 < p <= 100). */
static double pct(const double *v, int n, double p)
{
    int i = (int)(p / 100.0 * n + 0.999999) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Rank 0: one cadlat line for samples v[0..n) (sorted here). */
static void lat_line(const char *comm, const char *who, double *v, int n, double hz, int ops)
{
    printf("cadlat comm=%s bytes=%d ops=%d rank=%s n=%d", comm, MAXMSG, ops, who, n);
    if (n > 0) {
        qsort(v, n, sizeof *v, cmp_d);
        double m = pct(v, n, 50), p = pct(v, n, 99);
        printf(" med_cycles=%.0f p99_cycles=%.0f med_us=%.3f p99_us=%.3f", m, p, m / hz * 1e6,
               p / hz * 1e6);
    }
    printf("\n");
    fflush(stdout);
}

/* The latency samples of WARM + reps overlapped 1 MiB Ibcasts on comm; rank 0 prints. */
static void lat_on(MPI_Comm comm, const char *name, int reps)
{
    static uint64_t s[LATMAX];
    int n, err = 0, *cnt = malloc(sizeof(int) * nranks), *dsp = malloc(sizeof(int) * nranks);
    double hz = (double)MPIX_Tsc_hz(), *v = malloc(sizeof(double) * LATMAX), *allv = NULL;

    while (MPIX_Cad_latency(s, LATMAX) == LATMAX) /* older samples: not ours */
        ;
    for (int r = -WARM; r < reps; r++) {
        long k;
        if (rank == 0)
            pattern_set(MAXMSG);
        MPI_Barrier(MPI_COMM_WORLD);
        ibcast_overlap(MAXMSG, 4, comm, &k);
        err += pattern_bad(MAXMSG, rank);
    }
    n = MPIX_Cad_latency(s, LATMAX);
    for (int i = 0; i < n; i++)
        v[i] = (double)s[i];
    MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int tot = 0;
    if (rank == 0) {
        for (int i = 0; i < nranks; i++) {
            dsp[i] = tot;
            tot += cnt[i];
        }
        allv = malloc(sizeof(double) * (tot > 0 ? tot : 1));
    }
    MPI_Gatherv(v, n, MPI_DOUBLE, allv, cnt, dsp, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    err = errors_sum(err);
    if (rank == 0) {
        char who[16];
        if (err)
            printf("# cadlat comm=%s: %d broadcasts without the root's data\n", name, err);
        for (int i = 1; i < nranks; i++) {
            snprintf(who, sizeof who, "%d", i);
            lat_line(name, who, allv + dsp[i], cnt[i], hz, WARM + reps);
        }
        /* rank 0 is the root: whatever it recorded is left out of "others" */
        lat_line(name, "others", allv + cnt[0], tot - cnt[0], hz, WARM + reps);
        free(allv);
    }
    free(cnt);
    free(dsp);
    free(v);
}
#endif

void bench_cadlat(int reps)
{
#if defined(UKMPI_MPIX) && !defined(MPIBENCH_NO_IBCAST)
    /* the node-interleaved order: nodes numbered by their first rank, ranks sorted by
     * (index among their node's ranks, node) */
    char name[MPI_MAX_PROCESSOR_NAME], *names = malloc((size_t)nranks * MPI_MAX_PROCESSOR_NAME);
    int len, node = -1, local = 0, nodes = 0, same = 1, *order = malloc(sizeof(int) * nranks);
    MPI_Comm ilv;

    mm_init();
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int i = 0; i <= rank; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = strcmp(names + (size_t)j * MPI_MAX_PROCESSOR_NAME,
                           names + (size_t)i * MPI_MAX_PROCESSOR_NAME) != 0;
        nodes += first;
        if (i < rank && !strcmp(names + (size_t)i * MPI_MAX_PROCESSOR_NAME, name))
            local++;
        if (node < 0 && !strcmp(names + (size_t)i * MPI_MAX_PROCESSOR_NAME, name))
            node = nodes - 1;
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, local * nranks + node, &ilv);
    int me;
    MPI_Comm_rank(ilv, &me);
    MPI_Gather(&me, 1, MPI_INT, order, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int *w = malloc(sizeof(int) * nranks); /* w[position in the chain] = world rank */
        for (int i = 0; i < nranks; i++) {
            w[order[i]] = i;
            same &= order[i] == i;
        }
        printf("# cadlat tsc_hz=%llu interleaved order=", (unsigned long long)MPIX_Tsc_hz());
        for (int i = 0; i < nranks; i++)
            printf("%s%d", i ? "," : "", w[i]);
        printf("%s\n", same ? " (= world)" : "");
        fflush(stdout);
        free(w);
    }
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    lat_on(MPI_COMM_WORLD, "world", reps);
    if (!same)
        lat_on(ilv, "interleaved", reps);
    MPI_Comm_free(&ilv);
    free(names);
    free(order);
#else
    (void)reps;
    if (rank == 0)
        printf("# cadlat: not in this build (%s)\n",
#ifdef UKMPI_MPIX
               "MPIBENCH_NO_IBCAST"
#else
               "no MPIX_Cad_latency: not ukmpi's <mpix.h>"
#endif
        );
#endif
}
