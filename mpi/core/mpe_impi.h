/*
 * mpe_impi.h: the engine's IMPI links (docs/architecture.md §3.13): MPI_COMM_WORLD shared
 * with other IMPI clients (LAM/MPI 7.1.4, GridMPI), whose hosts this node talks to in the
 * IMPI packet protocol (shared/specs/impi-protocol.md §5-§9) over one byte stream per
 * remote host, next to the native protocol between our own nodes.
 *
 * One link per remote host. Everything on a link is guarded by the network lock, like a
 * native connection (mpe_net.c): the platform's receive and event callbacks hold it, and
 * task-context senders take it.
 *
 * Sending (mpe_impi.c). A send to a rank of another client joins its link's FIFO. The
 * pump cuts it into packets: one DATA (or DATASYNC for MPI_Ssend) when the message fits
 * in the job's per-packet maximum `maxlen`; else a DATASYNC with the first maxlen bytes,
 * then, once the receiver's SYNCACK named its handle, DATA packets with the rest (§7.2).
 * Control packets (PROTOACK, SYNCACK, CANCELNO, FINI) go first, in their own queue, so
 * they never wait behind data that waits for them. Flow control (§8) per ordered pair of
 * procs: a pair with `hiwater` unacknowledged packets holds back its own sends until a
 * PROTOACK, and the other pairs' sends pass them (MPI orders messages per pair only); the
 * receiving side acknowledges every `ackmark` packets as they arrive, never later, so a
 * peer that sends all its pairs down one queue (LAM's impid does) never waits on us.
 *
 * Receiving (mpe_impi_rx.c), in the receive callback (the NIC interrupt on the unikernel):
 * the first packet of a message is matched against the destination rank's receives at
 * once and streams into the user's buffer when one is posted, else into a buffer from the
 * node's pool (mpe_impi_pool.c), as the native eager path does. A long message's first
 * packet waits there until a receive matches; the SYNCACK then goes out and the rest
 * streams straight into the receive. Anything wrong ends the job naming the host.
 *
 * Shutdown (§9): once every local rank has finished, FINI goes to every host, and it is
 * the last packet of our stream: nothing is queued or sent after it, not even an answer
 * the protocol would otherwise owe. What a host sends after our FINI (but before its own)
 * is read for its framing, so that its FINI is still found, and dropped; the platform
 * reports a message among those once (mpe_impi_late). A PROTOACK there is still taken:
 * it returns credit for packets that went before our FINI and asks for nothing.
 *
 * Context ids and sources: IMPI traffic can only be on MPI_COMM_WORLD (communicator
 * constructors across clients are refused, as LAM refuses them), whose contexts are 0
 * (point to point) and 1 (collectives) both in LAM and in our library, plus LAM's private
 * one (MPE_IMPI_LAM_CTX), and whose ranks are world ranks; pk_lsrank carries the
 * sender's world rank (§5).
 */
#ifndef MPI_MPE_IMPI_H
#define MPI_MPE_IMPI_H
#include "mpe_net.h"
#include "impi_wire.h"

#define MPE_IMPI_CTL     4096 /* control packets a link may have queued */
#define MPE_IMPI_WCTX    2    /* contexts IMPI peers may use: WORLD's 0 and 1 */
/* ... and one more: LAM's lam_basic collectives across clients (gather, scatter, alltoall,
 * scan, ...) travel on its flipped collective cid of MPI_COMM_WORLD, -1 (every bit set in
 * the 64-bit pk_cid), which is this match context here (mpi/cad/cad_alg.h's CAD_LAM_CTX);
 * no communicator of ours gets it. Every other cid is refused. */
#define MPE_IMPI_LAM_CTX 0xffffffffu
#define MPE_IMPI_LAM_CID UINT64_MAX /* ... and on the wire */

/* A packet being transmitted: its header, then its payload (the user's buffer). */
struct mpe_itx {
    int active;
    uint8_t hdr[IMPI_PKT_HDR_LEN];
    size_t hoff;
    const uint8_t *payload;
    uint64_t plen, poff;
    struct mpe_req *req;  /* the send it is a packet of, or NULL (a control packet) */
    struct mpe_req *done; /* completes when the packet is all handed over, or NULL */
};

/* The receive parser (mpe_impi_rx.c): a header being gathered, then a payload being
 * stored (mpe_frame.h). */
struct mpe_irx {
    uint8_t hdr[IMPI_PKT_HDR_LEN];
    struct mpe_frame f;
    struct mpe_msg *msg;  /* a first packet: its message */
    struct mpe_req *rreq; /* a first packet straight into a receive, or a continuation's */
    int last;             /* the continuation completes rreq */
};

