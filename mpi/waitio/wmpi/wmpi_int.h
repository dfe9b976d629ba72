/*
 * wmpi_int.h: internals of the WaitIO-MPI layer (libwaitio_mpi). The layer uses only the
 * public base API (waitio.h) and standard MPI calls of the PB's own MPI, so the same files
 * build on Linux (Open MPI's mpicc) and in the unikernel (our MPI).
 *
 * Files: wmpi_types.c (datatypes, ops, byte counts, errors), wmpi_p2p.c (point-to-point,
 * waitall), wmpi_comm.c (communicator table, universe constructors, tags, WaitIO
 * transfers), wmpi_king.c (King collectives on a universe), wmpi_flat.c (collectives over
 * WaitIO only, for every other group), wmpi_coll.c (the public collective entry points).
 */
#ifndef WMPI_INT_H
#define WMPI_INT_H

#include <mpi.h>
#include <stdint.h>

#include "waitio_mpi.h"
#include "wmpi_alias.h"

/* Collective traffic carries this bit in its 64-bit WaitIO tag, plus a per-communicator
 * sequence number below it. User tags are non-negative ints and map onto the low 31 bits,
 * so collective messages can never match a user's point-to-point receive. */
#define WMPI_COLL_TAG_BIT  (1UL << 63)
#define WMPI_COLL_SEQ_MASK (WMPI_COLL_TAG_BIT - 1)

/* waitio_create_universe's own waitio_init, when the program did not call it: seconds to
 * wait for every PB (the published callers use 10 and 1000). */
#define WMPI_INIT_TIMEOUT_S 100

enum wmpi_kind {
    WMPI_FLAT,     /* any group: collectives over WaitIO only */
    WMPI_UNIVERSE, /* every process of every PB in PB order: King collectives */
};

/* One communicator the layer has seen; owned by the table in wmpi_comm.c, never freed
 * (WaitIO has no call that destroys a group). */
struct wmpi_comm {
    waitio_group_t group;
    enum wmpi_kind kind;
    int rank, size;
    uint64_t seq; /* collectives started on it; equal on every member */
    /* Universe only. */
    int npb, pbid;
    int *king;      /* npb + 1 entries: universe rank of PB i's rank 0; king[npb] = size */
    MPI_Comm local; /* a dup of this PB's MPI_COMM_WORLD, so user MPI traffic never meets ours */
    int lrank, lsize;
};

/* --- wmpi_types.c ------------------------------------------------------------------ */
/* Prints "call: message" as one line on stderr; returns 1 (the layer's error value). */
int wmpi_err(const char *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Element size of dt, or an error naming call when dt is not a published datatype. */
int wmpi_type_bytes(const char *call, WAITIO_MPI_Datatype dt, size_t *size);
/* count * size of dt in bytes; errors on a negative count, unknown dt or overflow. */
int wmpi_bytes(const char *call, int count, WAITIO_MPI_Datatype dt, size_t *bytes);
/* The same, also requiring the result to fit an int (local MPI counts are ints). */
int wmpi_int_bytes(const char *call, int count, WAITIO_MPI_Datatype dt, int *bytes);
/* Checks that (dt, op) is a supported reduction; gives the local MPI's equivalents. */
int wmpi_op_check(const char *call, WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, MPI_Datatype *mdt,
                  MPI_Op *mop);
/* acc[i] = op(acc[i], in[i]) for count elements of dt; (dt, op) already checked. */
void wmpi_op_apply(WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, void *acc, const void *in,
                   size_t count);

/* --- wmpi_comm.c ------------------------------------------------------------------- */
/* The layer's record of group (creating a flat one on first use), or NULL after an error
 * naming call (NULL group, or this process is not a member). */
struct wmpi_comm *wmpi_comm_get(const char *call, waitio_group_t group);
/* The WaitIO tag of the next collective phase on c; every member must call it equally. */
waitio_tag_t wmpi_next_tag(struct wmpi_comm *c);
/* The PB holding universe rank r of c. */
int wmpi_pb_of(const struct wmpi_comm *c, int r);
/* Blocking WaitIO transfers (post, then wait); buffers stay the caller's. */
int wmpi_wsend(const char *call, waitio_group_t g, int dst, const void *buf, size_t len,
               waitio_tag_t tag);
int wmpi_wrecv(const char *call, waitio_group_t g, int src, void *buf, size_t len,
               waitio_tag_t tag);
/* Posts one non-blocking WaitIO send (send != 0) or receive into req. */
int wmpi_post(const char *call, int send, waitio_group_t g, int peer, void *buf, size_t len,
              waitio_tag_t tag, waitio_req_t *req);
/* Waits for every one of n posted requests, even after a failure; 0 if all succeeded. */
int wmpi_wait_each(const char *call, waitio_req_t *reqs, int n);
/* Checks an MPI return code of the local MPI. */
int wmpi_mpi_ok(const char *call, const char *what, int rc);

/* --- collectives: byte-level building blocks ------------------------------------------
 * Per-rank byte counts are ints (they travel through the local MPI), displacements and
 * totals size_t. Count and displacement arrays are read at the root only. uniform != 0
 * (the same on every member) means every rank has the caller's own count (gather,
 * scatter) and the counts array may be NULL; a NULL displacement array means packed in
 * rank order. */
int wmpi_flat_bcast(const char *call, struct wmpi_comm *c, void *buf, size_t bytes, int root,
                    waitio_tag_t tag);
int wmpi_flat_reduce(const char *call, struct wmpi_comm *c, const void *sbuf, void *rbuf, int count,
                     WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, int root, waitio_tag_t tag);
int wmpi_flat_gatherv(const char *call, struct wmpi_comm *c, const void *sbuf, int sbytes,
                      void *rbuf, int uniform, const int *rbytes, const size_t *rdispl, int root,
                      waitio_tag_t tag);
int wmpi_flat_scatterv(const char *call, struct wmpi_comm *c, const void *sbuf, int uniform,
                       const int *sbytes, const size_t *sdispl, void *rbuf, int rbytes, int root,
                       waitio_tag_t tag);
int wmpi_flat_barrier(const char *call, struct wmpi_comm *c, waitio_tag_t tag);

int wmpi_king_bcast(const char *call, struct wmpi_comm *c, void *buf, size_t bytes, int root,
                    waitio_tag_t tag);
int wmpi_king_reduce(const char *call, struct wmpi_comm *c, const void *sbuf, void *rbuf, int count,
                     WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, int root, waitio_tag_t tag);
int wmpi_king_gatherv(const char *call, struct wmpi_comm *c, const void *sbuf, int sbytes,
                      void *rbuf, int uniform, const int *rbytes, const size_t *rdispl, int root,
                      waitio_tag_t tag);
int wmpi_king_scatterv(const char *call, struct wmpi_comm *c, const void *sbuf, int uniform,
                       const int *sbytes, const size_t *sdispl, void *rbuf, int rbytes, int root,
                       waitio_tag_t tag);
int wmpi_king_barrier(const char *call, struct wmpi_comm *c, waitio_tag_t tag);

#endif /* WMPI_INT_H */
