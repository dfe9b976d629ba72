/*
 * bibw.c: an OSU-style bidirectional bandwidth run (osu_bibw) that checks every byte. Two
 * ranks each post a window of WINDOW receives from the other, send a window of WINDOW
 * messages to it, and wait for all of them, for sizes 1 B .. MAX_LEN doubling, `iters`
 * times per size (argv[1], default DEFAULT_ITERS). On one node most sends arrive before
 * their receive is posted, so the engine buffers them in the kernel heap (up to 16 KiB,
 * mpi/core/mpe_node.c) and frees them when they match: windows of large buffers make
 * newlib's malloc grow and trim the kernel heap over and over, from both CPUs (issue 12).
 *
 * Like osu_bibw, every send of a window comes from one buffer; each receive has its own
 * slot, packed at `len` apart, and each is checked. The application's own footprint stays
 * small, as in osu_bibw: a run that sweeps megabytes of its own buffers per window evicts
 * the CPUs' TLB entries for the heap, and then hid the stale-translation bug of issue 12.
 *
 * Each rank prints "bibw: rank R: N messages, N bytes checked ok" or "bibw: BAD ..."
 * lines; rank 0 then prints "bibw: 2 of 2 ranks ok" (the line the cases look for) and
 * the bandwidth per size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW        64
#define MAX_LEN       (16 << 10) /* the engine's largest buffered same-node message */
#define DEFAULT_ITERS 20
#define TAG           7
#define MAX_BAD_LINES 10 /* BAD lines printed per rank; the count goes on */

/* The byte at offset i of the messages of iteration `it` of size `len` from `from` (every
 * message of a window comes from the same send buffer, as in osu_bibw). Never 0, and it
 * changes with every iteration, so a receive slot still holding the previous iteration's
 * message is caught without clearing the slots in between. */
static unsigned char pat(int from, size_t len, int it, size_t i)
{
    return (unsigned char)(1 + (from * 151 + len * 7 + (size_t)it * 29 + i * 3) % 255);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int iters = argc > 1 ? atoi(argv[1]) : DEFAULT_ITERS;
    if (n != 2 || iters < 1) {
        if (me == 0)
            printf("bibw: BAD usage: 2 ranks, argument: iterations per size (>= 1)\n");
        MPI_Finalize();
        return 1;
    }
    int peer = 1 - me;
    unsigned char *sb = malloc(MAX_LEN), *rb = malloc((size_t)WINDOW * MAX_LEN);
    MPI_Request req[2 * WINDOW];
    long bad = 0, msgs = 0, bytes = 0;
    if (!sb || !rb) {
        printf("bibw: BAD rank %d: out of memory\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (size_t len = 1; len <= MAX_LEN; len *= 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; it++) {
            for (size_t i = 0; i < len; i++)
                sb[i] = pat(me, len, it, i);
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rb + (size_t)w * len, (int)len, MPI_BYTE, peer, TAG, MPI_COMM_WORLD,
                          &req[w]);
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sb, (int)len, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &req[WINDOW + w]);
            MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
            for (int w = 0; w < WINDOW; w++) {
                const unsigned char *r = rb + (size_t)w * len;
                size_t i = 0;
                while (i < len && r[i] == pat(peer, len, it, i))
                    i++;
                msgs++;
                bytes += (long)len;
                if (i < len && bad++ < MAX_BAD_LINES)
                    printf("bibw: BAD rank %d: %zu B, iteration %d, message %d: byte %zu is "
                           "0x%02x, expected 0x%02x\n",
                           me, len, it, w, i, r[i], pat(peer, len, it, i));
            }
        }
        double t = MPI_Wtime() - t0;
        if (me == 0)
            printf("bibw: %6zu B  %9.2f MB/s\n", len, 2.0 * WINDOW * iters * len / t / 1e6);
    }

    if (bad)
        printf("bibw: BAD rank %d: %ld of %ld messages corrupted\n", me, bad, msgs);
    else
        printf("bibw: rank %d: %ld messages, %ld bytes checked ok\n", me, msgs, bytes);
    int ok = bad == 0, good = 0;
    MPI_Reduce(&ok, &good, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("bibw: %d of %d ranks ok\n", good, n);
    free(sb);
    free(rb);
    MPI_Finalize();
    return bad ? 1 : 0;
}
