/*
 * king.c: every WaitIO-MPI collective from every root, every type and op, checked on every
 * process against the result computed locally. Reduction inputs are all negative, so a
 * MAX that starts from 0 or FLT_MIN (spec 9.3's quirk) fails.
 *
 *   king universe   waitio_init(60), then waitio_create_universe: King collectives
 *   king group      a group of every process with the PBs in reverse order (not a
 *                   universe): the WaitIO-only collectives
 *   king pbhead     waitio_create_universe_pbhead; only the heads run the checks
 *
 * Between the collectives, user point-to-point messages with tag 0 are outstanding, to
 * show that collective traffic never matches a user's receive.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "waitio_mpi.h"
#include "wcheck.h"

static const int types[] = {WAITIO_MPI_INT, WAITIO_MPI_LONG, WAITIO_MPI_CHAR, WAITIO_MPI_FLOAT,
                            WAITIO_MPI_DOUBLE};
static const int ops[] = {WAITIO_MPI_SUM, WAITIO_MPI_MAX, WAITIO_MPI_MIN};
#define NTYPES (int)(sizeof(types) / sizeof(types[0]))
#define NOPS   (int)(sizeof(ops) / sizeof(ops[0]))

static int me, nranks;
static waitio_group_t comm;

static size_t tsize(int dt)
{
    int s = 0;

    waitio_mpi_type_size(dt, &s);
    return (size_t)s;
}

/* Element i of a dt buffer as a long, and back. */
static void put(void *b, int dt, size_t i, long v)
{
    switch (dt) {
    case WAITIO_MPI_INT:
        ((int *)b)[i] = (int)v;
        break;
    case WAITIO_MPI_LONG:
        ((long *)b)[i] = v;
        break;
    case WAITIO_MPI_CHAR:
        ((signed char *)b)[i] = (signed char)v;
        break;
    case WAITIO_MPI_FLOAT:
        ((float *)b)[i] = (float)v;
        break;
    case WAITIO_MPI_DOUBLE:
        ((double *)b)[i] = (double)v;
        break;
    }
}

static long get(const void *b, int dt, size_t i)
{
    switch (dt) {
    case WAITIO_MPI_INT:
        return ((const int *)b)[i];
    case WAITIO_MPI_LONG:
        return ((const long *)b)[i];
    case WAITIO_MPI_CHAR:
        return ((const signed char *)b)[i];
    case WAITIO_MPI_FLOAT:
        return (long)((const float *)b)[i];
    case WAITIO_MPI_DOUBLE:
        return (long)((const double *)b)[i];
    }
    return 0;
}

/* Rank r's negative input element i: small for CHAR (sums stay in range), beyond 32 bits
 * for LONG, exact in FLOAT; which rank holds the maximum or minimum changes with i. */
static long val(int dt, int r, size_t i)
{
    long v = -(1 + (long)((r * 5 + i * 3) % 7));

    if (dt == WAITIO_MPI_CHAR)
        return v;
    v -= (long)((r * 3 + i) % 11) * 100 + (long)(i % 1000);
    return dt == WAITIO_MPI_LONG ? v * (1L << 33) : v;
}

/* Root-and-element-dependent payload value (bcast, gather, scatter). */
static long pay(int dt, int root, int r, size_t i)
{
    long v = (long)((root * 13 + r * 7 + i) % 100) - 50;

    return dt == WAITIO_MPI_LONG ? v * (1L << 35) + 1 : v;
}

static void bcasts(int root)
{
    static const int counts[] = {1, 40, 200000};

    for (int t = 0; t < NTYPES; t++)
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
            int n = counts[k];
            char *b = malloc(n * tsize(types[t]));
            size_t bad = 0;

            for (int i = 0; i < n; i++)
                put(b, types[t], i, me == root ? pay(types[t], root, 0, i) : 99);
            CHECK(waitio_mpi_bcast(b, n, types[t], root, comm) == 0, "bcast rc");
            for (int i = 0; i < n; i++)
                bad += get(b, types[t], i) != pay(types[t], root, 0, i);
            CHECK(bad == 0, "bcast root %d type %#x count %d: %zu bad", root, types[t], n, bad);
            free(b);
        }
}

static long combine(int op, long a, long b)
{
    if (op == WAITIO_MPI_SUM)
        return a + b;
    if (op == WAITIO_MPI_MAX)
        return b > a ? b : a;
    return b < a ? b : a;
}

