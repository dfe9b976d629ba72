/*
 * mpe.h: the MPI point-to-point engine of one node (ARCHITECTURE.md decisions 7, 8, 10,
 * section 4). Freestanding C; the platform it runs on supplies mpe_plat.h.
 *
 * One engine per node serves every rank of the job that runs there. Each local rank has a
 * matching engine (match_rank.h). Messages between two ranks of the node go by address
 * (PVAS: the whole job shares one address space): the sender's descriptor is matched
 * against the receiver's posted queue under the receiver's lock and whoever finds the
 * match does the one memcpy. Messages to other nodes go over one TCP connection per node
 * pair (mpe_net.c), whose receive callback parses the native header (mpe_wire.h) and
 * matches inside the NIC interrupt.
 *
 * The MPI library (mpi/lib, in the application's partition) calls the mpe_* functions
 * below through the kernel's ABI table: a plain call, in the calling rank's task context.
 * Requests live in the application's memory; the engine writes their completion, from any
 * context, and wakes the owning task.
 */
#ifndef MPI_MPE_H
#define MPI_MPE_H
#include "match.h"
#include <stddef.h>
#include <stdint.h>

#define MPE_ANY_SOURCE MATCH_ANY_SOURCE
#define MPE_ANY_TAG    MATCH_ANY_TAG

/* Errors stored in mpe_req.err and returned by mpe_* (negative). */
#define MPE_OK        0
#define MPE_ETRUNCATE 1 /* the message was longer than the receive buffer */
#define MPE_ERANK     2 /* destination rank not in the job */
#define MPE_ENOMEM    3
#define MPE_EPEER     4 /* the connection to the peer's node failed */
#define MPE_EINVAL    5

/* mpe_isend flags. */
#define MPE_SYNC 1 /* synchronous (MPI_Ssend): complete only once matched */

enum mpe_kind { MPE_REQ_SEND = 1, MPE_REQ_RECV = 2 };

struct mpe_msg;

/*
 * A request. The caller (the MPI library) owns the memory; the engine owns the fields from
 * mpe_isend/mpe_irecv until `done` reads 1, after which it never touches the request
 * again. `done` is written last, with release order.
 */
struct mpe_req {
    struct match_entry m; /* a posted receive's key and queue links */
    volatile uint32_t done;
    uint8_t kind;
    uint8_t flags;
    uint8_t cancelled;
    int32_t err; /* MPE_OK or MPE_E* */
    void *buf;
    size_t len;           /* send: bytes; receive: capacity */
    size_t count;         /* receive: bytes stored */
    int32_t src, tag;     /* receive: the matched message's source and tag */
    void *owner;          /* the task to wake on completion */
    struct mpe_msg *msg;  /* send: its descriptor while queued */
    uint64_t sent;        /* net send: bytes handed to TCP */
    struct mpe_req *next; /* net send: the connection's queues */
    uint32_t handle;      /* net: rendezvous handle */
    int32_t dst_world;    /* send: destination */
    int32_t src_world;    /* send: the sender */
};

/* Probe result. */
struct mpe_status {
    int32_t src, tag;
    size_t len;
};

/*
 * The engine's entry points as the ABI table exports them (uk/abi.h: abi->mpi). All are
 * task context of the calling rank. Keys: `ctx` is the communicator's context id, `src`
 * and `tag` are communicator-relative (ranks in the communicator), `dst_world` is the
 * destination's rank in MPI_COMM_WORLD.
 */
struct mpe_ops {
    uint32_t size; /* sizeof(struct mpe_ops) */
    /* Ready to communicate: 0, or -MPE_EPEER if a node of the job cannot be reached. */
    int (*init)(void);
    int (*isend)(struct mpe_req *r, const void *buf, size_t len, int dst_world, uint32_t ctx,
                 int src, int tag, int flags);
    int (*irecv)(struct mpe_req *r, void *buf, size_t len, uint32_t ctx, int src, int tag);
    /* 1 and *st filled if a message matching (ctx, src, tag) has arrived, else 0. */
    int (*iprobe)(uint32_t ctx, int src, int tag, struct mpe_status *st);
    /* Cancel a posted receive: 1 if it was cancelled (it completes with cancelled=1). */
    int (*cancel)(struct mpe_req *r);
    /* Sleep until something completes or arrives for this rank (or at once if that
     * already happened since the last call). Callers re-check their condition. */
    void (*block)(void);
    /* Statistics: counters named for `make bench` and tests (see mpe_stats). */
    void (*stats)(uint64_t out[8]);
};

/* The engine's table (mpe_node.c), exported to applications through the ABI. */
extern const struct mpe_ops mpe_ops;

#endif
