/*
 * mpe_impi_rx.c: the receive side of an IMPI link (mpe_impi.h): a parser of the packet
 * stream, called from the transport's receive callback (the NIC interrupt on the
 * unikernel, under the network lock), and the binding of a receive to a message that
 * arrived before it.
 *
 * A header is gathered (it may straddle pbufs), decoded and checked by the codec
 * (mpi/impi/impi_packet.c), then checked against the job: its procs must be the link's
 * host's and ours, its context MPI_COMM_WORLD's, its handles ours. The first packet of a
 * message is matched at once (match_rank_arrive), and its payload streams into the
 * receive when one is posted, else into a pool buffer that the receive copies from once
 * it comes (the state handshake of mpe_net_rx.c: MSG_RX, MSG_DONE, MSG_BOUND). A message
 * longer than one packet continues only after our SYNCACK, straight into the receive.
 * Anything wrong ends the job naming the host: delivering wrong data would be worse.
 */
#include "mpe_impi.h"
#include <string.h>

/* Under the network lock: the world rank of a proc of the link's host, or -1. The last
 * match is tried first: a stream comes from few procs in turn, and this runs per packet. */
static int source_rank(struct mpe_ilink *l, const struct impi_proc *p)
{
    const struct mpe_impi *im = l->node->impi;
    int first = im->host_first[l->host], end = im->host_first[l->host + 1];
    if (l->last_src >= first && l->last_src < end && impi_proc_eq(&im->procs[l->last_src], p))
        return l->last_src;
    for (int w = first; w < end; w++)
        if (impi_proc_eq(&im->procs[w], p))
            return l->last_src = w;
    return -1;
}

/* Under the network lock: the node's rank a packet is for, or NULL. Our own start-up
 * makes a proc's pid its rank within our client (impi_client.c), which is tried first;
 * other tables (tests) are searched. */
static struct mpe_rank *dest_rank(struct mpe_ilink *l, const struct impi_proc *p)
{
    struct mpe_node *n = l->node;
    const struct mpe_impi *im = n->impi;
    int64_t i = p->pid - (n->first - n->base);
    if (i >= 0 && i < n->count && impi_proc_eq(&im->procs[n->first + i], p))
        return &n->ranks[i];
    for (i = 0; i < n->count; i++)
        if (impi_proc_eq(&im->procs[n->first + i], p))
            return &n->ranks[i];
    return 0;
}

/* Under the network lock: receive r holds the first packet of m (its bytes are in r's
 * buffer): acknowledge a synchronous or long message, and finish or wait for the rest. */
static void matched(struct mpe_ilink *l, struct mpe_msg *m, struct mpe_req *r)
{
    struct mpe_impi *im = l->node->impi;
    if (m->len == m->first_len) {
        if (m->sync)
            mpe_impi_ctl(l, IMPI_PK_SYNCACK, m->dst_world, m->src_world, m->srqid, 0);
        mpe_impi_msg_put(im, m);
        mpe_complete(r, 0);
        return;
    }
    uint32_t h = mpe_handle_new(&l->rdv_in, r);
    if (!h)
        plat_fatal(MPE_IMPI_HOST_FMT ": too many long messages in flight", MPE_IMPI_HOST_ARGS(l));
    r->sent = m->first_len; /* a receive's progress: bytes of the message arrived */
    r->peer_handle = m->len;
    r->src_world = m->src_world; /* the pair its continuations must come from and go to */
    r->dst_world = m->dst_world;
    mpe_impi_ctl(l, IMPI_PK_SYNCACK, m->dst_world, m->src_world, m->srqid, h);
    mpe_impi_msg_put(im, m);
}

