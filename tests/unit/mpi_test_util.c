/*
 * mpi_test_util.c: stand-ins for what other modules of the MPI library provide, so that
 * the datatype, reduction, group and error files can be tested alone: the predefined
 * communicators (weak: the communicator module's own definitions win if it is ever linked
 * here), the engine pointer (never used: nothing here reaches the engine) and
 * mpi_abort_hook, which here jumps back into mpi_t_fatal; and the datatype
 * checks the datatype and reduction tests share.
 */
#include "ut.h"
#include "mpi_test_util.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((weak)) struct mpi_comm_s mpi_comm_world_ = {
    .rank = 0, .size = 1, .refs = 1, .predefined = 1, .name = "MPI_COMM_WORLD"};
__attribute__((weak)) struct mpi_comm_s mpi_comm_self_ = {
    .rank = 0, .size = 1, .refs = 1, .predefined = 1, .name = "MPI_COMM_SELF"};
/* world.c's world_init asks the engine; tests call world_set instead. */
__attribute__((weak)) const struct mpe_ops *mpi_engine;

static jmp_buf *abort_env;
static int abort_code;

/* Task context (test stub). */
void mpi_abort_hook(int code)
{
    abort_code = code;
    if (abort_env)
        longjmp(*abort_env, 1);
    fprintf(stderr, "mpi_abort_hook(%d) outside mpi_t_fatal\n", code);
    abort();
}

void mpi_t_setup(int world_rank)
{
    mpi_comm_world_.errh = MPI_ERRORS_RETURN;
    mpi_comm_world_.rank = world_rank;
    mpi_comm_self_.errh = MPI_ERRORS_RETURN;
}

int mpi_t_fatal(void (*fn)(void), char *msg, size_t n)
{
    jmp_buf env;
    volatile int code = -1;
    FILE *tmp = tmpfile();
    int saved = dup(2);

    fflush(stderr);
    dup2(fileno(tmp), 2);
    mpi_comm_world_.errh = MPI_ERRORS_ARE_FATAL;
    abort_env = &env;
    if (setjmp(env) == 0)
        fn();
    else
        code = abort_code;
    abort_env = NULL;
    mpi_comm_world_.errh = MPI_ERRORS_RETURN;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t got = fread(msg, 1, n - 1, tmp);
    msg[got] = 0;
    fclose(tmp);
    return code;
}

/* --- datatype helpers ------------------------------------------------------------------- */

#define OK(x) UT_EQ((x), MPI_SUCCESS)

void mpi_t_extent_is(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text)
{
    MPI_Aint a, b;
    OK(MPI_Type_get_extent(t, &a, &b));
    UT_EQ(a, lb);
    UT_EQ(b, ext);
    OK(MPI_Type_get_true_extent(t, &a, &b));
    UT_EQ(a, tlb);
    UT_EQ(b, text);
}

int mpi_t_size(MPI_Datatype t)
{
    int s = -1;
    OK(MPI_Type_size(t, &s));
    return s;
}

MPI_Datatype mpi_t_commit(MPI_Datatype t)
{
    OK(MPI_Type_commit(&t));
    return t;
}

void mpi_t_free(MPI_Datatype t)
{
    OK(MPI_Type_free(&t));
    UT_ASSERT(t == MPI_DATATYPE_NULL);
}

const int mpi_t_seq[64] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                           16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
                           32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
                           48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

void mpi_t_ints_are(MPI_Datatype t, int count, const int *want, int n)
{
    int out[64], back[64] = {0};
    UT_EQ(dt_size(t) * (size_t)count, n * sizeof(int));
    dt_pack(mpi_t_seq, count, t, out);
    for (int i = 0; i < n; i++)
        UT_EQ(out[i], want[i]);
    dt_unpack(out, (size_t)n * sizeof(int), back, count, t);
    for (int i = 0, k; i < 64; i++) {
        for (k = 0; k < n && want[k] != i; k++)
            ;
        UT_EQ(back[i], k < n ? i : 0);
    }
}
