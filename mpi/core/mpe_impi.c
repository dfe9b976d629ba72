/*
 * mpe_impi.c: IMPI links (mpe_impi.h): set-up from what the start-up decided, the sending
 * side, and each link's life (attach, failure, FINI). The receive side is mpe_impi_rx.c.
 */
#include "mpe_impi.h"
#include "mpe_transport.h"
#include <string.h>

#define MPE_IMPI_MSGS 4096 /* descriptors of unexpected IMPI messages per node */

/* Any context: flow state of a local rank's pairs (i: index among the node's ranks). */
struct impi_flow_tx *mpe_impi_ftx(struct mpe_impi *im, int i, int w)
{
    return &im->ftx[(size_t)i * (size_t)im->world + (size_t)w];
}

struct impi_flow_rx *mpe_impi_frx(struct mpe_impi *im, int i, int w)
{
    return &im->frx[(size_t)i * (size_t)im->world + (size_t)w];
}

uint32_t mpe_impi_ip(const struct mpe_ilink *l)
{
    const struct mpe_impi *im = l->node->impi;
    return impi_hostid_ipv4(im->procs[im->host_first[l->host]].hostid);
}

/* Under the network lock; see mpe_impi.h. */
void mpe_impi_bad(struct mpe_ilink *l, const char *what, const char *why)
{
    l->failed = 1;
    plat_fatal(MPE_IMPI_HOST_FMT ": bad %s packet: %s", MPE_IMPI_HOST_ARGS(l), what, why);
}

/* Task context (job start); see mpe_transport.h. */
int mpe_impi_setup(struct mpe_node *n, const struct mpe_impi_cfg *cfg, const char **why)
{
    int world = mpe_world_size(n), nh = cfg->nhosts;
    struct impi_flow_cfg flow = {.ackmark = cfg->ackmark, .hiwater = cfg->hiwater};
    *why = "the start-up tables do not describe this job";
    if (n->nclients < 2 || nh < 2 || cfg->self_host < 0 || cfg->self_host >= nh ||
        cfg->host_first[0] != 0 || cfg->host_first[nh] != world)
        return -1;
    for (int h = 0; h < nh; h++)
        if (cfg->host_first[h + 1] < cfg->host_first[h])
            return -1;
    /* Our node is one host, running exactly the node's ranks. */
    if (cfg->host_first[cfg->self_host] != n->first ||
        cfg->host_first[cfg->self_host + 1] != n->first + n->count)
        return -1;
    *why = "bad flow-control or packet-size parameters";
    if (impi_flow_cfg_check(&flow) != IMPI_OK || cfg->maxlen == 0)
        return -1;
    *why = "out of memory";
    struct mpe_impi *im = plat_alloc(sizeof *im);
    if (!im)
        return -1;
    im->flow = flow;
    im->maxlen = cfg->maxlen;
    im->world = world;
    im->nhosts = nh;
    im->self_host = cfg->self_host;
    im->host_first = plat_alloc((size_t)(nh + 1) * sizeof *im->host_first);
    im->link = plat_alloc((size_t)nh * sizeof *im->link);
    im->host_of = plat_alloc((size_t)world * sizeof *im->host_of);
    im->procs = plat_alloc((size_t)world * sizeof *im->procs);
    im->ftx = plat_alloc((size_t)n->count * (size_t)world * sizeof *im->ftx);
    im->frx = plat_alloc((size_t)n->count * (size_t)world * sizeof *im->frx);
    im->pool = mpe_ipool_create(cfg->pool_bytes, cfg->maxlen);
    struct mpe_msg *msgs = plat_alloc(MPE_IMPI_MSGS * sizeof *msgs);
    if (!im->host_first || !im->link || !im->host_of || !im->procs || !im->ftx || !im->frx ||
        !im->pool || !msgs)
        return -1;
    memcpy(im->host_first, cfg->host_first, (size_t)(nh + 1) * sizeof *im->host_first);
    memcpy(im->procs, cfg->procs, (size_t)world * sizeof *im->procs);
    for (int h = 0; h < nh; h++)
        for (int w = cfg->host_first[h]; w < cfg->host_first[h + 1]; w++)
            im->host_of[w] = h;
    for (int i = 0; i < MPE_IMPI_MSGS; i++) {
        msgs[i].free_next = im->free_msgs;
        im->free_msgs = &msgs[i];
    }
    for (int h = 0; h < nh; h++) {
        if (mpe_in_client(n, (uint32_t)cfg->host_first[h]) ||
            cfg->host_first[h] == cfg->host_first[h + 1])
            continue; /* our own client's hosts talk natively; a host without procs: none */
        struct mpe_ilink *l = plat_alloc(sizeof *l);
        if (!l)
            return -1;
        l->node = n;
        l->host = h;
        im->link[h] = l;
    }
    n->impi = im;
    return 0;
}

/* Any context. */
struct mpe_ilink *mpe_impi_link(struct mpe_node *n, int host)
{
    return n->impi && host >= 0 && host < n->impi->nhosts ? n->impi->link[host] : 0;
}

