/*
 * kacc_vbig.c: v-collectives whose messages straddle kacc's eager piece size (1 MiB,
 * mpi/linux/mlx.h's MLX_KACC_EAGER) on some ranks only: odd ranks' blocks are BIG bytes
 * (two pieces), even ranks' SMALL (one). Before kacc cut long messages into pieces, odd
 * ranks ran these graphs in the library and even ranks in kacc, and the job hung
 * (tests/kmod/kacc_mpi.sh, case vbig). Igatherv, Iscatterv (every root), Iallgatherv,
 * Ialltoallv (block r -> s BIG when r + s is odd), then an Ibcast of three pieces; every
 * byte checked. Then LATE Ibcasts of three pieces whose receivers start late, so that the
 * pieces wait in o2g's dump area (more bytes in all than the area holds: the records of
 * those kacc's RECVs took must be given back). A plain MPI program (harness.h): Open MPI's output is the reference.
 * Rank 0 prints one line per check and "# conformance kacc_vbig: N checks, M failed".
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c99 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi/progs/harness.h"

#define BIG     ((1 << 20) + (256 << 10)) /* over one piece: two on the wire */
#define SMALL   (4 << 10)                 /* one piece */
#define BCAST   (3 << 20)                 /* three pieces */
#define LATE    8                         /* Ibcasts with late receivers: 24 MiB in all */
#define LATE_NS 100000000                 /* how late the receivers start */

/* The bytes of rank r's block for rank s. */
static unsigned char pat(int r, int s, size_t i)
{
    return (unsigned char)(r * 31 + s * 7 + i % 251);
}

/* Block sizes: rank r's own block (gatherv, scatterv, allgatherv). */
static int cnt(int r)
{
    return r % 2 ? BIG : SMALL;
}

/* Ialltoallv's block r -> s. */
static int cnt2(int r, int s)
{
    return (r + s) % 2 ? BIG : SMALL;
}

/* Check that len bytes at p are rank r's block for s; what is the first wrong byte. */
static void expect_block(const unsigned char *p, int r, int s, size_t len, const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != pat(r, s, i)) {
            fail("%s: block of rank %d, byte %zu: %u, not %u", what, r, i, p[i], pat(r, s, i));
            return;
        }
    }
}

static void fill(unsigned char *p, int r, int s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        p[i] = pat(r, s, i);
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "kacc_vbig"))
        return 0;
    int *counts = malloc(np * sizeof *counts), *displs = malloc(np * sizeof *displs);
    int *scounts = malloc(np * sizeof *scounts), *sdispls = malloc(np * sizeof *sdispls);
    size_t total = 0;
    for (int r = 0; r < np; r++) {
        counts[r] = cnt(r);
        displs[r] = (int)total;
        total += (size_t)cnt(r);
    }
    unsigned char *all = malloc(total), *mine = malloc(BIG);
    unsigned char *sb = malloc((size_t)np * BIG), *rb = malloc((size_t)np * BIG);
    MPI_Request rq;

    for (int root = 0; root < np; root++) {
        fill(mine, me, root, (size_t)cnt(me));
        memset(all, 0, total);
        MPI_Igatherv(mine, cnt(me), MPI_BYTE, all, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD,
                     &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int r = 0; me == root && r < np; r++)
            expect_block(all + displs[r], r, root, (size_t)counts[r], "Igatherv");
        char name[64];
        snprintf(name, sizeof name, "Igatherv root %d", root);
        report(name);
    }
    for (int root = 0; root < np; root++) {
        for (int r = 0; me == root && r < np; r++)
            fill(all + displs[r], root, r, (size_t)counts[r]);
        memset(mine, 0, BIG);
        MPI_Iscatterv(all, counts, displs, MPI_BYTE, mine, cnt(me), MPI_BYTE, root, MPI_COMM_WORLD,
                      &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        expect_block(mine, root, me, (size_t)cnt(me), "Iscatterv");
        char name[64];
        snprintf(name, sizeof name, "Iscatterv root %d", root);
        report(name);
    }
    fill(mine, me, 0, (size_t)cnt(me));
    memset(all, 0, total);
    MPI_Iallgatherv(mine, cnt(me), MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int r = 0; r < np; r++)
        expect_block(all + displs[r], r, 0, (size_t)counts[r], "Iallgatherv");
    report("Iallgatherv");

    for (int s = 0; s < np; s++) {
        scounts[s] = cnt2(me, s);
        sdispls[s] = s * BIG;
        counts[s] = cnt2(s, me);
        displs[s] = s * BIG;
        fill(sb + (size_t)s * BIG, me, s, (size_t)scounts[s]);
    }
    memset(rb, 0, (size_t)np * BIG);
    MPI_Ialltoallv(sb, scounts, sdispls, MPI_BYTE, rb, counts, displs, MPI_BYTE, MPI_COMM_WORLD,
                   &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int r = 0; r < np; r++)
        expect_block(rb + (size_t)r * BIG, r, me, (size_t)counts[r], "Ialltoallv");
    report("Ialltoallv");

    unsigned char *bc = malloc(BCAST);
    if (me == 1)
        fill(bc, 1, 0, BCAST);
    else
        memset(bc, 0, BCAST);
    MPI_Ibcast(bc, BCAST, MPI_BYTE, 1, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    expect_block(bc, 1, 0, BCAST, "Ibcast");
    report("Ibcast of 3 MiB, root 1");
    for (int k = 0; k < LATE; k++) {
        if (me == 0)
            fill(bc, 0, k, BCAST);
        else
            memset(bc, 0, BCAST);
        struct timespec late = {0, LATE_NS};
        if (me != 0)
            nanosleep(&late, NULL); /* the root's pieces arrive before our RECVs */
        MPI_Ibcast(bc, BCAST, MPI_BYTE, 0, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        expect_block(bc, 0, k, BCAST, "late Ibcast");
    }
    report("8 Ibcasts of 3 MiB, root 0, the others late");
    free(bc);
    free(all);
    free(mine);
    free(sb);
    free(rb);
    free(counts);
    free(displs);
    free(scounts);
    free(sdispls);
    return finish("kacc_vbig");
}
