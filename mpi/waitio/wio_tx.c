/*
 * wio_tx.c: the transmit pump of a connection. One packet is in flight at a time: its
 * header is encoded into the connection; an EAGER payload (at most 128 bytes) is copied
 * behind it, a DATA chunk is sent straight from the user's buffer. The next packet is, in order: handshake packets owed, an ACK owed,
 * the first queued request's next packet (EAGER, RTS, CTS or one DATA chunk), BYE. The
 * platform may take fewer bytes than offered; the pump then stops until wio_tx_ready().
 */
#include "wio_core.h"
#include <string.h>

/* Under the lock: encode the next header into k->thdr and set up its payload; 0 when
 * there is nothing to send now. */
static int next_packet(struct wio_conn *k)
{
    struct wio_core *c = k->core;
    struct wio_peer *p = k->peer;
    struct wio_hdr h;
    uint8_t type = 0;
    struct wio_req *r = NULL;
    k->tpay = NULL;
    k->tpay_len = k->tpay_off = 0;
    k->treq = NULL;
    k->thdr_len = WIO_HDR;
    if (k->txflags & (WIO_TX_HELLO | WIO_TX_HELLO_OK | WIO_TX_HELLO_NO)) {
        type = k->txflags & WIO_TX_HELLO      ? WIO_T_HELLO
               : k->txflags & WIO_TX_HELLO_OK ? WIO_T_HELLO_OK
                                              : WIO_T_HELLO_NO;
        k->txflags &= ~(unsigned)(type == WIO_T_HELLO      ? WIO_TX_HELLO
                                  : type == WIO_T_HELLO_OK ? WIO_TX_HELLO_OK
                                                           : WIO_TX_HELLO_NO);
        h = wio_hdr_make(type); /* not sequenced: seq 0, ack 0 */
        h.src = c->self;
        h.dst = p->index;
        wio_hdr_encode(&h, k->thdr);
        return 1;
    }
    /* Data flows once established; after the peer's BYE only our own BYE may follow. */
    if (!p || !(k->phase == WIO_PH_OPEN || (p->bye_in && p->conn == k)))
        return 0;
    h = wio_hdr_make(0);
    if (k->txflags & WIO_TX_ACK) {
        type = WIO_T_ACK;
    } else if ((r = p->txq.head) != NULL) {
        h.group = r->group->key;
        h.tag = r->tag;
        if (r->kind == WIO_K_RECV) { /* CTS: what the receive takes of the message */
            type = WIO_T_CTS;
            h.len = r->len < r->mlen ? r->len : r->mlen;
            h.msgid = r->msgid;
            wio_list_remove(&p->txq, r);
            if (h.len) {
                wio_list_push(&p->recving, r);
            } else { /* it takes nothing: no DATA follows; done (truncated) once out */
                wio_log_trunc(c, r);
                r->err = WIO_R_TRUNC;
                k->treq = r;
            }
        } else if (r->len <= WIO_EAGER_MAX) {
            type = WIO_T_EAGER;
            h.len = h.plen = (uint32_t)r->len;
            if (r->len)
                memcpy(k->thdr + WIO_HDR, r->buf, (size_t)r->len);
            k->thdr_len = WIO_HDR + (uint32_t)r->len;
            wio_list_remove(&p->txq, r);
            k->treq = r; /* complete once the payload is out */
        } else if (r->state == WIO_S_QUEUED) {
            type = WIO_T_RTS;
            h.len = r->len;
            r->msgid = p->next_msgid++;
            h.msgid = r->msgid;
            wio_list_remove(&p->txq, r);
            r->state = WIO_S_RTS;
            wio_list_push(&p->waitcts, r);
        } else { /* WIO_S_DATA: the next chunk, up to the CTS length */
            uint64_t n = r->mlen - r->done;
            if (n > WIO_CHUNK)
                n = WIO_CHUNK;
            type = WIO_T_DATA;
            h.len = r->len;
            h.msgid = r->msgid;
            h.offset = r->done;
            h.plen = (uint32_t)n;
            k->tpay = (const uint8_t *)r->buf + r->done;
            k->tpay_len = n;
            r->done += n;
            if (r->done == r->mlen) {
                wio_list_remove(&p->txq, r);
                k->treq = r;
            }
        }
    } else if ((k->txflags & WIO_TX_BYE) && wio_peer_idle(p) && !p->bye_out) {
        type = WIO_T_BYE;
        k->txflags &= ~(unsigned)WIO_TX_BYE;
        p->bye_out = 1;
    } else {
        return 0;
    }
    h.type = type;
    h.seq = k->sseq++;
    h.ack = k->rseq;
    h.src = c->self;
    h.dst = p->index;
    k->ack_out = k->rseq;
    k->txflags &= ~(unsigned)WIO_TX_ACK; /* every packet carries the ack */
    wio_hdr_encode(&h, k->thdr);
    return 1;
}

/* Under the lock: hand bytes to the platform; returns 1 when all `n` were taken, 0 when it
 * had no room, -1 when the transport failed (k is then failed and closed). */
static int push(struct wio_conn *k, const uint8_t *b, uint64_t n, uint64_t *off)
{
    while (*off < n) {
        long got = wio_plat_send(k->core, k->transport, b + *off, (size_t)(n - *off));
        if (got < 0) {
            wio_conn_fail(k, "send failed", NULL);
            return -1;
        }
        if (got == 0)
            return 0;
        *off += (uint64_t)got;
    }
    return 1;
}

/* Under the lock, task or rx context: send as much as the platform takes now. */
void wio_tx_pump(struct wio_conn *k)
{
    while (k->transport) {
        if (!k->tbusy) {
            if (!next_packet(k))
                return;
            k->tbusy = 1;
            k->thdr_off = 0;
        }
        uint64_t off = k->thdr_off;
        int st = push(k, k->thdr, k->thdr_len, &off);
        k->thdr_off = (uint32_t)off;
        if (st <= 0)
            return;
        if (k->tpay_len) {
            st = push(k, k->tpay, k->tpay_len, &k->tpay_off);
            if (st <= 0)
                return;
        }
        k->tbusy = 0;
        if (k->treq) { /* its last byte is out: an eager send or a last chunk */
            struct wio_req *r = k->treq;
            k->treq = NULL;
            wio_req_complete(r, r->err);
        }
        if (k->close_after) {
            wio_conn_close(k);
            return;
        }
    }
}

/* Under the lock, any context: p has something new to send. */
void wio_peer_kick(struct wio_peer *p)
{
    if (p->conn)
        wio_tx_pump(p->conn);
}

/* Rx context: k's stream has room again. */
void wio_tx_ready(struct wio_conn *k)
{
    struct wio_core *c = k->core;
    unsigned long tok = wio_plat_lock(c);
    wio_tx_pump(k);
    wio_plat_unlock(c, tok);
}
