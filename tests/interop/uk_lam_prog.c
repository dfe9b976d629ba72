/*
 * uk_lam_prog.c: the MPI program of the unikernel + LAM interop tests (issue 13, test 1),
 * built from this one file with mpi/bin/ukmpicc (the unikernel ranks) and with LAM's
 * mpicc (the LAM procs), run by tests/interop/uk-with-lam.sh. World layout (IMPI numbers
 * clients in order): ranks 0..U-1 are the unikernel job (client 0), the last NLAM ranks
 * are LAM (client 1); with one unikernel node, 0,1 = unikernel and 2,3 = LAM.
 *
 *   uk_lam_prog [p2p|coll|all [lam-reduce-broken]]   (default all; the second argument:
 *                                  reduce results at LAM roots are not checked, for jobs of 3
 *                                  or more clients, where LAM 7.1.4 gets them wrong)
 *
 *   p2p   point-to-point only (no collective anywhere, the summary included): 8 B,
 *         200 000 B and 4 MiB both ways, MPI_Ssend both ways (it must not return before
 *         the receiver posted its receive), Sendrecv both ways at once (8 B, 64 KiB),
 *         MPI_ANY_SOURCE receives mixing a sender of the other client with a sender of
 *         the same one, 100-message bursts each way into a receiver that is not
 *         receiving yet (LAM's flow control: hiwater 20 packets)
 *   coll  collectives from every root, the result checked on every rank: MPI_Barrier (a
 *         late rank holds every other rank), MPI_Bcast of 4 B, 1 KiB, 64 KiB (LAM's bcast
 *         breaks above 64 KiB: spec 13.1 #2), MPI_Reduce with MPI_SUM of 4 ints and of
 *         50 000 ints, MPI_Allreduce (MPI_SUM, MPI_MAX); then the ones LAM runs through
 *         lam_basic on its private cid -1: MPI_Gather and MPI_Scatter from every root,
 *         MPI_Allgather (4 B and 4 KiB blocks), MPI_Scan, MPI_Reduce_scatter, MPI_Gatherv,
 *         MPI_Scatterv, MPI_Allgatherv, MPI_Exscan (not MPI_Alltoall(v): LAM's own procs
 *         hang in it, see t_allgather),
 *         and point-to-point and a barrier after them (back on the world's own cids)
 *
 * Every rank checks what it received and prints one line per check: "ok NAME (rank R)" or
 * "FAIL NAME (rank R): why". The counts reach rank 0 by point-to-point messages; it prints
 * "uk_lam_prog: K of N checks ok". A rank exits 1 if one of its checks failed (rank 0 also
 * if any rank's did), after MPI_Finalize. LAM behaviours relied on: MPI_Ssend to a LAM rank
 * completes only when it matched (SYNCACK, with the Ssend fix of mk/deps.d/30-lam.sh);
 * after a lam_basic collective the communicator's cid is restored (the lam_mkpt fix of
 * mk/deps.d/30-lam.sh); no MPI_Probe/Iprobe, allgather's whole result within LAM's
 * 64 KiB bcast limit (spec 13.1 #2),
 * no communicator constructors (spec 13.2). Avoided: a long
 * message (above 64 KiB) in each direction at once between two clients hangs LAM itself
 * (a 200 000 B MPI_Sendrecv between two LAM clients through impi-server hung in 6 of 6
 * runs of 30 rounds, with one pair or two; 8 B and 64 KiB passed 30 rounds), so the
 * simultaneous exchange stays within one packet; long messages go one way at a time.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    NLAM = 2,             /* LAM procs: uk-with-lam.sh runs LAM's mpirun -np 2 */
    SHORT_BYTES = 8,      /* one IMPI packet */
    MAXLEN_BYTES = 65536, /* LAM's maxlen: the longest message in one packet */
    LONG_BYTES = 200000,  /* several packets: LAM's long protocol */
    BURST_MSGS = 100,     /* five times LAM's hiwater of 20 packets */
    BURST_BYTES = 256,
    ANY_MSGS = 5, /* messages from each sender in the ANY_SOURCE case */
    ANY_INTS = 16,
    REDUCE_SHORT = 4,
    REDUCE_LONG = 50000, /* 200 000 B: LAM's long protocol on the pt2pt cid */
    ALLREDUCE_INTS = 1000,
    WHY_LEN = 160,
    NAME_LEN = 64,
};
#define HUGE_BYTES      (4L * 1024 * 1024)
#define SSEND_DELAY_S   0.5 /* the receiver posts its receive this late */
#define BARRIER_DELAY_S 1.0
#define BURST_DELAY_S   0.5 /* the burst receiver sleeps this long before its first receive */
#define LATE_FRACTION   0.3 /* what a wait must last at least, as a fraction of the delay */

