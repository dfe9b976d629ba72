/*
 * persist.c: MPI conformance of the persistent sends added for issue 21: MPI_Bsend_init
 * (each MPI_Start a buffered send: it completes before the receiver receives, the send
 * buffer may then change) and MPI_Rsend_init (ready mode, the receive posted first),
 * started several times, with MPI_Startall. Only rank 0 prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define ROUNDS 5
#define N      16384 /* ints per message: 64 KiB, above the eager limit of a standard send */

static int right, left;

/* Each rank sends ROUNDS messages to its right neighbour through one persistent request,
 * all started and completed before the neighbour receives any. */
static void check_bsend_init(void)
{
    int size = ROUNDS * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD),
        *data = malloc(N * sizeof(int));
    char *buf = malloc(size);
    MPI_Buffer_attach(buf, size);
    MPI_Request r;
    MPI_Bsend_init(data, N, MPI_INT, right, 7, MPI_COMM_WORLD, &r);
    for (int k = 0; k < ROUNDS; k++) {
        for (int i = 0; i < N; i++)
            data[i] = me * 1000000 + k * 100000 + i;
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE); /* local: the data is in the attached buffer */
    }
    EXPECT(r != MPI_REQUEST_NULL, "the persistent request was freed by MPI_Wait");
    MPI_Request_free(&r);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone sent everything before anyone receives */
    int wrong = 0, *in = malloc(N * sizeof(int));
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Recv(in, N, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            wrong += in[i] != left * 1000000 + k * 100000 + i;
    }
    EXPECT(wrong == 0, "%d ints wrong", wrong);
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    EXPECT(b == buf && bs == size, "detach gave %p %d", b, bs);
    free(buf);
    free(data);
    free(in);
    report("Bsend_init: 5 starts complete locally, the messages arrive in order");
}

static void check_rsend_init(void)
{
    int out = -1, in[ROUNDS];
    MPI_Request s, rr[ROUNDS];
    MPI_Rsend_init(&out, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &s);
    for (int k = 0; k < ROUNDS; k++)
        MPI_Irecv(&in[k], 1, MPI_INT, left, 8, MPI_COMM_WORLD, &rr[k]);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: ready mode is legal */
    for (int k = 0; k < ROUNDS; k++) {
        out = me * 10 + k;
        MPI_Startall(1, &s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }
    MPI_Waitall(ROUNDS, rr, MPI_STATUSES_IGNORE);
    int wrong = 0;
    for (int k = 0; k < ROUNDS; k++)
        wrong += in[k] != left * 10 + k;
    EXPECT(wrong == 0, "%d values wrong (first %d)", wrong, in[0]);
    MPI_Request_free(&s);
    report("Rsend_init: 5 starts into pre-posted receives (Startall)");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "persist"))
        return 0;
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    check_bsend_init();
    check_rsend_init();
    return finish("persist");
}
