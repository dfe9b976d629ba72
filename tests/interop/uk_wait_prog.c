/*
 * uk_wait_prog.c: the unikernel side of the bad-input tests (impi_t_ukbad.sh): every rank
 * waits for a message from the last world rank (the misbehaving IMPI peer's proc), so the
 * job is inside MPI, as a real job would be, when the bad input arrives. It should never
 * return from the receive: the engine ends the job first, naming the peer and the reason.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int np;
    char buf[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Recv(buf, sizeof buf, MPI_BYTE, np - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("uk_wait_prog: received a message: the bad input went unnoticed\n");
    MPI_Finalize();
    return 1;
}
