/*
 * wio_test_net.c: the in-memory platform of the WaitIO core's unit tests (see
 * wio_test_net.h). Implements every hook of wio_plat.h.
 */
#include "wio_test_net.h"
#include "ut.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TN_STREAMS 64
#define TN_IDLE    2000 /* rounds without progress before a wait counts as hung */

struct tn_end {
    struct wio_core *core; /* whose connection reads this end */
    struct wio_conn *conn; /* NULL until accepted */
    int accept_to;         /* core index that must accept it, or -1 */
    struct tn_end *other;
    uint8_t *buf; /* bytes written on this end, for the other */
    size_t len, cap;
    int closed, lost, stalled, raw;
};

struct wio_core tn_core[TN_CORES];
size_t tn_send_max = 1000, tn_stream_max = 200000;
static struct tn_end *ends[TN_STREAMS];
static int nends;
static char logs[TN_CORES][WIO_TEXT];
static int idle;
static uint32_t rnd = 1;

/* Main thread: a deterministic pseudo-random number (piece sizes). */
static uint32_t next_rand(void)
{
    rnd = rnd * 1103515245u + 12345u;
    return rnd >> 8;
}

/* Any: which of tn_core c is. */
static int core_index(struct wio_core *c)
{
    return (int)(c - tn_core);
}

/* Main thread: a new stream end read by core c (NULL: the test's raw end). */
static struct tn_end *end_new(struct wio_core *c)
{
    UT_ASSERT(nends < TN_STREAMS);
    struct tn_end *e = calloc(1, sizeof *e);
    e->core = c;
    e->accept_to = -1;
    ends[nends++] = e;
    return e;
}

/* Hook (wio_plat.h): append to the stream, at most tn_send_max, stalling when full or
 * still connecting. */
long wio_plat_send(struct wio_core *c, void *transport, const void *data, size_t n)
{
    struct tn_end *e = transport;
    if (e->closed || e->lost)
        return -1;
    if (e->other->accept_to >= 0 && !e->raw) /* still connecting */
        return e->stalled = 1, 0;
    size_t room = tn_stream_max > e->len ? tn_stream_max - e->len : 0;
    size_t k = n < tn_send_max ? n : tn_send_max;
    if (k > room)
        k = room;
    if (k < n)
        e->stalled = 1;
    if (e->len + k > e->cap) {
        e->cap = (e->len + k) * 2;
        e->buf = realloc(e->buf, e->cap);
    }
    memcpy(e->buf + e->len, data, k);
    e->len += k;
    return (long)k;
}

/* Hook: a stream pair; the peer core accepts it on the next delivery round. */
void *wio_plat_connect(struct wio_core *c, uint32_t peer, struct wio_conn *conn)
{
    struct tn_end *a = end_new(c), *b = end_new(&tn_core[peer]);
    a->conn = conn;
    a->other = b;
    b->other = a;
    b->accept_to = (int)peer;
    return a;
}

/* Hook: the writer's end closes; the reader sees EOF once it has read what is left. */
void wio_plat_close(struct wio_core *c, void *transport)
{
    struct tn_end *e = transport;
    e->closed = 1;
    e->conn = NULL;
}

/* Hook: single-threaded, no lock. */
unsigned long wio_plat_lock(struct wio_core *c)
{
    return 0;
}

/* Hook: single-threaded, no lock. */
void wio_plat_unlock(struct wio_core *c, unsigned long token) {}

/* Hook: one delivery round; a test that stops making progress fails. */
void wio_plat_block(struct wio_core *c)
{
    if (tn_pump()) {
        idle = 0;
        return;
    }
    if (++idle > TN_IDLE)
        ut_fail(__FILE__, __LINE__, "waitio_wait on core %d makes no progress", core_index(c));
}

/* Hook: progress happens in wio_plat_block itself. */
void wio_plat_wake(struct wio_core *c) {}

/* Hook: zeroed heap memory. */
void *wio_plat_alloc(size_t n)
{
    return calloc(1, n ? n : 1);
}

/* Hook. */
void wio_plat_free(void *p)
{
    free(p);
}

/* Hook: kept as the core's last line (tn_log), printed with WIO_TEST_VERBOSE set. */
void wio_plat_log(struct wio_core *c, const char *line)
{
    snprintf(logs[core_index(c)], sizeof logs[0], "%s", line);
    if (getenv("WIO_TEST_VERBOSE"))
        fprintf(stderr, "core %d: %s\n", core_index(c), line);
}

/* Main thread (see wio_test_net.h). */
const char *tn_log(int i)
{
    static char last[WIO_TEXT];
    snprintf(last, sizeof last, "%s", logs[i]);
    logs[i][0] = 0;
    return last;
}

/* Main thread (see wio_test_net.h). */
void tn_setup(uint32_t npb, const uint32_t *pb_size)
{
    tn_teardown();
    uint32_t n = 0;
    for (uint32_t i = 0; i < npb; i++)
        n += pb_size[i];
    UT_ASSERT(n <= TN_CORES);
    struct wio_addr addrs[TN_CORES];
    for (uint32_t i = 0; i < n; i++)
        addrs[i] = (struct wio_addr){{127, 0, 0, 1}, (uint16_t)(40000 + i)};
    for (uint32_t pb = 0, i = 0; pb < npb; pb++)
        for (uint32_t r = 0; r < pb_size[pb]; r++, i++)
            UT_EQ(wio_core_init(&tn_core[i], npb, pb, r, pb_size, addrs), 0);
    tn_send_max = 1000;
    tn_stream_max = 200000;
    idle = 0;
}

