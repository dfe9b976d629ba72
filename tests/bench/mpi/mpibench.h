/*
 * mpibench.h: what the parts of the MPI benchmark program share. mpibench.c holds main,
 * the options and the point-to-point modes (pingpong, waitcpu); nbc.c the non-blocking
 * collective modes (overlap, bcasttime, cadlat); is.c the integer sort (is). Both parts are plain MPI + libc, built
 * together by ukmpicc for our unikernel and by Debian's mpicc for Open MPI.
 */
#ifndef MPIBENCH_H
#define MPIBENCH_H
#include <mpi.h>

/* our extensions, where this MPI is ours (they define UKMPI_MPIX) */
#if !defined(MPIBENCH_NO_MPIX) && defined(__has_include)
#if __has_include(<mpix.h>)
#include <mpix.h>
#endif
#endif

#define MAXMSG   (1 << 20) /* the largest message of every mode; buf's size */
#define TAG_PP   1
#define TAG_WC   2
#define TAG_RES  3
#define TAG_TREE 4

extern int rank, nranks; /* in MPI_COMM_WORLD */
extern char *buf;        /* MAXMSG bytes */

/* Median of v[0..n) (n > 0); sorts v. */
double median(double *v, int n);

/* Collective over MPI_COMM_WORLD: rank `from`'s v[0..n) is copied to rank 0's. */
void to_rank0(double *v, int n, int from);

/* nbc.c's and cadlat.c's modes; collective over MPI_COMM_WORLD, rank 0 prints. */
void nbc_header(void);
void bench_overlap(int reps);
void bench_bcasttime(int reps);
void bench_cadlat(int reps);

/* limits.c's mode; collective over MPI_COMM_WORLD, rank 0 prints. */
void bench_limits(int iters, int a, int b);

/* nbc.c's helpers, also cadlat.c's. */
#define WARM 2 /* unmeasured repetitions before each measurement */
void pattern_set(int n);
int pattern_bad(int n, int me);
int errors_sum(int e);
/* is.c's mode: returns 0, or mpibench's exit code when the sort is wrong (every rank). */
int bench_is(int nkeys, int iters);

#ifndef MPIBENCH_NO_IBCAST
void mm_init(void);
double ibcast_overlap(int n, int d, MPI_Comm comm, long *mults);
#endif

#endif