/* Under the network lock; see mpe_impi.h. */
struct mpe_msg *mpe_impi_msg_get(struct mpe_impi *im)
{
    struct mpe_msg *m = im->free_msgs;
    if (m)
        im->free_msgs = m->free_next;
    return m;
}

void mpe_impi_msg_put(struct mpe_impi *im, struct mpe_msg *m)
{
    if (m->data && m->data != m->inl)
        mpe_ipool_put(im->pool, m->data);
    m->data = 0;
    m->free_next = im->free_msgs;
    im->free_msgs = m;
}

/* Under the network lock; see mpe_impi.h. SYNCACK and CANCELNO count toward the pair's
 * flow control like data (LAM counts them), but never wait for it: a receiver does not
 * police hiwater, and an acknowledgement held back behind data could be what that data
 * waits for. */
void mpe_impi_ctl(struct mpe_ilink *l, uint32_t type, int self, int peer, uint64_t srqid,
                  uint64_t drqid)
{
    struct mpe_impi *im = l->node->impi;
    static const struct impi_proc none = {.pid = -1};
    if (l->fini_out)
        return; /* our FINI is queued: nothing may follow it on the stream (§9) */
    if (l->ctl_n == MPE_IMPI_CTL)
        plat_fatal(MPE_IMPI_HOST_FMT ": control queue overflow (the host does not read)",
                   MPE_IMPI_HOST_ARGS(l));
    struct impi_pkt *p = &l->ctl[(l->ctl_head + l->ctl_n) % MPE_IMPI_CTL];
    impi_pkt_control(p, type, self < 0 ? &none : &im->procs[self],
                     peer < 0 ? &none : &im->procs[peer]);
    p->srqid = srqid;
    p->drqid = drqid;
    l->ctl_n++;
    if (self >= 0 && impi_flow_counts(type))
        mpe_impi_ftx(im, self - l->node->first, peer)->unacked++;
    mpe_impi_pump(l);
}

/* Under the network lock: take r (after prev; NULL: r is the head) out of the FIFO. */
static void sendq_unlink(struct mpe_reqq *q, struct mpe_req *prev, struct mpe_req *r)
{
    if (prev)
        prev->next = r->next;
    else
        q->head = r->next;
    if (q->tail == r)
        q->tail = prev;
}

/* Under the network lock: fill the header of the next packet of send r (in the FIFO after
 * prev) if its pair may send; r leaves the FIFO when this is its last packet for now.
 * 1: a packet; 0: r's pair is at hiwater (later sends of other pairs may go); -1: no
 * handle for a DATASYNC (nothing may go: a later send of r's pair would overtake it). */
static int data_packet(struct mpe_ilink *l, struct mpe_req *prev, struct mpe_req *r,
                       struct impi_pkt *p)
{
    struct mpe_impi *im = l->node->impi;
    struct mpe_itx *t = &l->cur;
    struct impi_flow_tx *f = mpe_impi_ftx(im, r->src_world - l->node->first, r->dst_world);
    if (!impi_flow_can_send(&im->flow, f))
        return 0; /* hiwater: this pair's sends wait for its PROTOACK */
    uint64_t left = r->len - r->sent, plen = left < im->maxlen ? left : im->maxlen;
    memset(p, 0, sizeof *p);
    p->src = im->procs[r->src_world];
    p->dest = im->procs[r->dst_world];
    p->msglen = r->len;
    p->lsrank = r->src_world; /* LAM reads the sender's world rank here (§5) */
    p->tag = r->m.key.tag;
    p->cid = r->m.key.comm == MPE_IMPI_LAM_CTX ? MPE_IMPI_LAM_CID : r->m.key.comm;
    p->type = IMPI_PK_DATA;
    if (r->sent == 0 && !r->peer_handle &&
        ((r->flags & MPE_SYNC) || r->len > im->maxlen)) { /* §7.1 ssend, §7.2 first packet */
        uint32_t h = mpe_handle_new(&l->rdv_out, r);
        if (!h)
            return -1; /* every handle waits for a SYNCACK */
        r->handle = h;
        p->type = IMPI_PK_DATASYNC;
        p->srqid = h;
        sendq_unlink(&l->sendq, prev, r); /* back with the SYNCACK */
    } else {
        p->srqid = r->handle;
        p->drqid = r->peer_handle;
        if (r->sent + plen == r->len) {
            sendq_unlink(&l->sendq, prev, r);
            t->done = r; /* complete once the transport took the last byte */
        }
    }
    p->len = (uint32_t)plen;
    t->req = r;
    t->payload = (const uint8_t *)r->buf + r->sent;
    t->plen = plen;
    r->sent += plen;
    f->unacked++;
    return 1;
}

/* Under the network lock: start the next packet, if any may go: control first, then the
 * first send in the FIFO whose pair is below hiwater (MPI orders messages per pair only,
 * and a pair's sends all wait together, so none overtakes another of its pair). Nothing
 * after our FINI (§9). 1 if cur is now active. */