enum { TAG_DATA = 10, TAG_BACK, TAG_GO, TAG_SSEND, TAG_ANY, TAG_BURST, TAG_SUMMARY };

static int rank, size, nuk, checks, fails;

/* Any rank: records one check of this rank and prints its line; why == NULL means ok. */
static void report(const char *name, const char *why)
{
    checks++;
    if (!why) {
        printf("ok %s (rank %d)\n", name, rank);
    } else {
        fails++;
        printf("FAIL %s (rank %d): %s\n", name, rank, why);
    }
    fflush(stdout);
}

/* Any rank: the byte at offset i of the pattern numbered seed (each sender and test its
 * own seed, so a message delivered to the wrong receive does not verify). */
static unsigned char pat(int seed, long i)
{
    return (unsigned char)((i * 131 + seed * 7 + (i >> 8) + (i >> 16)) & 0xff);
}

static void fill(unsigned char *b, long n, int seed)
{
    for (long i = 0; i < n; i++)
        b[i] = pat(seed, i);
}

/* Any rank: NULL if b holds n bytes of pattern seed, else why not (in the caller's why). */
static const char *verify(const unsigned char *b, long n, int seed, char *why)
{
    for (long i = 0; i < n; i++)
        if (b[i] != pat(seed, i)) {
            snprintf(why, WHY_LEN, "byte %ld of %ld is 0x%02x, expected 0x%02x", i, n, b[i],
                     pat(seed, i));
            return why;
        }
    return NULL;
}

/* Any rank: prefixes the reason in why (WHY_LEN bytes) with "WHAT N: "; returns why. */
static const char *with_context(char *why, const char *what, int n)
{
    char reason[WHY_LEN];
    memcpy(reason, why, sizeof reason);
    snprintf(why, WHY_LEN, "%s %d: %.*s", what, n, WHY_LEN / 2, reason);
    return why;
}

/* Any rank: NULL if a receive's status says source src, tag tag and n bytes. */
static const char *verify_status(const MPI_Status *st, int src, int tag, long n, char *why)
{
    int cnt = -1;
    MPI_Get_count((MPI_Status *)st, MPI_BYTE, &cnt);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || cnt != n) {
        snprintf(why, WHY_LEN, "status says source %d tag %d count %d, expected %d %d %ld",
                 st->MPI_SOURCE, st->MPI_TAG, cnt, src, tag, n);
        return why;
    }
    return NULL;
}

