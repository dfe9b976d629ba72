/*
 * wio_conn.c: the core's instance state and the connection state machine (PROTOCOL.md 6):
 * receiver-initiated lazy connect, HELLO / HELLO_OK / HELLO_NO with the both-at-once rule
 * (the connection initiated by the lower universe index survives), and failures, which
 * close the connection and fail every request that depends on the peer with a message
 * naming it. Connections come from a pool made at init, so the rx path never allocates one.
 */
#include "wio_core.h"
#include <string.h>

/* Task context, inside waitio_init (the platform's): the instance from the start-up table.
 * addrs has one entry per process, in universe index order; both arrays are copied.
 * 0, or -1 when out of memory (wio_core_free undoes a partial init). */
int wio_core_init(struct wio_core *c, uint32_t npb, uint32_t pbid, uint32_t rank,
                  const uint32_t *pb_size, const struct wio_addr *addrs)
{
    void *plat = c->plat;
    memset(c, 0, sizeof *c);
    c->plat = plat;
    c->npb = npb;
    c->pbid = pbid;
    c->pb_size = wio_plat_alloc(sizeof *c->pb_size * npb);
    c->pb_base = wio_plat_alloc(sizeof *c->pb_base * npb);
    if (!c->pb_size || !c->pb_base)
        return -1;
    for (uint32_t i = 0; i < npb; i++) {
        c->pb_size[i] = pb_size[i];
        c->pb_base[i] = c->nprocs;
        c->nprocs += pb_size[i];
    }
    c->self = c->pb_base[pbid] + rank;
    c->peers = wio_plat_alloc(sizeof *c->peers * c->nprocs);
    c->nconns = 2 * c->nprocs + WIO_CONN_SPARE;
    c->conns = wio_plat_alloc(sizeof *c->conns * c->nconns);
    if (!c->peers || !c->conns || wio_match_init(c))
        return -1;
    for (uint32_t pb = 0, i = 0; pb < npb; pb++)
        for (uint32_t r = 0; r < pb_size[pb]; r++, i++) {
            c->peers[i].index = i;
            c->peers[i].pb = pb;
            c->peers[i].rank = r;
            c->peers[i].addr = addrs[i];
        }
    for (uint32_t i = c->nconns; i-- > 0;) {
        c->conns[i].core = c;
        c->conns[i].free_next = c->free_conns;
        c->free_conns = &c->conns[i];
    }
    return 0;
}

/* Task context, after waitio_finalize (transports already closed): frees everything. */
void wio_core_free(struct wio_core *c)
{
    for (struct PBGroup *g = c->groups, *n; g; g = n) {
        n = g->next;
        g->magic = 0;
        wio_plat_free(g->members);
        wio_plat_free(g);
    }
    c->groups = NULL;
    if (c->posted)
        wio_match_free(c);
    wio_plat_free(c->peers);
    wio_plat_free(c->conns);
    wio_plat_free(c->pb_size);
    wio_plat_free(c->pb_base);
    c->peers = NULL;
    c->conns = NULL;
    c->pb_size = c->pb_base = NULL;
}

/* Any context: the address of process `index` (the platform's connect uses it). */
struct wio_addr wio_peer_addr(struct wio_core *c, uint32_t index)
{
    return c->peers[index].addr;
}

/* Under the lock, any context: a fresh connection from the pool, or NULL. */
static struct wio_conn *conn_get(struct wio_core *c)
{
    struct wio_conn *k = c->free_conns;
    if (!k)
        return NULL;
    c->free_conns = k->free_next;
    memset(k, 0, sizeof *k);
    k->core = c;
    return k;
}

/* Under the lock, any context: k back into the pool (later, if wio_rx is still on it). */
static void conn_put(struct wio_conn *k)
{
    wio_plat_free(k->pay_ux); /* an unexpected eager payload cut short */
    k->pay_ux = NULL;
    if (k->in_rx) {
        k->release = 1;
        return;
    }
    k->phase = WIO_PH_CLOSED;
    k->free_next = k->core->free_conns;
    k->core->free_conns = k;
}

/* Under the lock, any context: close k's transport and forget k (it must no longer be a
 * peer's conn or out). */
void wio_conn_close(struct wio_conn *k)
{
    if (k->transport)
        wio_plat_close(k->core, k->transport);
    k->transport = NULL;
    k->phase = WIO_PH_CLOSED;
    if (k->peer && k->peer->conn == k)
        k->peer->conn = NULL;
    if (k->peer && k->peer->out == k)
        k->peer->out = NULL;
    conn_put(k);
}