static int tx_next(struct mpe_ilink *l)
{
    struct mpe_itx *t = &l->cur;
    struct impi_pkt p;
    memset(t, 0, sizeof *t);
    if (l->fini_sent)
        return 0;
    if (l->ctl_n) {
        p = l->ctl[l->ctl_head];
        l->ctl_head = (l->ctl_head + 1) % MPE_IMPI_CTL;
        l->ctl_n--;
        l->fini_sent = p.type == IMPI_PK_FINI;
    } else {
        int k = 0;
        for (struct mpe_req *r = l->sendq.head, *prev = 0; r && !k; prev = r, r = r->next)
            k = data_packet(l, prev, r, &p);
        if (k <= 0)
            return 0;
    }
    p.seqnum = l->seq++;
    impi_pkt_encode(&p, t->hdr);
    t->active = 1;
    return 1;
}

/* Under the network lock: send as much as the transport takes. */
void mpe_impi_pump(struct mpe_ilink *l)
{
    struct mpe_itx *t = &l->cur;
    if (l->failed || !l->transport)
        return; /* not attached yet: mpe_impi_attach pumps */
    for (;;) {
        if (!t->active && !tx_next(l))
            break;
        long n = 1;
        if (t->hoff < IMPI_PKT_HDR_LEN) {
            n = plat_net_send(l->transport, t->hdr + t->hoff, IMPI_PKT_HDR_LEN - t->hoff);
            if (n > 0)
                t->hoff += (size_t)n;
        } else if (t->poff < t->plen) {
            n = plat_net_send(l->transport, t->payload + t->poff, t->plen - t->poff);
            if (n > 0)
                t->poff += (uint64_t)n;
        }
        if (n < 0) {
            mpe_impi_failed(l, "send failed");
            return;
        }
        if (n == 0)
            break;
        if (t->hoff == IMPI_PKT_HDR_LEN && t->poff == t->plen) {
            t->active = 0;
            if (t->done)
                mpe_complete(t->done, 0);
        }
    }
}

/* Task context of the sender; see mpe_impi.h. */
int mpe_impi_isend(struct mpe_node *n, struct mpe_rank *self, struct mpe_req *r)
{
    struct mpe_impi *im = n->impi;
    struct mpe_ilink *l = im ? im->link[im->host_of[r->dst_world]] : 0;
    if (!l)
        return -MPE_ERANK;
    if (r->m.key.comm >= MPE_IMPI_WCTX && r->m.key.comm != MPE_IMPI_LAM_CTX)
        return -MPE_EINVAL; /* only MPI_COMM_WORLD spans clients (mpe_impi.h) */
    r->src_world = self->world;
    r->sent = 0;
    r->peer_handle = 0;
    self->net_sends++;
    if (r->len > im->maxlen || (r->flags & MPE_SYNC))
        self->rendezvous++;
    int t = plat_net_lock();
    if (l->failed || l->fini_out) {
        plat_net_unlock(t);
        return -MPE_EPEER;
    }
    mpe_reqq_push(&l->sendq, r);
    mpe_impi_pump(l);
    plat_net_unlock(t);
    return 0;
}

/* Under the network lock; see mpe_transport.h. */
void mpe_impi_attach(struct mpe_ilink *l, void *transport)
{
    l->transport = transport;
    mpe_impi_pump(l);
}

void *mpe_impi_transport(const struct mpe_ilink *l)
{
    return l->transport;
}

void mpe_impi_sent(struct mpe_ilink *l)
{
    mpe_impi_pump(l);
}

void mpe_impi_failed(struct mpe_ilink *l, const char *why)
{
    if (l->failed)
        return;
    l->failed = 1;
    if (l->fini_in && l->fini_out)
        return; /* the host finished and closed: not an error */
    plat_fatal(MPE_IMPI_HOST_FMT " failed (%s) while the job was running", MPE_IMPI_HOST_ARGS(l),
               why);
}

/* Task context; see mpe_transport.h. */
void mpe_impi_finish(struct mpe_node *n)
{
    if (!n->impi)
        return;
    for (int h = 0; h < n->impi->nhosts; h++) {
        struct mpe_ilink *l = n->impi->link[h];
        if (!l)
            continue;
        int t = plat_net_lock();
        mpe_impi_ctl(l, IMPI_PK_FINI, -1, -1, 0, 0);
        l->fini_out = 1;
        plat_net_unlock(t);
    }
}

/* Any context; see mpe_transport.h. */
int mpe_impi_done(const struct mpe_ilink *l)
{
    return l->fini_in && l->fini_out && !l->ctl_n && !l->cur.active && !l->sendq.head;
}

/* Under the network lock; see mpe_transport.h. */
uint32_t mpe_impi_late(const struct mpe_ilink *l, uint32_t *pkts, const char **type, int *rank)
{
    *pkts = l->late;
    *type = l->late_msgs ? impi_pkt_type_name(l->late_type) : "";
    *rank = l->late_msgs ? l->late_rank : -1;
    return l->late_msgs;
}