/* Any rank: a buffer of n bytes, or the job ends (a test cannot go on without it). */
static unsigned char *xmalloc(long n)
{
    unsigned char *b = malloc((size_t)n + 1);
    if (!b) {
        fprintf(stderr, "uk_lam_prog: rank %d: out of memory for %ld bytes\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return b;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* The two cross-client pairs: the first unikernel rank with the first LAM rank, and the
 * last unikernel rank (on the last unikernel node) with the second LAM rank. */
static int uk_of(int pair)
{
    return pair ? nuk - 1 : 0;
}
static int lam_of(int pair)
{
    return nuk + pair;
}

/* All ranks: in each pair, from sends n bytes to to (both pairs at once), which checks data
 * and status. to_lam picks the direction. The receiver owns its check line. */
static void t_xfer(const char *what, long n, int to_lam, int ssend)
{
    char name[NAME_LEN], why[WHY_LEN];
    snprintf(name, sizeof name, "%s_%ldB_%s", what, n, to_lam ? "uk_to_lam" : "lam_to_uk");
    for (int pair = 0; pair < 2; pair++) {
        int from = to_lam ? uk_of(pair) : lam_of(pair), to = to_lam ? lam_of(pair) : uk_of(pair);
        int seed = 100 + from * 2 + to_lam;
        unsigned char *b;
        if (rank == from) {
            b = xmalloc(n);
            fill(b, n, seed);
            if (ssend)
                MPI_Ssend(b, (int)n, MPI_BYTE, to, TAG_DATA, MPI_COMM_WORLD);
            else
                MPI_Send(b, (int)n, MPI_BYTE, to, TAG_DATA, MPI_COMM_WORLD);
            free(b);
        } else if (rank == to) {
            MPI_Status st;
            b = xmalloc(n);
            memset(b, 0, (size_t)n);
            MPI_Recv(b, (int)n, MPI_BYTE, from, TAG_DATA, MPI_COMM_WORLD, &st);
            const char *bad = verify_status(&st, from, TAG_DATA, n, why);
            report(name, bad ? bad : verify(b, n, seed, why));
            free(b);
        }
    }
}

/* All ranks: in each pair, both send n bytes to each other at once (MPI_Sendrecv: both
 * directions of one connection at the same time). n at most MAXLEN_BYTES: see the top. */
static void t_sendrecv(long n)
{
    char name[NAME_LEN], why[WHY_LEN];
    snprintf(name, sizeof name, "sendrecv_%ldB_both_ways", n);
    for (int pair = 0; pair < 2; pair++) {
        int u = uk_of(pair), l = lam_of(pair);
        if (rank != u && rank != l)
            continue;
        int peer = rank == u ? l : u;
        unsigned char *out = xmalloc(n), *in = xmalloc(n);
        MPI_Status st;
        fill(out, n, 200 + rank);
        memset(in, 0, (size_t)n);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, peer, TAG_DATA, in, (int)n, MPI_BYTE, peer, TAG_DATA,
                     MPI_COMM_WORLD, &st);
        const char *bad = verify_status(&st, peer, TAG_DATA, n, why);
        report(name, bad ? bad : verify(in, n, 200 + peer, why));
        free(out);
        free(in);
    }
}

/* All ranks: synchronous send in one pair. The receiver says "go", then waits
 * SSEND_DELAY_S before it posts its receive: MPI_Ssend must not return before that (a
 * sender that returns early did not wait for the match, i.e. for LAM's or our SYNCACK).
 * The sender checks the time, the receiver the data. */
static void t_ssend(long n, int to_lam)
{
    char name[NAME_LEN], why[WHY_LEN];
    int from = to_lam ? uk_of(0) : lam_of(0), to = to_lam ? lam_of(0) : uk_of(0);
    int seed = 300 + to_lam, go = 0;
    MPI_Status st;
    unsigned char *b = xmalloc(n);
    if (rank == from) {
        snprintf(name, sizeof name, "ssend_%ldB_%s_waits_for_match", n,
                 to_lam ? "uk_to_lam" : "lam_to_uk");
        fill(b, n, seed);
        MPI_Recv(&go, 1, MPI_INT, to, TAG_GO, MPI_COMM_WORLD, &st);
        double t0 = MPI_Wtime();
        MPI_Ssend(b, (int)n, MPI_BYTE, to, TAG_SSEND, MPI_COMM_WORLD);
        double took = MPI_Wtime() - t0;
        if (took < SSEND_DELAY_S * LATE_FRACTION)
            snprintf(why, WHY_LEN, "returned after %.3f s, the receive was posted after %.3f s",
                     took, SSEND_DELAY_S);
        report(name, took < SSEND_DELAY_S * LATE_FRACTION ? why : NULL);
    } else if (rank == to) {
        snprintf(name, sizeof name, "ssend_%ldB_%s_data", n, to_lam ? "uk_to_lam" : "lam_to_uk");
        MPI_Send(&go, 1, MPI_INT, from, TAG_GO, MPI_COMM_WORLD);
        sleep_s(SSEND_DELAY_S);
        memset(b, 0, (size_t)n);
        MPI_Recv(b, (int)n, MPI_BYTE, from, TAG_SSEND, MPI_COMM_WORLD, &st);
        const char *bad = verify_status(&st, from, TAG_SSEND, n, why);
        report(name, bad ? bad : verify(b, n, seed, why));
    }
    free(b);
}

/* All ranks: rank dst receives ANY_MSGS messages from each of srcs[0] (same client) and
 * srcs[1] (the other client) with MPI_ANY_SOURCE; each message carries its source and a
 * sequence number. dst checks sources, per-source order (MPI's non-overtaking rule) and
 * payloads. */
static void t_any_source(const char *name, int dst, const int srcs[2])
{
    char why[WHY_LEN];
    int msg[ANY_INTS];
    if (rank == srcs[0] || rank == srcs[1]) {
        for (int k = 0; k < ANY_MSGS; k++) {
            msg[0] = rank;
            msg[1] = k;
            for (int i = 2; i < ANY_INTS; i++)
                msg[i] = rank * 1000 + k * 100 + i;
            MPI_Send(msg, ANY_INTS, MPI_INT, dst, TAG_ANY, MPI_COMM_WORLD);
        }
    }
    if (rank != dst)
        return;
    int next[2] = {0, 0};
    const char *bad = NULL;
    for (int m = 0; m < 2 * ANY_MSGS; m++) {
        MPI_Status st;
        MPI_Recv(msg, ANY_INTS, MPI_INT, MPI_ANY_SOURCE, TAG_ANY, MPI_COMM_WORLD, &st);
        int s = st.MPI_SOURCE == srcs[0] ? 0 : st.MPI_SOURCE == srcs[1] ? 1 : -1;
        if (bad)
            continue; /* keep receiving: the senders' messages must all be taken */
        if (s < 0 || msg[0] != st.MPI_SOURCE) {
            snprintf(why, WHY_LEN, "message from source %d says source %d, expected %d or %d",
                     st.MPI_SOURCE, msg[0], srcs[0], srcs[1]);
            bad = why;
            continue;
        }
        if (msg[1] != next[s]) {
            snprintf(why, WHY_LEN, "from %d: message %d arrived where %d was due", msg[0], msg[1],
                     next[s]);
            bad = why;
            continue;
        }
        for (int i = 2; i < ANY_INTS && !bad; i++)
            if (msg[i] != msg[0] * 1000 + msg[1] * 100 + i) {
                snprintf(why, WHY_LEN, "from %d, message %d: int %d is %d", msg[0], msg[1], i,
                         msg[i]);
                bad = why;
            }
        next[s]++;
    }
    report(name, bad);
}

/* All ranks: in each pair, from sends BURST_MSGS messages back to back while to is still
 * asleep (they pile up as unexpected messages behind LAM's or our flow control), then to
 * takes them in order and checks every one. */
static void t_burst(int to_lam)
{
    char name[NAME_LEN], why[WHY_LEN];
    snprintf(name, sizeof name, "burst_%dx%dB_%s", BURST_MSGS, BURST_BYTES,
             to_lam ? "uk_to_lam" : "lam_to_uk");
    unsigned char b[BURST_BYTES];
    for (int pair = 0; pair < 2; pair++) {
        int from = to_lam ? uk_of(pair) : lam_of(pair), to = to_lam ? lam_of(pair) : uk_of(pair);
        if (rank == from) {
            for (int k = 0; k < BURST_MSGS; k++) {
                fill(b, BURST_BYTES, 400 + k);
                MPI_Send(b, BURST_BYTES, MPI_BYTE, to, TAG_BURST, MPI_COMM_WORLD);
            }
        } else if (rank == to) {
            const char *bad = NULL;
            sleep_s(BURST_DELAY_S);
            for (int k = 0; k < BURST_MSGS; k++) {
                MPI_Status st;
                MPI_Recv(b, BURST_BYTES, MPI_BYTE, from, TAG_BURST, MPI_COMM_WORLD, &st);
                if (!bad && verify(b, BURST_BYTES, 400 + k, why))
                    bad = with_context(why, "message", k);
            }
            report(name, bad);
        }
    }
}

/* All ranks: the point-to-point cases. */
static void run_p2p(void)
{
    static const long sizes[] = {SHORT_BYTES, LONG_BYTES, HUGE_BYTES};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        t_xfer("p2p", sizes[s], 1, 0);
        t_xfer("p2p", sizes[s], 0, 0);
    }
    t_sendrecv(SHORT_BYTES);
    t_sendrecv(MAXLEN_BYTES);
    t_ssend(SHORT_BYTES, 1);
    t_ssend(SHORT_BYTES, 0);
    t_ssend(LONG_BYTES, 1);
    t_ssend(LONG_BYTES, 0);
    t_xfer("ssend", SHORT_BYTES, 1, 1);
    t_xfer("ssend", SHORT_BYTES, 0, 1);
    /* A unikernel receiver: its same-node neighbour and a LAM proc send. */
    int to_uk[2] = {1, lam_of(0)}, to_lam[2] = {lam_of(1), 0};
    t_any_source("any_source_at_uk_local_and_lam", 0, to_uk);
    /* A LAM receiver: the other LAM proc and a unikernel rank send. */
    t_any_source("any_source_at_lam_local_and_uk", lam_of(0), to_lam);
    t_burst(1);
    t_burst(0);
}

/* All ranks: MPI_Barrier, each rank in turn entering late by BARRIER_DELAY_S: every other
 * rank's barrier must last a good part of that. */
static void t_barrier(void)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(name, sizeof name, "barrier_waits_for_a_late_rank");
    for (int late = 0; late < size; late++) {
        MPI_Barrier(MPI_COMM_WORLD); /* everyone leaves this one at about the same time */
        double t0 = MPI_Wtime();
        if (rank == late)
            sleep_s(BARRIER_DELAY_S);
        MPI_Barrier(MPI_COMM_WORLD);
        double took = MPI_Wtime() - t0;
        if (rank != late && took < BARRIER_DELAY_S * LATE_FRACTION && !bad) {
            snprintf(why, WHY_LEN, "left after %.3f s while rank %d came %.3f s late", took, late,
                     BARRIER_DELAY_S);
            bad = why;
        }
    }
    report(name, bad);
}

