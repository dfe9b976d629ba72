/*
 * nbc.c: mpibench's non-blocking collective modes (issue 6), the evaluation of the KACC
 * paper (section 5) redone on our machine: MPI_Ibcast of 64 KiB and 1 MiB from rank 0.
 * Which broadcast algorithm and which progress the library uses is a setting of the whole
 * job, made outside the program through the environment (tests/bench/nbc.bench.sh):
 *   ours       UKMPI_COLL_BCAST=binomial|chain, UKMPI_COLL_CHUNK, UKMPI_CAD_PROGRESS
 *              (mpi/include/mpix.h)
 *   Open MPI   OMPI_MCA_coll=libnbc,basic,self and OMPI_MCA_coll_libnbc_ibcast_algorithm
 *              = 2 (binomial) or 3 (chain); mpirun hands OMPI_MCA_* to every rank
 * The `# nbc` line says what the ranks' environments hold, on how many ranks it differs
 * from rank 0's (a setting that did not reach every rank), and whether this build has
 * MPI_Ibcast and uses our MPIX extensions.
 *
 * Modes (rank 0 prints key=value lines; *_us in microseconds):
 *   overlap    figures 4 and 5: every rank starts the Ibcast, then multiplies d x d double
 *              matrices (d = 4, 40) and calls MPI_Test after each multiply until the
 *              broadcast is complete. t_mm, one multiply alone, is measured after every
 *              repetition, interleaved with them, on every rank at once (a barrier
 *              first: the host then carries the same load as during the overlap), over
 *              as many multiplies as the overlap did (at least 2 ms of them): a host
 *              whose speed drifts under TCG shifts both alike. Per rank and repetition,
 *              notmm = 1 - mults * t_mm / elapsed with that repetition's t_mm: the
 *              fraction of the CPU time not spent multiplying (median over reps),
 *              printed for rank 0 (the root), as mean and max over the other ranks, and
 *              for every rank. The spread: the lowest and highest notmm over the reps
 *              (rank 0; the other ranks together) and t_mm's (all ranks). Negative
 *              values are noise in t_mm.
 *   bcasttime  figure 6: completion time without compute (barrier, start, MPI_Wait; median
 *              over reps on each rank, max over ranks) of MPI_Ibcast (op=ibcast), of the
 *              persistent broadcast MPI-4 added (op=pbcast: MPI_Bcast_init once, then
 *              MPI_Start + MPI_Wait; Open MPI 4.1's MPIX_Bcast_init), and of the paper's
 *              "MPI" baseline written here (op=p2ptree): whole messages along a binomial
 *              tree with MPI_Irecv/MPI_Isend/MPI_Wait.
 *   cadlat     ours only: the latency of interrupt-driven progress (cadlat.c).
 * With our library, the overlap and bcasttime phases also print `cadstats` lines: the
 * MPIX_Cad_stats counts of the phase's broadcasts (warm-up included; `ops` per rank),
 * summed over the ranks and per rank.
 *
 * Every broadcast's data is checked outside the timing (3 bytes that change with every
 * operation): `errors=` counts broadcasts that completed without the root's data.
 * -DMPIBENCH_NO_IBCAST builds without MPI_Ibcast (only the p2p tree is timed);
 * -DMPIBENCH_NO_MPIX without our extensions even when <mpix.h> is there.
 */
#include "mpibench.h"
#if !defined(MPIBENCH_NO_IBCAST) && defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h> /* Open MPI 4.1 has MPI-4's persistent collectives as MPIX_ */
#define MPI_Bcast_init MPIX_Bcast_init
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int msgs[] = {65536, MAXMSG};
static unsigned seq; /* broadcasts so far: the data pattern of the next one */

/* Root, before the barrier that precedes operation `seq`: bytes that differ from the
 * previous operation's (mod 256) at the start, middle and end of the message. */
void pattern_set(int n)
{
    unsigned char v = (unsigned char)(seq * 37u + 11u);
    buf[0] = (char)v;
    buf[n / 2] = (char)(v + 1);
    buf[n - 1] = (char)(v + 2);
}

/* Every rank, after operation `seq` completed: 1 if a non-root rank lacks the data; moves
 * on to the next operation. */
int pattern_bad(int n, int me)
{
    unsigned char v = (unsigned char)(seq++ * 37u + 11u);
    unsigned char v1 = (unsigned char)(v + 1), v2 = (unsigned char)(v + 2);
    return me != 0 && ((unsigned char)buf[0] != v || (unsigned char)buf[n / 2] != v1 ||
                       (unsigned char)buf[n - 1] != v2);
}

