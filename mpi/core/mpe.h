/*
 * mpe.h: the MPI point-to-point engine of one node (docs/architecture.md §3.7, §3.8,
 * §3.10, §4). Freestanding C; the platform it runs on supplies mpe_plat.h.
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
    uint8_t remote; /* receive: also posted to the transport's matcher (mpe_rmatch) */
    int32_t err;    /* MPE_OK or MPE_E* */
    void *buf;
    size_t len;             /* send: bytes; receive: capacity */
    size_t count;           /* receive: bytes stored */
    int32_t src, tag;       /* receive: the matched message's source and tag */
    struct mpe_rank *owner; /* the rank to wake on completion (mpe_wake) */
    struct mpe_msg *msg;    /* send: its descriptor while queued */
    uint64_t sent;          /* net send: bytes handed to TCP */
    struct mpe_req *next;   /* net send: the connection's queues */
    uint32_t handle;        /* net: rendezvous handle */
    int32_t dst_world;      /* send: destination; IMPI long receive: the receiver */
    int32_t src_world;      /* send: the sender; IMPI long receive: the sender */
    uint64_t peer_handle;   /* IMPI long send: the receiver's drqid from its SYNCACK */
    struct mpe_cad *cad;    /* a CAD node's operation: completion goes to the graph */
    uint32_t cad_node;      /* ... as this node */
};

/* How a graph progresses (mpe_cad.policy); mpix.h's UKMPI_CAD_PROGRESS explains each. */
enum mpe_cad_policy { MPE_CAD_AUTO = 0, MPE_CAD_IPI, MPE_CAD_LOCAL, MPE_CAD_POLL };

/* Per-rank message counters (ops->stats), for `make bench` and tests. */
enum {
    MPE_ST_LOCAL_SENDS, /* intra-node sends */
    MPE_ST_BUFFERED,    /* ... of which buffered (eager, no receive posted yet) */
    MPE_ST_NET_SENDS,   /* inter-node sends */
    MPE_ST_RENDEZVOUS,  /* ... of which went RTS/CTS/DATA */
    MPE_ST_DIRECT,      /* arrivals matched at once (match_rank.direct) */
    MPE_ST_DEFERRED,    /* ... and through the inbox (match_rank.deferred) */
    MPE_ST_DESCS,       /* intra-node descriptors this rank allocated */
    MPE_ST_COUNT = 8
};

/* Per-rank CAD counters (cad_stats), the same indices as mpix.h's MPIX_CAD_*. */
enum {
    MPE_CS_ISSUED,
    MPE_CS_NODES,
    MPE_CS_LOCAL,
    MPE_CS_IPI,
    MPE_CS_HOME,
    MPE_CS_POLLED,
    MPE_CS_DEFERRED,
    MPE_CS_COUNT = 8
};

struct cad_graph;
struct mpe_rank;
struct mpe_cad_copy;

/*
 * One running CAD graph (mpe_cad.c): a non-blocking collective of one rank. The library
 * allocates ops->cad_bytes(nnodes) bytes for it (the engine's per-node state follows this
 * header), fills the first block and calls ops->cad_issue; the engine owns the rest from
 * then until req.done reads 1, after which it never touches the run again.
 *
 * The graph and the rank map are read only inside cad_issue: the engine runs its own
 * copies of them, checked there (mpe_cad_admit.c), so whatever the rank writes to them
 * afterwards changes nothing.
 */
struct mpe_cad {
    /* The library's: what to run. */
    struct cad_graph *g;
    size_t gbytes;        /* size of the graph's block */
    const int32_t *world; /* world rank of each communicator rank ... */
    uint32_t world_size;  /* ... of this many: the communicator's size, not g's say-so */
    uint32_t policy;      /* enum mpe_cad_policy */
    uint32_t run_nodes;   /* node states this record has room for: cad_bytes(run_nodes) */
    /* The engine's copy of g, validated: what runs. The library may read it (the run
     * state, a deferred node's operands) until req.done, never write it. */
    struct cad_graph *copy;
    /* Completion as for any request: done (release) once the graph finished and nothing in
     * the engine refers to the run any more; err: MPE_OK or the first MPE_E* of a node. */
    struct mpe_req req;
    char why[96]; /* cad_issue's reason when it refused the graph */
    /* The engine's. */
    struct mpe_rank *self;
    struct mpe_cad_copy *block; /* where copy and its rank map live (mpe_cad_admit.c) */
    const int32_t *copy_world;  /* the engine's copy of world */
    int home_cpu;
    int offloaded;     /* run by the platform (mpe_cadoff), not by the engine */
    uint32_t off_slot; /* ... the platform's handle for it */
    /* The run's try-lock (cad.h "Concurrency"); its inbox holds the completed nodes not yet
     * told to the graph (mpe_cad_node.done). */
    struct lf_box box;
    volatile uint32_t refs;   /* contexts that may still touch the run, see mpe_cad.c */
    volatile uint32_t queued; /* on a CPU's kick list */
    volatile uint32_t finished;
    struct lf_link kick; /* a CPU's kick list */
    uint32_t nnodes;
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
    /* A test found nothing complete (or nothing arrived): progress the platform does not
     * make by itself while the rank runs (mpe_plat.h's plat_poll); never waits. */
    void (*poll)(void);
    /* Statistics: counters named for `make bench` and tests (see mpe_stats). */
    void (*stats)(uint64_t out[MPE_ST_COUNT]);
    /* CAD graphs (mpe_cad.c). Bytes of a run for a graph of `nnodes` nodes. */
    size_t (*cad_bytes)(uint32_t nnodes);
    /* Copy c->g and c->world into the engine, validate the copies (against the caller's
     * partition and c->world_size) and start them: 0, or -MPE_EINVAL with c->why saying
     * which node and why (nothing ran). */
    int (*cad_issue)(struct mpe_cad *c);
    /* The owner's own progress: with the poll policy, the graph advances here; in every
     * policy, a user-op CALC parked for the owner is returned (its node index, ACTIVE)
     * for the library to run, then to report with cad_done. -1: nothing to run. */
    int (*cad_test)(struct mpe_cad *c);
    void (*cad_done)(struct mpe_cad *c, int node);
    /* Counters of mpix.h's MPIX_CAD_* for the calling rank; progress latency samples
     * (TSC cycles, see MPIX_Cad_latency): copies up to max, returns how many. */
    void (*cad_stats)(uint64_t out[MPE_CS_COUNT]);
    int (*cad_latency)(uint64_t *cycles, int max);
    uint64_t (*tsc_hz)(void);
    /* The IMPI clients of MPI_COMM_WORLD (docs/architecture.md §3.13): returns their
     * number n (1 outside an IMPI job) and, for i < n and i < max, first[i] = the first
     * world rank of client i (client 0 starts at 0; client i ends where i + 1 starts, the
     * last one at the world size). */
    int (*clients)(int32_t *first, int max);
};

/* The engine's table (mpe_ops.c), exported to applications through the ABI (uk_abi->mpi). */
extern const struct mpe_ops mpe_ops;

#endif
