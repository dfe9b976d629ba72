/*
 * mpe_rmatch.c: remote matching by the transport (mpe_transport.h, struct mpe_rmatch):
 * the engine's side of a transport that matches the messages of its peer nodes itself,
 * as Linux's /dev/o2g does inside TCP's receive path (mpi/linux/mlx_o2g.c).
 *
 * A receive lives in two matchers then: the engine's queues (which still see intra-node
 * messages) and the transport's (remote ones). Whichever takes it first must remove it
 * from the other: the transport through mpe_rmatch_took; a local message through
 * mpe_rmatch_claim, which asks the transport to let go (and, if it cannot, sends the
 * message on to the next receive or the unexpected queue, as if r had never been there).
 * MPI's order holds per source: one source's messages are all in one of the matchers.
 * The sender's flow control (credits) is the engine's, given back here for the messages
 * the engine never saw; so is the stream's sequence number.
 */
#include "mpe_internal.h"
#include "mpe_net.h"

/* Task context (job start, before any rank runs); see mpe_transport.h. */
void mpe_node_set_rmatch(struct mpe_node *n, const struct mpe_rmatch *rm)
{
    n->rmatch = rm;
}

/* Any thread, no lock held; see mpe_transport.h. One rank per node (the seam's rule):
 * r is the first rank's. A cancel that finds r gone is no error: a local message's claim
 * failed (mpe_rmatch_claim), so it took r out of the queue and left it to us. */
void mpe_rmatch_took(struct mpe_node *n, struct mpe_req *r)
{
    match_rank_cancel(&n->ranks[0].mr, &r->m);
    r->remote = 0;
}

/* Under the rank's engine lock (deliver); see mpe_internal.h. */
int mpe_rmatch_claim(struct match_rank *mr, struct match_entry *recv, struct match_entry *msg)
{
    struct mpe_req *r = container_of(recv, struct mpe_req, m);
    const struct mpe_rmatch *rm = ((struct mpe_rank *)mr->owner)->node->rmatch;
    if (rm->claim(r)) {
        r->remote = 0;
        return 1;
    }
    /* The transport completes r: msg goes where it would have gone without r. */
    struct match_entry *next = match_arrive(&mr->eng, msg);
    if (next)
        mr->deliver(mr, next, msg);
    return 0;
}

/* Under the network lock; see mpe_transport.h. */
void mpe_rmatch_skip(struct mpe_conn *c)
{
    c->rx_seq++;
}

/* Under the network lock; see mpe_transport.h. */
void mpe_rmatch_eager(struct mpe_conn *c, struct mpe_req *r, int src, int tag, uint64_t len)
{
    r->src = src;
    r->tag = tag;
    r->count = len < r->len ? len : r->len;
    if (len > r->len)
        r->err = MPE_ETRUNCATE;
    mpe_net_credit(c, len > MPE_NET_INLINE);
    mpe_complete(r, 0);
}

/* Under the network lock; see mpe_transport.h. The header passed the transport's
 * decoder; the checks the engine makes of an RTS (mpe_net_rx.c) are made again. */
void mpe_rmatch_rts(struct mpe_conn *c, struct mpe_req *r, const uint8_t *hdr)
{
    struct mpe_node *n = c->node;
    struct mpe_wire w;
    if (mpe_wire_decode(hdr, &w, MPE_NET_EAGER) || w.type != MPE_W_RTS ||
        !mpe_local(n, (int)w.dst_world) || !mpe_in_client(n, w.src_world) ||
        mpe_node_of(n, (int)w.src_world) != c->peer)
        plat_fatal("connection to node %d: bad RTS from the transport's matcher", c->peer);
    r->src = w.src;
    r->tag = w.tag;
    r->count = w.len < r->len ? w.len : r->len;
    if (w.len > r->len)
        r->err = MPE_ETRUNCATE;
    mpe_net_cts(c, r, w.handle);
    mpe_net_credit(c, 0);
    mpe_tx_pump(c);
}
