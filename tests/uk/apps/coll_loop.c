/*
 * coll_loop.c: every collective in a loop, to expose lost completions and wake-ups (a
 * rank that sleeps forever: the job hangs, and the case's timeout fails it). Plain MPI.
 *
 *   coll_loop ITERS [PHASE[=ITERS]]...
 *
 * runs each named phase ITERS times (or its own count), every phase when none is named
 * or for "all". A phase is one collective (barrier, bcast, ..., exscan), "ibcast" (one
 * MPI_Ibcast and its MPI_Wait, as OSU's osu_ibcast), "nbc" (several non-blocking
 * collectives outstanding at once), "allgather+allreduce" (the pair seen hanging on 1x4),
 * "split" (MPI_Comm_split, a reduction on the new communicator, MPI_Comm_free: MPICH's
 * comm/ctxsplit) or "pingpong" (rank 2k with 2k+1, the same node when ranks come in
 * pairs). Messages are a few ints; sizes and roots change with the iteration; every
 * result is checked every iteration.
 *
 * Output: rank 0 names the job and its UKMPI_* settings, then names each phase as it
 * starts and every PROGRESS_EVERY iterations (so a log cut by a timeout shows where it
 * hung), and ends each phase with "coll_loop: PHASE: ok (N iterations, T ms)" or
 * "coll_loop: PHASE: FAIL (N bad results)". A rank that gets a wrong result prints
 * "coll_loop: FAIL rank R PHASE iteration I: ..." (at most MAX_FAIL_LINES per phase).
 * Last, rank 0 prints "coll_loop: N ranks ok", or "coll_loop: FAIL ..." and every rank
 * exits with 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC            4    /* at most this many ints per rank and block */
#define MAX_FAIL_LINES  3    /* FAIL lines per rank and phase; the rest are only counted */
#define PROGRESS_EVERY  1000 /* iterations between rank 0's progress lines */
#define MAX_OUTSTANDING 8    /* requests of the nbc phase */

static int me, np;
static int *sb, *rb, *sc, *rc, *sd, *rd; /* buffers and count/displacement arrays */
static int bad;                          /* wrong results in the current phase, this rank */
static const char *phase;                /* the current phase's name */

/* The values the ranks exchange: unique enough per iteration, rank, peer and index that a
 * stale, misplaced or missing block shows. */
static int val(int it, int rank, int i)
{
    return it * 1000 + rank * 10 + i;
}

static int val2(int it, int from, int to, int i)
{
    return it * 1000 + from * 97 + to * 13 + i;
}

/* Elements per rank in v-variants: differ between ranks and iterations. */
static int cnt(int it, int rank)
{
    return 1 + (it + rank) % MAXC;
}

/* Sum and maximum over ranks lo..hi-1 of val(it, r, i). */
static int sum_val(int it, int lo, int hi, int i)
{
    int s = 0;
    for (int r = lo; r < hi; r++)
        s += val(it, r, i);
    return s;
}

/* Task context: count a wrong element; print the first few. */
static void check(int it, const char *what, int i, int got, int want)
{
    if (got == want)
        return;
    if (bad++ < MAX_FAIL_LINES) {
        printf("coll_loop: FAIL rank %d %s iteration %d: %s element %d is %d, expected %d\n", me,
               phase, it, what, i, got, want);
        fflush(stdout);
    }
}

static void fill(int *b, int n, int v)
{
    for (int i = 0; i < n; i++)
        b[i] = v;
}

static void do_barrier(int it)
{
    (void)it;
    MPI_Barrier(MPI_COMM_WORLD);
}

