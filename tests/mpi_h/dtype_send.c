/* dtype_send.c: a matrix column and an array of structs sent with derived datatypes
 * (compile check only). */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

struct particle {
    double x[3];
    int id;
    char kind;
};

int main(int argc, char **argv)
{
    int rank, size, n;
    double m[4][4];
    struct particle p[8];
    MPI_Datatype column, ptype, tmp;
    int blens[3] = {3, 1, 1};
    MPI_Aint disps[3] = {offsetof(struct particle, x), offsetof(struct particle, id),
                         offsetof(struct particle, kind)};
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    MPI_Type_create_struct(3, blens, disps, types, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(struct particle), &ptype);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&ptype);
    if (rank == 0 && size > 1) {
        MPI_Send(&m[0][1], 1, column, 1, 7, MPI_COMM_WORLD);
        MPI_Send(p, 8, ptype, 1, 8, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&m[0][2], 1, column, 0, 7, MPI_COMM_WORLD, &st);
        MPI_Recv(p, 8, ptype, 0, 8, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, ptype, &n);
        printf("%d particles\n", n);
    }
    MPI_Type_free(&column);
    MPI_Type_free(&ptype);
    MPI_Finalize();
    return 0;
}
