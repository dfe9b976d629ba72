/*
 * wio_rx.c: the receive path. Consumes a connection's byte stream incrementally: header
 * bytes are collected into the connection (a header may span calls), then validated
 * (wio_hdr_check, every check of PROTOCOL.md 2) and acted on; payload bytes go straight
 * into the posted receive's buffer (EAGER matched at header time, DATA of a rendezvous), or
 * into one bounded unexpected record (an EAGER nobody waits for yet). Never blocks; the
 * only allocation is that record. Safe in a NIC interrupt: everything runs under the lock.
 */
#include "wio_core.h"
#include <string.h>

/* Under the lock: the rendezvous h->msgid names, for the check. CTS: one of our sends
 * waiting for it; DATA: one of our receives whose CTS went out. Lists are in the order the
 * peer answers them, so the head is the usual hit. */
static struct wio_req *rdv_find(struct wio_conn *k, const struct wio_hdr *h, struct wio_rdv_view *v)
{
    struct wio_peer *p = k->peer;
    memset(v, 0, sizeof *v);
    if (!p || k->phase != WIO_PH_OPEN)
        return NULL;
    struct wio_req *r = NULL;
    if (h->type == WIO_T_CTS) {
        for (r = p->waitcts.head; r && r->msgid != h->msgid; r = r->next)
            ;
        if (r)
            v->len = r->len;
    } else if (h->type == WIO_T_DATA) {
        for (r = p->recving.head; r && r->msgid != h->msgid; r = r->next)
            ;
        if (r) {
            v->len = r->mlen;
            v->take = r->len < r->mlen ? r->len : r->mlen;
            v->done = r->done;
        }
    }
    v->live = r != NULL;
    return r;
}

/* Under the lock: the message of an EAGER or RTS header meets receive r (unlinked from
 * the posted queue). EAGER: its payload will go into r's buffer; RTS: owe a CTS. */
static void matched(struct wio_conn *k, const struct wio_hdr *h, struct wio_req *r)
{
    r->mlen = h->len;
    if (h->type == WIO_T_EAGER) {
        k->pay_req = r;
        k->pay_dst = (uint8_t *)r->buf;
        k->pay_room = r->len;
        return;
    }
    r->msgid = h->msgid;
    r->state = WIO_S_DATA;
    wio_list_push(&k->peer->txq, r); /* its CTS */
}

/* Under the lock, any context: tell the user receive r (mlen set) was truncated. */
void wio_log_trunc(struct wio_core *c, const struct wio_req *r)
{
    char line[WIO_TEXT];
    struct wio_text t;
    wio_text_init(&t, line, sizeof line);
    wio_text_str(&t, "waitio: receive of ");
    wio_text_u64(&t, r->len);
    wio_text_str(&t, " bytes from ");
    wio_text_peer(&t, c, r->src);
    wio_text_str(&t, " truncated: the message has ");
    wio_text_u64(&t, r->mlen);
    wio_text_str(&t, " bytes");
    wio_plat_log(c, line);
}

/* Under the lock: a receive got all it takes; finish it (truncation is an error). */
static void recv_done(struct wio_core *c, struct wio_req *r)
{
    if (r->mlen > r->len) {
        wio_log_trunc(c, r);
        wio_req_complete(r, WIO_R_TRUNC);
    } else {
        r->done = r->mlen;
        wio_req_complete(r, WIO_R_OK);
    }
}

/* Under the lock: the payload of k->cur has fully arrived. */
static void payload_done(struct wio_conn *k)
{
    struct wio_core *c = k->core;
    const struct wio_hdr *h = &k->cur;
    if (h->type == WIO_T_EAGER && k->pay_req) {
        struct wio_req *r = k->pay_req;
        k->pay_req = NULL;
        recv_done(c, r);
    } else if (h->type == WIO_T_EAGER && k->pay_ux) {
        struct wio_ux *u = k->pay_ux;
        k->pay_ux = NULL;
        /* A receive may have been posted while the payload was arriving. */
        struct wio_req *r = wio_posted_take(c, u->group, u->src, u->tag);
        if (r) {
            r->mlen = u->len;
            memcpy(r->buf, u->data, u->len < r->len ? u->len : r->len);
            recv_done(c, r);
            wio_plat_free(u);
        } else {
            wio_ux_add(c, u);
        }
    } else if (h->type == WIO_T_DATA && k->pay_req) {
        struct wio_req *r = k->pay_req;
        k->pay_req = NULL;
        r->done += h->plen;
        if (r->done == (r->len < r->mlen ? r->len : r->mlen)) {
            wio_list_remove(&k->peer->recving, r);
            recv_done(c, r);
        }
    }
    k->pay_dst = NULL;
}

/* Under the lock: an unexpected-message record for the EAGER or RTS header h, or NULL
 * (k failed: no memory). */
static struct wio_ux *ux_new(struct wio_conn *k, const struct wio_hdr *h)
{
    struct wio_ux *u = wio_plat_alloc(sizeof *u);
    if (!u) {
        wio_conn_fail(k, "no memory for an unexpected message", NULL);
        return NULL;
    }
    u->group = h->group;
    u->tag = h->tag;
    u->len = h->len;
    u->src = h->src;
    u->msgid = h->msgid;
    u->type = h->type;
    return u;
}

