/*
 * waitio_king.c: King collectives (each PB's own MPI inside, WaitIO between the Kings
 * only) against the flat version of the same operation on the same universe (the root
 * talks to every other process over WaitIO). Run by tests/bench/waitio_king.sh as 2-4 PBs;
 * universe rank 0 prints one line per (operation, size):
 *   bench: waitio_king <op> <bytes> king_us=<t> flat_us=<t> flat/king=<ratio>
 * It reaches the flat versions through the layer's internal header (wmpi_int.h).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wmpi_int.h"

#define REPS_SMALL 200
#define REPS_LARGE 20
#define LARGE      (64 * 1024)

enum bench_op { OP_BCAST, OP_ALLREDUCE, OP_GATHER, OP_BARRIER, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"bcast", "allreduce", "gather", "barrier"};

static struct wmpi_comm *c;
static WAITIO_MPI_Comm comm;

/* One operation of bytes (doubles for allreduce), King (waitio_mpi_*) or flat. */
static int run_once(enum bench_op op, int king, double *a, double *b, size_t bytes)
{
    int n = (int)(bytes / sizeof(double));

    switch (op) {
    case OP_BCAST:
        return king ? waitio_mpi_bcast(a, (int)bytes, WAITIO_MPI_CHAR, 0, comm)
                    : wmpi_flat_bcast("bench", c, a, bytes, 0, wmpi_next_tag(c));
    case OP_ALLREDUCE:
        if (king)
            return waitio_mpi_allreduce(a, b, n, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, comm);
        return wmpi_flat_reduce("bench", c, a, b, n, WAITIO_MPI_DOUBLE, WAITIO_MPI_SUM, 0,
                                wmpi_next_tag(c)) ||
               wmpi_flat_bcast("bench", c, b, bytes, 0, wmpi_next_tag(c));
    case OP_GATHER:
        return king ? waitio_mpi_gather(a, b, (int)bytes, WAITIO_MPI_CHAR, 0, comm)
                    : wmpi_flat_gatherv("bench", c, a, (int)bytes, b, 1, NULL, NULL, 0,
                                        wmpi_next_tag(c));
    case OP_BARRIER:
    case OP_COUNT:
        break;
    }
    return king ? waitio_mpi_barrier(comm) : wmpi_flat_barrier("bench", c, wmpi_next_tag(c));
}

/* Microseconds per operation, as seen by universe rank 0 (a King barrier first). */
static double timed(enum bench_op op, int king, double *a, double *b, size_t bytes, int reps)
{
    double t0;

    run_once(op, king, a, b, bytes); /* warm-up: connections open on first use */
    waitio_mpi_barrier(comm);
    t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++)
        if (run_once(op, king, a, b, bytes))
            MPI_Abort(MPI_COMM_WORLD, 1);
    waitio_mpi_barrier(comm);
    return (MPI_Wtime() - t0) * 1e6 / reps;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {8, LARGE, 1024 * 1024};
    int rank, size, npb = 0;
    double *a, *b;

    MPI_Init(&argc, &argv);
    if (waitio_create_universe(&comm) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    c = wmpi_comm_get("bench", comm);
    waitio_group_rank(comm, &rank);
    waitio_group_size(comm, &size);
    waitio_pb_size(&npb);
    a = calloc(1, sizes[2]);
    b = calloc((size_t)size, sizes[2]); /* gather receives size x bytes */
    for (int op = 0; op < OP_COUNT; op++)
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            size_t bytes = op == OP_BARRIER ? 0 : sizes[k];
            int reps = bytes >= LARGE ? REPS_LARGE : REPS_SMALL;
            double tk = timed(op, 1, a, b, bytes, reps);
            double tf = timed(op, 0, a, b, bytes, reps);

            if (rank == 0)
                printf("bench: waitio_king npb=%d procs=%d %-9s %8zu B  king_us=%10.1f  "
                       "flat_us=%10.1f  flat/king=%.2f\n",
                       npb, size, op_names[op], bytes, tk, tf, tk > 0 ? tf / tk : 0.0);
            if (op == OP_BARRIER)
                break;
        }
    free(a);
    free(b);
    waitio_finalize();
    MPI_Finalize();
    return 0;
}