/* All ranks: MPI_Bcast of n bytes from every root, checked on every rank. */
static void t_bcast(long n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    unsigned char *b = xmalloc(n);
    snprintf(name, sizeof name, "bcast_%ldB_every_root", n);
    for (int root = 0; root < size; root++) {
        if (rank == root)
            fill(b, n, 500 + root);
        else
            memset(b, 0, (size_t)n);
        MPI_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
        if (!bad && verify(b, n, 500 + root, why))
            bad = with_context(why, "root", root);
    }
    report(name, bad);
    free(b);
}

/* Any rank: what rank r contributes at index i of a reduction (distinct per rank and
 * index, small enough that sums of a few ranks do not overflow). */
static int contrib(int r, int i)
{
    return (r + 1) * 1000 + i % 977;
}

/* The second argument "lam-reduce-broken": a job of 3 or more IMPI clients, where LAM
 * 7.1.4's reduce gives a LAM root a wrong result (see t_reduce). */
static int lam_reduce_broken;

/* Any rank: the sum over all ranks of contrib(., i). */
static int sum_at(int i)
{
    int s = 0;
    for (int r = 0; r < size; r++)
        s += contrib(r, i);
    return s;
}

/* Any rank: NULL if out[0..n) holds the sums. */
static const char *verify_sums(const int *out, int n, char *why)
{
    for (int i = 0; i < n; i++)
        if (out[i] != sum_at(i)) {
            snprintf(why, WHY_LEN, "int %d of %d is %d, expected %d", i, n, out[i], sum_at(i));
            return why;
        }
    return NULL;
}

