/*
 * mpe_net.c: inter-node messages, sending side and connection state.
 *
 * One mpe_conn per peer node carries every rank pair of the two nodes, both directions.
 * Everything here runs under the network lock (plat_net_lock), which masks interrupts on
 * the CPU and is what the NIC interrupt already holds when it calls mpe_net_rx(); so the
 * connection state needs no lock of its own. Lock order: a rank's engine lock, then the
 * network lock; interrupt context only ever try-locks an engine (match_rank.h), so the
 * reverse order in mpe_net_rx() cannot deadlock.
 *
 * Transmit queues, served in this order by tx_pump() whenever the transport has room:
 *   ctl   control headers (CTS, CREDIT, HELLO, BYE): never wait for credits;
 *   data  payloads of matched rendezvous messages (after the peer's CTS);
 *   msgs  new messages (EAGER or RTS) in MPI order: one FIFO per connection keeps the
 *         non-overtaking rule; the head waits when the peer has no descriptor credit.
 *
 * Flow control: the receiver has MPE_NET_DESCS descriptors and MPE_NET_SLOTS eager slots
 * for this connection; the sender starts with that many credits, spends one descriptor per
 * EAGER or RTS and one slot per EAGER larger than MPE_NET_INLINE, and gets them back in
 * CREDIT headers as the receiver frees them. Without a slot credit a message goes as RTS,
 * so a sender never blocks on slots; without descriptor credits it waits (the peer then
 * holds MPE_NET_DESCS of our messages that no receive has taken yet).
 */
#include "mpe_internal.h"
#include "mpe_net.h"
#include "mpe_transport.h"
#include <string.h>

/* Task context (job start, mpe_node_create). */
struct mpe_conn *mpe_conn_create(struct mpe_node *n, int peer)
{
    struct mpe_conn *c = plat_alloc(sizeof *c);
    if (!c)
        return 0;
    c->node = n;
    c->peer = peer;
    c->credit_descs = MPE_NET_DESCS;
    c->credit_slots = MPE_NET_SLOTS;
    c->descs = plat_alloc(MPE_NET_DESCS * sizeof *c->descs);
    c->slots = plat_alloc((size_t)MPE_NET_SLOTS * MPE_NET_EAGER);
    if (!c->descs || !c->slots)
        return 0;
    for (int i = MPE_NET_DESCS - 1; i >= 0; i--) {
        c->descs[i].free_next = c->free_descs;
        c->free_descs = &c->descs[i];
    }
    for (int i = 0; i < MPE_NET_SLOTS; i++)
        c->free_slot[c->nfree_slots++] = (int16_t)i;
    /* HELLO is queued first, now, so that it is the first header on the wire whatever is
     * queued before the transport connects (a node whose ranks finish early may queue its
     * BYE before the peer has even connected). */
    struct mpe_wire hello = {
        .type = MPE_W_HELLO, .aux = (uint32_t)n->id, .aux2 = (uint32_t)n->size};
    mpe_ctl_push(c, &hello);
    n->conn[peer] = c;
    return c;
}

int mpe_net_hello_seen(const struct mpe_conn *c)
{
    return c && c->hello_seen;
}

/* Any context; see mpe_transport.h. */
int mpe_conn_done(struct mpe_conn *c)
{
    int t = plat_net_lock();
    int idle = !c->cur.active && c->ctl_n == 0 && !c->data.head && !c->msgs.head;
    int done = c->bye_seen && idle;
    plat_net_unlock(t);
    return done;
}

/* Under the network lock; see mpe_transport.h. */
void mpe_conn_attach(struct mpe_conn *c, void *transport)
{
    c->transport = transport;
    mpe_tx_pump(c); /* HELLO, and whatever was queued meanwhile */
}

/* Any context. */
void *mpe_conn_transport(const struct mpe_conn *c)
{
    return c->transport;
}

/* Handles name a request across the wire: slot index in the low 16 bits, a generation in
 * the high 16, so a stale or forged handle is caught instead of followed. */
uint32_t mpe_handle_new(struct mpe_handles *h, struct mpe_req *r)
{
    for (uint32_t k = 0; k < MPE_HANDLES; k++) {
        uint32_t i = (h->next + k) % MPE_HANDLES;
        if (!h->req[i]) {
            h->req[i] = r;
            /* gen + 1 is an int: test the 16-bit wrap, never hand out generation 0. */
            h->gen[i] = h->gen[i] == 0xffff ? 1 : (uint16_t)(h->gen[i] + 1);
            h->next = i + 1;
            h->used++;
            return i | (uint32_t)h->gen[i] << 16;
        }
    }
    return 0;
}