/* Under the lock: act on a header that passed the check. */
static void header(struct wio_conn *k, struct wio_req *rdv)
{
    struct wio_core *c = k->core;
    struct wio_peer *p = k->peer;
    const struct wio_hdr *h = &k->cur;
    if (h->type == WIO_T_HELLO) {
        wio_hello_in(k, h);
        return;
    }
    if (h->type == WIO_T_HELLO_OK) {
        wio_conn_established(k);
        return;
    }
    if (h->type == WIO_T_HELLO_NO) { /* both at once and theirs won: it arrives or came */
        wio_conn_close(k);
        return;
    }
    k->rseq++;
    struct wio_req *r;
    switch (h->type) {
    case WIO_T_EAGER:
        r = wio_posted_take(c, h->group, h->src, h->tag);
        if (r) {
            matched(k, h, r);
        } else {
            struct wio_ux *u = ux_new(k, h);
            if (!u)
                return;
            k->pay_ux = u;
            k->pay_dst = u->data;
            k->pay_room = WIO_EAGER_MAX;
        }
        break;
    case WIO_T_RTS:
        r = wio_posted_take(c, h->group, h->src, h->tag);
        if (r) {
            matched(k, h, r);
            wio_tx_pump(k);
        } else {
            struct wio_ux *u = ux_new(k, h);
            if (!u)
                return;
            wio_ux_add(c, u);
        }
        break;
    case WIO_T_CTS:
        r = rdv;
        wio_list_remove(&p->waitcts, r);
        r->mlen = h->len;
        r->done = 0;
        r->state = WIO_S_DATA;
        if (r->mlen == 0) { /* the receiver takes nothing: done */
            wio_req_complete(r, WIO_R_OK);
        } else {
            wio_list_push(&p->txq, r);
            wio_tx_pump(k);
        }
        break;
    case WIO_T_DATA:
        k->pay_req = rdv;
        k->pay_dst = (uint8_t *)rdv->buf + h->offset;
        k->pay_room = h->plen; /* checked: within what our CTS asked for */
        break;
    case WIO_T_BYE:
        p->bye_in = 1;
        k->phase = WIO_PH_CLOSED;
        if (!wio_peer_idle(p))
            wio_peer_fail(c, p, "peer finished (BYE) with messages outstanding", NULL);
        break;
    default: /* ACK: the check was all */
        break;
    }
    if (k->transport && k->phase == WIO_PH_OPEN && k->rseq - k->ack_out >= WIO_ACK_EVERY) {
        k->txflags |= WIO_TX_ACK;
        wio_tx_pump(k);
    }
}

/* Under the lock: the header in k->rhdr is complete: check it and act. 0 to go on reading,
 * -1 when k was closed. */
static int header_in(struct wio_conn *k)
{
    struct wio_core *c = k->core;
    wio_hdr_decode(k->rhdr, &k->cur);
    struct wio_rdv_view v;
    struct wio_req *rdv = rdv_find(k, &k->cur, &v);
    struct wio_conn_view cv = {.phase = k->phase,
                               .rseq = k->rseq,
                               .sent = k->sseq,
                               .peer = k->peer ? k->peer->index : WIO_ANY,
                               .self = c->self,
                               .nprocs = c->nprocs};
    int e = wio_hdr_check(&k->cur, &cv, &v);
    if (e) {
        char d[WIO_TEXT];
        struct wio_text t;
        wio_text_init(&t, d, sizeof d);
        if (e >= WIO_E_STATE) { /* the type is known: say which packet */
            wio_text_str(&t, wio_type_name(k->cur.type));
            wio_text_str(&t, " header seq ");
            wio_text_u64(&t, k->cur.seq);
        } else {
            wio_text_str(&t, "not a WaitIO header of version 1");
        }
        if (e == WIO_E_SEQ) {
            wio_text_str(&t, ", expected ");
            wio_text_u64(&t, cv.phase == WIO_PH_OPEN ? cv.rseq : 0);
        }
        /* A valid src names the peer of a not yet named connection. */
        if (!k->peer && k->cur.src < c->nprocs && k->cur.src != c->self && e != WIO_E_SRC &&
            e > WIO_E_STATE)
            k->peer = &c->peers[k->cur.src];
        wio_conn_fail(k, wio_err_name(e), d);
        return -1;
    }
    k->rfill = 0;
    k->pay_left = k->cur.plen;
    k->pay_dst = NULL;
    k->pay_room = 0;
    header(k, rdv);
    if (!k->transport)
        return -1;
    if (k->pay_left)
        k->rx = WIO_RX_PAY;
    else if (k->pay_req || k->pay_ux)
        payload_done(k); /* an empty EAGER */
    return 0;
}

/* Rx context: n more bytes of k's stream. */
void wio_rx(struct wio_conn *k, const void *bytes, size_t n)
{
    struct wio_core *c = k->core;
    const uint8_t *b = bytes;
    unsigned long tok = wio_plat_lock(c);
    k->in_rx++;
    while (n && k->transport) {
        if (k->rx == WIO_RX_HDR) {
            size_t m = WIO_HDR - k->rfill;
            if (m > n)
                m = n;
            memcpy(k->rhdr + k->rfill, b, m);
            k->rfill += (uint32_t)m;
            b += m;
            n -= m;
            if (k->rfill == WIO_HDR && header_in(k))
                break;
            continue;
        }
        size_t m = k->pay_left < n ? (size_t)k->pay_left : n;
        if (k->pay_dst && k->pay_room) { /* bytes past the room are a truncated tail */
            size_t w = m < k->pay_room ? m : (size_t)k->pay_room;
            memcpy(k->pay_dst, b, w);
            k->pay_dst += w;
            k->pay_room -= w;
        }
        b += m;
        n -= m;
        k->pay_left -= m;
        if (!k->pay_left) {
            k->rx = WIO_RX_HDR;
            payload_done(k);
        }
    }
    if (--k->in_rx == 0 && k->release) {
        k->release = 0;
        k->phase = WIO_PH_CLOSED;
        k->free_next = c->free_conns;
        c->free_conns = k;
    }
    wio_plat_unlock(c, tok);
}
