/*
 * wio_uk_boot.c: wio_boot.h in the unikernel: start-up streams over kernel sockets.
 *
 * A start-up stream collects what arrives into a buffer of its own (the callbacks run in
 * the NIC interrupt and may not allocate), sized for the largest start-up packet it can
 * get: a TABLE for a PB's rank 0 (client), a REGISTER for the master's accepted streams.
 * The task polls it (start-up is not a fast path; waiting sleeps in short steps until the
 * deadline). Only the unikernel's own addresses exist here: WAITIO_MASTER_HOST must be a
 * dotted quad (no name service).
 */
#include "wio_boot.h"
#include "wio_uk.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS          1  /* a waiting task's sleep between looks */
#define ACCEPT_MAX       16 /* master: registrations waiting to be read */
/* Bytes a stream can hold: a client gets one TABLE; the master reads REGISTERs of PBs of up
 * to ACCEPT_REG_PROCS processes (larger ones are refused, the reason logged). */
#define CLIENT_BYTES     (WIO_HDR + WIO_TABLE_MAX)
#define ACCEPT_REG_PROCS 4096
#define ACCEPT_BYTES     (WIO_HDR + WIO_REG_FIXED + ACCEPT_REG_PROCS * WIO_ADDR_BYTES)

struct wio_bstream {
    struct ksock *s;
    uint8_t *buf; /* arrived, not yet read */
    size_t cap, fill, off;
    volatile int connected, ended; /* set by the callbacks (under the network lock) */
    /* a listener: accepted streams, in order */
    struct wio_bstream *acc[ACCEPT_MAX];
    int nacc;
    int taken;
};

/* Interrupt context: bytes for a stream; more than it can hold ends it. */
static void bs_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    struct wio_bstream *b = arg;
    if (b->fill + len > b->cap) {
        b->ended = 1;
        return;
    }
    memcpy(b->buf + b->fill, data, len);
    b->fill += len;
}

static void bs_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    struct wio_bstream *b = arg;
    if (ev == KSOCK_EV_CONNECTED)
        b->connected = 1;
    else if (ev == KSOCK_EV_EOF || ev == KSOCK_EV_ERROR)
        b->ended = 1;
}

static const struct ksock_ops bs_ops = {.recv = bs_recv, .event = bs_event};

/* Task context: a stream with a buffer of `cap` bytes, or NULL. */
static struct wio_bstream *bs_new(size_t cap)
{
    struct wio_bstream *b = calloc(1, sizeof *b);
    if (b && cap && !(b->buf = malloc(cap))) {
        free(b);
        return NULL;
    }
    if (b)
        b->cap = cap;
    return b;
}

long long wio_boot_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void wio_boot_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

int wio_boot_resolve(const char *host, uint8_t ip[4], char *why)
{
    uint32_t a;
    if (!uk_abi->net || uk_abi->net->parse_ip(host, &a)) {
        snprintf(why, WIO_BOOT_WHY,
                 "WAITIO_MASTER_HOST %s: the unikernel needs an IPv4 address (no name service)",
                 host);
        return -1;
    }
    ip[0] = (uint8_t)(a >> 24), ip[1] = (uint8_t)(a >> 16), ip[2] = (uint8_t)(a >> 8);
    ip[3] = (uint8_t)a;
    return 0;
}

/* Our address is the node's: the unikernel has one interface. */
int wio_boot_listen_self(const uint8_t master_ip[4], uint16_t master_port, struct wio_addr *me,
                         char *why)
{
    uint16_t port = (uint16_t)(WIO_UK_PORT_BASE + uk_rank());
    if (wio_uk_net_open(port, why))
        return -1;
    uint32_t a = wio_uk_net->local_ip();
    if (!a) {
        snprintf(why, WIO_BOOT_WHY, "this node has no network (WaitIO needs one)");
        return -1;
    }
    me->ip[0] = (uint8_t)(a >> 24), me->ip[1] = (uint8_t)(a >> 16);
    me->ip[2] = (uint8_t)(a >> 8), me->ip[3] = (uint8_t)a;
    me->port = port;
    return 0;
}

int wio_boot_start(struct wio_core *c)
{
    wio_uk_net_start(c);
    return 0;
}

