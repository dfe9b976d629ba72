/*
 * nbc_progress.c: non-blocking collectives make progress while every rank computes
 * without calling MPI (the library progresses them from the NIC interrupt and by IPI,
 * mpi/include/mpix.h). Each rank measures how fast it computes, then, after a barrier,
 * issues an MPI_Ibcast of 64 KiB from rank 0 and an MPI_Iallreduce of 1000 ints,
 * computes for about LOOP_MS milliseconds with no MPI call at all, and then calls
 * MPI_Test once on each request: both must be complete, with the right data. Each rank
 * prints "nbc_progress: ok ..." or "nbc_progress: FAIL ..."; rank 0 then prints
 * "nbc_progress: N of N ranks ok" (the line the cases look for: the per-rank lines of
 * several ranks come in no fixed order).
 *
 * Only for this MPI: Open MPI, like most libraries, progresses only inside MPI calls, so
 * the same program would fail there by design (tests/mpi/ holds the programs both run).
 *
 * The order of events is fixed by three zero-byte tokens, so that a library which
 * progresses only inside MPI calls fails here every time, not by chance (the
 * nbc_progress_poll_2x2 case checks that it does), with 4 ranks or more:
 *   - the root (rank 0) issues last: every other rank issues, sends a token to the root
 *     and makes no further MPI call until it tests; the root issues once it has them all.
 *     So no data exists before every other rank's last MPI call.
 *   - rank 2 forwards to rank 3 in both broadcast algorithms (the binomial tree and the
 *     chain), and it makes its next MPI call, a receive of a token from rank 3, only after
 *     rank 3 tested. So rank 3's Ibcast completes at its test only if rank 2 forwarded
 *     while it computed, without any MPI call. (Rank 2's own check is then made after that
 *     receive, not at its first MPI call; ranks 0, 1 and 3 check at their first.)
 *
 * Timing caveat: the check is on the data, but it relies on the loop being long compared
 * to the collectives. Under QEMU/TCG they take a few milliseconds (64 KiB between nodes at
 * ~40 MB/s, a tree of depth 2 on 4 ranks), so LOOP_MS = 250 leaves a margin of about 50
 * for host scheduling delays. The loop length is calibrated before anything is issued
 * (the best of 5 timed runs, all ranks at once), so no MPI call happens during it; its
 * measured length is printed with the result, and a FAIL says when it came out much
 * shorter than planned (then the calibration, not the progress, is to blame).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LOOP_MS /* -DLOOP_MS: longer, tests/kmod/kacc_mpi.sh's 4 processes on 2 vCPUs */
#define LOOP_MS 250
#endif
#define BCAST_LEN  65536
#define REDUCE_LEN 1000
#define TOKEN_TAG  77 /* the zero-byte messages that order the events */
#define FORWARDER  2  /* forwards the broadcast to CHECKER in both algorithms */
#define CHECKER    3

/* The computation: no MPI call, no system call; the volatile accumulator keeps the
 * compiler from shortening it. */
static volatile unsigned long acc;
static void compute(long n)
{
    for (long i = 0; i < n; i++)
        acc = acc * 6364136223846793005UL + 1442695040888963407UL;
}

/* Iterations of compute() per second: the best of 5 runs of >= 20 ms, so that the loop
 * rather comes out longer than planned than shorter (a run slowed by other vCPUs on the
 * same host core counts less). */
static double rate(void)
{
    double best = 0;
    for (long n = 1000, run = 0; run < 5;) {
        double t0 = MPI_Wtime();
        compute(n);
        double t = MPI_Wtime() - t0;
        if (t < 0.02) {
            n *= 2;
            continue;
        }
        best = n / t > best ? n / t : best;
        run++;
    }
    return best;
}

static unsigned char pat(int i)
{
    return (unsigned char)(i * 7 + 3);
}

int main(int argc, char **argv)
{
    int me, np, bad = 0, nbad = 0, fb = 0, fr = 0;
    char why[160] = "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    unsigned char *b = malloc(BCAST_LEN);
    int in[REDUCE_LEN], out[REDUCE_LEN];
    for (int i = 0; i < BCAST_LEN; i++)
        b[i] = me == 0 ? pat(i) : 0xee;
    for (int j = 0; j < REDUCE_LEN; j++)
        in[j] = me * 1000 + j, out[j] = -1;
    MPI_Barrier(MPI_COMM_WORLD); /* calibrate together: the loop runs with all ranks busy */
    long iters = (long)(rate() * LOOP_MS / 1000);

    MPI_Barrier(MPI_COMM_WORLD); /* issue at about the same time everywhere */
    MPI_Request rb, rr;
    double t0 = MPI_Wtime();
    if (me == 0) /* the root issues last (see the top of the file) */
        for (int r = 1; r < np; r++)
            MPI_Recv(NULL, 0, MPI_BYTE, r, TOKEN_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ibcast(b, BCAST_LEN, MPI_BYTE, 0, MPI_COMM_WORLD, &rb);
    MPI_Iallreduce(in, out, REDUCE_LEN, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rr);
    if (me != 0)
        MPI_Send(NULL, 0, MPI_BYTE, 0, TOKEN_TAG, MPI_COMM_WORLD);
    compute(iters); /* no MPI call from here ... */
    if (me == FORWARDER && np > CHECKER)
        MPI_Recv(NULL, 0, MPI_BYTE, CHECKER, TOKEN_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Test(&rb, &fb, MPI_STATUS_IGNORE); /* ... to here */
    MPI_Test(&rr, &fr, MPI_STATUS_IGNORE);
    if (me == CHECKER)
        MPI_Send(NULL, 0, MPI_BYTE, FORWARDER, TOKEN_TAG, MPI_COMM_WORLD);
    int ms = (int)((MPI_Wtime() - t0) * 1000);

    if (!fb || !fr) {
        bad = 1;
        snprintf(why, sizeof why, "%s not complete after %d ms of computing",
                 !fb && !fr ? "Ibcast and Iallreduce"
                 : !fb      ? "Ibcast"
                            : "Iallreduce",
                 ms);
        MPI_Wait(&rb, MPI_STATUS_IGNORE); /* to check the data all the same */
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < BCAST_LEN && !bad; i++)
        if (b[i] != pat(i)) {
            bad = 1;
            snprintf(why, sizeof why, "Ibcast byte %d is 0x%02x, expected 0x%02x", i, b[i], pat(i));
        }
    for (int j = 0; j < REDUCE_LEN && !bad; j++)
        if (out[j] != 1000 * (np * (np - 1) / 2) + np * j) {
            bad = 1;
            snprintf(why, sizeof why, "Iallreduce element %d is %d", j, out[j]);
        }
    if (bad)
        printf("nbc_progress: FAIL rank %d: %s\n", me, why);
    else
        printf("nbc_progress: ok (rank %d: Ibcast of %d B and Iallreduce complete at the first "
               "MPI_Test after %d ms of computing)\n",
               me, BCAST_LEN, ms);
    fflush(stdout);
    MPI_Reduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("nbc_progress: %d of %d ranks ok\n", np - nbad, np);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(b);
    MPI_Finalize();
    return bad;
}