/* All ranks: MPI_Reduce of n ints with MPI_SUM to every root; each root checks its result
 * (so every rank checks one). */
static void t_reduce(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    int *in = (int *)xmalloc((long)n * (long)sizeof(int));
    int *out = (int *)xmalloc((long)n * (long)sizeof(int));
    snprintf(name, sizeof name, "reduce_sum_%dint_every_root", n);
    for (int i = 0; i < n; i++)
        in[i] = contrib(rank, i);
    for (int root = 0; root < size; root++) {
        memset(out, 0, (size_t)n * sizeof(int));
        MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        /* LAM's own root combines only the last client's partial with 3+ clients (its
         * ssi_coll_impi_reduce.c): with lam-reduce-broken its result is not ours to check. */
        if (rank == root && !(lam_reduce_broken && root >= nuk) && verify_sums(out, n, why))
            bad = with_context(why, "root", root);
    }
    report(name, bad);
    free(in);
    free(out);
}

/* All ranks: MPI_Allreduce, MPI_SUM of n ints, checked on every rank. */
static void t_allreduce(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    int *in = (int *)xmalloc((long)n * (long)sizeof(int));
    int *out = (int *)xmalloc((long)n * (long)sizeof(int));
    for (int i = 0; i < n; i++)
        in[i] = contrib(rank, i);
    memset(out, 0, (size_t)n * sizeof(int));
    MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "allreduce_sum_%dint", n);
    report(name, verify_sums(out, n, why));
    free(in);
    free(out);
}

