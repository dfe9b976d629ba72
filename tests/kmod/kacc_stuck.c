/*
 * kacc_stuck.c: the program of tests/kmod/kacc_mpi.sh's `stuck` case, where kacc refuses
 * every graph of node 1 (UKMPI_KACC_REFUSE=1:always). Node 1 waits STUCK_QUIET_MS after
 * MPI_Init, so that nothing more arrives for its network thread, which sleeps with no
 * timeout; then every rank starts an MPI_Igather to rank 0, in which node 1 only sends:
 * nothing arrives for node 1 after kacc refused its graph either. Only the library's own
 * wake-up of its network thread (mlx_kacc.c's off_issue) lets node 1 retry and, after
 * MLX_KACC_STUCK_NS, end the job saying why; without it node 1 spins in MPI_Wait and its
 * peers wait for it until mpirun's time limit. The gather completing is a failure too.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define STUCK_QUIET_MS 1000

int main(int argc, char **argv)
{
    int rank, size, mine, all[64];
    MPI_Request rq;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64) {
        fprintf(stderr, "kacc_stuck: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 1) {
        struct timespec quiet = {STUCK_QUIET_MS / 1000, (STUCK_QUIET_MS % 1000) * 1000000L};
        nanosleep(&quiet, NULL);
    }
    mine = rank;
    MPI_Igather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    printf("kacc_stuck: rank %d: the Igather completed, though node 1's graph never ran\n", rank);
    MPI_Finalize();
    return 0;
}