static void do_bcast(int it)
{
    int root = it % np, n = 1 + it % MAXC;
    for (int i = 0; i < n; i++)
        rb[i] = me == root ? val(it, root, i) : -1;
    MPI_Bcast(rb, n, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        check(it, "bcast", i, rb[i], val(it, root, i));
}

/* The expected reduction of val over ranks lo..hi-1: SUM on even iterations, MAX on odd. */
static int reduced(int it, int lo, int hi, int i)
{
    return it % 2 ? val(it, hi - 1, i) : sum_val(it, lo, hi, i);
}

static MPI_Op op_of(int it)
{
    return it % 2 ? MPI_MAX : MPI_SUM;
}

static void do_reduce(int it)
{
    int root = (it + 1) % np, n = 1 + (it + 2) % MAXC;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i), rb[i] = -1;
    MPI_Reduce(sb, rb, n, MPI_INT, op_of(it), root, MPI_COMM_WORLD);
    for (int i = 0; me == root && i < n; i++)
        check(it, "reduce", i, rb[i], reduced(it, 0, np, i));
}

static void do_allreduce(int it)
{
    int n = 1 + it % MAXC;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i), rb[i] = -1;
    MPI_Allreduce(sb, rb, n, MPI_INT, op_of(it), MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        check(it, "allreduce", i, rb[i], reduced(it, 0, np, i));
}

static void do_gather(int it)
{
    int root = it % np, n = 1 + (it + 1) % MAXC;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i);
    fill(rb, np * n, -1);
    MPI_Gather(sb, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD);
    for (int k = 0; me == root && k < np * n; k++)
        check(it, "gather", k, rb[k], val(it, k / n, k % n));
}

/* Counts cnt(it, r) and displacements with a one-element gap between blocks. */
static void v_layout(int it, int *counts, int *displs)
{
    for (int r = 0, d = 0; r < np; r++) {
        counts[r] = cnt(it, r);
        displs[r] = d;
        d += counts[r] + 1;
    }
}

static void do_gatherv(int it)
{
    int root = (it + 1) % np, n = cnt(it, me);
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i);
    v_layout(it, rc, rd);
    fill(rb, np * (MAXC + 1), -1);
    MPI_Gatherv(sb, n, MPI_INT, rb, rc, rd, MPI_INT, root, MPI_COMM_WORLD);
    for (int r = 0; me == root && r < np; r++) {
        for (int i = 0; i < rc[r]; i++)
            check(it, "gatherv", rd[r] + i, rb[rd[r] + i], val(it, r, i));
        check(it, "gatherv gap", rd[r] + rc[r], rb[rd[r] + rc[r]], -1);
    }
}

static void do_scatter(int it)
{
    int root = it % np, n = 1 + (it + 3) % MAXC;
    for (int k = 0; k < np * n; k++)
        sb[k] = me == root ? val(it, k / n, k % n) : -2;
    fill(rb, n, -1);
    MPI_Scatter(sb, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        check(it, "scatter", i, rb[i], val(it, me, i));
}

static void do_scatterv(int it)
{
    int root = (it + 1) % np, n = cnt(it, me);
    v_layout(it, sc, sd);
    fill(sb, np * (MAXC + 1), -2);
    for (int r = 0; me == root && r < np; r++)
        for (int i = 0; i < sc[r]; i++)
            sb[sd[r] + i] = val(it, r, i);
    fill(rb, MAXC + 1, -1);
    MPI_Scatterv(sb, sc, sd, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        check(it, "scatterv", i, rb[i], val(it, me, i));
    check(it, "scatterv past the end", n, rb[n], -1);
}

static void do_allgather(int it)
{
    int n = 1 + it % MAXC;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i);
    fill(rb, np * n, -1);
    MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD);
    for (int k = 0; k < np * n; k++)
        check(it, "allgather", k, rb[k], val(it, k / n, k % n));
}

static void do_allgatherv(int it)
{
    int n = cnt(it, me);
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i);
    v_layout(it, rc, rd);
    fill(rb, np * (MAXC + 1), -1);
    MPI_Allgatherv(sb, n, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < np; r++)
        for (int i = 0; i < rc[r]; i++)
            check(it, "allgatherv", rd[r] + i, rb[rd[r] + i], val(it, r, i));
}