/* All ranks: MPI_Allreduce, MPI_MAX of one int, checked on every rank. */
static void t_allreduce_max(void)
{
    char why[WHY_LEN];
    int me = rank * 3 + 1, mx = -1;
    MPI_Allreduce(&me, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    snprintf(why, WHY_LEN, "got %d, expected %d", mx, (size - 1) * 3 + 1);
    report("allreduce_max_int", mx == (size - 1) * 3 + 1 ? NULL : why);
}

/* Any rank: what rank r puts at index i of its block for rank d in the lam_basic cases. */
static int blockval(int r, int d, int i)
{
    return r * 1000000 + d * 10000 + i % 9973;
}

/* Any rank: NULL if b[0..n) holds blockval(r, d, .), else why. */
static const char *verify_block(const int *b, int n, int r, int d, char *why)
{
    for (int i = 0; i < n; i++)
        if (b[i] != blockval(r, d, i)) {
            snprintf(why, WHY_LEN, "int %d of %d from rank %d is %d, expected %d", i, n, r, b[i],
                     blockval(r, d, i));
            return why;
        }
    return NULL;
}

/* All ranks: MPI_Gather of n ints to every root, then MPI_Scatter of n ints from every
 * root, checked at the root and at every rank respectively. */
static void t_gather_scatter(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    int *mine = (int *)xmalloc((long)n * 4), *all = (int *)xmalloc((long)size * n * 4);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++)
            mine[i] = blockval(rank, root, i);
        memset(all, 0, (size_t)size * n * 4);
        MPI_Gather(mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
        for (int r = 0; rank == root && r < size && !bad; r++)
            if (verify_block(all + (long)r * n, n, r, root, why))
                bad = with_context(why, "root", root);
    }
    snprintf(name, sizeof name, "gather_%dint_every_root", n);
    report(name, bad);
    bad = NULL;
    for (int root = 0; root < size; root++) {
        for (int d = 0; d < size; d++)
            for (int i = 0; i < n; i++)
                all[(long)d * n + i] = blockval(root, d, i);
        memset(mine, 0, (size_t)n * 4);
        MPI_Scatter(all, n, MPI_INT, mine, n, MPI_INT, root, MPI_COMM_WORLD);
        if (!bad && verify_block(mine, n, root, rank, why))
            bad = with_context(why, "root", root);
    }
    snprintf(name, sizeof name, "scatter_%dint_every_root", n);
    report(name, bad);
    free(mine);
    free(all);
}

/* All ranks: MPI_Allgather of n ints per block, checked on every rank. (MPI_Alltoall is
 * left out: LAM 7.1.4's own procs never return from it across clients, between two LAM
 * clients as with the unikernel, whose ranks get LAM's blocks right: impi_prog alltoall,
 * spec 13.1 #3.) */
static void t_allgather(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    int *sb = (int *)xmalloc((long)n * 4), *rb = (int *)xmalloc((long)size * n * 4);
    for (int i = 0; i < n; i++)
        sb[i] = blockval(rank, 0, i);
    memset(rb, 0, (size_t)size * n * 4);
    MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size && !bad; r++)
        bad = verify_block(rb + (long)r * n, n, r, 0, why);
    snprintf(name, sizeof name, "allgather_%dint", n);
    report(name, bad);
    free(sb);
    free(rb);
}

/* All ranks: MPI_Scan (MPI_SUM of n ints: the sum over ranks 0..rank) and
 * MPI_Reduce_scatter (rank d gets d + 1 ints of the sum), checked on every rank. */
