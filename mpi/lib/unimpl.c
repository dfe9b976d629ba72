/*
 * unimpl.c: every function mpi.h declares that no module implements yet. Each aborts the
 * job with "MPI_X is not implemented": programs that use them still compile and link, and
 * a run that reaches one stops loudly instead of going on with a wrong answer.
 *
 * Implementing one of these means deleting it here and from the README's "Not
 * implemented" list (tests/docs/unimpl.sh checks that both name the same functions).
 */
#include "mpi_impl.h"

/* Task context. */
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    return err_unimplemented("MPI_Win_create");
}

/* Task context. */
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    return err_unimplemented("MPI_Win_allocate");
}

/* Task context. */
int MPI_Win_free(MPI_Win *win)
{
    return err_unimplemented("MPI_Win_free");
}

/* Task context. */
int MPI_Win_fence(int assert, MPI_Win win)
{
    return err_unimplemented("MPI_Win_fence");
}

/* Task context. */
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    return err_unimplemented("MPI_Win_lock");
}

/* Task context. */
int MPI_Win_unlock(int rank, MPI_Win win)
{
    return err_unimplemented("MPI_Win_unlock");
}

/* Task context. */
int MPI_Win_lock_all(int assert, MPI_Win win)
{
    return err_unimplemented("MPI_Win_lock_all");
}

/* Task context. */
int MPI_Win_unlock_all(MPI_Win win)
{
    return err_unimplemented("MPI_Win_unlock_all");
}

/* Task context. */
int MPI_Win_flush(int rank, MPI_Win win)
{
    return err_unimplemented("MPI_Win_flush");
}

/* Task context. */
int MPI_Win_flush_all(MPI_Win win)
{
    return err_unimplemented("MPI_Win_flush_all");
}

/* Task context. */
int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win)
{
    return err_unimplemented("MPI_Put");
}

/* Task context. */
int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return err_unimplemented("MPI_Get");
}

/* Task context. */
int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return err_unimplemented("MPI_Accumulate");
}

/* Task context. */
int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return err_unimplemented("MPI_Get_accumulate");
}

/* Task context. */
int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return err_unimplemented("MPI_Fetch_and_op");
}

/* Task context. */
int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    return err_unimplemented("MPI_Compare_and_swap");
}