void wio_boot_stop(struct wio_core *c)
{
    wio_uk_net_stop();
}

/* The callbacks make the progress; the task only waits. */
void wio_boot_progress(struct wio_core *c, int ms)
{
    wio_uk_log_flush();
    wio_boot_sleep_ms(ms);
}

/* Interrupt context, under the network lock: a registration for the master, into the
 * next prepared stream. wio_boot_accept reads nacc under the same lock, so it sees the
 * stream complete. */
static void bs_accept(struct ksock *l, void *arg, struct ksock *s)
{
    struct wio_bstream *m = arg;
    if (m->nacc >= ACCEPT_MAX) {
        wio_uk_net->abort(s);
        return;
    }
    struct wio_bstream *b = m->acc[m->nacc];
    b->s = s;
    wio_uk_net->set_ops(s, &bs_ops, b);
    m->nacc++;
}

struct wio_bstream *wio_boot_master_listen(uint16_t port, char *why)
{
    struct wio_bstream *m = bs_new(0);
    for (int i = 0; m && i < ACCEPT_MAX; i++)
        if (!(m->acc[i] = bs_new(ACCEPT_BYTES)))
            m = 0; /* leaked on a machine out of memory at start-up: the job ends */
    if (!m || !(m->s = wio_uk_net->listen(port, bs_accept, m, wio_uk_task))) {
        snprintf(why, WIO_BOOT_WHY, "the master cannot listen on port %u", port);
        return NULL;
    }
    return m;
}

struct wio_bstream *wio_boot_accept(struct wio_bstream *m, long long deadline)
{
    for (;;) {
        int t = wio_uk_net->lock();
        int have = m->taken < m->nacc;
        wio_uk_net->unlock(t);
        if (have)
            break;
        if (wio_boot_now_ms() >= deadline)
            return NULL;
        wio_boot_sleep_ms(POLL_MS);
    }
    struct wio_bstream *b = m->acc[m->taken];
    m->acc[m->taken++] = 0; /* the caller's now (wio_boot_close frees it) */
    return b;
}

struct wio_bstream *wio_boot_connect(const uint8_t ip[4], uint16_t port, long long deadline)
{
    struct wio_bstream *b = bs_new(CLIENT_BYTES);
    if (!b)
        return NULL;
    uint32_t a = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 | (uint32_t)ip[2] << 8 | ip[3];
    b->s = wio_uk_net->connect(a, port, &bs_ops, b, wio_uk_task);
    while (b->s && !b->connected && !b->ended && wio_boot_now_ms() < deadline)
        wio_boot_sleep_ms(POLL_MS);
    if (!b->connected) {
        wio_boot_close(b);
        return NULL;
    }
    return b;
}

/* The buffer and the flags change in the callbacks, under the network lock: read and
 * sent under it too. */
int wio_boot_io(struct wio_bstream *b, void *buf, size_t n, int out, long long deadline)
{
    uint8_t *p = buf;
    while (n) {
        long k = 0;
        int t = wio_uk_net->lock();
        int ended = b->ended;
        if (out) {
            k = ended ? -1 : wio_uk_net->send(b->s, p, n);
        } else if (b->fill > b->off) {
            k = (long)(b->fill - b->off < n ? b->fill - b->off : n);
            memcpy(p, b->buf + b->off, (size_t)k);
            b->off += (size_t)k;
        }
        wio_uk_net->unlock(t);
        if (k < 0)
            return -1;
        p += k;
        n -= (size_t)k;
        if (n && !k) {
            if (ended || wio_boot_now_ms() >= deadline)
                return -1;
            wio_boot_sleep_ms(POLL_MS);
        }
    }
    return 0;
}

void wio_boot_close(struct wio_bstream *b)
{
    if (!b)
        return;
    if (b->s)
        wio_uk_net->close(b->s);
    for (int i = 0; i < ACCEPT_MAX; i++)
        if (b->acc[i]) {
            if (b->acc[i]->s)
                wio_uk_net->close(b->acc[i]->s);
            free(b->acc[i]->buf);
            free(b->acc[i]);
        }
    free(b->buf);
    free(b);
}
