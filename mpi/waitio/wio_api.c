/*
 * wio_api.c: waitio_isend, waitio_irecv and waitio_wait over the core: requests inside the
 * caller's waitio_req_t, the posting rules (a receive from a peer without a connection
 * starts one; a send waits for the receiver's), and messages to oneself, which never touch
 * a transport.
 */
#include "wio_core.h"
#include <string.h>

/* Under the lock, any context: finish r and wake the waiter. */
void wio_req_complete(struct wio_req *r, int err)
{
    if (r->kind == WIO_K_RECV && r->peer)
        r->peer->nrecv--;
    r->err = (uint8_t)err;
    r->state = WIO_S_DONE;
    wio_plat_wake(r->group->core);
}

/* Task context: fill in the caller's object (every field: it may hold garbage). */
static struct wio_req *req_init(waitio_req_t *obj, struct PBGroup *g, int kind, char *buf,
                                size_t len, waitio_tag_t tag)
{
    struct wio_req *r = (struct wio_req *)obj;
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->group = g;
    r->buf = buf;
    r->len = len;
    r->tag = tag;
    r->state = WIO_S_QUEUED;
    r->magic = WIO_REQ_LIVE;
    return r;
}

/* Task context: is g one of ours and `rank` inside it? */
static int group_ok(struct PBGroup *g, int rank)
{
    return g && g->magic == WIO_GROUP_MAGIC && rank >= 0 && rank < g->size;
}

/* Task context: a request that fails at once (bad arguments); waitio_wait reports it. */
static int req_bad(waitio_req_t *obj, struct PBGroup *g, int kind)
{
    struct wio_req *r = req_init(obj, NULL, kind, NULL, 0, 0);
    r->state = WIO_S_DONE;
    r->err = WIO_R_ARG;
    (void)g;
    return -1;
}

/* Under the lock, task context: a send to ourselves meets its receive `q`. */
static void self_deliver(struct wio_core *c, struct wio_req *s, struct wio_req *q)
{
    q->mlen = s->len;
    memcpy(q->buf, s->buf, s->len < q->len ? s->len : q->len);
    if (s->len > q->len)
        wio_log_trunc(c, q);
    wio_req_complete(q, s->len > q->len ? WIO_R_TRUNC : WIO_R_OK);
    wio_req_complete(s, WIO_R_OK);
}

/* Task context; buf stays the caller's and must not change until waitio_wait returns. */
int waitio_isend(waitio_group_t g, int dst, char *buf, size_t len, waitio_tag_t tag,
                 waitio_req_t *obj)
{
    if (!obj)
        return -1;
    if (!group_ok(g, dst) || (len && !buf))
        return req_bad(obj, g, WIO_K_SEND);
    struct wio_core *c = g->core;
    struct wio_req *r = req_init(obj, g, WIO_K_SEND, buf, len, tag);
    uint32_t to = g->members[dst];
    unsigned long tok = wio_plat_lock(c);
    if (to == c->self) {
        struct wio_req *q = wio_posted_take(c, g->key, c->self, tag);
        if (q) {
            self_deliver(c, r, q);
        } else {
            struct wio_ux *u = wio_plat_alloc(sizeof *u);
            if (!u) {
                r->state = WIO_S_DONE;
                r->err = WIO_R_ARG;
            } else {
                u->group = g->key;
                u->tag = tag;
                u->len = len;
                u->src = c->self;
                u->type = WIO_UX_SELF;
                u->sreq = r;
                wio_ux_add(c, u);
            }
        }
    } else {
        struct wio_peer *p = &c->peers[to];
        r->peer = p;
        if (p->failed || p->bye_in) {
            if (!p->failed)
                wio_peer_fail(c, p, "send after the peer finished", NULL);
            wio_req_complete(r, WIO_R_PEER);
        } else {
            wio_list_push(&p->txq, r);
            wio_peer_kick(p); /* on an established connection an eager send completes here */
        }
    }
    wio_plat_unlock(c, tok);
    return 0;
}

/* Task context; buf is the caller's until waitio_wait returns. */
int waitio_irecv(waitio_group_t g, int src, char *buf, size_t len, waitio_tag_t tag,
                 waitio_req_t *obj)
{
    if (!obj)
        return -1;
    if (!group_ok(g, src) || (len && !buf))
        return req_bad(obj, g, WIO_K_RECV);
    struct wio_core *c = g->core;
    struct wio_req *r = req_init(obj, g, WIO_K_RECV, buf, len, tag);
    uint32_t from = g->members[src];
    r->src = from;
    unsigned long tok = wio_plat_lock(c);
    struct wio_peer *p = from == c->self ? NULL : &c->peers[from];
    r->peer = p;
    if (p)
        p->nrecv++;
    struct wio_ux *u = wio_ux_take(c, g->key, from, tag);
    if (u && u->type == WIO_UX_SELF) {
        self_deliver(c, u->sreq, r);
        wio_plat_free(u);
    } else if (u && u->type == WIO_T_EAGER) {
        r->mlen = u->len;
        memcpy(buf, u->data, u->len < len ? u->len : len);
        wio_plat_free(u);
        if (r->mlen > len)
            wio_log_trunc(c, r);
        wio_req_complete(r, r->mlen > len ? WIO_R_TRUNC : WIO_R_OK);
    } else if (p && p->failed) {
        wio_plat_free(u);
        wio_req_complete(r, WIO_R_PEER);
    } else if (u) { /* an RTS: owe its CTS */
        r->mlen = u->len;
        r->msgid = u->msgid;
        r->state = WIO_S_DATA;
        wio_plat_free(u);
        wio_list_push(&p->txq, r);
        wio_peer_kick(p);
    } else {
        wio_posted_add(c, r);
        if (p)
            wio_peer_need_conn(c, p);
    }
    wio_plat_unlock(c, tok);
    return 0;
}

/*
 * Task context: block until the request completes; 0 on success.
 *
 * No lost wake-up: the completion (wio_req_complete, rx context or our own progress)
 * writes r->state under the lock and then calls wio_plat_wake; we read r->state under the
 * same lock. If the completion happens after our unlock, its wake comes after our read, and
 * wio_plat_block returns at once for a wake made before it was entered (the hook's
 * contract). The lock's release/acquire pair orders the buffer writes of the completion
 * before our read of DONE, so the caller sees the data.
 */
int waitio_wait(waitio_req_t *obj)
{
    struct wio_req *r = (struct wio_req *)obj;
    if (!r || (r->magic != WIO_REQ_LIVE && r->magic != WIO_REQ_SPENT))
        return WIO_R_NOTREQ;
    if (r->magic == WIO_REQ_SPENT || !r->group) /* a second wait, or failed arguments */
        return r->err;
    struct wio_core *c = r->group->core;
    for (;;) {
        unsigned long tok = wio_plat_lock(c);
        int done = r->state == WIO_S_DONE;
        wio_plat_unlock(c, tok);
        if (done)
            break;
        wio_plat_block(c);
    }
    r->magic = WIO_REQ_SPENT;
    return r->err;
}
