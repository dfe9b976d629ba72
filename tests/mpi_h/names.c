/*
 * names.c: uses a wide sample of mpi.h's names, to check that the header is strict C99
 * (built with -std=c99 -pedantic -Wall -Wextra -Werror by mpi/mpi.mk; never run).
 */
#include <mpi.h>
#include <stdio.h>

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

int main(int argc, char **argv)
{
    int provided, rank, size, flag, len, count, *tag_ub, dims[2] = {0, 0};
    char name[MPI_MAX_PROCESSOR_NAME], err[MPI_MAX_ERROR_STRING], obj[MPI_MAX_OBJECT_NAME];
    double t0;
    MPI_Status st, sts[2];
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Comm dup = MPI_COMM_NULL, split;
    MPI_Group world, sub = MPI_GROUP_NULL;
    MPI_Datatype types[] = {MPI_CHAR,
                            MPI_SIGNED_CHAR,
                            MPI_UNSIGNED_CHAR,
                            MPI_BYTE,
                            MPI_SHORT,
                            MPI_UNSIGNED_SHORT,
                            MPI_INT,
                            MPI_UNSIGNED,
                            MPI_LONG,
                            MPI_UNSIGNED_LONG,
                            MPI_LONG_LONG_INT,
                            MPI_LONG_LONG,
                            MPI_UNSIGNED_LONG_LONG,
                            MPI_FLOAT,
                            MPI_DOUBLE,
                            MPI_LONG_DOUBLE,
                            MPI_WCHAR,
                            MPI_C_BOOL,
                            MPI_INT8_T,
                            MPI_INT16_T,
                            MPI_INT32_T,
                            MPI_INT64_T,
                            MPI_UINT8_T,
                            MPI_UINT16_T,
                            MPI_UINT32_T,
                            MPI_UINT64_T,
                            MPI_AINT,
                            MPI_COUNT,
                            MPI_OFFSET,
                            MPI_C_COMPLEX,
                            MPI_C_FLOAT_COMPLEX,
                            MPI_C_DOUBLE_COMPLEX,
                            MPI_PACKED,
                            MPI_FLOAT_INT,
                            MPI_DOUBLE_INT,
                            MPI_LONG_INT,
                            MPI_2INT,
                            MPI_SHORT_INT,
                            MPI_LONG_DOUBLE_INT,
                            MPI_DATATYPE_NULL};
    MPI_Op ops[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD,  MPI_LAND,
                    MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR,  MPI_BXOR,
                    MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL};
    int classes[] = {
        MPI_SUCCESS,     MPI_ERR_BUFFER, MPI_ERR_COUNT,     MPI_ERR_TYPE,
        MPI_ERR_TAG,     MPI_ERR_COMM,   MPI_ERR_RANK,      MPI_ERR_REQUEST,
        MPI_ERR_ROOT,    MPI_ERR_GROUP,  MPI_ERR_OP,        MPI_ERR_TOPOLOGY,
        MPI_ERR_DIMS,    MPI_ERR_ARG,    MPI_ERR_UNKNOWN,   MPI_ERR_TRUNCATE,
        MPI_ERR_OTHER,   MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
        MPI_ERR_NO_MEM,  MPI_ERR_KEYVAL, MPI_ERR_WIN,       MPI_ERR_UNSUPPORTED_OPERATION,
        MPI_ERR_LASTCODE};
    MPI_Op mine;
    MPI_Errhandler eh;
    MPI_Aint lb, extent, addr;
    MPI_Count big;
    MPI_Offset off = 0;
    MPI_Fint fint = 0;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Message msg = MPI_MESSAGE_NULL;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_SINGLE || provided > MPI_THREAD_MULTIPLE)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Initialized(&flag);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Errhandler_free(&eh);
    MPI_Error_string(MPI_ERR_TRUNCATE, err, &len);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    t0 = MPI_Wtime() + MPI_Wtick();
    MPI_Isend(&rank, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&count, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, sts);
    MPI_Get_count(&sts[1], MPI_INT, &count);
    MPI_Sendrecv(MPI_BOTTOM, 0, MPI_INT, MPI_PROC_NULL, 0, NULL, 0, MPI_INT, MPI_PROC_NULL, 0,
                 MPI_COMM_WORLD, &st);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Op_create(my_sum, 1, &mine);
    MPI_Reduce(&rank, &count, 1, MPI_INT, mine, 0, MPI_COMM_WORLD);
    MPI_Op_free(&mine);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(dup, rank % 2, rank, &split);
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &flag);
    if (flag != MPI_CONGRUENT && flag != MPI_IDENT && flag != MPI_SIMILAR && flag != MPI_UNEQUAL)
        return 1;
    MPI_Comm_set_name(split, "split");
    MPI_Comm_get_name(split, obj, &len);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &sub);
    if (sub == MPI_GROUP_EMPTY)
        return 1;
    MPI_Group_free(&sub);
    MPI_Group_free(&world);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent);
    MPI_Type_size_x(MPI_LONG_DOUBLE_INT, &big);
    MPI_Get_address(&t0, &addr);
    MPI_Dims_create(size, 2, dims);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("%d %d %d %d %ld %lld %lld %d %d %p %d %d %d\n", rank, classes[0], *tag_ub,
           types[0] != MPI_DATATYPE_NULL, (long)addr, big, off, fint, info == MPI_INFO_NULL,
           (void *)msg, ops[0] != MPI_OP_NULL, MPI_KEYVAL_INVALID, MPI_UNDEFINED + MPI_ROOT);
    MPI_Finalize();
    return 0;
}