/* Under the lock: does the peer still owe or expect anything of us? */
int wio_peer_idle(struct wio_peer *p)
{
    return !p->txq.head && !p->waitcts.head && !p->recving.head && !p->nrecv;
}

/* Under the lock, any context: fail every request that depends on peer p (its sends,
 * its rendezvous, the receives posted from it), remember why (later requests fail at
 * once), and tell the user once: "waitio: peer 3 (PB 1 rank 0, 10.0.0.2:40001): WHAT: DETAIL". */
void wio_peer_fail(struct wio_core *c, struct wio_peer *p, const char *what, const char *detail)
{
    if (!p->failed) {
        struct wio_text t;
        wio_text_init(&t, p->why, sizeof p->why);
        wio_text_str(&t, "waitio: ");
        wio_text_peer(&t, c, p->index);
        wio_text_str(&t, ": ");
        wio_text_str(&t, what);
        if (detail) {
            wio_text_str(&t, ": ");
            wio_text_str(&t, detail);
        }
        p->failed = 1;
        wio_plat_log(c, p->why);
    }
    struct wio_req_list *lists[] = {&p->txq, &p->waitcts, &p->recving};
    for (unsigned i = 0; i < sizeof lists / sizeof *lists; i++)
        while (lists[i]->head) {
            struct wio_req *r = lists[i]->head;
            wio_list_remove(lists[i], r);
            wio_req_complete(r, WIO_R_PEER);
        }
    wio_posted_fail_peer(c, p->index, WIO_R_PEER);
    struct wio_conn *ks[] = {p->conn, p->out};
    for (unsigned i = 0; i < 2; i++)
        if (ks[i]) {
            if (ks[i]->treq) { /* a send whose last packet was in flight */
                wio_req_complete(ks[i]->treq, WIO_R_PEER);
                ks[i]->treq = NULL;
            }
            if (ks[i]->pay_req) {
                wio_req_complete(ks[i]->pay_req, WIO_R_PEER);
                ks[i]->pay_req = NULL;
            }
            wio_conn_close(ks[i]);
        }
}

/* Under the lock, any context: k is broken (a bad header, a lost stream). Fails its peer
 * when k carries (or is about to carry) the peer's traffic; otherwise (a duplicate or a
 * stranger) only closes it, with a log line. */
void wio_conn_fail(struct wio_conn *k, const char *what, const char *detail)
{
    struct wio_core *c = k->core;
    struct wio_peer *p = k->peer;
    if (p && (p->conn == k || (p->out == k && !p->conn))) {
        wio_peer_fail(c, p, what, detail);
        return;
    }
    char line[WIO_TEXT];
    struct wio_text t;
    wio_text_init(&t, line, sizeof line);
    wio_text_str(&t, "waitio: connection from ");
    if (p)
        wio_text_peer(&t, c, p->index);
    else
        wio_text_str(&t, "an unnamed process");
    wio_text_str(&t, " closed: ");
    wio_text_str(&t, what);
    if (detail) {
        wio_text_str(&t, ": ");
        wio_text_str(&t, detail);
    }
    wio_plat_log(c, line);
    wio_conn_close(k);
}

/* Under the lock, task or rx context: p needs a connection (a receive from it was
 * posted): start one unless there is one or an attempt (PROTOCOL.md 6, receiver-initiated). */
void wio_peer_need_conn(struct wio_core *c, struct wio_peer *p)
{
    if (p->conn || p->out || p->failed)
        return;
    struct wio_conn *k = conn_get(c);
    if (!k) {
        wio_peer_fail(c, p, "no connection left in the pool", NULL);
        return;
    }
    k->peer = p;
    k->phase = WIO_PH_HELLO;
    k->txflags = WIO_TX_HELLO;
    p->out = k;
    k->transport = wio_plat_connect(c, p->index, k);
    if (!k->transport) {
        wio_conn_fail(k, "cannot connect", NULL);
        return;
    }
    wio_tx_pump(k);
}

/* Under the lock, any context: k now carries p's traffic; queued sends may go. */
void wio_conn_established(struct wio_conn *k)
{
    struct wio_peer *p = k->peer;
    k->phase = WIO_PH_OPEN;
    k->sseq = k->rseq = k->ack_out = 0;
    p->conn = k;
    if (p->out == k)
        p->out = NULL;
    wio_tx_pump(k);
}

/* Rx context: the platform accepted `transport`. */
struct wio_conn *wio_conn_accept(struct wio_core *c, void *transport)
{
    unsigned long tok = wio_plat_lock(c);
    struct wio_conn *k = conn_get(c);
    if (k) {
        k->transport = transport;
        k->phase = WIO_PH_ACCEPTED;
    } else {
        wio_plat_log(c, "waitio: connection refused: no connection left in the pool");
    }
    wio_plat_unlock(c, tok);
    return k;
}

