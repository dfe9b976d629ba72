/*
 * mpi_errh_test.c: error classes and handlers (mpi/lib/errh.c): a distinct string for
 * every class, the engine's errors as classes, MPI_ERRORS_ARE_FATAL's message and abort, user
 * handlers, and the unimplemented stubs; and the small functions of misc.c and topo_dims.c.
 */
#include "ut.h"
#include "mpi_test_util.h"
#include <string.h>

#define OK(x) UT_EQ((x), MPI_SUCCESS)

UT_TEST(mpi_errh_strings)
{
    static char s[MPI_ERR_LASTCODE + 1][MPI_MAX_ERROR_STRING];
    int len, cls;
    mpi_t_setup(0);
    for (int c = 0; c <= MPI_ERR_LASTCODE; c++) {
        OK(MPI_Error_string(c, s[c], &len));
        UT_ASSERT(len > 0 && len < MPI_MAX_ERROR_STRING);
        UT_EQ(len, strlen(s[c]));
        for (int d = 0; d < c; d++)
            UT_ASSERT(strcmp(s[c], s[d]) != 0);
        OK(MPI_Error_class(c, &cls));
        UT_EQ(cls, c);
    }
    UT_ASSERT(!strncmp(s[MPI_ERR_TRUNCATE], "MPI_ERR_TRUNCATE", 16));
    UT_EQ(MPI_Error_string(MPI_ERR_LASTCODE + 1, s[0], &len), MPI_ERR_ARG);
    UT_EQ(MPI_Error_string(-1, s[0], &len), MPI_ERR_ARG);
    UT_EQ(MPI_Error_class(12345, &cls), MPI_ERR_ARG);
    /* the classes are distinct, and the wildcards distinct negatives */
    UT_ASSERT(MPI_ERR_TYPE != MPI_ERR_OP && MPI_ERR_IO < MPI_ERR_LASTCODE);
    UT_ASSERT(MPI_ANY_SOURCE < 0 && MPI_ANY_TAG < 0 && MPI_PROC_NULL < 0 && MPI_ROOT < 0 &&
              MPI_UNDEFINED < 0);
    UT_ASSERT(MPI_ANY_SOURCE != MPI_ANY_TAG && MPI_ANY_SOURCE != MPI_PROC_NULL &&
              MPI_ANY_SOURCE != MPI_ROOT && MPI_ANY_SOURCE != MPI_UNDEFINED &&
              MPI_ANY_TAG != MPI_PROC_NULL && MPI_ANY_TAG != MPI_ROOT &&
              MPI_ANY_TAG != MPI_UNDEFINED && MPI_PROC_NULL != MPI_ROOT &&
              MPI_PROC_NULL != MPI_UNDEFINED && MPI_ROOT != MPI_UNDEFINED);
}

/* The engine's errors (mpe.h) as MPI error classes: each the class a program can act on,
 * never a blanket MPI_ERR_OTHER for what has a class of its own. */
UT_TEST(mpi_errh_engine_class)
{
    UT_EQ(err_engine_class(MPE_OK), MPI_SUCCESS);
    UT_EQ(err_engine_class(MPE_ETRUNCATE), MPI_ERR_TRUNCATE);
    UT_EQ(err_engine_class(MPE_ERANK), MPI_ERR_RANK);
    UT_EQ(err_engine_class(MPE_ENOMEM), MPI_ERR_NO_MEM);
    UT_EQ(err_engine_class(MPE_EINVAL), MPI_ERR_ARG);
    UT_EQ(err_engine_class(MPE_EPEER), MPIX_ERR_PROC_FAILED); /* says why, not "other" */
    /* a code the engine does not define is the library's own inconsistency */
    UT_EQ(err_engine_class(MPE_EINVAL + 1), MPI_ERR_INTERN);
    UT_EQ(err_engine_class(-MPE_ERANK), MPI_ERR_INTERN); /* not negated: a caller's bug */
}

static void bad_count(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(-1, MPI_INT, &t);
}

static void unimplemented(void)
{
    MPI_Win_fence(0, MPI_WIN_NULL); /* one-sided stays unimplemented longest */
}

static void fine(void)
{
    int n;
    MPI_Type_size(MPI_INT, &n);
}

UT_TEST(mpi_errh_fatal)
{
    char msg[512], want[512], s[MPI_MAX_ERROR_STRING];
    int len;
    mpi_t_setup(0);
    UT_EQ(mpi_t_fatal(bad_count, msg, sizeof msg), MPI_ERR_COUNT);
    OK(MPI_Error_string(MPI_ERR_COUNT, s, &len));
    snprintf(want, sizeof want, "MPI error in MPI_Type_contiguous: %s\n", s);
    UT_ASSERT(!strcmp(msg, want));
    UT_EQ(mpi_t_fatal(unimplemented, msg, sizeof msg), MPI_ERR_UNSUPPORTED_OPERATION);
    UT_ASSERT(!strcmp(msg, "MPI_Win_fence is not implemented\n"));
    UT_EQ(mpi_t_fatal(fine, msg, sizeof msg), -1);
    UT_EQ(msg[0], 0);
    /* a NULL errh (a communicator not set up yet) is fatal too */
    mpi_comm_world_.errh = MPI_ERRHANDLER_NULL;
    UT_EQ(err_raise(MPI_COMM_SELF, MPI_SUCCESS, "MPI_X"), MPI_SUCCESS);
    mpi_t_setup(0);
}