/* reduce (root >= 0) or allreduce (root < 0) of every type and op, count n. */
static void reductions(int root, int n)
{
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++) {
            int dt = types[t];
            char *s = malloc(n * tsize(dt)), *r = malloc(n * tsize(dt));
            size_t bad = 0;
            int rc;

            for (int i = 0; i < n; i++) {
                put(s, dt, i, val(dt, me, i));
                put(r, dt, i, 123);
            }
            rc = root >= 0 ? waitio_mpi_reduce(s, r, n, dt, ops[o], root, comm)
                           : waitio_mpi_allreduce(s, r, n, dt, ops[o], comm);
            CHECK(rc == 0, "reduce rc");
            if (root < 0 || me == root) {
                for (int i = 0; i < n; i++) {
                    long e = val(dt, 0, i);

                    for (int q = 1; q < nranks; q++)
                        e = combine(ops[o], e, val(dt, q, i));
                    bad += get(r, dt, i) != e;
                }
            } else {
                for (int i = 0; i < n; i++)
                    bad += get(r, dt, i) != 123; /* untouched away from the root */
            }
            CHECK(bad == 0, "%sreduce root %d type %#x op %#x count %d: %zu bad",
                  root < 0 ? "all" : "", root, dt, ops[o], n, bad);
            free(s);
            free(r);
        }
}

/* gather (root >= 0) or allgather (root < 0): count n of INT and DOUBLE. */
static void gathers(int root, int n)
{
    for (int t = 0; t < NTYPES; t += 4) { /* INT, DOUBLE */
        int dt = types[t];
        char *s = malloc(n * tsize(dt)), *r = malloc((size_t)nranks * n * tsize(dt));
        size_t bad = 0;
        int rc;

        for (int i = 0; i < n; i++)
            put(s, dt, i, pay(dt, root, me, i));
        for (int i = 0; i < nranks * n; i++)
            put(r, dt, i, 77);
        rc = root >= 0 ? waitio_mpi_gather(s, r, n, dt, root, comm)
                       : waitio_mpi_allgather(s, r, n, dt, comm);
        CHECK(rc == 0, "gather rc");
        for (int q = 0; q < nranks; q++)
            for (int i = 0; i < n; i++)
                bad += get(r, dt, (size_t)q * n + i) !=
                       (root < 0 || me == root ? pay(dt, root, q, i) : 77);
        CHECK(bad == 0, "%sgather root %d type %#x count %d: %zu bad", root < 0 ? "all" : "", root,
              dt, n, bad);
        free(s);
        free(r);
    }
}

static void scatters(int root, int n)
{
    int *s = malloc((size_t)nranks * n * sizeof(int)), *r = malloc(n * sizeof(int));
    size_t bad = 0;

    for (int i = 0; i < nranks * n; i++)
        s[i] = me == root ? (int)pay(WAITIO_MPI_INT, root, i / n, i % n) : -1;
    for (int i = 0; i < n; i++)
        r[i] = 55;
    CHECK(waitio_mpi_scatter(s, n, WAITIO_MPI_INT, r, n, WAITIO_MPI_INT, root, comm) == 0,
          "scatter rc");
    for (int i = 0; i < n; i++)
        bad += r[i] != pay(WAITIO_MPI_INT, root, me, i);
    CHECK(bad == 0, "scatter root %d count %d: %zu bad", root, n, bad);
    free(s);
    free(r);
}

/* Rank q's count in the v-variants (some zero) and its displacement (with gaps). */
static int vcount(int root, int q)
{
    return (q + root) % 3 == 0 ? 0 : (q + root) % 3 * 3 + q;
}

static int vdispl(int root, int q)
{
    int d = 0;

    for (int i = 0; i < q; i++)
        d += vcount(root, i) + 2;
    return d;
}

#define GAP (-7.5)