/* Under the lock, rx context: a valid HELLO on accepted connection k (h->src checked).
 * The both-at-once rule: if we also sent HELLO to that peer, the connection initiated by
 * the lower universe index survives. */
void wio_hello_in(struct wio_conn *k, const struct wio_hdr *h)
{
    struct wio_core *c = k->core;
    struct wio_peer *p = &c->peers[h->src];
    k->peer = p;
    if (p->conn || p->failed || (p->out && c->self < p->index)) {
        /* We keep ours (or have one already, or gave up on this peer): refuse, then close
         * once HELLO_NO is out. */
        k->txflags |= WIO_TX_HELLO_NO;
        k->close_after = 1;
        k->phase = WIO_PH_CLOSED;
        wio_tx_pump(k);
        return;
    }
    if (p->out) { /* theirs wins: forget our attempt (they answer it HELLO_NO or close) */
        struct wio_conn *mine = p->out;
        p->out = NULL;
        mine->peer = NULL;
        wio_conn_close(mine);
    }
    k->txflags |= WIO_TX_HELLO_OK;
    wio_conn_established(k);
}

/* Rx context: the stream of k closed or failed. */
void wio_conn_lost(struct wio_conn *k, const char *why)
{
    struct wio_core *c = k->core;
    unsigned long tok = wio_plat_lock(c);
    /* The platform closes the transport itself. */
    k->transport = NULL;
    struct wio_peer *p = k->peer;
    if (!p && k->phase == WIO_PH_ACCEPTED && k->rfill == 0) {
        conn_put(k); /* opened and closed without a byte: an abandoned attempt, no news */
    } else if (p && p->bye_in && p->conn == k) {
        p->conn = NULL; /* said goodbye first: a clean end */
        conn_put(k);
    } else if (k->phase != WIO_PH_CLOSED || (p && (p->conn == k || p->out == k))) {
        /* Say where the stream was cut: inside a header or a payload is a crash's mark. */
        char d[WIO_TEXT];
        struct wio_text t;
        wio_text_init(&t, d, sizeof d);
        wio_text_str(&t, why);
        if (k->rx == WIO_RX_HDR && k->rfill) {
            wio_text_str(&t, " (cut ");
            wio_text_u64(&t, k->rfill);
            wio_text_str(&t, " bytes into a header)");
        } else if (k->rx == WIO_RX_PAY) {
            wio_text_str(&t, " (cut inside a ");
            wio_text_str(&t, wio_type_name(k->cur.type));
            wio_text_str(&t, " payload)");
        } else if (p && (p->waitcts.head || p->recving.head)) {
            wio_text_str(&t, " (during a rendezvous)");
        }
        wio_conn_fail(k, "connection lost", d);
    } else {
        conn_put(k);
    }
    wio_plat_unlock(c, tok);
}

/* Task context, waitio_finalize: owe BYE on every established connection; each goes out
 * once nothing is pending with its peer (PROTOCOL.md 6). */
void wio_core_bye(struct wio_core *c)
{
    unsigned long tok = wio_plat_lock(c);
    c->finalizing = 1;
    for (uint32_t i = 0; i < c->nprocs; i++)
        if (c->peers[i].conn && c->peers[i].conn->transport) {
            c->peers[i].conn->txflags |= WIO_TX_BYE;
            wio_tx_pump(c->peers[i].conn);
        }
    wio_plat_unlock(c, tok);
}

/* Task context, waitio_finalize: 1 when every BYE owed is out and every connected peer
 * said BYE too (or is gone): closing earlier could cut the peer's last packets. */
int wio_core_quiet(struct wio_core *c)
{
    int quiet = 1;
    unsigned long tok = wio_plat_lock(c);
    for (uint32_t i = 0; i < c->nprocs; i++) {
        struct wio_conn *k = c->peers[i].conn;
        if (k && k->transport && (k->tbusy || (k->txflags & WIO_TX_BYE) || !c->peers[i].bye_in))
            quiet = 0;
    }
    wio_plat_unlock(c, tok);
    return quiet;
}

/* Task context, end of waitio_finalize: close every connection still open. */
void wio_core_close_all(struct wio_core *c)
{
    unsigned long tok = wio_plat_lock(c);
    for (uint32_t i = 0; i < c->nconns; i++)
        if (c->conns[i].transport)
            wio_conn_close(&c->conns[i]);
    wio_plat_unlock(c, tok);
}
