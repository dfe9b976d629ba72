/*
 * die.c: a rank that dies in the middle of a job (tests/mpi/linux.sh). Every rank takes
 * part in allreduces in a loop; after a few, rank argv[1] ends by a signal (argv[2]:
 * "kill") or MPI_Abort with code 9 ("abort"). The others must not hang: they see the
 * connection close, and the job ends with a clear error.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS_BEFORE 50
#define ABORT_CODE    9

int main(int argc, char **argv)
{
    int me, victim = argc > 1 ? atoi(argv[1]) : 1;
    const char *how = argc > 2 ? argv[2] : "kill";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int round = 0;; round++) {
        if (round == ROUNDS_BEFORE && me == victim) {
            if (strcmp(how, "abort") == 0)
                MPI_Abort(MPI_COMM_WORLD, ABORT_CODE);
            raise(SIGKILL);
        }
        int v = 1;
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
}