static void vectors(int root)
{
    int total = vdispl(root, nranks), mine = vcount(root, me);
    int *cnt = malloc(nranks * sizeof(int)), *dsp = malloc(nranks * sizeof(int));
    double *all = malloc((total + 1) * sizeof(double)), *part = malloc((mine + 1) * sizeof(double));
    size_t bad = 0;

    for (int q = 0; q < nranks; q++) {
        cnt[q] = vcount(root, q);
        dsp[q] = vdispl(root, q);
    }
    /* scatterv: rank q gets cnt[q] doubles from the root's all[dsp[q]]. */
    for (int i = 0; i < total; i++)
        all[i] = me == root ? 1000.0 * root + i : GAP;
    for (int i = 0; i < mine; i++)
        part[i] = GAP;
    CHECK(waitio_mpi_scatterv(all, cnt, dsp, WAITIO_MPI_DOUBLE, part, mine, WAITIO_MPI_DOUBLE, root,
                              comm) == 0,
          "scatterv rc");
    for (int i = 0; i < mine; i++)
        bad += part[i] != 1000.0 * root + dsp[me] + i;
    CHECK(bad == 0, "scatterv root %d: %zu bad", root, bad);

    /* gatherv: the root gets rank q's cnt[q] doubles at all[dsp[q]]; gaps untouched. */
    for (int i = 0; i < mine; i++)
        part[i] = 10.0 * me + i + 0.5;
    for (int i = 0; i < total; i++)
        all[i] = GAP;
    CHECK(waitio_mpi_gatherv(part, mine, WAITIO_MPI_DOUBLE, all, cnt, dsp, WAITIO_MPI_DOUBLE, root,
                             comm) == 0,
          "gatherv rc");
    bad = 0;
    if (me == root) {
        for (int q = 0; q < nranks; q++) {
            for (int i = 0; i < cnt[q]; i++)
                bad += all[dsp[q] + i] != 10.0 * q + i + 0.5;
            bad += all[dsp[q] + cnt[q]] != GAP || all[dsp[q] + cnt[q] + 1] != GAP;
        }
    }
    CHECK(bad == 0, "gatherv root %d: %zu bad", root, bad);
    free(cnt);
    free(dsp);
    free(all);
    free(part);
}

/* Bad datatype or op: every process gets non-zero and nothing is sent. */
static void errors(void)
{
    static const int bad = WAITIO_MPI_DEFTAG + 42;
    int x = 1, y = 0;

    CHECK(waitio_mpi_bcast(&x, 1, bad, 0, comm) != 0, "bcast of an unknown type");
    CHECK(waitio_mpi_reduce(&x, &y, 1, WAITIO_MPI_INT, bad, 0, comm) != 0,
          "reduce with an unknown op");
    CHECK(waitio_mpi_allreduce(&x, &y, 1, bad, WAITIO_MPI_SUM, comm) != 0,
          "allreduce of an unknown type");
    CHECK(waitio_mpi_bcast(&x, 1, WAITIO_MPI_INT, nranks, comm) != 0, "bcast from a bad root");
}

static void all_collectives(void)
{
    /* Each process's tag-0 user message from its right neighbour stays outstanding while
     * the collectives run; it must still receive exactly that message. */
    int right = (me + 1) % nranks, left = (me + nranks - 1) % nranks, got = -1;
    WAITIO_MPI_Request req;

    CHECK(waitio_mpi_irecv(&got, 1, WAITIO_MPI_INT, right, 0, comm, &req) == 0, "user irecv");
    for (int root = 0; root < nranks; root++) {
        bcasts(root);
        reductions(root, 3);
        gathers(root, 3);
        scatters(root, 4);
        vectors(root);
        CHECK(waitio_mpi_barrier(comm) == 0, "barrier");
    }
    reductions(-1, 3);
    reductions(-1, 50000); /* rendezvous-sized partial results between Kings */
    reductions(nranks - 1, 50000);
    gathers(-1, 3);
    gathers(-1, 20000);
    errors();
    CHECK(waitio_mpi_send(&me, 1, WAITIO_MPI_INT, left, 0, comm) == 0, "user send");
    CHECK(waitio_wait(&req) == 0 && got == right, "user message: got %d, wanted %d", got, right);
    CHECK(waitio_mpi_barrier(comm) == 0, "final barrier");
}

static int truef_all(int pbid, int n)
{
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "universe";
    int npb = 0, mrank = 0, run = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    if (strcmp(mode, "universe") == 0) {
        /* The Fortran WMPI_Init path: an explicit waitio_init before the universe. */
        if (waitio_init(60) != 0 || waitio_create_universe(&comm) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    } else if (strcmp(mode, "group") == 0) {
        waitio_filter_func_t f[8];
        int order[8];

        if (waitio_init(60) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        waitio_pb_size(&npb);
        for (int i = 0; i < npb && i < 8; i++) {
            f[i] = truef_all;
            order[i] = npb - i; /* PBs in reverse order */
        }
        comm = waitio_create_group(3, f, order);
        if (!comm)
            MPI_Abort(MPI_COMM_WORLD, 1);
    } else {
        int pbid = -1, r = -1;

        if (waitio_create_universe_pbhead(&comm) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        run = mrank == 0;
        if (run) {
            waitio_pb_rank(&pbid);
            waitio_group_rank(comm, &r);
            CHECK(r == pbid, "pbhead rank %d, PB %d", r, pbid);
        }
    }
    waitio_pb_rank(&wc_pb);
    if (run) {
        waitio_group_rank(comm, &me);
        waitio_group_size(comm, &nranks);
        wc_rank = me;
        all_collectives();
    }
    waitio_finalize();
    MPI_Finalize();
    return wc_done(mode);
}
