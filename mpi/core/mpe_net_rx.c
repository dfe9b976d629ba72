/*
 * mpe_net_rx.c: the receive side of a node-pair connection: a parser of the byte stream,
 * called from the transport's receive callback (for the unikernel: lwIP's tcp_recv inside
 * the NIC interrupt, under the network lock).
 *
 * A header is gathered (it may straddle pbufs), checked, and acted on at once: an EAGER
 * or RTS message is matched against the destination rank's posted receives right here
 * (match_rank_arrive: try-lock, else the lock-free inbox). When the receive is already
 * posted, the EAGER payload that follows is copied from the pbufs straight into the user's
 * buffer; otherwise into the descriptor (inline) or an eager slot, and whoever binds a
 * receive to it later copies it once more. DATA payloads always go straight to the
 * receive named by the handle in their header.
 *
 * Anything wrong in a header (magic, version, type, sequence number, ranks that are not
 * where they should be, unknown handles, credit overruns) ends the job with a message
 * naming the peer node: delivering wrong data would be worse.
 */
#include "mpe_net.h"
#include <string.h>

static void bad(struct mpe_conn *c, const struct mpe_wire *w, const char *why)
{
    c->failed = 1;
    plat_fatal("connection to node %d: bad %s header (seq %u): %s", c->peer,
               mpe_wire_type_name(w->type), (unsigned)w->seq, why);
}

static void wake_ranks(struct mpe_node *n)
{
    for (int i = 0; i < n->count; i++)
        mpe_wake(&n->ranks[i]);
}