static void t_scan_reduce_scatter(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    int cnt[64], tot = 0, at = 0;
    for (int d = 0; d < size; d++) {
        cnt[d] = d + 1;
        tot += cnt[d];
        at += d < rank ? cnt[d] : 0;
    }
    int len = n > tot ? n : tot;
    int *in = (int *)xmalloc((long)len * 4), *out = (int *)xmalloc((long)len * 4);
    for (int i = 0; i < len; i++)
        in[i] = contrib(rank, i);
    memset(out, 0, (size_t)len * 4);
    MPI_Scan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n && !bad; i++) {
        int want = 0;
        for (int r = 0; r <= rank; r++)
            want += contrib(r, i);
        if (out[i] != want) {
            snprintf(why, WHY_LEN, "int %d of %d is %d, expected %d", i, n, out[i], want);
            bad = why;
        }
    }
    snprintf(name, sizeof name, "scan_sum_%dint", n);
    report(name, bad);
    bad = NULL;
    memset(out, 0, (size_t)len * 4);
    MPI_Reduce_scatter(in, out, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < cnt[rank] && !bad; i++)
        if (out[i] != sum_at(at + i)) {
            snprintf(why, WHY_LEN, "int %d of %d is %d, expected %d", i, cnt[rank], out[i],
                     sum_at(at + i));
            bad = why;
        }
    report("reduce_scatter_sum", bad);
    free(in);
    free(out);
}

/* All ranks: the v-variants, rank d giving (d % 3) * n + 1 ints at a gap of one int:
 * MPI_Gatherv and MPI_Scatterv from every root, MPI_Allgatherv; checked on every rank. */
static void t_vvariants(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    int cnt[64], dsp[64], tot = 0;
    for (int d = 0; d < size; d++) {
        cnt[d] = (d % 3) * n + 1;
        dsp[d] = tot;
        tot += cnt[d] + 1;
    }
    int *mine = (int *)xmalloc((long)cnt[rank] * 4), *all = (int *)xmalloc((long)tot * 4);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < cnt[rank]; i++)
            mine[i] = blockval(rank, root, i);
        memset(all, 0, (size_t)tot * 4);
        MPI_Gatherv(mine, cnt[rank], MPI_INT, all, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD);
        for (int r = 0; rank == root && r < size && !bad; r++)
            if (verify_block(all + dsp[r], cnt[r], r, root, why))
                bad = with_context(why, "root", root);
    }
    snprintf(name, sizeof name, "gatherv_%dint_every_root", n);
    report(name, bad);
    bad = NULL;
    for (int root = 0; root < size; root++) {
        for (int d = 0; d < size; d++)
            for (int i = 0; i < cnt[d]; i++)
                all[dsp[d] + i] = blockval(root, d, i);
        memset(mine, 0, (size_t)cnt[rank] * 4);
        MPI_Scatterv(all, cnt, dsp, MPI_INT, mine, cnt[rank], MPI_INT, root, MPI_COMM_WORLD);
        if (!bad && verify_block(mine, cnt[rank], root, rank, why))
            bad = with_context(why, "root", root);
    }
    snprintf(name, sizeof name, "scatterv_%dint_every_root", n);
    report(name, bad);
    bad = NULL;
    for (int i = 0; i < cnt[rank]; i++)
        mine[i] = blockval(rank, 0, i);
    memset(all, 0, (size_t)tot * 4);
    MPI_Allgatherv(mine, cnt[rank], MPI_INT, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size && !bad; r++)
        bad = verify_block(all + dsp[r], cnt[r], r, 0, why);
    snprintf(name, sizeof name, "allgatherv_%dint", n);
    report(name, bad);
    free(mine);
    free(all);
}

/* All ranks: MPI_Exscan (MPI_SUM of n ints: the sum over ranks 0..rank-1; rank 0's result
 * is undefined), checked on every other rank. */
