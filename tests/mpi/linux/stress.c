/*
 * stress.c: the Linux platform's wake-ups and network lock under load (tests/mpi/linux.sh):
 * every rank exchanges messages with every other at once (eager and rendezvous sizes,
 * both directions, any-source receives), then a barrier and an allreduce, ITERS times
 * (argv[1], default 200). Rank 0 prints "stress: ok" or the first mismatch; any failure
 * exits non-zero.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZES    4
#define MAX_LEN  (96 * 1024) /* above the engine's eager limit (32 KiB): rendezvous */
#define TAG_DATA 7

static const int sizes[SIZES] = {0, 8, 3000, MAX_LEN};

/* The byte i of the message from rank `src` in iteration `it`. */
static unsigned char pattern(int src, int it, int i)
{
    return (unsigned char)(src * 31 + it * 7 + i);
}

int main(int argc, char **argv)
{
    int me, np, iters = argc > 1 ? atoi(argv[1]) : 200;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    unsigned char *out = malloc(MAX_LEN), *in = malloc((size_t)np * MAX_LEN);
    MPI_Request *reqs = malloc(2 * (size_t)np * sizeof *reqs);
    if (!out || !in || !reqs)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int it = 0; it < iters; it++) {
        int len = sizes[it % SIZES], n = 0;
        for (int i = 0; i < len; i++)
            out[i] = pattern(me, it, i);
        for (int p = 0; p < np - 1; p++) /* any source: the sender is read from the data */
            MPI_Irecv(in + (size_t)p * MAX_LEN, MAX_LEN, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA,
                      MPI_COMM_WORLD, &reqs[n++]);
        for (int p = 0; p < np; p++)
            if (p != me)
                MPI_Isend(out, len, MPI_BYTE, p, TAG_DATA, MPI_COMM_WORLD, &reqs[n++]);
        MPI_Status st[2 * 64];
        MPI_Waitall(n, reqs, n <= 2 * 64 ? st : MPI_STATUSES_IGNORE);
        for (int p = 0; p < np - 1 && n <= 2 * 64; p++) {
            int got, src = st[p].MPI_SOURCE;
            MPI_Get_count(&st[p], MPI_BYTE, &got);
            for (int i = 0; i < got; i++)
                if (got != len || in[(size_t)p * MAX_LEN + i] != pattern(src, it, i)) {
                    printf("stress: rank %d, iteration %d: bad message from %d\n", me, it, src);
                    MPI_Abort(MPI_COMM_WORLD, 3);
                }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int sum = it + me, want = np * it + np * (np - 1) / 2;
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != want) {
            printf("stress: rank %d, iteration %d: allreduce %d, not %d\n", me, it, sum, want);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    }
    if (me == 0)
        printf("stress: ok, %d iterations on %d ranks\n", iters, np);
    free(out);
    free(in);
    free(reqs);
    MPI_Finalize();
    return 0;
}
