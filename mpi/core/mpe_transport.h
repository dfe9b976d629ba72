/*
 * mpe_transport.h: how a platform runs the engine of one node. Together with mpe_plat.h
 * (what the platform provides), this is the whole seam between the engine and a platform:
 * the unikernel (unikernel/mpi/mpe_uk.c) and the host tests' node simulator
 * (tests/unit/mpe_host_plat.c) use nothing else of mpi/core.
 *
 * The platform creates the node's engine, and with it one connection per peer node. It
 * opens a byte stream per connection however it likes (TCP through lwIP; an in-memory
 * pipe) and attaches it; from then on it feeds the connection what arrives, tells it when
 * the stream took data or failed, and sends what plat_net_send() hands it. At the end of
 * the job it says goodbye through the engine and waits until every connection is done.
 *
 * Contexts: "under the network lock" means with plat_net_lock() held, as the platform's
 * receive and event callbacks run.
 */
#ifndef MPI_MPE_TRANSPORT_H
#define MPI_MPE_TRANSPORT_H
#include <stddef.h>
#include <stdint.h>

struct mpe_node;
struct mpe_conn;

/* Task context (job start): the engine of node `id` of `nodes`, for world ranks
 * first..first+count-1 of `size`, with a connection (not yet attached) to every other
 * node; each connection has its HELLO queued. NULL if out of memory or out of range. */
struct mpe_node *mpe_node_create(int id, int nodes, int size, int first, int count);
/* Task context (job start, before any rank runs): the node belongs to IMPI client
 * `client` of `nclients`; first[i] is the first world rank of client i, first[nclients]
 * the world size, and our client has exactly the job's `size` ranks. World ranks from now
 * on are MPI_COMM_WORLD's: ours are first[client] + the job's ranks. 0, or -1 if the
 * layout is impossible. */
int mpe_node_set_clients(struct mpe_node *n, int nclients, const int32_t *first, int client);
/* Any context. */
int mpe_node_id(const struct mpe_node *n);
/* Any context: the connection to node `peer`, or NULL for the node itself or no node. */
struct mpe_conn *mpe_node_conn(struct mpe_node *n, int peer);

/* Under the network lock: the byte stream of c is up; `transport` is the platform's
 * handle for it (what mpe_conn_transport returns). Starts sending (HELLO first). */
void mpe_conn_attach(struct mpe_conn *c, void *transport);
/* Any context: the attached handle, or NULL. */
void *mpe_conn_transport(const struct mpe_conn *c);
/* Under the network lock, from the platform's callbacks: bytes arrived from the peer;
 * the stream took data (room to send more); the stream failed (`why`: a short reason,
 * which ends the job unless the node is finishing). */
void mpe_net_rx(struct mpe_conn *c, const void *data, size_t len);
void mpe_net_sent(struct mpe_conn *c);
void mpe_net_failed(struct mpe_conn *c, const char *why);

/* Interrupt context, after the platform's network work and with the network lock
 * released (the NIC interrupt's tail, a timer tick's), and the CAD IPI's handler; task
 * context inside the engine does it by itself. Progresses the CAD graphs kicked to this
 * CPU (mpe_cad.c); from_irq = 1 from interrupt context. */
void mpe_cad_flush(int from_irq);
/* Any context: 1 if CAD graphs kicked to this CPU wait for its next safe point. A
 * platform's network interrupt ends its batch of frames early for them: its tail runs
 * them, or, if the interrupted task is inside the engine, that task's mpe_leave does once
 * the interrupt returns. A stale answer only moves them to the end of the batch. */
int mpe_cad_due(void);

/* IMPI (mpe_impi.h): MPI_COMM_WORLD shared with other IMPI clients, after
 * mpe_node_set_clients. The platform runs the client start-up and the host "dance" (spec
 * §3-§4) and hands the engine what they decided; then one byte stream per remote host. */
struct impi_proc;
struct mpe_ilink;
struct mpe_impi_cfg {
    uint32_t maxlen, ackmark, hiwater; /* the job's minima (C_DATALEN, H_ACKMARK, H_HIWATER) */
    int nhosts, self_host;             /* every host of the job; this node's index */
    const int32_t *host_first;         /* [nhosts + 1]: host h runs world ranks
                                        * host_first[h] .. host_first[h + 1] - 1 */
    const struct impi_proc *procs;     /* [world size]: each world rank's IMPI id */
    uint64_t pool_bytes;               /* for unexpected messages from other clients */
};
/* Task context (job start, before any rank runs): copies what it needs of cfg. 0, or -1
 * with a reason in *why. */
int mpe_impi_setup(struct mpe_node *n, const struct mpe_impi_cfg *cfg, const char **why);
/* Any context: the link to global host `host`, or NULL (a host of our own client). */
struct mpe_ilink *mpe_impi_link(struct mpe_node *n, int host);
/* Under the network lock, as for node-pair connections above. */
void mpe_impi_attach(struct mpe_ilink *l, void *transport);
void *mpe_impi_transport(const struct mpe_ilink *l);
void mpe_impi_rx(struct mpe_ilink *l, const void *data, size_t len);
void mpe_impi_sent(struct mpe_ilink *l);
void mpe_impi_failed(struct mpe_ilink *l, const char *why);
/* Task context, after every local rank ended well: FINI to every remote host (§9). */
void mpe_impi_finish(struct mpe_node *n);
/* Any context: FINI went both ways on l and everything we queued was handed over. */
int mpe_impi_done(const struct mpe_ilink *l);
/* Under the network lock, after mpe_impi_finish: the packets the host sent after our
 * FINI, which were read and dropped unanswered (our ranks had finished), in *pkts; the
 * number of messages among them to ranks of ours, and for the first one its packet type's
 * name (*type) and world rank (*rank). A platform reports a non-zero result once: the
 * peer's program sent to ranks that had finished, which is not the job's failure. */