/* Under the receiver's engine lock, any context; see mpe_impi.h. */
void mpe_impi_bind(struct mpe_msg *m, struct mpe_req *r)
{
    struct mpe_ilink *l = m->ilink;
    mpe_recv_status(r, m);
    int t = plat_net_lock();
    m->rreq = r;
    uint32_t rx = MSG_RX;
    if (!__atomic_compare_exchange_n(&m->state, &rx, MSG_BOUND, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        /* The first packet is in (MSG_DONE): copy it now. */
        mpe_copy(r->buf, m->data, r->count < m->first_len ? r->count : m->first_len);
        matched(l, m, r);
    }
    /* else the receive callback finishes it when the packet's last byte lands. */
    plat_net_unlock(t);
}

/* The payload of the current packet has all arrived. */
static void payload_done(void *arg)
{
    struct mpe_ilink *l = arg;
    struct mpe_irx *x = &l->rx;
    struct mpe_msg *m = x->msg;
    if (!m) { /* a continuation */
        if (x->last)
            mpe_complete(x->rreq, 0);
        return;
    }
    if (x->rreq) { /* matched before its first byte: it is in the receive already */
        matched(l, m, x->rreq);
        return;
    }
    uint32_t rx = MSG_RX;
    if (__atomic_compare_exchange_n(&m->state, &rx, MSG_DONE, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return;                  /* waits in the unexpected queue for a receive */
    struct mpe_req *r = m->rreq; /* bound while the payload streamed into the buffer */
    mpe_copy(r->buf, m->data, r->count < m->first_len ? r->count : m->first_len);
    matched(l, m, r);
}

static void first_packet(struct mpe_ilink *l, const struct impi_pkt *p, int src,
                         struct mpe_rank *dst)
{
    struct mpe_impi *im = l->node->impi;
    struct mpe_irx *x = &l->rx;
    const char *what = impi_pkt_type_name(p->type);
    if (p->cid >= MPE_IMPI_WCTX && p->cid != MPE_IMPI_LAM_CID)
        plat_fatal(MPE_IMPI_HOST_FMT
                   ": a message on context id %llu, not MPI_COMM_WORLD's: a "
                   "collective or communicator the peer runs outside IMPI, which this MPI "
                   "cannot join",
                   MPE_IMPI_HOST_ARGS(l), (unsigned long long)p->cid);
    if (p->len < p->msglen && p->type != IMPI_PK_DATASYNC)
        mpe_impi_bad(l, what, "part of a message without the SYNCACK handshake");
    struct mpe_msg *m = mpe_impi_msg_get(im);
    if (!m)
        plat_fatal(MPE_IMPI_HOST_FMT ": more unexpected messages than this node keeps",
                   MPE_IMPI_HOST_ARGS(l));
    memset(m, 0, offsetof(struct mpe_msg, inl));
    m->m.key.comm = p->cid == MPE_IMPI_LAM_CID ? MPE_IMPI_LAM_CTX : (uint32_t)p->cid;
    m->m.key.src = src; /* MPI_COMM_WORLD: the communicator rank is the world rank */
    m->m.key.tag = p->tag;
    m->type = MSG_IMPI;
    m->slot = -1;
    m->len = p->msglen;
    m->first_len = p->len;
    m->sync = p->type == IMPI_PK_DATASYNC;
    m->srqid = p->srqid;
    m->ilink = l;
    m->src_world = src;
    m->dst_world = dst->world;
    match_rank_arrive(&dst->mr, &m->m);
    x->msg = m;
    x->rreq = 0;
    x->f.keep = p->len;
    if (__atomic_load_n(&m->state, __ATOMIC_ACQUIRE) == MSG_BOUND) {
        /* Matched right here in the interrupt: the payload goes to the user buffer. */
        x->rreq = m->rreq;
        x->f.dst = x->rreq->buf;
        x->f.keep = x->rreq->count < p->len ? x->rreq->count : p->len;
    } else {
        /* Unexpected: a buffer for the payload, taken only now so that a full pool ends
         * the job only for a message that needs it. A receive that binds m from now on
         * (mpe_impi_bind) touches only rreq and state; payload_done copies from data. */
        m->data = p->len <= MPE_NET_INLINE ? m->inl : mpe_ipool_get(im->pool, p->len);
        if (!m->data)
            plat_fatal(MPE_IMPI_HOST_FMT ": unreceived messages from other clients exceed this "
                                         "node's %llu-byte buffer (UKMPI_IMPI_BUFFER)",
                       MPE_IMPI_HOST_ARGS(l), (unsigned long long)mpe_ipool_bytes(im->pool));
        x->f.dst = m->data;
        mpe_wake(dst);
    }
    x->f.in_payload = 1;
    x->f.want = p->len;
    x->f.got = 0;
}

/* A DATA packet from world rank src to dst after our SYNCACK: more of the message
 * received by handle p->drqid. */
static void continuation(struct mpe_ilink *l, const struct impi_pkt *p, int src, int dst)
{
    struct mpe_irx *x = &l->rx;
    struct mpe_req *r = mpe_handle_peek(&l->rdv_in, (uint32_t)p->drqid);
    if (!r || p->drqid > UINT32_MAX)
        mpe_impi_bad(l, "DATA", "unknown receiver handle (drqid)");
    if (r->src_world != src || r->dst_world != dst)
        mpe_impi_bad(l, "DATA", "its procs are not those of the message its drqid names");
    if (p->msglen != r->peer_handle || p->len > r->peer_handle - r->sent)
        mpe_impi_bad(l, "DATA", "more data than its message holds");
    x->msg = 0;
    x->rreq = r;
    x->f.keep = r->count > r->sent ? r->count - r->sent : 0;
    x->f.keep = x->f.keep < p->len ? x->f.keep : p->len;
    x->f.dst = x->f.keep ? (uint8_t *)r->buf + r->sent : 0;
    x->f.want = p->len;
    x->f.got = 0;
    x->f.in_payload = 1;
    r->sent += p->len;
    x->last = r->sent == r->peer_handle;
    if (x->last)
        mpe_handle_take(&l->rdv_in, (uint32_t)p->drqid);
}

/* A SYNCACK from world rank src to dst for our DATASYNC p->srqid: a short ssend is done,
 * a long send goes on. */
static void syncack(struct mpe_ilink *l, const struct impi_pkt *p, int src, int dst)
{
    struct mpe_req *r =
        p->srqid <= UINT32_MAX ? mpe_handle_take(&l->rdv_out, (uint32_t)p->srqid) : 0;
    if (!r || r->dst_world != src || r->src_world != dst)
        mpe_impi_bad(l, "SYNCACK", "it answers no DATASYNC of ours to that proc");
    if (r->sent == r->len) {
        /* A peer may match on the header and answer while the transport still takes the
         * DATASYNC's payload from the user's buffer: complete after its last byte. */
        if (l->cur.active && l->cur.req == r)
            l->cur.done = r;
        else
            mpe_complete(r, 0);
        return;
    }
    if (!p->drqid)
        mpe_impi_bad(l, "SYNCACK", "no receiver handle for the rest of a long message");
    r->peer_handle = p->drqid;
    mpe_reqq_push(&l->sendq, r);
    mpe_impi_pump(l);
}

/* A packet after our FINI, other than the host's FINI and PROTOACK (which only returns
 * credit for packets we sent before it and asks for nothing). Our stream is closed (§9)
 * and our ranks have finished: nothing may answer it and nobody would receive it. It is
 * read for its framing only, so that the host's FINI behind it is still found and the
 * link closes cleanly, then dropped; counted, and a message to a rank of ours noted for
 * the platform's one report (mpe_impi_late). */
static void late_packet(struct mpe_ilink *l, const struct impi_pkt *p)
{
    struct mpe_irx *x = &l->rx;
    l->late++;
    if (!impi_pkt_has_payload(p->type))
        return;
    struct mpe_rank *dst = dest_rank(l, &p->dest);
    if (dst && !l->late_msgs++) {
        l->late_type = p->type;
        l->late_rank = dst->world;
    }
    x->msg = 0; /* payload_done: neither a first packet nor a continuation to complete */
    x->rreq = 0;
    x->last = 0;
    x->f.keep = 0;
    x->f.dst = 0;
    x->f.want = p->len;
    x->f.got = 0;
    x->f.in_payload = 1;
}

static void on_header(void *arg)
{
    struct mpe_ilink *l = arg;
    struct mpe_impi *im = l->node->impi;
    struct impi_pkt p;
    int e = impi_pkt_decode(l->rx.hdr, im->maxlen, &p);
    if (e)
        mpe_impi_bad(l, "IMPI", impi_strerror(e));
    const char *what = impi_pkt_type_name(p.type);
    if (l->fini_in)
        mpe_impi_bad(l, what, "it came after FINI");
    if (p.type == IMPI_PK_FINI) {
        /* Nothing follows FINI on this stream: what we still wait for would never come. */
        if (l->rdv_in.used)
            mpe_impi_bad(l, what, "a long message from that host is not all here");
        if (l->rdv_out.used)
            mpe_impi_bad(l, what, "a message of ours waits for its SYNCACK");
        l->fini_in = 1;
        return;
    }
    if (l->fini_out && p.type != IMPI_PK_PROTOACK) {
        late_packet(l, &p);
        return;
    }
    /* Every other packet is between a proc of that host and one of ours. */
    int src = source_rank(l, &p.src);
    struct mpe_rank *dst = dest_rank(l, &p.dest);
    if (src < 0 || !dst)
        mpe_impi_bad(l, what,
                     src < 0 ? "its source is not a proc of that host"
                             : "its destination is not a proc of this node");
    int i = dst->world - l->node->first;
    if (p.type == IMPI_PK_PROTOACK) {
        if (impi_flow_acked(&im->flow, mpe_impi_ftx(im, i, src)) != IMPI_OK)
            mpe_impi_bad(l, what, "it acknowledges packets never sent");
        mpe_impi_pump(l);
        return;
    }
    bool due;
    impi_flow_received(&im->flow, mpe_impi_frx(im, i, src), p.type, &due);
    if (due) /* acknowledged on arrival, whatever the receiver does (mpe_impi.h) */
        mpe_impi_ctl(l, IMPI_PK_PROTOACK, dst->world, src, 0, 0);
    switch (p.type) {
    case IMPI_PK_DATA:
        if (p.drqid)
            continuation(l, &p, src, dst->world);
        else
            first_packet(l, &p, src, dst);
        return;
    case IMPI_PK_DATASYNC:
        first_packet(l, &p, src, dst);
        return;
    case IMPI_PK_SYNCACK:
        syncack(l, &p, src, dst->world);
        return;
    case IMPI_PK_CANCEL: /* we never match a cancelled message away: always NO (§7.4) */
        mpe_impi_ctl(l, IMPI_PK_CANCELNO, dst->world, src, p.srqid, 0);
        return;
    default: /* CANCELYES, CANCELNO */
        mpe_impi_bad(l, what, "it answers a CANCEL we never sent");
    }
}

/* Under the network lock (the transport's receive callback); see mpe_transport.h. */
void mpe_impi_rx(struct mpe_ilink *l, const void *data, size_t len)
{
    mpe_frame_feed(&l->rx.f, l->rx.hdr, IMPI_PKT_HDR_LEN, data, len, on_header, payload_done, l,
                   &l->failed);
}
