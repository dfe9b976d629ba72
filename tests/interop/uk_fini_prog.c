/*
 * uk_fini_prog.c: the unikernel side of the late-packet test (impi_t_ukbad.sh,
 * uk_fini_late): every rank only starts and finalizes, so the IMPI peer's traffic after
 * our FINI reaches ranks that have all finished.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
