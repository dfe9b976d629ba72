/*
 * mpe_internal.h: shared by the engine's files (mpe_node.c, mpe_net.c, mpe_net_rx.c) and
 * the platform glue that starts it.
 *
 * Tunables (defaults; each a trade of memory for fewer stalls):
 *   MPE_LOCAL_EAGER  intra-node messages up to this size are buffered when no receive is
 *                    posted, so the send completes at once (larger: rendezvous by address).
 *   MPE_LOCAL_MSGS   cap on a sender's buffered intra-node messages; beyond it sends wait
 *                    for their receive (MPI allows that; unbounded buffering would let one
 *                    rank exhaust the node's memory).
 *   MPE_NET_INLINE   inter-node payloads up to this size travel in the descriptor itself.
 *   MPE_NET_EAGER    inter-node eager limit; larger messages use RTS/CTS/DATA, so they
 *                    land straight in the posted buffer.
 *   MPE_NET_DESCS    receive descriptors per connection = the sender's message credits.
 *   MPE_NET_SLOTS    eager slots of MPE_NET_EAGER bytes per connection = the sender's
 *                    slot credits; without a slot credit a message goes as RTS instead.
 * Memory per connection: DESCS * (sizeof(mpe_msg)) + SLOTS * NET_EAGER (~1.8 MiB).
 */
#ifndef MPI_MPE_INTERNAL_H
#define MPI_MPE_INTERNAL_H
#include "match_rank.h"
#include "mpe.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include "mpe_wire.h"

#define MPE_LOCAL_EAGER (16u << 10)
#define MPE_LOCAL_MSGS  4096
#define MPE_NET_INLINE  256
#define MPE_NET_EAGER   (32u << 10)
#define MPE_NET_DESCS   2048
#define MPE_NET_SLOTS   32
#define MPE_RDV_HANDLES 1024 /* outstanding rendezvous per connection and direction */
#define MPE_MAX_NODES   64
#define MPE_MAX_CLIENTS 32   /* IMPI's limit (impi_wire.h: IMPI_MAX_CLIENTS) */
#define MPE_CAD_LAT     4096 /* progress latency samples kept per rank */
#define MPE_CAD_BUDGET  64   /* runs one interrupt progresses before it re-raises itself */
#define MPE_CAD_SPARE   4    /* idle graph copies a rank keeps for its next graphs */

/* mpe_copy's small case: n bytes (w <= n <= 2w) as a move of w bytes from each end; the
 * two may overlap. w is a constant where it is inlined, so each move is one load and one
 * store. */
static inline void mpe_copy_ends(char *d, const char *s, size_t n, size_t w)
{
    uint64_t a, b;
    __builtin_memcpy(&a, s, w);
    __builtin_memcpy(&b, s + n - w, w);
    __builtin_memcpy(d, &a, w);
    __builtin_memcpy(d + n - w, &b, w);
}

/* memcpy of a payload: MPI allows NULL buffers for 0 bytes, but memcpy's pointers must be
 * valid even then (C11 7.24.1; the compiler may assume them non-null afterwards). Up to
 * 16 bytes inline: a small message's copy is then a few instructions, not a call into
 * memcpy's size and alignment cases. */
static inline void mpe_copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n > 2 * sizeof(uint64_t))
        __builtin_memcpy(d, s, n);
    else if (n >= sizeof(uint64_t))
        mpe_copy_ends(d, s, n, sizeof(uint64_t));
    else if (n >= sizeof(uint32_t))
        mpe_copy_ends(d, s, n, sizeof(uint32_t));
    else
        for (size_t i = 0; i < n; i++) /* 0 to 3 bytes */
            d[i] = s[i];
}

struct mpe_impi;
struct mpe_ilink;