static int seen_code, seen_calls;
static MPI_Comm seen_comm;

static void record(MPI_Comm *comm, int *code, ...)
{
    seen_comm = *comm;
    seen_code = *code;
    seen_calls++;
}

UT_TEST(mpi_errh_user_handlers)
{
    MPI_Errhandler eh, got;
    int n = 0, pos = -1; /* pos < 0: MPI_Pack fails with MPI_ERR_ARG */
    mpi_t_setup(0);
    OK(MPI_Comm_create_errhandler(record, &eh));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    OK(MPI_Errhandler_free(&eh)); /* the communicator still holds it */
    UT_ASSERT(eh == MPI_ERRHANDLER_NULL);
    seen_calls = 0;
    UT_EQ(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP); /* raised on the world */
    UT_ASSERT(seen_calls == 1 && seen_code == MPI_ERR_GROUP && seen_comm == MPI_COMM_WORLD);
    UT_EQ(MPI_Pack(&n, 1, MPI_INT, &n, 0, &pos, MPI_COMM_SELF), MPI_ERR_ARG); /* self: RETURN */
    UT_EQ(seen_calls, 1);
    OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    UT_ASSERT(seen_calls == 2 && seen_code == MPI_ERR_OTHER);
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    UT_EQ(MPI_Pack(&n, 1, MPI_INT, &n, 0, &pos, MPI_COMM_SELF), MPI_ERR_ARG);
    UT_ASSERT(seen_calls == 3 && seen_comm == MPI_COMM_SELF);
    OK(MPI_Errhandler_free(&got));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); /* last reference: freed */
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
    UT_ASSERT(got == MPI_ERRORS_RETURN);
    OK(MPI_Errhandler_free(&got)); /* a predefined handler's handle may be freed */
    UT_ASSERT(got == MPI_ERRHANDLER_NULL);
    UT_EQ(MPI_Errhandler_free(&got), MPI_ERR_ARG);
    UT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    UT_EQ(MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM);
    UT_EQ(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG);
    OK(MPI_Errhandler_create(record, &eh));
    OK(MPI_Errhandler_free(&eh));
    mpi_comm_world_.errh = MPI_ERRHANDLER_NULL; /* counts as fatal */
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    UT_ASSERT(got == MPI_ERRORS_ARE_FATAL);
    mpi_t_setup(0);
}

UT_TEST(mpi_misc_dims_create)
{
    int d3[3] = {0, 0, 0}, d2[2] = {0, 0}, dx[3] = {0, 3, 0}, dp[2] = {0, 0};
    mpi_t_setup(0);
    OK(MPI_Dims_create(16, 3, d3)); /* Open MPI: 4 2 2 */
    UT_ASSERT(d3[0] == 4 && d3[1] == 2 && d3[2] == 2);
    OK(MPI_Dims_create(12, 2, d2));
    UT_ASSERT(d2[0] == 4 && d2[1] == 3);
    OK(MPI_Dims_create(24, 3, dx));
    UT_ASSERT(dx[0] == 4 && dx[1] == 3 && dx[2] == 2);
    OK(MPI_Dims_create(7, 2, dp));
    UT_ASSERT(dp[0] == 7 && dp[1] == 1);
    int big[2] = {0, 0};
    OK(MPI_Dims_create(2 * 1000003, 2, big)); /* a large prime factor */
    UT_ASSERT(big[0] == 1000003 && big[1] == 2);
    int one[1] = {0};
    OK(MPI_Dims_create(36, 1, one));
    UT_EQ(one[0], 36);
    int sq[2] = {0, 0};
    OK(MPI_Dims_create(36, 2, sq));
    UT_ASSERT(sq[0] == 6 && sq[1] == 6);
    UT_EQ(MPI_Dims_create(10, 2, (int[]){3, 0}), MPI_ERR_DIMS);
    UT_EQ(MPI_Dims_create(10, 2, (int[]){5, 3}), MPI_ERR_DIMS);
    UT_EQ(MPI_Dims_create(10, 1, (int[]){-1}), MPI_ERR_DIMS);
    UT_EQ(MPI_Dims_create(10, -1, NULL), MPI_ERR_DIMS);
    OK(MPI_Dims_create(10, 2, (int[]){5, 2}));
}

UT_TEST(mpi_misc_memory_and_callbacks)
{
    double *p = NULL;
    int flag = -1;
    void *out = NULL;
    mpi_t_setup(0);
    OK(MPI_Alloc_mem(10 * sizeof(double), MPI_INFO_NULL, &p));
    UT_ASSERT(p);
    p[9] = 1;
    OK(MPI_Free_mem(p));
    UT_EQ(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_ARG);
    OK(MPI_Pcontrol(1));
    OK(MPI_COMM_DUP_FN(MPI_COMM_WORLD, 1, NULL, &flag, &out, &flag));
    UT_ASSERT(flag == 1 && out == (void *)&flag);
    OK(MPI_COMM_NULL_COPY_FN(MPI_COMM_WORLD, 1, NULL, &flag, &out, &flag));
    UT_EQ(flag, 0);
    OK(MPI_COMM_NULL_DELETE_FN(MPI_COMM_WORLD, 1, NULL, NULL));
}
