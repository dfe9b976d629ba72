/*
 * oneway.c: a stream in one direction through a same-host pair's shared-memory ring
 * (tests/mpi/linux_faults.sh, window.*). Each round, rank 0 starts a rendezvous message of
 * BIG bytes to rank 1 (MPI_Isend: the network thread pumps its data into the ring), then
 * sends SMALL eager messages of EAGER bytes with MPI_Send, then MPI_Wait. An eager send
 * that finds the connection's queue empty copies into the ring from the rank's own
 * thread, and meets the ring full when the receiver lags. Nothing comes back until the
 * end, so only the receiver's doorbell ("room again") resumes a send that met the full
 * ring. Rank 1 checks the first, middle and last word of every big message and the first
 * of every eager one. Rank 0 prints "oneway: ok, N MiB" or the first mismatch; exit 1 on
 * a mismatch. Two ranks; others only join the final allreduce.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG       (4 << 20)  /* bytes: four rings' worth (mlx_ring.h), rendezvous */
#define SMALL     64         /* eager sends per round, behind the big one */
#define EAGER     (32 << 10) /* bytes of each: the largest eager (mpi/core/mpe_internal.h) */
#define ROUNDS    8
#define TAG_BIG   3
#define TAG_SMALL 4

/* The word number i of round r's big message, or (i = BIG + k) its k-th small one. */
static unsigned word(int r, size_t i)
{
    return (unsigned)(r * 2654435761u + i);
}

/* Rank 1: 1 (and says so) if v is not word(r, i). */
static int wrong(unsigned v, int r, size_t i, const char *what)
{
    if (v == word(r, i))
        return 0;
    printf("oneway: round %d, %s %zu is %u, expected %u\n", r, what, i, v, word(r, i));
    return 1;
}

int main(int argc, char **argv)
{
    int me, bad = 0;
    const size_t words = BIG / sizeof(unsigned), at[3] = {0, words / 2, words - 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    unsigned *b = malloc(BIG), *e = calloc(1, EAGER);
    if (!b || !e)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int r = 0; r < ROUNDS && me < 2 && !bad; r++) {
        MPI_Request rq;
        if (me == 0) {
            for (int k = 0; k < 3; k++)
                b[at[k]] = word(r, at[k]);
            MPI_Isend(b, BIG, MPI_BYTE, 1, TAG_BIG, MPI_COMM_WORLD, &rq);
            for (int k = 0; k < SMALL; k++) {
                e[0] = word(r, BIG + (size_t)k);
                MPI_Send(e, EAGER, MPI_BYTE, 1, TAG_SMALL, MPI_COMM_WORLD);
            }
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(b, BIG, MPI_BYTE, 0, TAG_BIG, MPI_COMM_WORLD, &rq);
            for (int k = 0; k < SMALL; k++) {
                MPI_Recv(e, EAGER, MPI_BYTE, 0, TAG_SMALL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad |= wrong(e[0], r, BIG + (size_t)k, "eager message");
            }
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            for (int k = 0; k < 3; k++)
                bad |= wrong(b[at[k]], r, at[k], "big message's word");
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0 && !bad)
        printf("oneway: ok, %d MiB\n", ROUNDS * (BIG >> 20));
    free(b);
    free(e);
    MPI_Finalize();
    return bad;
}
