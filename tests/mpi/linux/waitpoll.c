/*
 * waitpoll.c: how much CPU a wait burns (tests/mpi/linux_faults.sh, wait.*). Rank 1 sleeps
 * DELAY_MS, then sends rank 0 an empty message; rank 0 measures its process's CPU time
 * around the MPI_Recv that waits for it and prints "waitpoll: cpu_us=N wall_us=M". A wait
 * that polls for its window first (a rank alone on its CPU: mpi/linux/mlx_abi.c, 10 ms)
 * spends about that window's CPU; one that sleeps at once spends a small fraction of it.
 * Two ranks; others only join the final barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define DELAY_MS  200
#define US_PER_S  1000000L
#define NS_PER_US 1000L

/* Any thread: the clock c in us. */
static long now_us(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * US_PER_S + t.tv_nsec / NS_PER_US;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        usleep(DELAY_MS * 1000);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
        long cpu = now_us(CLOCK_PROCESS_CPUTIME_ID), wall = now_us(CLOCK_MONOTONIC);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        cpu = now_us(CLOCK_PROCESS_CPUTIME_ID) - cpu;
        wall = now_us(CLOCK_MONOTONIC) - wall;
        printf("waitpoll: cpu_us=%ld wall_us=%ld\n", cpu, wall);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
