/* numa_heap.c: a rank that fills a heap of HEAP_MIB MiB, so the kernel's end-of-job report
 * (job: rank R memory: ...) has pages to place (tests/knl/run.sh numa_*). Each rank checks
 * its own pattern; rank 0 prints the sum of all ranks' checks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_MIB 4

int main(int argc, char **argv)
{
    int rank, bad = 0, allbad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = (size_t)HEAP_MIB << 20;
    unsigned char *p = malloc(n);
    if (!p) {
        printf("numa_heap: rank %d: malloc(%zu) failed\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + (size_t)rank);
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)(i * 7 + (size_t)rank);
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("numa_heap: %d MiB per rank written and read back, %d bytes wrong\n", HEAP_MIB,
               allbad);
    free(p);
    MPI_Finalize();
    return allbad != 0;
}
