/*
 * wmpi_p2p.c: WaitIO-MPI point-to-point. Each call maps straight onto waitio_isend /
 * waitio_irecv with count * type size bytes and the user's tag, so a request from
 * waitio_mpi_isend completes with waitio_wait as well as with waitio_mpi_waitall.
 *
 * Status of waitio_mpi_waitall (WAITIO_STATUS_SIZE = 4 ints per request):
 *   [0] source or destination group rank as posted,  [1] the user's tag,
 *   [2] 0, or waitio_wait's non-zero result,           [3] bytes posted (for a receive,
 *       the buffer's capacity: WaitIO's public API does not report the received length).
 * [0], [1] and [3] are -1 for a request not posted through this layer (or whose record was
 * evicted, see wmpi_note), [2] is always exact.
 */
#include <limits.h>
#include <stdint.h>

#include "wmpi_int.h"

enum { WMPI_ST_PEER, WMPI_ST_TAG, WMPI_ST_ERROR, WMPI_ST_BYTES };

/* What each posted request was, for waitall's statuses: a direct-mapped table keyed by the
 * request's address (requests are caller-owned, so the layer cannot store extra fields in
 * them). A collision evicts the older record; the status then says -1. */
#define WMPI_NOTES 1024
static struct wmpi_note {
    const waitio_req_t *req;
    int peer, tag, bytes;
} wmpi_notes[WMPI_NOTES];

/* Slot of a request address: requests are at least 8-byte aligned, so drop those bits. */
static struct wmpi_note *wmpi_note_slot(const waitio_req_t *req)
{
    return &wmpi_notes[((uintptr_t)req >> 3) % WMPI_NOTES];
}

/* Post paths of this file: remember what req was posted for. */
static void wmpi_note(const waitio_req_t *req, int peer, int tag, size_t bytes)
{
    struct wmpi_note *n = wmpi_note_slot(req);

    n->req = req;
    n->peer = peer;
    n->tag = tag;
    n->bytes = bytes > INT_MAX ? INT_MAX : (int)bytes;
}

/* Blocking calls: forget their on-stack request once it completed, so a later request
 * at the same address is not mistaken for it. */
static void wmpi_forget(const waitio_req_t *req)
{
    struct wmpi_note *n = wmpi_note_slot(req);

    if (n->req == req)
        n->req = NULL;
}

/* User tags are non-negative ints; they occupy the low bits of the 64-bit WaitIO tag, below
 * WMPI_COLL_TAG_BIT. */
static int wmpi_user_tag(const char *call, int tag, waitio_tag_t *wtag)
{
    if (tag < 0)
        return wmpi_err(call, "negative tag %d", tag);
    *wtag = (waitio_tag_t)tag;
    return 0;
}

/* Posts of this file: count elements of dt with the user's tag to or from peer; errors
 * name `call`, the public function the user called. */
static int wmpi_p2p_post(const char *call, int send, void *buf, int count, WAITIO_MPI_Datatype dt,
                         int peer, int tag, WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req)
{
    size_t bytes;
    waitio_tag_t wtag = 0;
    int rc;

    if (!req)
        return wmpi_err(call, "NULL request");
    if (wmpi_bytes(call, count, dt, &bytes) || wmpi_user_tag(call, tag, &wtag))
        return 1;
    wmpi_note(req, peer, tag, bytes);
    rc = send ? waitio_isend(comm, peer, buf, bytes, wtag, req)
              : waitio_irecv(comm, peer, buf, bytes, wtag, req);
    if (rc)
        return wmpi_err(call, "%s rank %d (%zu bytes, tag %d) failed",
                        send ? "waitio_isend to" : "waitio_irecv from", peer, bytes, tag);
    return 0;
}

/* waitio_mpi_isend: buf stays the caller's and must not change until the request
 * completes. */
int waitio_mpi_isend(const void *buf, int count, WAITIO_MPI_Datatype dt, int dest, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req)
{
    /* waitio_isend takes a char * but only reads a send buffer. */
    return wmpi_p2p_post("waitio_mpi_isend", 1, (void *)buf, count, dt, dest, tag, comm, req);
}
WMPI_ALIAS(WAITIO_MPI_Isend, waitio_mpi_isend);

/* waitio_mpi_irecv: buf is written until the request completes. */
int waitio_mpi_irecv(void *buf, int count, WAITIO_MPI_Datatype dt, int source, int tag,
                     WAITIO_MPI_Comm comm, WAITIO_MPI_Request *req)
{
    return wmpi_p2p_post("waitio_mpi_irecv", 0, buf, count, dt, source, tag, comm, req);
}
WMPI_ALIAS(WAITIO_MPI_Irecv, waitio_mpi_irecv);

/* waitio_mpi_send: blocking; returns once buf may be reused. */
int waitio_mpi_send(const void *buf, int count, WAITIO_MPI_Datatype dt, int dest, int tag,
                    WAITIO_MPI_Comm comm)
{
    waitio_req_t req;
    int rc;

    /* Only read, as in waitio_mpi_isend. */
    if (wmpi_p2p_post("waitio_mpi_send", 1, (void *)buf, count, dt, dest, tag, comm, &req))
        return 1;
    rc = waitio_wait(&req);
    wmpi_forget(&req);
    if (rc)
        return wmpi_err("waitio_mpi_send", "send to rank %d (tag %d) failed", dest, tag);
    return 0;
}
WMPI_ALIAS(WAITIO_MPI_Send, waitio_mpi_send);

/* waitio_mpi_recv: blocking; buf holds the message on success. */
int waitio_mpi_recv(void *buf, int count, WAITIO_MPI_Datatype dt, int source, int tag,
                    WAITIO_MPI_Comm comm)
{
    waitio_req_t req;
    int rc;

    if (wmpi_p2p_post("waitio_mpi_recv", 0, buf, count, dt, source, tag, comm, &req))
        return 1;
    rc = waitio_wait(&req);
    wmpi_forget(&req);
    if (rc)
        return wmpi_err("waitio_mpi_recv", "receive from rank %d (tag %d) failed", source, tag);
    return 0;
}
WMPI_ALIAS(WAITIO_MPI_Recv, waitio_mpi_recv);

/* waitio_mpi_waitall: waits for every request, even after one failed (so none is left
 * pending); statuses (may be NULL) get count x WAITIO_STATUS_SIZE ints, see the top of
 * this file. Non-zero if any request failed. */
int waitio_mpi_waitall(int count, WAITIO_MPI_Request *reqs, int *statuses)
{
    int failed = 0;

    if (count < 0 || (count > 0 && !reqs))
        return wmpi_err("waitio_mpi_waitall", "bad arguments (count %d, reqs %p)", count,
                        (void *)reqs);
    for (int i = 0; i < count; i++) {
        struct wmpi_note *n = wmpi_note_slot(&reqs[i]);
        int known = n->req == &reqs[i];
        int rc = waitio_wait(&reqs[i]);

        if (rc)
            failed++;
        if (statuses) {
            int *st = &statuses[i * WAITIO_STATUS_SIZE];

            st[WMPI_ST_PEER] = known ? n->peer : -1;
            st[WMPI_ST_TAG] = known ? n->tag : -1;
            st[WMPI_ST_ERROR] = rc;
            st[WMPI_ST_BYTES] = known ? n->bytes : -1;
        }
        if (known)
            n->req = NULL;
    }
    if (failed)
        return wmpi_err("waitio_mpi_waitall", "%d of %d requests failed", failed, count);
    return 0;
}
WMPI_ALIAS(WAITIO_MPI_Waitall, waitio_mpi_waitall);
