/*
 * wio_uk_net.c: the hooks of wio_plat.h in the unikernel, over kernel sockets (wio_uk.h).
 *
 * Contexts: the socket callbacks below run in the NIC interrupt (or inside a ksock call
 * that flushed lwIP work), under the network lock; the waitio_* calls run in the rank's
 * task and take the same lock (wio_plat_lock), which masks interrupts on this CPU and
 * excludes the other CPUs' callbacks. So the core's state has one lock, as its contract
 * asks, and a transport handle (struct ksock *) is only used under it.
 *
 * Memory: the receive path allocates one unexpected-message record per packet at most;
 * it comes from a pool of fixed slots made in task context (POOL_SLOTS of POOL_SLOT
 * bytes) and goes back to it, under the lock. Larger or task-context requests use malloc.
 */
#include "wio_boot.h"
#include "wio_uk.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_SLOT  256  /* >= sizeof(struct wio_ux) (asserted below) */
#define POOL_SLOTS 8192 /* unexpected eager messages held at once: 2 MiB */
#define HELD_MAX   32   /* connections accepted before the core exists */
#define HELD_BYTES 256  /* what one may bring before our HELLO_OK: its HELLO */
#define LOG_RING   16   /* log lines waiting for the task */

_Static_assert(sizeof(struct wio_ux) <= POOL_SLOT, "a pool slot holds an unexpected record");

const struct uk_net_abi *wio_uk_net;
void *wio_uk_task;
static struct wio_core *core; /* set by wio_uk_net_start */
static struct ksock *listener;

/* The receive path's pool: a free list through the slots. */
static uint8_t *pool;
static void *pool_free;

/* A connection accepted before the core existed, with what it brought. */
static struct held {
    struct ksock *s;
    uint8_t bytes[HELD_BYTES];
    size_t n;
    const char *lost; /* it ended before the core took it */
} held[HELD_MAX];
static int nheld;

static char log_ring[LOG_RING][WIO_TEXT + 64];
static unsigned log_head, log_tail; /* under the lock */

/* Callbacks of a connection the core reads (arg: its struct wio_conn). Interrupt context. */
static void conn_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    wio_rx(arg, data, len);
}

static void conn_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    if (ev == KSOCK_EV_CONNECTED || ev == KSOCK_EV_SENT)
        wio_tx_ready(arg);
    else if (ev == KSOCK_EV_EOF)
        wio_conn_lost(arg, "the peer closed the connection");
    else if (ev == KSOCK_EV_ERROR)
        wio_conn_lost(arg, wio_uk_net->strerror(err));
}

static const struct ksock_ops conn_ops = {.recv = conn_recv, .event = conn_event};

/* Callbacks of a held connection (arg: its struct held). Interrupt context. */
static void held_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    struct held *h = arg;
    if (h->n + len > HELD_BYTES) { /* a peer that sends before our HELLO_OK: not ours */
        h->lost = "it sent more than a HELLO before being answered";
        return;
    }
    memcpy(h->bytes + h->n, data, len);
    h->n += len;
}

static void held_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    struct held *h = arg;
    if (ev == KSOCK_EV_EOF || ev == KSOCK_EV_ERROR)
        h->lost = ev == KSOCK_EV_EOF ? "the peer closed the connection" : "connection failed";
}

static const struct ksock_ops held_ops = {.recv = held_recv, .event = held_event};

/* Interrupt context: a connection on our listener: to the core, or held until it exists. */
static void on_accept(struct ksock *l, void *arg, struct ksock *s)
{
    if (core) {
        struct wio_conn *k = wio_conn_accept(core, s);
        if (k)
            wio_uk_net->set_ops(s, &conn_ops, k);
        else
            wio_uk_net->abort(s);
    } else if (nheld < HELD_MAX) {
        struct held *h = &held[nheld++];
        h->s = s;
        h->n = 0;
        h->lost = 0;
        wio_uk_net->set_ops(s, &held_ops, h);
    } else {
        wio_uk_net->abort(s);
    }
}

/* Task context. */
int wio_uk_net_open(uint16_t port, char *why)
{
    wio_uk_net = uk_abi->net;
    wio_uk_task = wio_uk_net->task_self();
    pool = malloc((size_t)POOL_SLOTS * POOL_SLOT);
    if (!pool) {
        strcpy(why, "no memory for the receive pool");
        return -1;
    }
    for (int i = POOL_SLOTS - 1; i >= 0; i--) {
        void **slot = (void **)(pool + (size_t)i * POOL_SLOT);
        *slot = pool_free;
        pool_free = slot;
    }
    listener = wio_uk_net->listen(port, on_accept, 0, wio_uk_task);
    if (!listener) {
        strcpy(why, "cannot listen for WaitIO connections (port in use, or no sockets left)");
        return -1;
    }
    return 0;
}