struct mpe_req *mpe_handle_peek(const struct mpe_handles *h, uint32_t handle)
{
    uint32_t i = handle & 0xffff;
    if (i >= MPE_HANDLES || !h->req[i] || h->gen[i] != handle >> 16 || !(handle >> 16))
        return 0;
    return h->req[i];
}

struct mpe_req *mpe_handle_take(struct mpe_handles *h, uint32_t handle)
{
    struct mpe_req *r = mpe_handle_peek(h, handle);
    if (!r)
        return 0;
    h->req[handle & 0xffff] = 0;
    h->used--;
    return r;
}

/* Under the network lock: queue a control header. The queue has room for one CTS per
 * receive handle plus a few others; overflowing it would be an engine bug. */
void mpe_ctl_push(struct mpe_conn *c, const struct mpe_wire *w)
{
    if (c->ctl_n == MPE_CTL_MAX)
        plat_fatal("connection to node %d: control queue overflow", c->peer);
    c->ctl[(c->ctl_head + c->ctl_n) % MPE_CTL_MAX] = *w;
    c->ctl_n++;
}

/* Under the network lock: start the next item, if any may go. 1 if cur is now active. */
static int tx_next(struct mpe_conn *c)
{
    struct mpe_tx *t = &c->cur;
    struct mpe_wire w = {0};
    memset(t, 0, offsetof(struct mpe_tx, hdr));
    if (c->ctl_n) {
        w = c->ctl[c->ctl_head];
        c->ctl_head = (c->ctl_head + 1) % MPE_CTL_MAX;
        c->ctl_n--;
    } else if (c->data.head) {
        struct mpe_req *r = mpe_reqq_pop(&c->data);
        w.type = MPE_W_DATA;
        w.handle = r->handle; /* the receiver's */
        w.len = r->sent;      /* bytes the receiver wants, set from the CTS */
        t->req = r;
        t->payload = r->buf;
        t->plen = r->sent;
    } else if (c->msgs.head && c->credit_descs > 0) {
        struct mpe_req *r = c->msgs.head;
        int eager = r->len <= MPE_NET_INLINE ||
                    (r->len <= MPE_NET_EAGER && c->credit_slots > 0 && !(r->flags & MPE_SYNC));
        if (r->flags & MPE_SYNC)
            eager = 0;
        if (!eager && c->rdv_out.used == MPE_HANDLES)
            return 0; /* every rendezvous handle in use: wait for a CTS */
        mpe_reqq_pop(&c->msgs);
        c->credit_descs--;
        w.ctx = r->m.key.comm;
        w.src = r->m.key.src;
        w.tag = r->m.key.tag;
        w.dst_world = (uint32_t)r->dst_world;
        w.src_world = (uint32_t)r->src_world;
        w.len = r->len;
        if (eager) {
            if (r->len > MPE_NET_INLINE)
                c->credit_slots--;
            w.type = MPE_W_EAGER;
            t->req = r;
            if (r->len > MPE_TX_GLUE) {
                t->payload = r->buf;
                t->plen = r->len;
            } else {
                if (r->len)
                    memcpy(t->hdr + MPE_WIRE_HDR, r->buf, r->len); /* sent with the header */
                t->hlen = r->len;
            }
        } else {
            w.type = MPE_W_RTS;
            w.handle = mpe_handle_new(&c->rdv_out, r);
        }
    } else {
        return 0;
    }
    w.seq = c->tx_seq++;
    mpe_wire_encode(&w, t->hdr);
    t->hlen += MPE_WIRE_HDR;
    t->active = 1;
    return 1;
}

/* Under the network lock: send as much as the transport takes. */
void mpe_tx_pump(struct mpe_conn *c)
{
    struct mpe_tx *t = &c->cur;
    if (c->failed || c->pumping || !c->transport) /* not attached yet: mpe_conn_attach pumps */
        return;
    c->pumping = 1; /* plat_net_send may call back into mpe_net_sent() */
    for (;;) {
        if (!t->active && !tx_next(c))
            break;
        long n;
        if (t->hoff < t->hlen) {
            n = plat_net_send(c->transport, t->hdr + t->hoff, t->hlen - t->hoff);
            if (n > 0)
                t->hoff += (size_t)n;
        } else if (t->poff < t->plen) {
            n = plat_net_send(c->transport, (const uint8_t *)t->payload + t->poff,
                              t->plen - t->poff);
            if (n > 0)
                t->poff += (uint64_t)n;
        } else {
            n = 1;
        }
        if (n < 0) {
            c->pumping = 0;
            mpe_net_failed(c, "send failed");
            return;
        }
        if (n == 0)
            break;
        if (t->hoff == t->hlen && t->poff == t->plen) {
            /* The transport copied it all: an EAGER or DATA send is complete. */
            if (t->req)
                mpe_complete(t->req, 0);
            t->active = 0;
        }
    }
    c->pumping = 0;
}

