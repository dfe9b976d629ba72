/*
 * status.c: reading and setting what a status says about the data: counts of elements
 * (from status->mpi_count_, the bytes received, which point-to-point fills in) and the
 * cancelled flag.
 */
#include "dtype_impl.h"
#include <limits.h>

static int check(const MPI_Status *status, MPI_Datatype dt, const void *out)
{
    if (!status || !out)
        return MPI_ERR_ARG;
    return dt_check(dt);
}

/* Task context. MPI_UNDEFINED when the bytes are not a whole number of elements. */
int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    int rc = check(status, datatype, count);
    if (rc)
        return err_raise(NULL, rc, "MPI_Get_count");
    size_t bytes = status->mpi_count_, size = dt_size(datatype);
    if (size == 0)
        *count = 0; /* MPI: a type of size 0 always counts 0 */
    else if (bytes % size || bytes / size > INT_MAX)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(bytes / size);
    return MPI_SUCCESS;
}

static int elements(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count,
                    const char *fn)
{
    int rc = check(status, datatype, count);
    if (rc)
        return err_raise(NULL, rc, fn);
    size_t n;
    *count = dt_count_elements(datatype, status->mpi_count_, &n) ? (MPI_Count)n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Task context. Basic elements received: a partial last element of datatype counts the
 * basic elements it holds. */
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n = 0;
    int rc = elements(status, datatype, count ? &n : NULL, "MPI_Get_elements");
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}

/* Task context. */
int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements(status, datatype, count, "MPI_Get_elements_x");
}

static int set_elements(MPI_Status *status, MPI_Datatype datatype, MPI_Count count, const char *fn)
{
    int rc = check(status, datatype, status);
    if (!rc && count < 0)
        rc = MPI_ERR_COUNT;
    if (rc)
        return err_raise(NULL, rc, fn);
    status->mpi_count_ = dt_elements_bytes(datatype, (size_t)count);
    return MPI_SUCCESS;
}

/* Task context. Afterwards MPI_Get_elements(status, datatype) says count. */
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements(status, datatype, count, "MPI_Status_set_elements");
}

/* Task context. */
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements(status, datatype, count, "MPI_Status_set_elements_x");
}

/* Task context. */
int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled");
    status->mpi_cancelled_ = flag != 0;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || !flag)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Test_cancelled");
    *flag = status->mpi_cancelled_;
    return MPI_SUCCESS;
}
