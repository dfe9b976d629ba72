/*
 * waitio.h: the public WaitIO API (../shared/specs/waitio-api.md, sections 2, 3 and 13).
 *
 * API-compatible with WaitIO, not wire-compatible: a program written for WaitIO compiles
 * and runs unchanged against this header and our libwaitio, but cannot talk to a process
 * linked with the site's libwaitio. Our wire protocol is mpi/waitio/PROTOCOL.md.
 *
 * Every name, type and signature below is exactly the published one. ABI facts callers
 * depend on: waitio_tag_t is 64 bits, waitio_group_t is a pointer to an incomplete struct,
 * and waitio_req_t is 88 bytes with pointer alignment, allocated (uninitialised) by the
 * caller and reused after waitio_wait returns.
 *
 * No socket or epoll header comes through here: the same header serves the unikernel,
 * whose newlib has neither.
 */
#ifndef WAITIO_H
#define WAITIO_H

/* test.c calls fprintf and exit after including only <mpi.h> and "waitio.h" (spec 3.4). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned long waitio_tag_t;

/* A filter: called with (PB id, MPI rank within that PB); 1 selects the process. */
typedef int (*waitio_filter_func_t)(int, int);

typedef struct PBGroup *waitio_group_t;

/* Caller-owned request, opaque to callers. Only its size (88) and alignment are public;
 * the library keeps its own state inside (mpi/waitio/wio_req.h lays it out). */
typedef struct PBreqQue {
    void *wio_opaque_link[2];
    unsigned char wio_opaque_body[64];
    unsigned int wio_opaque_magic;
    unsigned int wio_opaque_pad;
} waitio_req_t;

/* Fortran sizes, in 4-byte INTEGERs. */
#define WAITIO_REQUEST_SIZE 22
#define WAITIO_STATUS_SIZE  4

/* Start-up: collective over every process of every PB, after MPI_Init. Waits up to
 * `timeout` seconds for every PB; 0 on success. */
int waitio_init(int timeout);
int waitio_finalize(void);

/* Returns the number of PBs and sets ary[i] to the process count of PB i. */
int waitio_get_nprocs(int ary[]);
int waitio_pb_size(int *npb);
int waitio_pb_rank(int *pbid);

/* Groups: collective; NULL on failure. Ranks are PB blocks in order[] order. */
waitio_group_t waitio_create_group(int gid, waitio_filter_func_t func[], int order[]);
waitio_group_t waitio_create_group_wranks(int gid, int *rankap[], int order[]);
int waitio_group_rank(waitio_group_t group, int *rank);
int waitio_group_size(waitio_group_t group, int *size);

/* Point-to-point by group rank, len in bytes, exact tag (no wildcards), FIFO matching. */
int waitio_isend(waitio_group_t group, int dst, char *buf, size_t len, waitio_tag_t tag,
                 waitio_req_t *req);
int waitio_irecv(waitio_group_t group, int src, char *buf, size_t len, waitio_tag_t tag,
                 waitio_req_t *req);
/* Progress happens here. 0 when the request completed, non-zero on error. */
int waitio_wait(waitio_req_t *req);

/* The filter that selects every process. The library's definition is weak, so a program
 * that defines its own truef (as the published test.c does) still links. */
int truef(int pbid, int n);

#ifdef __cplusplus
}
#endif

#endif /* WAITIO_H */