/* Task context. Under the lock, so no callback runs while connections change hands. */
void wio_uk_net_start(struct wio_core *c)
{
    unsigned long t = wio_plat_lock(c);
    core = c;
    for (int i = 0; i < nheld; i++) {
        struct held *h = &held[i];
        struct wio_conn *k = h->lost ? 0 : wio_conn_accept(c, h->s);
        if (!k) {
            wio_uk_net->abort(h->s);
            continue;
        }
        wio_uk_net->set_ops(h->s, &conn_ops, k);
        if (h->n)
            wio_rx(k, h->bytes, h->n);
    }
    nheld = 0;
    wio_plat_unlock(c, t);
}

/* Task context. */
void wio_uk_net_stop(void)
{
    int t = wio_uk_net ? wio_uk_net->lock() : 0;
    if (listener)
        wio_uk_net->close(listener);
    listener = 0;
    for (int i = 0; i < nheld; i++)
        wio_uk_net->abort(held[i].s);
    nheld = 0;
    if (core)
        wio_core_close_all(core); /* closes every transport through wio_plat_close */
    core = 0;
    if (wio_uk_net)
        wio_uk_net->unlock(t);
    wio_uk_log_flush();
}

/* Under the lock, task or interrupt context: lwIP copies what it takes. A connect in
 * progress has no room yet (KSOCK_EV_CONNECTED calls wio_tx_ready). */
long wio_plat_send(struct wio_core *c, void *transport, const void *data, size_t n)
{
    if (!wio_uk_net->connected(transport))
        return wio_uk_net->error(transport) ? -1 : 0;
    return wio_uk_net->send(transport, data, n);
}

/* Under the lock, any context: connect to the peer's table address, owned by our task. */
void *wio_plat_connect(struct wio_core *c, uint32_t peer, struct wio_conn *conn)
{
    struct wio_addr a = wio_peer_addr(c, peer);
    uint32_t ip =
        (uint32_t)a.ip[0] << 24 | (uint32_t)a.ip[1] << 16 | (uint32_t)a.ip[2] << 8 | a.ip[3];
    return wio_uk_net->connect(ip, a.port, &conn_ops, conn, wio_uk_task);
}

/* Under the lock, any context (also inside this socket's callback: ksock defers the
 * release of its own struct until the callback returns). */
void wio_plat_close(struct wio_core *c, void *transport)
{
    wio_uk_net->close(transport);
}

/* Any context: the network lock (recursive on the CPU that holds it). */
unsigned long wio_plat_lock(struct wio_core *c)
{
    return (unsigned long)wio_uk_net->lock();
}

void wio_plat_unlock(struct wio_core *c, unsigned long token)
{
    wio_uk_net->unlock((int)token);
}

/* Task context, without the lock: the CPU halts until a callback completes a request
 * (wio_plat_wake), or returns at once when one did since the last return (the kernel
 * counts wake-ups: none is lost between waitio_wait's check and this sleep). */
void wio_plat_block(struct wio_core *c)
{
    wio_uk_log_flush();
    wio_uk_net->task_block();
    wio_uk_log_flush();
}

/* Under the lock, any context. */
void wio_plat_wake(struct wio_core *c)
{
    wio_uk_net->task_wake(wio_uk_task);
}

/* Any context: pool slots for small records (the receive path's), malloc otherwise
 * (task context only: the core's larger allocations are made there). */
void *wio_plat_alloc(size_t n)
{
    if (n <= POOL_SLOT) {
        int t = wio_uk_net->lock();
        void **slot = pool_free;
        if (slot)
            pool_free = *slot;
        wio_uk_net->unlock(t);
        if (slot)
            memset(slot, 0, POOL_SLOT);
        return slot;
    }
    return calloc(1, n);
}

void wio_plat_free(void *p)
{
    uint8_t *b = p;
    if (pool && b >= pool && b < pool + (size_t)POOL_SLOTS * POOL_SLOT) {
        int t = wio_uk_net->lock();
        *(void **)p = pool_free;
        pool_free = p;
        wio_uk_net->unlock(t);
    } else {
        free(p);
    }
}

/* Any context: into the ring (the oldest line is dropped when it is full); the task
 * prints it (wio_uk_log_flush). */
void wio_plat_log(struct wio_core *c, const char *line)
{
    int t = wio_uk_net->lock();
    char *dst = log_ring[log_head % LOG_RING];
    size_t n = strlen(line);
    if (n > WIO_TEXT)
        n = WIO_TEXT;
    memcpy(dst, line, n);
    dst[n] = 0;
    log_head++;
    if (log_head - log_tail > LOG_RING)
        log_tail = log_head - LOG_RING;
    wio_uk_net->unlock(t);
}

/* Task context, no lock held: one write per line, lines in order. */
void wio_uk_log_flush(void)
{
    if (!wio_uk_net)
        return;
    for (;;) {
        char line[WIO_TEXT + 64];
        int t = wio_uk_net->lock();
        int have = log_tail != log_head;
        if (have) {
            strcpy(line, log_ring[log_tail % LOG_RING]);
            log_tail++;
        }
        wio_uk_net->unlock(t);
        if (!have)
            return;
        size_t n = strlen(line);
        line[n++] = '\n';
        write(2, line, n);
    }
}
