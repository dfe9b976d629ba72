/* allreduce.c: sums, a MAXLOC and a non-blocking reduction (compile check only). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum;
    double local, global;
    struct {
        double value;
        int rank;
    } in, out;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    local = 1.0 / (rank + 1);
    MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    in.value = local;
    in.rank = rank;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sum %d (want %d), max %g, min %g at %d\n", sum, size * (size - 1) / 2, global,
               out.value, out.rank);
    MPI_Finalize();
    return 0;
}