static void do_alltoall(int it)
{
    int n = 1 + (it + 2) % MAXC;
    for (int k = 0; k < np * n; k++)
        sb[k] = val2(it, me, k / n, k % n), rb[k] = -1;
    MPI_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD);
    for (int k = 0; k < np * n; k++)
        check(it, "alltoall", k, rb[k], val2(it, k / n, me, k % n));
}

/* Elements from rank `from` to rank `to` in alltoallv. */
static int a2av_cnt(int it, int from, int to)
{
    return 1 + (it + from + 2 * to) % MAXC;
}

static void do_alltoallv(int it)
{
    for (int p = 0, s = 0, r = 0; p < np; p++) {
        sc[p] = a2av_cnt(it, me, p), sd[p] = s, s += sc[p];
        rc[p] = a2av_cnt(it, p, me), rd[p] = r, r += rc[p];
        for (int i = 0; i < sc[p]; i++)
            sb[sd[p] + i] = val2(it, me, p, i);
    }
    fill(rb, np * MAXC, -1);
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < np; p++)
        for (int i = 0; i < rc[p]; i++)
            check(it, "alltoallv", rd[p] + i, rb[rd[p] + i], val2(it, p, me, i));
}

/* Reduce_scatter: block r of the input, cnt(it, r) elements, is summed into rank r. The
 * input element k of rank q is val(it, q, k). */
static void do_reduce_scatter(int it)
{
    int total = 0, off = 0;
    for (int r = 0; r < np; r++) {
        rc[r] = cnt(it, r);
        off += r < me ? rc[r] : 0;
        total += rc[r];
    }
    for (int k = 0; k < total; k++)
        sb[k] = val(it, me, k);
    fill(rb, MAXC, -1);
    MPI_Reduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < rc[me]; i++)
        check(it, "reduce_scatter", i, rb[i], sum_val(it, 0, np, off + i));
}

static void do_reduce_scatter_block(int it)
{
    int n = 1 + (it + 1) % MAXC;
    for (int k = 0; k < np * n; k++)
        sb[k] = val(it, me, k);
    fill(rb, n, -1);
    MPI_Reduce_scatter_block(sb, rb, n, MPI_INT, op_of(it), MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        check(it, "reduce_scatter_block", i, rb[i], reduced(it, 0, np, me * n + i));
}

static void do_scan(int it)
{
    int n = 1 + (it + 3) % MAXC;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i), rb[i] = -1;
    MPI_Scan(sb, rb, n, MPI_INT, op_of(it), MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        check(it, "scan", i, rb[i], reduced(it, 0, me + 1, i));
}

static void do_exscan(int it)
{
    int n = 1 + it % MAXC;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i), rb[i] = -1;
    MPI_Exscan(sb, rb, n, MPI_INT, op_of(it), MPI_COMM_WORLD);
    for (int i = 0; me > 0 && i < n; i++) /* rank 0's result is undefined */
        check(it, "exscan", i, rb[i], reduced(it, 0, me, i));
}

/* Several non-blocking collectives outstanding at once, each on its own buffers, started
 * in the same order everywhere; completed by one Waitall on even iterations, by polling
 * Testall on odd ones (the two ways a rank waits). */
