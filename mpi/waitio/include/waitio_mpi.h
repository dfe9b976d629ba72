/*
 * waitio_mpi.h: the WaitIO-MPI conversion layer (spec section 7), MPI-like calls over
 * WaitIO groups. Communicators and requests are the base layer's types, so a request from
 * waitio_mpi_isend completes with waitio_wait, and the constants keep their published
 * values. Every waitio_mpi_xxx also exists as the weak upper-case alias WAITIO_MPI_Xxx.
 *
 * Collectives on a universe follow the "King" model (spec section 9): each PB's own MPI
 * inside the PB, WaitIO only between the Kings (rank 0 of each PB).
 */
#ifndef WAITIO_MPI_H
#define WAITIO_MPI_H

#include "waitio.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef waitio_group_t WAITIO_MPI_Comm;
typedef waitio_req_t WAITIO_MPI_Request;
typedef int WAITIO_MPI_Datatype;
typedef int WAITIO_MPI_Op;

/* Every datatype and op value has this bit set (spec 7.4). */
#define WAITIO_MPI_DEFTAG 0x80000

#define WAITIO_MPI_INT              (WAITIO_MPI_DEFTAG + 1)
#define WAITIO_MPI_INTEGER          WAITIO_MPI_INT
#define WAITIO_MPI_LONG             (WAITIO_MPI_DEFTAG + 2)
#define WAITIO_MPI_CHAR             (WAITIO_MPI_DEFTAG + 3)
#define WAITIO_MPI_FLOAT            (WAITIO_MPI_DEFTAG + 4)
#define WAITIO_MPI_DOUBLE           (WAITIO_MPI_DEFTAG + 5)
#define WAITIO_MPI_DOUBLE_PRECISION WAITIO_MPI_DOUBLE

#define WAITIO_MPI_SUM (WAITIO_MPI_DEFTAG + 1)
#define WAITIO_MPI_MAX (WAITIO_MPI_DEFTAG + 2)
#define WAITIO_MPI_MIN (WAITIO_MPI_DEFTAG + 3)

/* All processes of all PBs, ranks in PB order; initialises WaitIO if waitio_init was not
 * called. */
int waitio_create_universe(WAITIO_MPI_Comm *commp);
/* Rank 0 of each PB; group rank == PB id. */
int waitio_create_universe_pbhead(WAITIO_MPI_Comm *commp);

int waitio_mpi_isend(const void *buf, int count, WAITIO_MPI_Datatype dt, int dest, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req);
int waitio_mpi_irecv(void *buf, int count, WAITIO_MPI_Datatype dt, int source, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req);
int waitio_mpi_send(const void *buf, int count, WAITIO_MPI_Datatype dt, int dest, int tag,
                    WAITIO_MPI_Comm comm);
int waitio_mpi_recv(void *buf, int count, WAITIO_MPI_Datatype dt, int source, int tag,
                    WAITIO_MPI_Comm comm);
/* statuses: count x WAITIO_STATUS_SIZE ints, or NULL. */
int waitio_mpi_waitall(int count, WAITIO_MPI_Request *reqs, int *statuses);
int waitio_mpi_bcast(void *buf, int count, WAITIO_MPI_Datatype dt, int root, WAITIO_MPI_Comm comm);
int waitio_mpi_reduce(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                      WAITIO_MPI_Op op, int root, WAITIO_MPI_Comm comm);
int waitio_mpi_allreduce(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                         WAITIO_MPI_Op op, WAITIO_MPI_Comm comm);
int waitio_mpi_gather(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt, int root,
                      WAITIO_MPI_Comm comm);
int waitio_mpi_allgather(const void *sbuf, void *rbuf, int count, WAITIO_MPI_Datatype dt,
                         WAITIO_MPI_Comm comm);
int waitio_mpi_scatter(void *sbuf, int scount, WAITIO_MPI_Datatype stype, void *rbuf, int rcount,
                       WAITIO_MPI_Datatype rtype, int root, WAITIO_MPI_Comm comm);
int waitio_mpi_scatterv(const void *sbuf, const int *scounts, const int *displs,
                        WAITIO_MPI_Datatype stype, void *rbuf, int rcount,
                        WAITIO_MPI_Datatype rtype, int root, WAITIO_MPI_Comm comm);
int waitio_mpi_gatherv(const void *sbuf, int scount, WAITIO_MPI_Datatype stype, void *rbuf,
                       const int *rcounts, const int *displs, WAITIO_MPI_Datatype rtype, int root,
                       WAITIO_MPI_Comm comm);
int waitio_mpi_barrier(WAITIO_MPI_Comm comm);
int waitio_mpi_type_size(WAITIO_MPI_Datatype dt, int *size);

#ifdef __cplusplus
}
#endif

#endif /* WAITIO_MPI_H */