enum mpe_msg_type { MSG_LOCAL = 1, MSG_NET_EAGER, MSG_NET_RTS, MSG_IMPI };
/* Payload state of an inter-node eager message (msg.state), see mpe_net_rx.c. */
enum { MSG_RX = 0, MSG_DONE = 1, MSG_BOUND = 2 };

/* An arrived message while it waits in a receiver's unexpected queue. */
struct mpe_msg {
    struct match_entry m; /* key: ctx, src, tag */
    uint8_t type;
    int16_t slot;            /* net: big slot holding the payload, or -1 */
    volatile uint32_t state; /* net eager: MSG_RX, MSG_DONE, MSG_BOUND */
    uint64_t len;            /* the whole message */
    struct mpe_req *sreq;    /* local: the send, while its data is not buffered */
    void *data;              /* local: buffered copy; net eager: where payload goes */
    struct mpe_req *rreq;    /* net eager: the receive bound to it */
    struct mpe_conn *conn;   /* net */
    uint32_t handle;         /* net RTS: the sender's handle */
    int32_t src_world;
    struct mpe_rank *from;     /* local: the sender, whose free list it returns to */
    struct mpe_msg *free_next; /* net: the connection's free descriptors (network lock) */
    struct lf_link free;       /* local: the sender's free list (mpe_rank.free) */
    /* IMPI (mpe_impi_rx.c): the link it came on, its first packet, the receiver. */
    struct mpe_ilink *ilink;
    uint64_t srqid;     /* the sender's request id, echoed in our SYNCACK */
    uint32_t first_len; /* payload of the first packet (len: the whole message) */
    uint8_t sync;       /* it came as DATASYNC: a SYNCACK goes back once matched */
    int32_t dst_world;
    uint8_t inl[MPE_NET_INLINE];
};

struct mpe_rank {
    struct match_rank mr;
    int world;
    void *task;        /* the rank's task: woken on arrivals (mpe_wake) */
    struct lf_nap nap; /* its sleep handshake: skipped wake-ups while it polls */
    struct mpe_node *node;
    struct lf_stack free; /* local descriptors (mpe_msg.free): pushed by anyone, popped by us */
    uint32_t nmsgs;       /* local descriptors allocated by this sender */
    uint64_t local_sends, net_sends, buffered, rendezvous;
    uint64_t cad[MPE_CS_COUNT];  /* mpix.h's MPIX_CAD_* counters (racy adds: statistics) */
    uint64_t *cad_lat;           /* MPE_CAD_LAT progress latency samples, a ring */
    volatile uint32_t cad_lat_n; /* samples written ever */
    uint32_t cad_lat_read;       /* ... and read by the rank */
    /* The engine's copies of the rank's graphs (mpe_cad_admit.c). */
    struct mpe_cad_copy *cad_copies;
};

/* The engine's state for one node of a running graph (after struct mpe_cad). */
struct mpe_cad_node {
    struct mpe_req req;  /* SEND/RECV: the operation */
    struct mpe_msg msg;  /* intra-node SEND: its descriptor in the receiver's queues */
    struct lf_link done; /* the run's inbox of completed nodes (mpe_cad.box) */
    uint64_t irq_tsc;    /* entry TSC of the NIC interrupt that completed it, or 0 */
};

struct mpe_node {
    int id, nodes, size;    /* this node, node count, job size */
    int first, count;       /* world ranks first .. first+count-1 run here */
    struct mpe_rank *ranks; /* [count] */
    struct mpe_conn *conn[MPE_MAX_NODES];
    volatile int finalizing; /* connections may close now without it being an error */
    /* IMPI (mpe_impi.c): the job's clients; ours holds world ranks [base, base + size). */
    int nclients, client, base;
    int32_t client_first[MPE_MAX_CLIENTS + 1];
    struct mpe_impi *impi;           /* NULL unless nclients > 1 */
    const struct mpe_rmatch *rmatch; /* remote matching by the transport, or NULL */
    const struct mpe_cadoff *cadoff; /* graphs run by the platform, or NULL */
};