/* Collective: rank 0 gets the sum of every rank's e (others: 0). */
int errors_sum(int e)
{
    int s = 0;
    MPI_Reduce(&e, &s, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    return s;
}

#ifndef MPIBENCH_NO_IBCAST
/* --- the compute: d x d double matrix multiplies --- */
static const int dims[] = {4, 40};
static double *A, *B, *C;
static volatile double sink;

static __attribute__((noinline)) void mm(int d)
{
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            double s = 0.0;
            for (int k = 0; k < d; k++)
                s += A[i * d + k] * B[k * d + j];
            C[i * d + j] = s;
        }
    sink += C[0];
}

void mm_init(void)
{
    if (A)
        return;
    A = malloc(sizeof(double) * 1600);
    B = malloc(sizeof(double) * 1600);
    C = malloc(sizeof(double) * 1600);
    for (int i = 0; i < 1600; i++) {
        A[i] = 1.0 + i % 7;
        B[i] = 0.5 - i % 5;
    }
}

/* Every rank at once (a barrier first): how many d x d multiplies take >= 2 ms, so that
 * the timer's cost drops out of mm_time. */
static long mm_batch(int d)
{
    long batch = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (;;) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < batch; i++)
            mm(d);
        if (MPI_Wtime() - t0 >= 2e-3)
            return batch;
        batch *= 2;
    }
}

/* Any rank: seconds per d x d multiply, timed over n multiplies without communication. */
static double mm_time(int d, long n)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++)
        mm(d);
    return (MPI_Wtime() - t0) / n;
}

/* --- our progress counters: those of the measured broadcasts only (read just before and
 * after each, outside the timing), not those of the barriers and gathers between them,
 * which the library may run as graphs too --- */
#ifdef UKMPI_MPIX
static uint64_t cad_sum[MPIX_CAD_NSTATS], cad_at[MPIX_CAD_NSTATS];

static void cad_begin(void)
{
    memset(cad_sum, 0, sizeof cad_sum);
}

/* Before one measured broadcast. */
static void cad_mark(void)
{
    MPIX_Cad_stats(cad_at);
}

/* After it: its counts join the phase's. */
static void cad_add(void)
{
    uint64_t now[MPIX_CAD_NSTATS];
    MPIX_Cad_stats(now);
    for (int i = 0; i < MPIX_CAD_NSTATS; i++)
        cad_sum[i] += now[i] - cad_at[i];
}

/* Collective: rank 0 prints the phase's counts, summed over ranks and per rank. */
static void cad_end(const char *phase, int bytes, int d, int ops)
{
    static const char *const names[] = {"issued", "nodes",  "local",   "ipi",
                                        "home",   "polled", "deferred"};
    double v[MPIX_CAD_NSTATS], *all = malloc(sizeof(double) * MPIX_CAD_NSTATS * nranks);

    for (int i = 0; i < MPIX_CAD_NSTATS; i++)
        v[i] = (double)cad_sum[i];
    MPI_Gather(v, MPIX_CAD_NSTATS, MPI_DOUBLE, all, MPIX_CAD_NSTATS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("cadstats phase=%s bytes=%d mm=%d ops=%d", phase, bytes, d, ops);
        for (int i = 0; i <= MPIX_CAD_DEFERRED; i++) {
            double s = 0;
            for (int r = 0; r < nranks; r++)
                s += all[r * MPIX_CAD_NSTATS + i];
            printf(" %s=%.0f", names[i], s);
        }
        for (int i = MPIX_CAD_LOCAL; i <= MPIX_CAD_POLLED; i++) {
            printf(" %s_ranks=", names[i]);
            for (int r = 0; r < nranks; r++)
                printf("%s%.0f", r ? "," : "", all[r * MPIX_CAD_NSTATS + i]);
        }
        printf("\n");
        fflush(stdout);
    }
    free(all);
}
#else
static void cad_begin(void) {}

static void cad_mark(void) {}

static void cad_add(void) {}

static void cad_end(const char *phase, int bytes, int d, int ops)
{
    (void)phase, (void)bytes, (void)d, (void)ops;
}
#endif
#endif /* !MPIBENCH_NO_IBCAST */

/* --- the broadcasts --- */

/* The paper's "MPI" baseline: a binomial tree from rank 0 of whole messages, receive from
 * the parent, then send to the children (largest subtree first), each with MPI_Wait. */
