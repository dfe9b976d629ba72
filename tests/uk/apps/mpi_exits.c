/*
 * mpi_exits.c: MPI programs that end badly, for the job-ending tests. Every rank calls
 * MPI_Init; then argv[1] says what rank argv[2] does while the others go on to a barrier
 * and MPI_Finalize (where they would wait for it forever unless the job is ended):
 *   nofinalize R     rank R returns 0 from main without MPI_Finalize
 *   exit R N         rank R calls exit(N)
 *   abort R          rank R calls abort()
 *   silent R         rank R masks interrupts and halts its CPU: a node of one CPU stops
 *                    answering; the other ranks send to R (TCP then waits for an ACK that
 *                    never comes, and the engine's dead-peer timeout ends the job)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *m = argc > 1 ? argv[1] : "";
    int who = argc > 2 ? atoi(argv[2]) : 0;
    if (me == who) {
        printf("rank %d: %s\n", me, m);
        fflush(stdout);
        if (!strcmp(m, "nofinalize"))
            return 0;
        if (!strcmp(m, "exit"))
            exit(argc > 3 ? atoi(argv[3]) : 1);
        if (!strcmp(m, "abort"))
            abort();
        if (!strcmp(m, "silent"))
            for (;;)
                __asm__ volatile("cli; hlt"); /* ranks run in ring 0 */
        printf("BAD: unknown mode '%s'\n", m);
    }
    if (!strcmp(m, "silent")) {
        for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.5;)
            ; /* let rank `who` go silent first */
        int v = me;
        MPI_Send(&v, 1, MPI_INT, who, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("BAD: rank %d passed the barrier\n", me);
    MPI_Finalize();
    return 0;
}
