/*
 * mpi_test_util.h: what the MPI library's unit tests (mpi_*_test.c) share: the globals the
 * communicator and init modules would provide (mpi_test_util.c), and a way to watch a
 * fatal error end the "job" without ending the test runner.
 */
#ifndef MPI_TEST_UTIL_H
#define MPI_TEST_UTIL_H
#include "mpi_impl.h"
#include <stddef.h>

/* Sets MPI_COMM_WORLD's handler to MPI_ERRORS_RETURN (and its rank to world_rank), so that
 * errors come back as return codes. Every MPI test calls it first. */
void mpi_t_setup(int world_rank);

/* Runs fn() with MPI_ERRORS_ARE_FATAL on MPI_COMM_WORLD, catching the abort: returns the
 * code mpi_abort_hook got, or -1 if fn returned. What fn printed to stderr lands in
 * msg (at most n bytes, NUL-terminated). */
int mpi_t_fatal(void (*fn)(void), char *msg, size_t n);

/* Datatype helpers; each fails the calling test on an unexpected error code. */
/* Extent and true extent of t are as given. */
void mpi_t_extent_is(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text);
/* MPI_Type_size, MPI_Type_commit (returning the type), MPI_Type_free (which must clear
 * the handle). */
int mpi_t_size(MPI_Datatype t);
MPI_Datatype mpi_t_commit(MPI_Datatype t);
void mpi_t_free(MPI_Datatype t);

/* The ints 0..63: mpi_t_seq[i] == i. */
extern const int mpi_t_seq[64];
/* Packs count elements of t from mpi_t_seq and expects the n ints `want`; unpacking them
 * into a zeroed array must put each back where it came from and touch nothing else. */
void mpi_t_ints_are(MPI_Datatype t, int count, const int *want, int n);

#endif
