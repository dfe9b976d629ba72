/*
 * misc.c: small MPI functions that belong to no module: MPI_Pcontrol, the memory
 * allocation calls, and the predefined attribute copy/delete callbacks of mpi.h
 * (MPI_COMM_NULL_COPY_FN, MPI_TYPE_DUP_FN, ...), which attr.c calls like any.
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* Task context. Profiling control: there is no profiling layer, nothing to do. */
int MPI_Pcontrol(const int level, ...)
{
    return MPI_SUCCESS;
}

/* Task context. Memory needs nothing special here: the rank's own malloc. */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    if (size < 0 || !baseptr)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Alloc_mem");
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return err_raise(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}

/* Task context. The attribute is not copied to the new communicator. */
int mpi_comm_null_copy_fn_(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                           void *attribute_val_out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

/* Task context. The new communicator gets the same attribute value. */
int mpi_comm_dup_fn_(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Task context. */
int mpi_comm_null_delete_fn_(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    return MPI_SUCCESS;
}

/* Task context. The datatype versions of the three above. */
int mpi_type_null_copy_fn_(MPI_Datatype oldtype, int keyval, void *extra_state,
                           void *attribute_val_in, void *attribute_val_out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

/* Task context. */
int mpi_type_dup_fn_(MPI_Datatype oldtype, int keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Task context. */
int mpi_type_null_delete_fn_(MPI_Datatype type, int keyval, void *attribute_val, void *extra_state)
{
    return MPI_SUCCESS;
}