struct mpe_ilink {
    struct mpe_node *node;
    int host;        /* global IMPI host index */
    void *transport; /* the platform's (a ksock) */
    int failed, fini_in, fini_out;
    int fini_sent; /* our FINI left the control queue: nothing more goes out (§9) */
    uint64_t seq;  /* pk_seqnum: per packet sent on this link */
    int last_src;  /* receiving: the world rank the previous packet came from */
    /* sending */
    struct mpe_reqq sendq;
    struct impi_pkt ctl[MPE_IMPI_CTL];
    uint32_t ctl_head, ctl_n;
    struct mpe_handles rdv_out; /* our DATASYNCs waiting for SYNCACK (srqid) */
    struct mpe_itx cur;
    /* receiving */
    struct mpe_irx rx;
    struct mpe_handles rdv_in; /* our receives of long messages (drqid) */
    /* Packets the host sent after our FINI, read and dropped (mpe_impi_late), and the
     * first message (DATA, DATASYNC) among them to a rank of ours: its type and rank. */
    uint32_t late, late_msgs, late_type;
    int late_rank;
};

/* The node's IMPI state (mpe_node.impi). */
struct mpe_impi {
    struct impi_flow_cfg flow;
    uint32_t maxlen;
    int world; /* MPI_COMM_WORLD's size */
    int nhosts, self_host;
    int32_t *host_first;       /* [nhosts + 1]: host h runs world ranks from host_first[h] */
    struct mpe_msg *free_msgs; /* descriptors of unexpected messages (mpe_msg.free_next) */
    struct mpe_ilink **link;   /* [nhosts]; NULL for the hosts of our own client */
    int32_t *host_of;          /* [world size]: the host of each world rank */
    struct impi_proc *procs;   /* [world size]: the IMPI id of each world rank */
    struct impi_flow_tx *ftx;  /* [count * world size]: local sender x destination */
    struct impi_flow_rx *frx;  /* [count * world size]: local receiver x source */
    struct mpe_ipool *pool;    /* payload buffers of unexpected messages */
};

/* mpe_impi.c */
/* Task context of a sender: r (a send to world rank dst, not of our client) joins the
 * link of dst's host. 0 or -MPE_E*. */
int mpe_impi_isend(struct mpe_node *n, struct mpe_rank *self, struct mpe_req *r);
/* Under the network lock: queue a control packet from our world rank `self` to the
 * link's world rank `peer` (FINI: self = peer = -1), and send what may go. Once our FINI
 * is queued (fini_out) nothing more is: FINI is the last packet of our stream (§9). */
void mpe_impi_ctl(struct mpe_ilink *l, uint32_t type, int self, int peer, uint64_t srqid,
                  uint64_t drqid);
void mpe_impi_pump(struct mpe_ilink *l);
/* Any context: the link's host as every message about it names it, a plat_fatal format
 * piece "IMPI host H (a.b.c.d)" and its arguments. */
#define MPE_IMPI_HOST_FMT "IMPI host %d (%u.%u.%u.%u)"
#define MPE_IMPI_HOST_ARGS(l)                                                                      \
    (l)->host, mpe_impi_ip(l) >> 24, mpe_impi_ip(l) >> 16 & 255, mpe_impi_ip(l) >> 8 & 255,        \
        mpe_impi_ip(l) & 255
uint32_t mpe_impi_ip(const struct mpe_ilink *l);
/* Under the network lock: the link's peer sent something the protocol forbids. */
void mpe_impi_bad(struct mpe_ilink *l, const char *what, const char *why) __attribute__((noreturn));
/* Any context: flow state of (local rank index i, world rank w). */
struct impi_flow_tx *mpe_impi_ftx(struct mpe_impi *im, int i, int w);
struct impi_flow_rx *mpe_impi_frx(struct mpe_impi *im, int i, int w);

/* Under the network lock: a descriptor for an arriving message (NULL: none left), and
 * back with its buffer. */
struct mpe_msg *mpe_impi_msg_get(struct mpe_impi *im);
void mpe_impi_msg_put(struct mpe_impi *im, struct mpe_msg *m);

/* mpe_impi_rx.c */
/* Under the receiver's engine lock, any context: receive r matched IMPI message m. */
void mpe_impi_bind(struct mpe_msg *m, struct mpe_req *r);

/* mpe_impi_pool.c: payload buffers for unexpected IMPI messages, allocated in the
 * receive callback (no malloc there), freed by whoever consumes the message. */
struct mpe_ipool;
/* Task context (setup): a pool of `bytes` in all for payloads of up to `maxlen`. */
struct mpe_ipool *mpe_ipool_create(uint64_t bytes, uint32_t maxlen);
/* Under the network lock: a buffer of at least `len` bytes, or NULL when the pool is out. */
void *mpe_ipool_get(struct mpe_ipool *p, uint64_t len);
void mpe_ipool_put(struct mpe_ipool *p, void *buf);
uint64_t mpe_ipool_bytes(const struct mpe_ipool *p);

#endif