static void do_nbc(int it)
{
    MPI_Request rq[MAX_OUTSTANDING];
    int n = 1 + it % MAXC, root = it % np, k = 0;
    int bc[MAXC], ain[MAXC], aout[MAXC], sin[MAXC], sout[MAXC], rin[MAXC], rout[MAXC];
    int *ag = rb, *a2a_in = sb, *a2a_out = rb + np * MAXC;
    for (int i = 0; i < n; i++) {
        bc[i] = me == root ? val(it, root, i) : -1;
        ain[i] = rin[i] = sin[i] = val(it, me, i);
        aout[i] = rout[i] = sout[i] = -1;
    }
    for (int j = 0; j < np * n; j++)
        ag[j] = a2a_out[j] = -1, a2a_in[j] = val2(it, me, j / n, j % n);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[k++]);
    MPI_Ibcast(bc, n, MPI_INT, root, MPI_COMM_WORLD, &rq[k++]);
    MPI_Iallreduce(ain, aout, n, MPI_INT, op_of(it), MPI_COMM_WORLD, &rq[k++]);
    MPI_Iallgather(ain, n, MPI_INT, ag, n, MPI_INT, MPI_COMM_WORLD, &rq[k++]);
    MPI_Ialltoall(a2a_in, n, MPI_INT, a2a_out, n, MPI_INT, MPI_COMM_WORLD, &rq[k++]);
    MPI_Ireduce(rin, rout, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq[k++]);
    MPI_Iscan(sin, sout, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[k++]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[k++]);
    if (it % 2 == 0) {
        MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
    } else {
        for (int done = 0; !done;)
            MPI_Testall(k, rq, &done, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < n; i++) {
        check(it, "ibcast", i, bc[i], val(it, root, i));
        check(it, "iallreduce", i, aout[i], reduced(it, 0, np, i));
        check(it, "iscan", i, sout[i], sum_val(it, 0, me + 1, i));
        if (me == root)
            check(it, "ireduce", i, rout[i], sum_val(it, 0, np, i));
    }
    for (int j = 0; j < np * n; j++) {
        check(it, "iallgather", j, ag[j], val(it, j / n, j % n));
        check(it, "ialltoall", j, a2a_out[j], val2(it, j / n, me, j % n));
    }
}

/* One MPI_Ibcast at a time, then MPI_Wait: the loop of OSU's osu_ibcast (seen hanging on
 * 1x4), with small messages. */