void mpe_net_sent(struct mpe_conn *c)
{
    mpe_tx_pump(c);
}

/* Task context of the sender. */
int mpe_net_isend(struct mpe_node *n, struct mpe_rank *self, struct mpe_req *r)
{
    struct mpe_conn *c = n->conn[mpe_node_of(n, r->dst_world)];
    if (!c)
        return -MPE_ERANK;
    r->src_world = self->world;
    self->net_sends++;
    if (r->len > MPE_NET_EAGER || (r->flags & MPE_SYNC))
        self->rendezvous++;
    int t = plat_net_lock();
    if (c->failed) {
        plat_net_unlock(t);
        return -MPE_EPEER;
    }
    mpe_reqq_push(&c->msgs, r);
    mpe_tx_pump(c);
    plat_net_unlock(t);
    return 0;
}

/* Task context: HELLO and BYE. */
void mpe_net_control(struct mpe_conn *c, int type, uint32_t aux, uint32_t aux2)
{
    struct mpe_wire w = {.type = (uint8_t)type, .aux = aux, .aux2 = aux2};
    int t = plat_net_lock();
    mpe_ctl_push(c, &w);
    mpe_tx_pump(c);
    plat_net_unlock(t);
}

/* Under the network lock: give a descriptor (and its slot) back, and tell the sender once
 * enough has come back that a CREDIT header is worth it. */
void mpe_desc_put(struct mpe_conn *c, struct mpe_msg *m)
{
    if (m->slot >= 0) {
        c->free_slot[c->nfree_slots++] = m->slot;
        c->ret_slots++;
    }
    m->free_next = c->free_descs;
    c->free_descs = m;
    mpe_net_credit(c, 0);
}

/* Under the network lock; see mpe_internal.h. */
void mpe_net_credit(struct mpe_conn *c, int slot)
{
    c->ret_slots += slot ? 1u : 0u;
    c->ret_descs++;
    if (c->ret_descs >= MPE_NET_DESCS / 8 || c->ret_slots >= MPE_NET_SLOTS / 4) {
        struct mpe_wire w = {.type = MPE_W_CREDIT, .aux = c->ret_descs, .aux2 = c->ret_slots};
        c->ret_descs = c->ret_slots = 0;
        mpe_ctl_push(c, &w);
        mpe_tx_pump(c);
    }
}

/* Under the network lock; see mpe_internal.h. r->count: the bytes wanted. */
void mpe_net_cts(struct mpe_conn *c, struct mpe_req *r, uint32_t handle)
{
    uint32_t h = mpe_handle_new(&c->rdv_in, r);
    if (!h)
        plat_fatal("connection to node %d: too many rendezvous receives", c->peer);
    struct mpe_wire w = {.type = MPE_W_CTS, .handle = handle, .aux = h, .len = r->count};
    mpe_ctl_push(c, &w);
}

/* Under the receiver's engine lock, any context: receive r takes net message m. */
void mpe_net_bind(struct mpe_msg *m, struct mpe_req *r)
{
    struct mpe_conn *c = m->conn;
    mpe_recv_status(r, m);
    int t = plat_net_lock();
    if (m->type == MSG_NET_RTS) {
        mpe_net_cts(c, r, m->handle);
        mpe_desc_put(c, m);
        mpe_tx_pump(c);
    } else {
        m->rreq = r;
        uint32_t rx = MSG_RX;
        if (!__atomic_compare_exchange_n(&m->state, &rx, MSG_BOUND, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            /* The payload is complete already (MSG_DONE): copy it now. */
            mpe_copy(r->buf, m->data, r->count);
            mpe_desc_put(c, m);
            mpe_complete(r, 0);
        }
        /* else mpe_net_rx() finishes it when the last payload byte lands. */
    }
    plat_net_unlock(t);
}

/* Under the network lock. */
void mpe_net_failed(struct mpe_conn *c, const char *why)
{
    if (c->failed)
        return;
    c->failed = 1;
    if (c->node->finalizing && c->bye_seen)
        return; /* the peer finished and left: not an error */
    plat_fatal("connection to node %d failed (%s) while the job was running", c->peer, why);
}