uint32_t mpe_impi_late(const struct mpe_ilink *l, uint32_t *pkts, const char **type, int *rank);

/* CAD offload (mpe_cad.c): a platform that can run a rank's graphs elsewhere (Linux's
 * /dev/kacc, mpi/linux/mlx_kacc.c) is offered each one the engine admitted. Set before
 * any rank runs; NULL: the engine runs every graph. */
struct mpe_cad;
struct mpe_cadoff {
    /* Task context of the owner, in cad_issue, no lock held: c->copy and c->copy_world
     * are admitted (validated), nothing started. 0: the platform runs the graph and ends
     * it with mpe_cad_offload_done; -1: the engine runs it. */
    int (*issue)(struct mpe_cad *c);
    /* Task context of the owner (its MPI_Test and MPI_Wait): look at c, progress it if
     * the platform progresses only here; may call mpe_cad_offload_done. Returns a node the
     * owner is to run (a CALC with a user op, which the platform offers it: the node of
     * c->copy, with the owner's addresses), then given back through done; or -1. */
    int (*test)(struct mpe_cad *c);
    /* Task context of the owner: it ran the op of node, which test returned. */
    void (*done)(struct mpe_cad *c, int node);
};
void mpe_node_set_cadoff(struct mpe_node *n, const struct mpe_cadoff *co);
/* Any thread, no lock held, once per offloaded graph: it ended (err: MPE_OK or MPE_E*);
 * the engine lets go of its copy and completes c->req (the owner is woken). */
void mpe_cad_offload_done(struct mpe_cad *c, int err);

/* Remote matching (mpe_rmatch.c): a transport that matches the messages of its peer nodes
 * itself (Linux's /dev/o2g, mpi/linux/mlx_o2g.c) takes over the engine's matching for
 * them. The engine keeps matching what it sees: intra-node messages, and whatever the
 * transport feeds to mpe_net_rx (e.g. the contexts it leaves to the engine). Only for a
 * node of one rank (a receive meets a local message only in its own task, no race with
 * the transport's post). Set before any rank runs; NULL: no remote matching. */
struct mpe_req;
struct mpe_status;
struct mpe_rmatch {
    /* Any context: 1 if the transport matches the receives of context ctx (its peers'
     * messages of that context never reach the engine); 0 if it feeds those messages to
     * the engine (mpe_net_rx), which alone matches them. */
    int (*takes)(uint32_t ctx);
    /* Task context of the receiving rank, no lock held: r, of a context the transport
     * takes, just posted in the engine (no local message matched it), is posted to the
     * transport too, which may take a message for it at once (mpe_rmatch_took). */
    void (*post)(struct mpe_req *r);
    /* Under the rank's engine lock: a local message matched r, which the transport has
     * too. 1: the transport let it go; 0: it took a remote message for r (completes it). */
    int (*claim)(struct mpe_req *r);
    /* Task context: MPI_Cancel of r (which the transport has). 1: cancelled there. */
    int (*cancel)(struct mpe_req *r);
    /* Task context: a remote unexpected message a receive (ctx, src, tag) would take. */
    int (*probe)(uint32_t ctx, int src, int tag, struct mpe_status *st);
};
void mpe_node_set_rmatch(struct mpe_node *n, const struct mpe_rmatch *rm);
/* Any thread but under no lock: the transport took a message for r: r leaves the
 * engine's posted queue (the transport completes it). */
void mpe_rmatch_took(struct mpe_node *n, struct mpe_req *r);
/* Under the network lock, in the order of c's stream: the transport consumed an EAGER or
 * RTS header of c that the engine never saw (its sequence number is used up). */
void mpe_rmatch_skip(struct mpe_conn *c);
/* Under the network lock: r (mpe_rmatch_took) got EAGER message (src, tag, len), its
 * payload already in r->buf (the first r->len bytes): status, the sender's credits back
 * (slot: it used an eager slot), complete. */
void mpe_rmatch_eager(struct mpe_conn *c, struct mpe_req *r, int src, int tag, uint64_t len);
/* Under the network lock: r (mpe_rmatch_took) took the RTS whose header is hdr: CTS, as
 * the engine does; the DATA then comes through mpe_net_rx. */
void mpe_rmatch_rts(struct mpe_conn *c, struct mpe_req *r, const uint8_t *hdr);

/* Task context, after every local rank ended well: queue BYE to every peer; connections
 * may close from now on without that being an error. */
void mpe_node_finish(struct mpe_node *n);
/* Any context: the peer said BYE and everything we queued was handed to the stream. (The
 * platform still waits for the stream itself to deliver it.) */
int mpe_conn_done(struct mpe_conn *c);

#endif
