/*
 * topo_dims.c: MPI_Dims_create, the one process-topology function that needs no
 * communicator (pure arithmetic). The topologies themselves: topo*.c.
 */
#include "mpi_impl.h"

/* Task context. Fills the zero entries of dims so that the product is nnodes, as equal
 * as possible and in non-increasing order (MPI's rule). Greedy: the prime factors of
 * what is left, largest first, each to the currently smallest entry. */
int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    int prod = 1, nfree = 0;
    if (ndims < 0)
        return err_raise(NULL, MPI_ERR_DIMS, fn);
    if (nnodes < 1 || (ndims > 0 && !dims))
        return err_raise(NULL, MPI_ERR_ARG, fn);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return err_raise(NULL, MPI_ERR_DIMS, fn);
        if (dims[i] > 0)
            prod *= dims[i];
        else
            nfree++;
        if (prod > nnodes)
            return err_raise(NULL, MPI_ERR_DIMS, fn);
    }
    if (nnodes % prod || (nfree == 0 && prod != nnodes))
        return err_raise(NULL, MPI_ERR_DIMS, fn);
    if (nfree == 0)
        return MPI_SUCCESS;

    int primes[32], np = 0, left = nnodes / prod; /* an int has at most 31 prime factors */
    for (int p = 2; (long long)p * p <= left; p++)
        while (left % p == 0) {
            primes[np++] = p;
            left /= p;
        }
    if (left > 1)
        primes[np++] = left;

    int val[64], nv = nfree < 64 ? nfree : 64; /* more than 31 free entries stay 1 anyway */
    for (int i = 0; i < nv; i++)
        val[i] = 1;
    for (int k = np - 1; k >= 0; k--) { /* found in increasing order: largest first */
        int m = 0;
        for (int i = 1; i < nv; i++)
            if (val[i] < val[m])
                m = i;
        val[m] *= primes[k];
    }
    for (int i = 1; i < nv; i++) /* non-increasing: insertion sort, nv is small */
        for (int j = i; j > 0 && val[j] > val[j - 1]; j--) {
            int t = val[j];
            val[j] = val[j - 1];
            val[j - 1] = t;
        }
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0) {
            dims[i] = k < nv ? val[k] : 1;
            k++;
        }
    return MPI_SUCCESS;
}