/* Any context: MPI_COMM_WORLD's size (our client's ranks and every other IMPI client's). */
static inline int mpe_world_size(const struct mpe_node *n)
{
    return n->client_first[n->nclients];
}
/* Any context: does world rank w belong to our client (one of our nodes runs it)? */
static inline int mpe_in_client(const struct mpe_node *n, uint32_t w)
{
    return w - (uint32_t)n->base < (uint32_t)n->size; /* unsigned: also w < base */
}

/* mpe_node.c (and mpe_transport.h) */
/* Any context: node of a world rank (ranks are placed in blocks, job.c's rule). */
int mpe_node_of(const struct mpe_node *n, int world);
/* Any context: the engine of a local world rank, or NULL. */
struct mpe_rank *mpe_local(struct mpe_node *n, int world);
/* Any context, after the store a rank may wait for (a completion, an arrival): wake it if
 * it may sleep (lockfree.h's lf_nap: a rank that polls costs the waker no wake-up). */
void mpe_wake(struct mpe_rank *r);
/* Task context of rank self, no engine lock held: one step of a wait whose condition the
 * caller just found unmet. Returns at once after announcing, so that the caller looks
 * once more; sleeps (plat_block) on a later call, until mpe_wake. */
void mpe_block(struct mpe_rank *self);
/* Any context: mark the request complete and wake its owner (last touch of r). */
void mpe_complete(struct mpe_req *r, int err);
/* Any context: under the receiver's engine lock, fill a receive's status from a message. */
void mpe_recv_status(struct mpe_req *r, const struct mpe_msg *m);

/* mpe_cad.c (CAD graphs; mpe_cad_flush is in mpe_transport.h) */
/* Any context, no lock taken: a CAD node's operation completed (mpe_complete's hook). */
void mpe_cad_node_done(struct mpe_req *r, int err);
/* Runs kicked to each CPU, and how deep each CPU's task is in engine calls (mpe_cad.c). */
extern struct lf_stack mpe_kicks[MPE_MAX_CPUS];
extern volatile uint32_t mpe_in_engine[MPE_MAX_CPUS];
/* A safe point on CPU me: progress the runs kicked to it (mpe_cad_flush on a known CPU). */
void mpe_cad_flush_cpu(int me, int from_irq);

/* Task context: the engine calls of this CPU's task begin (returns the CPU) and end (the
 * end flushes). Tasks are pinned and kernel code is not preempted (sched.h), so a per-CPU
 * count is the running task's. The flush at the end runs with the count still up: an
 * interrupt arriving meanwhile must not take engine locks this task may hold, so it leaves
 * its kicks to us (mpe_cad_flush_cpu(me, 1) reads the count).
 * Sequentially consistent: the decrement is a store followed by the load of the kick list,
 * and a kicker on another thread (the Linux home's network thread) stores to the list and
 * then loads the count; without a full barrier on both sides each could miss the other's
 * store and the run would wait for the next engine call. Inline, with the CPU read once:
 * every MPI call pays for these (tests/bench/pathcost.bench.sh counts the calls). */
static inline int mpe_enter(void)
{
    int me = plat_cpu();
    __atomic_add_fetch(&mpe_in_engine[me], 1, __ATOMIC_SEQ_CST);
    return me;
}

static inline void mpe_leave(int me)
{
    for (;;) {
        if (__atomic_load_n(&mpe_in_engine[me], __ATOMIC_SEQ_CST) == 1 && !lf_empty(&mpe_kicks[me]))
            mpe_cad_flush_cpu(me, 0);
        if (__atomic_sub_fetch(&mpe_in_engine[me], 1, __ATOMIC_SEQ_CST) || lf_empty(&mpe_kicks[me]))
            return;
        __atomic_add_fetch(&mpe_in_engine[me], 1, __ATOMIC_SEQ_CST); /* kicked meanwhile */
    }
}
size_t mpe_cad_bytes(uint32_t nnodes);
/* mpe_cad_admit.c. Task context of c's owner `self`, in cad_issue before anything of the
 * run is reset: copy c->g and c->world into a block of the engine's (c->block, c->copy,
 * c->copy_world) and check the copies. 0, or -MPE_EINVAL with c->why (no block kept). */