/* The payload of the current EAGER or DATA item has all arrived. */
static void payload_done(void *arg)
{
    struct mpe_conn *c = arg;
    struct mpe_rx *x = &c->rx;
    struct mpe_msg *m = x->msg;
    if (!m) { /* DATA, or EAGER straight into the receive */
        mpe_complete(x->rreq, 0);
        return;
    }
    if (x->rreq) { /* EAGER into a receive bound before the first payload byte */
        mpe_desc_put(c, m);
        mpe_complete(x->rreq, 0);
        return;
    }
    uint32_t rx = MSG_RX;
    if (__atomic_compare_exchange_n(&m->state, &rx, MSG_DONE, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return; /* waits in the unexpected queue for a receive */
    /* A receive was bound while the payload streamed into the descriptor. */
    struct mpe_req *r = m->rreq;
    mpe_copy(r->buf, m->data, r->count);
    mpe_desc_put(c, m);
    mpe_complete(r, 0);
}

static void on_message(struct mpe_conn *c, struct mpe_wire *w, struct mpe_rank *dst)
{
    struct mpe_rx *x = &c->rx;
    struct mpe_msg *m = c->free_descs;
    if (!m)
        bad(c, w, "sender exceeded its descriptor credits");
    int16_t slot = -1;
    if (w->type == MPE_W_EAGER && w->len > MPE_NET_INLINE) {
        if (!c->nfree_slots)
            bad(c, w, "sender exceeded its eager slot credits");
        slot = c->free_slot[--c->nfree_slots];
    }
    c->free_descs = m->free_next;
    memset(m, 0, offsetof(struct mpe_msg, inl));
    m->m.key.comm = w->ctx;
    m->m.key.src = w->src;
    m->m.key.tag = w->tag;
    m->len = w->len;
    m->conn = c;
    m->slot = slot;
    m->src_world = (int32_t)w->src_world;
    if (w->type == MPE_W_RTS) {
        m->type = MSG_NET_RTS;
        m->handle = w->handle;
        match_rank_arrive(&dst->mr, &m->m); /* may bind at once: mpe_net_bind sends CTS */
        mpe_wake(dst);
        return;
    }
    m->type = MSG_NET_EAGER;
    m->data = slot >= 0 ? c->slots + (size_t)slot * MPE_NET_EAGER : m->inl;
    c->rx_msgs++;
    match_rank_arrive(&dst->mr, &m->m);
    x->msg = m;
    x->rreq = 0;
    x->f.dst = m->data;
    x->f.keep = w->len;
    if (__atomic_load_n(&m->state, __ATOMIC_ACQUIRE) == MSG_BOUND) {
        /* Matched right here in the interrupt: the payload goes to the user buffer. */
        x->rreq = m->rreq;
        x->f.dst = x->rreq->buf;
        x->f.keep = x->rreq->count;
        c->rx_direct++;
    } else {
        mpe_wake(dst);
    }
    x->f.in_payload = 1;
    x->f.want = w->len;
    x->f.got = 0;
}

static void on_header(void *arg)
{
    struct mpe_conn *c = arg;
    struct mpe_rx *x = &c->rx;
    struct mpe_node *n = c->node;
    /* The decoder fills nothing in for a header it rejects early: report the position
     * in the stream rather than stack contents. */
    struct mpe_wire w = {.seq = c->rx_seq};
    const char *err = mpe_wire_decode(x->hdr, &w, MPE_NET_EAGER);
    if (err)
        bad(c, &w, err);
    if (w.seq != c->rx_seq)
        bad(c, &w, "sequence number out of order");
    c->rx_seq++;
    if (!c->hello_seen && w.type != MPE_W_HELLO)
        bad(c, &w, "no HELLO first");
    switch (w.type) {
    case MPE_W_HELLO:
        if (c->hello_seen || (int)w.aux != c->peer || (int)w.aux2 != n->size)
            bad(c, &w, "peer is not the node or job we expect");
        c->hello_seen = 1;
        wake_ranks(n);
        return;
    case MPE_W_EAGER:
    case MPE_W_RTS: {
        struct mpe_rank *dst = mpe_local(n, (int)w.dst_world);
        if (!dst)
            bad(c, &w, "destination rank does not run on this node");
        /* Unsigned: a "negative" rank would pass a signed bound and mpe_node_of() would
         * place it on node 0. */
        if (!mpe_in_client(n, w.src_world) || mpe_node_of(n, (int)w.src_world) != c->peer)
            bad(c, &w, "source rank does not run on that node");
        on_message(c, &w, dst);
        return;
    }
    case MPE_W_CTS: {
        struct mpe_req *r = mpe_handle_take(&c->rdv_out, w.handle);
        if (!r)
            bad(c, &w, "unknown rendezvous handle");
        if (w.len > r->len)
            bad(c, &w, "receiver asks for more than the message has");
        r->handle = w.aux;
        r->sent = w.len;
        r->next = 0;
        if (c->data.tail)
            c->data.tail->next = r;
        else
            c->data.head = r;
        c->data.tail = r;
        mpe_tx_pump(c);
        return;
    }
    case MPE_W_DATA: {
        struct mpe_req *r = mpe_handle_take(&c->rdv_in, w.handle);
        if (!r)
            bad(c, &w, "unknown rendezvous handle");
        if (w.len != r->count)
            bad(c, &w, "length differs from the one granted");
        x->msg = 0;
        x->rreq = r;
        x->f.dst = r->buf;
        x->f.keep = x->f.want = w.len;
        x->f.got = 0;
        x->f.in_payload = 1;
        return;
    }
    case MPE_W_CREDIT:
        /* Compared before adding, unsigned: counts of 2^31 and more would otherwise wrap
         * the signed sums (taking credits away, or overflowing). */
        if (w.aux > (uint32_t)(MPE_NET_DESCS - c->credit_descs) ||
            w.aux2 > (uint32_t)(MPE_NET_SLOTS - c->credit_slots))
            bad(c, &w, "more credits returned than were spent");
        c->credit_descs += (int32_t)w.aux;
        c->credit_slots += (int32_t)w.aux2;
        mpe_tx_pump(c);
        return;
    case MPE_W_BYE:
        c->bye_seen = 1;
        wake_ranks(n);
        return;
    }
}

/* Under the network lock (the transport's receive callback). */
void mpe_net_rx(struct mpe_conn *c, const void *data, size_t len)
{
    mpe_frame_feed(&c->rx.f, c->rx.hdr, MPE_WIRE_HDR, data, len, on_header, payload_done, c,
                   &c->failed);
}
