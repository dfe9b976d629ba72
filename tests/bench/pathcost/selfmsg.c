/*
 * selfmsg.c: the message path without the network, for tests/bench/pathcost.bench.sh:
 * N times MPI_Irecv from itself, MPI_Send to itself, MPI_Wait, 8 bytes, MPI_COMM_WORLD
 * (the receive is posted when the message comes), or with `unexp` MPI_Send, then MPI_Recv
 * (the message waits for its receive: the buffered-eager case).
 * Run under callgrind with two values of N, the difference divided by the difference of N
 * is what one message costs in instructions, without start-up and shut-down. Plain MPI: it
 * builds with ukmpicc --linux (our library and engine) and with Debian's mpicc.
 *
 *   selfmsg [N [unexp]]     (default 1000, posted)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, me;
    int unexp = argc > 2 && !strcmp(argv[2], "unexp");
    char out[8] = "message", in[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < n && unexp; i++) {
        MPI_Send(out, sizeof out, MPI_BYTE, me, 1, MPI_COMM_WORLD);
        MPI_Recv(in, sizeof in, MPI_BYTE, me, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < n && !unexp; i++) {
        MPI_Request r;
        MPI_Irecv(in, sizeof in, MPI_BYTE, me, 1, MPI_COMM_WORLD, &r);
        MPI_Send(out, sizeof out, MPI_BYTE, me, 1, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