static void p2p_tree(int n, MPI_Comm comm)
{
    int me, np, mask = 1;
    MPI_Request rq[32];
    int k = 0;

    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    for (; mask < np; mask <<= 1)
        if (me & mask) {
            MPI_Irecv(buf, n, MPI_BYTE, me - mask, TAG_TREE, comm, &rq[0]);
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (me + mask < np)
            MPI_Isend(buf, n, MPI_BYTE, me + mask, TAG_TREE, comm, &rq[k++]);
    for (int i = 0; i < k; i++)
        MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
}

#ifndef MPIBENCH_NO_IBCAST
/* Starts an Ibcast of n bytes from rank 0 of comm, then multiplies d x d matrices with an
 * MPI_Test after each until it is complete. Returns the seconds it took; *mults the
 * multiplies done. */
double ibcast_overlap(int n, int d, MPI_Comm comm, long *mults)
{
    MPI_Request rq;
    int flag = 0;
    long k = 0;
    double t0 = MPI_Wtime();
    MPI_Ibcast(buf, n, MPI_BYTE, 0, comm, &rq);
    do {
        mm(d);
        k++;
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    } while (!flag);
    *mults = k;
    return MPI_Wtime() - t0;
}
#endif

/* Rank 0: the per-rank results all[r * stride + i] as "key=a,b,c" */
static void print_ranks(const char *key, const double *all, int stride, int i, const char *fmt)
{
    printf(" %s=", key);
    for (int r = 0; r < nranks; r++) {
        if (r)
            printf(",");
        printf(fmt, all[r * stride + i]);
    }
}

/* Lowest and highest of v[0..n) (n > 0). */
static void span(const double *v, int n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

/* What each rank gives rank 0 per overlap figure (indices into its row of the gather). */
enum { OV_T, OV_K, OV_F, OV_MM, OV_MMLO, OV_MMHI, OV_FLO, OV_FHI, OV_N };

void bench_overlap(int reps)
{
#ifndef MPIBENCH_NO_IBCAST
    double *T = malloc(sizeof(double) * reps), *F = malloc(sizeof(double) * reps),
           *K = malloc(sizeof(double) * reps), *M = malloc(sizeof(double) * reps),
           *all = malloc(sizeof(double) * OV_N * nranks);

    mm_init();
    for (int m = 0; m < 2; m++)
        for (int dd = 0; dd < 2; dd++) {
            int d = dims[dd], n = msgs[m], err = 0;
            long batch = mm_batch(d);
            double v[OV_N];

            cad_begin();
            for (int r = -WARM; r < reps; r++) {
                long k;
                if (rank == 0)
                    pattern_set(n);
                MPI_Barrier(MPI_COMM_WORLD);
                cad_mark();
                double tt = ibcast_overlap(n, d, MPI_COMM_WORLD, &k);
                cad_add();
                err += pattern_bad(n, rank);
                /* this repetition's t_mm, every rank at once, outside the counters */
                MPI_Barrier(MPI_COMM_WORLD);
                double tmm = mm_time(d, k > batch ? k : batch);
                if (r >= 0) {
                    T[r] = tt * 1e6;
                    K[r] = (double)k;
                    M[r] = tmm * 1e6;
                    F[r] = 1.0 - k * tmm / tt;
                }
            }
            cad_end("overlap", n, d, WARM + reps);
            span(M, reps, &v[OV_MMLO], &v[OV_MMHI]);
            span(F, reps, &v[OV_FLO], &v[OV_FHI]);
            v[OV_T] = median(T, reps), v[OV_K] = median(K, reps), v[OV_F] = median(F, reps);
            v[OV_MM] = median(M, reps);
            MPI_Gather(v, OV_N, MPI_DOUBLE, all, OV_N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            err = errors_sum(err);
            if (rank == 0) {
                double tot = 0, tm = 0, ko = 0, fo = 0, fmax = -1e9, mlo = 1e30, mhi = 0;
                double flo = 1e9, fhi = -1e9;
                for (int i = 0; i < nranks; i++) {
                    double *x = all + OV_N * i;
                    tot = x[OV_T] > tot ? x[OV_T] : tot;
                    tm += x[OV_MM] / nranks;
                    mlo = x[OV_MMLO] < mlo ? x[OV_MMLO] : mlo;
                    mhi = x[OV_MMHI] > mhi ? x[OV_MMHI] : mhi;
                    if (i) {
                        ko += x[OV_K] / (nranks - 1);
                        fo += x[OV_F] / (nranks - 1);
                        fmax = x[OV_F] > fmax ? x[OV_F] : fmax;
                        flo = x[OV_FLO] < flo ? x[OV_FLO] : flo;
                        fhi = x[OV_FHI] > fhi ? x[OV_FHI] : fhi;
                    }
                }
                printf("overlap bytes=%d mm=%d reps=%d elapsed_us=%.1f mm_us=%.3f mm_lo_us=%.3f "
                       "mm_hi_us=%.3f mults_r0=%.0f notmm_r0=%.3f notmm_r0_lo=%.3f "
                       "notmm_r0_hi=%.3f mults_oth=%.0f notmm_oth=%.3f notmm_othmax=%.3f "
                       "notmm_oth_lo=%.3f notmm_oth_hi=%.3f",
                       n, d, reps, tot, tm, mlo, mhi, all[OV_K], all[OV_F], all[OV_FLO],
                       all[OV_FHI], ko, fo, fmax, flo, fhi);
                print_ranks("notmm_ranks", all, OV_N, OV_F, "%.3f");
                print_ranks("mults_ranks", all, OV_N, OV_K, "%.0f");
                printf(" errors=%d\n", err);
                fflush(stdout);
            }
        }
    free(all);
    free(T);
    free(F);
    free(K);
    free(M);
#else
    (void)reps;
    if (rank == 0)
        printf("# overlap: not in this build (MPIBENCH_NO_IBCAST)\n");
#endif
}

enum bcast_op { OP_P2PTREE, OP_IBCAST, OP_PBCAST };
static const char *const op_names[] = {"p2ptree", "ibcast", "pbcast"};

/* Times WARM + reps broadcasts of n bytes from rank 0 by `op` and prints them. Collective
 * over MPI_COMM_WORLD; the broadcasts use buf. */
static void time_bcast(int n, enum bcast_op op, int reps)
{
    double *W = malloc(sizeof(double) * reps), v, *all = malloc(sizeof(double) * nranks);
    int err = 0;
#ifndef MPIBENCH_NO_IBCAST
    MPI_Request prq = MPI_REQUEST_NULL; /* op=pbcast: built once, started every repetition */
    if (op == OP_PBCAST)
        MPI_Bcast_init(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &prq);
#endif

    for (int r = -WARM; r < reps; r++) {
        if (rank == 0)
            pattern_set(n);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), t1;
        if (op == OP_P2PTREE) {
            p2p_tree(n, MPI_COMM_WORLD);
            t1 = MPI_Wtime();
        } else {
#ifndef MPIBENCH_NO_IBCAST
            MPI_Request rq;
            cad_mark();
            t0 = MPI_Wtime();
            if (op == OP_PBCAST) {
                MPI_Start(&prq);
                MPI_Wait(&prq, MPI_STATUS_IGNORE);
            } else {
                MPI_Ibcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            }
            t1 = MPI_Wtime();
            cad_add();
#else
            t1 = t0;
#endif
        }
        err += pattern_bad(n, rank);
        if (r >= 0)
            W[r] = (t1 - t0) * 1e6;
    }
#ifndef MPIBENCH_NO_IBCAST
    if (prq != MPI_REQUEST_NULL)
        MPI_Request_free(&prq);
#endif
    v = median(W, reps);
    MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    err = errors_sum(err);
    if (rank == 0) {
        double mx = 0;
        for (int i = 0; i < nranks; i++)
            mx = all[i] > mx ? all[i] : mx;
        printf("bcasttime bytes=%d op=%s reps=%d us=%.1f r0_us=%.1f", n, op_names[op], reps, mx,
               all[0]);
        print_ranks("us_ranks", all, 1, 0, "%.1f");
        printf(" errors=%d\n", err);
        fflush(stdout);
    }
    free(W);
    free(all);
}

void bench_bcasttime(int reps)
{
    for (int m = 0; m < 2; m++) {
        /* the p2p tree first: its line is there even if the library's Ibcast fails */
        time_bcast(msgs[m], OP_P2PTREE, reps);
#ifndef MPIBENCH_NO_IBCAST
        cad_begin();
        time_bcast(msgs[m], OP_IBCAST, reps);
        cad_end("bcasttime", msgs[m], 0, WARM + reps);
        time_bcast(msgs[m], OP_PBCAST, reps);
#else
        if (rank == 0)
            printf("# bcasttime bytes=%d op=ibcast: not in this build (MPIBENCH_NO_IBCAST)\n",
                   msgs[m]);
#endif
    }
}

/* Rank 0 prints the settings the ranks' environments hold (see the top of this file). */
void nbc_header(void)
{
    static const char *const vars[] = {"UKMPI_CAD_PROGRESS",
                                       "UKMPI_COLL_BCAST",
                                       "UKMPI_COLL_CHUNK",
                                       "UKMPI_O2G",
                                       "UKMPI_KACC",
                                       "OMPI_MCA_coll",
                                       "OMPI_MCA_coll_libnbc_ibcast_algorithm"};
    char env[512] = "", env0[512];
    int differ = 0, n = 0;

    for (unsigned i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && n < (int)sizeof env)
            n += snprintf(env + n, sizeof env - n, "%s%s=%s", n ? " " : "", vars[i], v);
    }
    memcpy(env0, env, sizeof env);
    MPI_Bcast(env0, sizeof env0, MPI_CHAR, 0, MPI_COMM_WORLD);
    differ = strcmp(env, env0) != 0;
    differ = errors_sum(differ);
    if (rank == 0) {
        printf("# nbc env=\"%s\" env_differs_on=%d ibcast=%s mpix=%s\n", env, differ,
#ifndef MPIBENCH_NO_IBCAST
               "yes",
#ifdef UKMPI_MPIX
               "yes"
#else
               "no"
#endif
#else
               "no", "no"
#endif
        );
        fflush(stdout);
    }
}