static void do_ibcast(int it)
{
    MPI_Request rq;
    int root = (it + 2) % np, n = 1 + (it + 1) % MAXC;
    for (int i = 0; i < n; i++)
        rb[i] = me == root ? val(it, root, i) : -1;
    MPI_Ibcast(rb, n, MPI_INT, root, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        check(it, "ibcast", i, rb[i], val(it, root, i));
}

static void do_allgather_allreduce(int it)
{
    do_allgather(it);
    do_allreduce(it);
}

/* Even iterations: one communicator of every rank, ranks reversed; odd: even and odd
 * world ranks apart. A sum of world ranks on the new communicator checks it works. */
static void do_split(int it)
{
    MPI_Comm c;
    int color = it % 2 ? me % 2 : 0, key = it % 2 ? me : np - me, size, rank, sum = -1;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    int want_size = it % 2 ? (np - color + 1) / 2 : np;
    int want_rank = it % 2 ? me / 2 : np - 1 - me, want_sum = 0;
    for (int r = 0; r < np; r++)
        want_sum += it % 2 && r % 2 != color ? 0 : r;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
    MPI_Comm_free(&c);
    check(it, "split size", 0, size, want_size);
    check(it, "split rank", 0, rank, want_rank);
    check(it, "split allreduce", 0, sum, want_sum);
}

/* Rank 2k sends to 2k+1, which answers each value plus one; a last odd rank sits out. */
static void do_pingpong(int it)
{
    int peer = me ^ 1, n = 1 + it % MAXC;
    if (peer >= np)
        return;
    for (int i = 0; i < n; i++)
        sb[i] = val(it, me, i), rb[i] = -1;
    if (me % 2 == 0) {
        MPI_Send(sb, n, MPI_INT, peer, it % 8, MPI_COMM_WORLD);
        MPI_Recv(rb, n, MPI_INT, peer, it % 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            check(it, "pong", i, rb[i], val(it, me, i) + 1);
    } else {
        MPI_Recv(rb, n, MPI_INT, peer, it % 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            check(it, "ping", i, rb[i], val(it, peer, i)), rb[i]++;
        MPI_Send(rb, n, MPI_INT, peer, it % 8, MPI_COMM_WORLD);
    }
}

static const struct {
    const char *name;
    void (*run)(int it);
} phases[] = {
    {"barrier", do_barrier},
    {"bcast", do_bcast},
    {"reduce", do_reduce},
    {"allreduce", do_allreduce},
    {"gather", do_gather},
    {"gatherv", do_gatherv},
    {"scatter", do_scatter},
    {"scatterv", do_scatterv},
    {"allgather", do_allgather},
    {"allgatherv", do_allgatherv},
    {"alltoall", do_alltoall},
    {"alltoallv", do_alltoallv},
    {"reduce_scatter", do_reduce_scatter},
    {"reduce_scatter_block", do_reduce_scatter_block},
    {"scan", do_scan},
    {"exscan", do_exscan},
    {"ibcast", do_ibcast},
    {"nbc", do_nbc},
    {"allgather+allreduce", do_allgather_allreduce},
    {"split", do_split},
    {"pingpong", do_pingpong},
};
#define NPHASES ((int)(sizeof phases / sizeof phases[0]))

/* Task context, every rank: one phase; returns the job's count of wrong results. */
static int run_phase(int p, int iters)
{
    phase = phases[p].name;
    bad = 0;
    if (me == 0) {
        printf("coll_loop: %s: %d iterations\n", phase, iters);
        fflush(stdout);
    }
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        phases[p].run(it);
        if (me == 0 && it > 0 && it % PROGRESS_EVERY == 0) {
            printf("coll_loop: %s: %d of %d\n", phase, it, iters);
            fflush(stdout);
        }
    }
    int ms = (int)((MPI_Wtime() - t0) * 1000), all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && all)
        printf("coll_loop: %s: FAIL (%d bad results)\n", phase, all);
    else if (me == 0)
        printf("coll_loop: %s: ok (%d iterations, %d ms)\n", phase, iters, ms);
    fflush(stdout);
    return all;
}

static int phase_index(const char *name)
{
    for (int p = 0; p < NPHASES; p++)
        if (!strcmp(phases[p].name, name))
            return p;
    return -1;
}

static int usage(void)
{
    if (me == 0) {
        printf("usage: coll_loop ITERS [PHASE[=ITERS]]...; PHASE: all");
        for (int p = 0; p < NPHASES; p++)
            printf(" %s", phases[p].name);
        printf("\n");
    }
    MPI_Finalize();
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int iters = argc > 1 ? atoi(argv[1]) : 0;
    if (iters <= 0)
        return usage();
    size_t len = (size_t)np * (MAXC + 1) * 2; /* the nbc phase uses two halves of rb */
    sb = malloc(len * sizeof *sb);
    rb = malloc(len * sizeof *rb);
    sc = malloc((size_t)np * 4 * sizeof *sc);
    rc = sc + np, sd = sc + 2 * np, rd = sc + 3 * np;
    if (me == 0) {
        const char *prog = getenv("UKMPI_CAD_PROGRESS"), *spin = getenv("UKMPI_SPIN_NS");
        printf("coll_loop: %d ranks, UKMPI_CAD_PROGRESS=%s UKMPI_SPIN_NS=%s\n", np,
               prog ? prog : "(unset)", spin ? spin : "(unset)");
        fflush(stdout);
    }

    /* argv[2..] name the phases; none named runs them all (one pass with "all"). */
    int failed = 0;
    for (int a = 2; a < argc || a == 2; a++) {
        char name[64] = "all";
        int n = iters;
        if (a < argc) {
            snprintf(name, sizeof name, "%s", argv[a]);
            char *eq = strchr(name, '=');
            if (eq) {
                *eq = 0;
                n = atoi(eq + 1);
            }
        }
        int p = phase_index(name);
        if (n <= 0 || (p < 0 && strcmp(name, "all")))
            return usage();
        for (int q = p < 0 ? 0 : p; q < (p < 0 ? NPHASES : p + 1); q++)
            failed += run_phase(q, n) != 0;
    }
    if (me == 0) {
        if (failed)
            printf("coll_loop: FAIL: %d phases gave wrong results\n", failed);
        else
            printf("coll_loop: %d ranks ok\n", np);
        fflush(stdout);
    }
    free(sb);
    free(rb);
    free(sc);
    MPI_Finalize();
    return failed ? 1 : 0;
}
