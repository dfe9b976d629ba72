/*
 * harness.h: the check harness every conformance program of tests/mpi/progs/ includes.
 * Plain MPI and C99, so the programs build unchanged with Debian's mpicc and ukmpicc.
 * A header of static functions rather than a second source file: each program stays one
 * compiler invocation for both toolchains. Include it after <mpi.h>, <stdarg.h>,
 * <stdio.h>, <stdlib.h> and <string.h>.
 */
#ifndef CONFORMANCE_HARNESS_H
#define CONFORMANCE_HARNESS_H

#define TAG_REPORT 32000 /* used by no check */
static int me, np;       /* rank and size in MPI_COMM_WORLD */
static int nchecks, nfailed;
static int bad;       /* failures of the current check on this rank */
static char why[160]; /* the first one's description */

/* Any rank, inside a check: records a failure (the first reason is kept). */
static void fail(const char *fmt, ...)
{
    if (bad++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
}
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail(__VA_ARGS__);                                                                     \
    } while (0)

/* Every rank, at the end of each check: sends its verdict to rank 0 with plain MPI_Send
 * (no collective: a broken collective must not hide or fake a result); rank 0 prints one
 * line and then releases the others. So no rank starts a check before all finished the
 * previous one, and only rank 0 can receive a verdict early: rank 0 never posts an
 * MPI_ANY_TAG receive or probe in a check (it could take a verdict). */
static void report(const char *name)
{
    struct {
        int bad;
        char why[sizeof why];
    } v;
    nchecks++;
    if (me == 0) {
        int nbad = bad ? 1 : 0, first = bad ? 0 : -1;
        char fwhy[sizeof why];
        memcpy(fwhy, why, sizeof why);
        for (int r = 1; r < np; r++) {
            MPI_Recv(&v, sizeof v, MPI_BYTE, r, TAG_REPORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v.bad) {
                if (first < 0) {
                    first = r;
                    memcpy(fwhy, v.why, sizeof why);
                    fwhy[sizeof fwhy - 1] = 0;
                }
                nbad++;
            }
        }
        if (nbad) {
            nfailed++;
            printf("not ok %d - %s (rank %d: %s; %d of %d ranks failed)\n", nchecks, name, first,
                   fwhy, nbad, np);
        } else {
            printf("ok %d - %s\n", nchecks, name);
        }
        fflush(stdout);
        for (int r = 1; r < np; r++)
            MPI_Send(&nfailed, 1, MPI_INT, r, TAG_REPORT, MPI_COMM_WORLD);
    } else {
        v.bad = bad;
        memcpy(v.why, why, sizeof why);
        MPI_Send(&v, sizeof v, MPI_BYTE, 0, TAG_REPORT, MPI_COMM_WORLD);
        MPI_Recv(&nfailed, 1, MPI_INT, 0, TAG_REPORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    bad = 0;
    why[0] = 0;
}

/* main's start: MPI_Init and the size check (at least 2 ranks). */
static int start(int *argc, char ***argv, const char *prog)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) {
        if (me == 0)
            printf("# conformance %s: needs at least 2 ranks\n", prog);
        MPI_Finalize();
        return 0;
    }
    return 1;
}

/* main's end: the closing line; the exit code is nonzero on every rank if a check failed. */
static int finish(const char *prog)
{
    if (me == 0) {
        printf("# conformance %s: %d checks, %d failed\n", prog, nchecks, nfailed);
        fflush(stdout);
    }
    MPI_Finalize();
    return nfailed != 0;
}

#endif