int mpe_cad_admit(struct mpe_cad *c, struct mpe_rank *self);
/* Any context: c's last reference is gone; its block may serve the owner's next graph.
 * The last touch of the block (c itself stays the caller's). */
void mpe_cad_release(struct mpe_cad *c);
/* mpe_cad.c: a refusal's reason into c->why, cut to fit; returns -MPE_EINVAL. */
int mpe_cad_refuse(struct mpe_cad *c, const char *why);
int mpe_cad_issue(struct mpe_cad *c);
int mpe_cad_test(struct mpe_cad *c);
void mpe_cad_done(struct mpe_cad *c, int node);
void mpe_cad_stats(uint64_t out[MPE_CS_COUNT]);
int mpe_cad_latency(uint64_t *cycles, int max);
/* mpe_node.c: mpe_ops' entry points (mpe.h), without the enter/leave of mpe_ops.c. */
int mpe_init(void);
int mpe_isend(struct mpe_req *r, const void *buf, size_t len, int dst_world, uint32_t ctx, int src,
              int tag, int flags);
int mpe_irecv(struct mpe_req *r, void *buf, size_t len, uint32_t ctx, int src, int tag);
int mpe_iprobe(uint32_t ctx, int src, int tag, struct mpe_status *st);
int mpe_cancel(struct mpe_req *r);
void mpe_stats(uint64_t out[MPE_ST_COUNT]);
int mpe_clients(int32_t *first, int max);
/* mpe_node.c: the calling task's rank (fatal if it is not one of this node's). */
struct mpe_rank *mpe_self(void);
/* Any context: an intra-node send whose descriptor m the caller owns (no allocation, no
 * buffering: it completes when the receiver has copied it). */
void mpe_local_send_desc(struct mpe_rank *self, struct mpe_rank *dst, struct mpe_req *r,
                         struct mpe_msg *m);
/* Under no engine lock, any context the CAD executor runs in: post a receive of `self`. */
void mpe_post(struct mpe_rank *self, struct mpe_req *r);

/* mpe_net.c (sending side and connection state; and mpe_transport.h) */
/* Task context (mpe_node_create): the connection to `peer`, HELLO queued; NULL: no memory. */
struct mpe_conn *mpe_conn_create(struct mpe_node *n, int peer);
int mpe_net_isend(struct mpe_node *n, struct mpe_rank *self, struct mpe_req *r);
/* Under the receiver's engine lock: receive r matched net message m. */
void mpe_net_bind(struct mpe_msg *m, struct mpe_req *r);
/* Under the network lock: one message of c consumed (slot: it held an eager slot): its
 * credits go back to the sender (a CREDIT header once enough came back). */
void mpe_net_credit(struct mpe_conn *c, int slot);
/* Under the network lock: r takes an RTS (handle: the sender's): queue the CTS. */
void mpe_net_cts(struct mpe_conn *c, struct mpe_req *r, uint32_t handle);
/* mpe_rmatch.c: under the rank's engine lock (deliver): may local message msg take recv,
 * which the transport has too? 0: no, msg went on to another receive or the queue. */
int mpe_rmatch_claim(struct match_rank *mr, struct match_entry *recv, struct match_entry *msg);
/* Task context: queue a header with no payload (BYE; HELLO is queued by mpe_conn_create). */
void mpe_net_control(struct mpe_conn *c, int type, uint32_t aux, uint32_t aux2);
/* Any context: has the peer said HELLO? */
int mpe_net_hello_seen(const struct mpe_conn *c);

#endif