static void t_exscan(int n)
{
    char name[NAME_LEN], why[WHY_LEN];
    const char *bad = NULL;
    int *in = (int *)xmalloc((long)n * 4), *out = (int *)xmalloc((long)n * 4);
    for (int i = 0; i < n; i++)
        in[i] = contrib(rank, i);
    memset(out, 0, (size_t)n * 4);
    MPI_Exscan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; rank && i < n && !bad; i++) {
        int want = 0;
        for (int r = 0; r < rank; r++)
            want += contrib(r, i);
        if (out[i] != want) {
            snprintf(why, WHY_LEN, "int %d of %d is %d, expected %d", i, n, out[i], want);
            bad = why;
        }
    }
    snprintf(name, sizeof name, "exscan_sum_%dint", n);
    report(name, bad);
    free(in);
    free(out);
}

/* All ranks: the collectives LAM runs through lam_basic across clients (on its private
 * cid -1), then point-to-point again, which must be back on MPI_COMM_WORLD's own cid
 * (LAM needs the lam_mkpt fix of mk/deps.d/30-lam.sh for that). */
static void run_lambasic(void)
{
    static const int ints[] = {1, 1024}; /* 4 B and 4 KiB blocks */
    for (unsigned s = 0; s < sizeof ints / sizeof ints[0]; s++) {
        t_gather_scatter(ints[s]);
        t_allgather(ints[s]);
        t_scan_reduce_scatter(ints[s]);
        t_vvariants(ints[s]);
        t_exscan(ints[s]);
    }
    t_xfer("after_lambasic", SHORT_BYTES, 1, 0);
    t_xfer("after_lambasic", SHORT_BYTES, 0, 0);
    t_xfer("after_lambasic", LONG_BYTES, 0, 0);
    t_xfer("after_lambasic_ssend", SHORT_BYTES, 0, 1);
    t_barrier();
}

/* All ranks: the collective cases. */
static void run_coll(void)
{
    static const long bcast_sizes[] = {4, 1024, 65536};
    t_barrier();
    for (unsigned s = 0; s < sizeof bcast_sizes / sizeof bcast_sizes[0]; s++)
        t_bcast(bcast_sizes[s]);
    t_reduce(REDUCE_SHORT);
    t_reduce(REDUCE_LONG);
    t_allreduce(1);
    t_allreduce(ALLREDUCE_INTS);
    t_allreduce_max();
    run_lambasic();
}

/* All ranks: is this rank on the side of the layout its build says it is? */
static void check_layout(void)
{
    char why[WHY_LEN];
#ifdef LAM_MPI
    const int built_for_lam = 1;
#else
    const int built_for_lam = 0;
#endif
    snprintf(why, WHY_LEN, "built for %s but world rank %d of %d is a %s rank",
             built_for_lam ? "LAM" : "the unikernel", rank, size,
             rank >= nuk ? "LAM" : "unikernel");
    report("layout", built_for_lam == (rank >= nuk) ? NULL : why);
}

/* All ranks: the counts of every rank reach rank 0 point to point, which prints the total;
 * returns this rank's exit code. */
static int summary(void)
{
    int mine[2] = {checks, fails};
    if (rank != 0) {
        MPI_Send(mine, 2, MPI_INT, 0, TAG_SUMMARY, MPI_COMM_WORLD);
        return fails != 0;
    }
    int all_checks = checks, all_fails = fails;
    for (int r = 1; r < size; r++) {
        int theirs[2];
        MPI_Recv(theirs, 2, MPI_INT, r, TAG_SUMMARY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        all_checks += theirs[0];
        all_fails += theirs[1];
    }
    printf("uk_lam_prog: %d of %d checks ok\n", all_checks - all_fails, all_checks);
    fflush(stdout);
    return all_fails != 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nuk = size - NLAM;
    lam_reduce_broken = argc > 2 && !strcmp(argv[2], "lam-reduce-broken");
    int p2p = !strcmp(mode, "p2p") || !strcmp(mode, "all");
    int coll = !strcmp(mode, "coll") || !strcmp(mode, "all");
    if ((!p2p && !coll) || nuk < 2) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: uk_lam_prog [p2p|coll|all] with at least 2 unikernel ranks and "
                    "%d LAM ranks (got %s, %d ranks)\n",
                    NLAM, mode, size);
        MPI_Finalize();
        return 2;
    }
    check_layout();
    if (p2p)
        run_p2p();
    if (coll)
        run_coll();
    int rc = summary();
    MPI_Finalize();
    return rc;
}