/* Main thread (see wio_test_net.h). */
void tn_teardown(void)
{
    for (int i = 0; i < nends; i++) {
        free(ends[i]->buf);
        free(ends[i]);
    }
    nends = 0;
    for (int i = 0; i < TN_CORES; i++) {
        if (tn_core[i].peers)
            wio_core_free(&tn_core[i]);
        memset(&tn_core[i], 0, sizeof tn_core[i]);
        logs[i][0] = 0;
    }
}

/* Main thread: the other end of e accepts, if it has not yet; 1 if it did now. */
static int accept_other(struct tn_end *e)
{
    struct tn_end *o = e->other;
    int moved = 0;
    if (o->accept_to >= 0) {
        o->conn = wio_conn_accept(&tn_core[o->accept_to], o);
        o->core = &tn_core[o->accept_to];
        o->accept_to = -1;
        if (!o->conn)
            o->closed = 1;
        moved = 1;
        if (e->conn && e->stalled) {
            e->stalled = 0;
            wio_tx_ready(e->conn);
        }
    }
    return moved;
}

/* Main thread: deliver some of e's bytes to the other end's connection. */
static int deliver(struct tn_end *e)
{
    struct tn_end *o = e->other;
    int moved = accept_other(e);
    if (e->len && o->conn && !o->closed && !o->lost) {
        size_t k = 1 + next_rand() % 3000;
        if (k > e->len)
            k = e->len;
        uint8_t *tmp = malloc(k);
        memcpy(tmp, e->buf, k);
        memmove(e->buf, e->buf + k, e->len - k);
        e->len -= k;
        wio_rx(o->conn, tmp, k);
        free(tmp);
        moved = 1;
    } else if (e->len && (o->closed || o->lost || (o->raw && !o->conn))) {
        e->len = 0; /* nobody reads them */
    }
    if (!e->len && e->closed && o->conn && !o->closed && !o->lost) {
        o->lost = 1; /* the writer closed and everything was read: the reader sees EOF */
        struct wio_conn *k = o->conn;
        o->conn = NULL;
        wio_conn_lost(k, "end of stream");
        moved = 1;
    }
    if (e->stalled && e->conn && !e->closed && e->len < tn_stream_max) {
        e->stalled = 0;
        wio_tx_ready(e->conn);
        moved = 1;
    }
    return moved;
}

/* Main thread (see wio_test_net.h). */
int tn_pump(void)
{
    int moved = 0;
    for (int i = 0; i < nends; i++)
        if (!ends[i]->raw || ends[i]->len)
            moved |= deliver(ends[i]);
    return moved;
}

/* Main thread (see wio_test_net.h). */
int tn_accept_all(void)
{
    int n = 0;
    for (int i = 0; i < nends; i++)
        n += accept_other(ends[i]);
    return n;
}

/* Main thread (see wio_test_net.h). */
size_t tn_pending(int a, int b)
{
    size_t n = 0;
    for (int i = 0; i < nends; i++)
        if (ends[i]->core == &tn_core[a] && ends[i]->other->core == &tn_core[b])
            n += ends[i]->len;
    return n;
}

/* Main thread (see wio_test_net.h). */
int tn_deliver_hello(int a, int b)
{
    for (int i = 0; i < nends; i++) {
        struct tn_end *e = ends[i], *o = e->other;
        if (e->core != &tn_core[a] || o->core != &tn_core[b] || e->len < WIO_HDR ||
            e->buf[5] != WIO_T_HELLO || !o->conn)
            continue;
        uint8_t h[WIO_HDR];
        memcpy(h, e->buf, WIO_HDR);
        memmove(e->buf, e->buf + WIO_HDR, e->len - WIO_HDR);
        e->len -= WIO_HDR;
        wio_rx(o->conn, h, WIO_HDR);
        return 1;
    }
    return 0;
}

/* Main thread (see wio_test_net.h). */
void tn_settle(void)
{
    for (int i = 0; i < 100000 && tn_pump(); i++)
        ;
}

/* Main thread (see wio_test_net.h). */
void *tn_raw(int to)
{
    struct tn_end *a = end_new(NULL), *b = end_new(&tn_core[to]);
    a->raw = b->raw = 1;
    a->other = b;
    b->other = a;
    b->conn = wio_conn_accept(&tn_core[to], b);
    return a;
}

/* Main thread (see wio_test_net.h); bytes copied. */
void tn_inject(void *raw, const void *bytes, size_t n)
{
    struct tn_end *e = raw;
    if (e->len + n > e->cap) {
        e->cap = (e->len + n) * 2;
        e->buf = realloc(e->buf, e->cap);
    }
    memcpy(e->buf + e->len, bytes, n);
    e->len += n;
}

/* Main thread (see wio_test_net.h). */
void tn_cut(int a, int b)
{
    for (int i = 0; i < nends; i++) {
        struct tn_end *e = ends[i];
        if (e->conn && e->conn->peer && e->core == &tn_core[a] &&
            e->conn->peer->index == (uint32_t)b && !e->closed && !e->lost) {
            struct tn_end *o = e->other;
            e->len = o->len = 0;
            e->lost = o->lost = 1;
            struct wio_conn *ka = e->conn, *kb = o->conn;
            e->conn = o->conn = NULL;
            wio_conn_lost(ka, "connection reset by peer");
            if (kb)
                wio_conn_lost(kb, "connection reset by peer");
        }
    }
}

/* A filter selecting every process. */
static int all(int pb, int n)
{
    return 1;
}

/* Main thread (see wio_test_net.h). */
struct PBGroup *tn_world(int i)
{
    waitio_filter_func_t f[TN_CORES] = {all, all, all, all};
    int order[TN_CORES] = {1, 2, 3, 4};
    return wio_group_filter(&tn_core[i], 0, f, order);
}
