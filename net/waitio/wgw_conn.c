/*
 * wgw_conn.c: one relayed connection of waitio-gw (see wgw.h): its two ends, the bounded
 * ring per direction, the epoll interest that implements the back-pressure (a full ring
 * stops reads from the end that fills it), the start-up reads, and the teardown.
 */
#include "impi_util.h"
#include "wgw.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* Read/write passes per event: enough to move a ring's worth both ways, few enough that
 * one busy connection does not starve the others (the loop is level-triggered). */
#define PUMP_PASSES 4

static struct wgw_conn *conns; /* every live connection, newest first */
/* Closed connections, freed by wgw_conn_reap after the loop's batch of events: a later
 * event of the same batch may still point at one of their ends. */
static struct wgw_conn *graveyard;
static uint64_t next_id = 1;

/* Main thread: register (or drop) e's epoll interest; an end with nothing to wait for
 * leaves the set, so that a hung-up peer cannot make epoll report it over and over. */
static void ep_set(struct wgw_end *e, uint32_t ev)
{
    if (e->fd < 0 || ev == e->ev)
        return;
    struct epoll_event ee = {.events = ev, .data.ptr = e};
    int op = !e->ev ? EPOLL_CTL_ADD : ev ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;
    if (epoll_ctl(wgw_ep, op, e->fd, &ee))
        impi_log(0, "epoll_ctl(%s): %s", e->name, strerror(errno));
    e->ev = ev;
}

/* Main thread: bytes still to be written to end i (its start-up message, then the ring
 * of the other end). */
static size_t pending_to(const struct wgw_conn *c, int i)
{
    return c->pre[i].len - c->pre[i].off + c->q[1 - i].len;
}

/* Main thread: write what is pending to end i until the socket is full. Returns the bytes
 * written, or -1 (errno) on a socket error. */
static ssize_t write_to(struct wgw_conn *c, int i)
{
    struct wgw_msg *m = &c->pre[i];
    struct wgw_ring *r = &c->q[1 - i];
    ssize_t total = 0;
    for (;;) {
        struct iovec iov[2];
        int n = 0;
        if (m->off < m->len) {
            iov[n++] = (struct iovec){m->p + m->off, m->len - m->off};
        } else if (r->len) {
            size_t first = r->cap - r->head < r->len ? r->cap - r->head : r->len;
            iov[n++] = (struct iovec){r->p + r->head, first};
            if (first < r->len)
                iov[n++] = (struct iovec){r->p, r->len - first};
        }
        if (!n)
            return total;
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(c->end[i].fd, &mh, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return total;
            return -1;
        }
        if (m->off < m->len) {
            m->off += (size_t)k;
        } else {
            r->head = (r->head + (size_t)k) % r->cap;
            r->len -= (size_t)k;
        }
        c->tx[i] += (uint64_t)k;
        wgw_stats.bytes += (uint64_t)k;
        total += k;
    }
}

/* Main thread: read what end i has into q[i], as far as it has room. Returns the bytes
 * read, 0 at end of stream, -1 on a socket error (errno), -2 when nothing was there. */
static ssize_t fill_from(struct wgw_conn *c, int i)
{
    struct wgw_ring *r = &c->q[i];
    size_t room = r->cap - r->len, tail = (r->head + r->len) % r->cap;
    size_t first = r->cap - tail < room ? r->cap - tail : room;
    struct iovec iov[2] = {{r->p + tail, first}, {r->p, room - first}};
    ssize_t k;
    do
        k = readv(c->end[i].fd, iov, room > first ? 2 : 1);
    while (k < 0 && errno == EINTR);
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? -2 : -1;
    r->len += (size_t)k;
    if (r->len > r->max)
        r->max = r->len;
    return k;
}

/* Main thread: read into buf[*have .. want) from end i. Returns 1 when complete, 0 when
 * more is to come, -1 on a socket error (errno), -2 at end of stream. */
static int read_into(struct wgw_conn *c, int i, uint8_t *buf, size_t want, size_t *have)
{
    while (*have < want) {
        ssize_t k = read(c->end[i].fd, buf + *have, want - *have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        if (k == 0)
            return -2;
        *have += (size_t)k;
    }
    return 1;
}

/* Main thread: see wgw.h. */
struct wgw_conn *wgw_conn_new(int fd, enum wgw_leg leg, const char *peer)
{
    struct wgw_conn *c = calloc(1, sizeof *c);
    if (!c) {
        impi_log(0, "%s: out of memory for a connection; closed", peer);
        close(fd);
        return NULL;
    }
    c->id = next_id++;
    c->st = WGW_FIRST;
    c->t0 = impi_now();
    for (int i = 0; i < 2; i++) {
        c->end[i] = (struct wgw_end){.kind = WGW_K_END, .fd = -1, .leg = leg, .c = c};
    }
    c->end[0].fd = fd;
    snprintf(c->end[0].name, sizeof c->end[0].name, "%s", peer);
    snprintf(c->what, sizeof c->what, "first header");
    c->next = conns;
    if (conns)
        conns->prev = c;
    conns = c;
    wgw_stats.live++;
    wgw_conn_sync(c);
    return c;
}

/* Main thread: see wgw.h. */
int wgw_conn_open(struct wgw_conn *c, enum wgw_leg leg, uint32_t ip, uint16_t port)
{
    int fd = impi_connect(wgw_opts.ip[leg], ip, port);
    if (fd < 0)
        return -1;
    struct wgw_end *e = &c->end[1];
    e->fd = fd;
    e->leg = leg;
    e->connecting = true; /* even if it completed at once: EPOLLOUT then reports it */
    snprintf(e->name, sizeof e->name, "%s:%u", impi_ipstr(ip), port);
    return 0;
}

/* Main thread: see wgw.h. */
void wgw_conn_retry(struct wgw_conn *c, int err)
{
    struct wgw_end *e = &c->end[1];
    if (!c->retries++)
        impi_log(0,
                 "conn %llu: the master %s:%u: %s; retrying every %g s while PB %u's rank 0 "
                 "waits",
                 (unsigned long long)c->id, impi_ipstr(wgw_opts.master_ip), wgw_opts.master_port,
                 strerror(err), WGW_RETRY_S, c->pbid);
    if (e->fd >= 0)
        close(e->fd); /* also leaves the epoll set */
    e->fd = -1;
    e->ev = 0;
    e->connecting = false;
    c->pre[1].off = 0; /* nothing of the REGISTER went out */
    c->retry_at = impi_now() + WGW_RETRY_S;
}

/* Main thread: see wgw.h. */
int wgw_conn_forward(struct wgw_conn *c)
{
    for (int i = 0; i < 2; i++) {
        c->q[i] = (struct wgw_ring){.p = malloc(wgw_opts.buf), .cap = wgw_opts.buf};
        if (!c->q[i].p)
            return -1;
    }
    c->st = WGW_FWD;
    return 0;
}

/* Main thread: see wgw.h. */
void wgw_conn_put(struct wgw_conn *c, int i, uint8_t *msg, size_t len)
{
    free(c->pre[i].p);
    c->pre[i] = (struct wgw_msg){.p = msg, .len = len};
}

/* Main thread: "<leg> <peer> -> <what>" of c into buf. */
static const char *label(const struct wgw_conn *c, char *buf, size_t n)
{
    snprintf(buf, n, "conn %llu %s %s -> %s", (unsigned long long)c->id,
             c->end[0].leg == WGW_PRIV ? "priv" : "pub", c->end[0].name, c->what);
    return buf;
}

/* Main thread: c's counters into buf. */
static const char *counters(const struct wgw_conn *c, char *buf, size_t n)
{
    snprintf(buf, n,
             "%llu B forwarded, %llu B back, buffered at most %zu + %zu of %zu B, read pauses "
             "%u + %u, %.1f s",
             (unsigned long long)c->tx[1], (unsigned long long)c->tx[0], c->q[0].max, c->q[1].max,
             wgw_opts.buf, c->pauses[0], c->pauses[1], impi_now() - c->t0);
    return buf;
}

/* Main thread: see wgw.h. */
int wgw_conn_close(struct wgw_conn *c, int bad, const char *fmt, ...)
{
    char why[256], lb[160], cn[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    /* What can still be flushed goes out, without waiting for a slow side. */
    for (int i = 0; i < 2; i++) {
        if (i != bad && c->end[i].fd >= 0 && !c->end[i].connecting)
            (void)write_to(c, i);
    }
    size_t lost0 = pending_to(c, 0), lost1 = pending_to(c, 1);
    impi_log(0, "%s: closed: %s%s; %s", label(c, lb, sizeof lb), why,
             lost0 + lost1 ? " (bytes in flight dropped)" : "", counters(c, cn, sizeof cn));
    if (c->st == WGW_FIRST)
        wgw_stats.rejected++;
    else if (bad >= 0)
        wgw_stats.failed++;
    for (int i = 0; i < 2; i++) {
        if (c->end[i].fd >= 0)
            close(c->end[i].fd); /* also leaves the epoll set */
        c->end[i].fd = -1;
        free(c->q[i].p);
        free(c->pre[i].p);
    }
    free(c->body);
    if (c->prev)
        c->prev->next = c->next;
    else
        conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    wgw_stats.live--;
    c->dead = true;
    c->next = graveyard;
    graveyard = c;
    return -1;
}

/* Main thread: see wgw.h. */
void wgw_conn_reap(void)
{
    while (graveyard) {
        struct wgw_conn *c = graveyard;
        graveyard = c->next;
        free(c);
    }
}

/* Main thread: see wgw.h. */
void wgw_conn_sync(struct wgw_conn *c)
{
    for (int i = 0; i < 2; i++) {
        struct wgw_end *e = &c->end[i];
        uint32_t ev = 0;
        if (e->fd < 0)
            continue;
        if (e->connecting) {
            ep_set(e, EPOLLOUT);
            continue;
        }
        switch (c->st) {
        case WGW_FIRST:
        case WGW_REG_IN:
            ev = EPOLLIN;
            break;
        case WGW_REG_UP: /* end 0 only to notice it leaving; end 1 sends, then replies */
            ev = i == 0 || c->pre[1].off == c->pre[1].len ? EPOLLIN : EPOLLOUT;
            break;
        case WGW_FWD: {
            bool full = !e->eof && c->q[i].len == c->q[i].cap;
            if (full && !c->full[i])
                c->pauses[i]++;
            c->full[i] = full;
            if (!e->eof && !full)
                ev |= EPOLLIN;
            if (pending_to(c, i))
                ev |= EPOLLOUT;
            break;
        }
        }
        ep_set(e, ev);
    }
}

/* Main thread: one step of WGW_FWD: move bytes both ways while either moves; close when
 * an end has closed and everything it sent is delivered. Returns 0, or -1 if c closed. */
static int pump(struct wgw_conn *c)
{
    for (int pass = 0; pass < PUMP_PASSES; pass++) {
        ssize_t moved = 0;
        for (int i = 0; i < 2; i++) {
            struct wgw_end *e = &c->end[i];
            if (e->connecting)
                continue;
            ssize_t w = write_to(c, i);
            if (w < 0)
                return wgw_conn_close(c, i, "write to %s: %s", e->name, strerror(errno));
            moved += w;
            if (e->eof || c->q[i].len == c->q[i].cap)
                continue;
            ssize_t r = fill_from(c, i);
            if (r == -1)
                return wgw_conn_close(c, i, "read from %s: %s", e->name, strerror(errno));
            if (r == 0)
                e->eof = true;
            moved += r > 0 ? r : r == 0;
        }
        if (!moved)
            break;
    }
    for (int i = 0; i < 2; i++) {
        if (c->end[i].eof && !pending_to(c, 1 - i))
            return wgw_conn_close(c, -1, "%s closed", c->end[i].name);
    }
    return 0;
}

/* Main thread: the start-up states' reads (see wgw.h for who reads what). Returns 0, or
 * -1 if c closed. */
static int startup_read(struct wgw_conn *c, int i)
{
    int r;
    const char *who = c->end[i].name;
    switch (c->st) {
    case WGW_FIRST:
        r = read_into(c, 0, c->hdr, WIO_HDR, &c->hdr_have);
        if (r == -2)
            return c->hdr_have ? wgw_conn_close(c, 0,
                                                "truncated header: %zu of %d bytes, then "
                                                "closed",
                                                c->hdr_have, WIO_HDR)
                               : wgw_conn_close(c, 0, "closed before sending a header");
        break;
    case WGW_REG_IN:
        r = read_into(c, 0, c->body, c->body_len, &c->body_have);
        if (r == -2)
            return wgw_conn_close(c, 0, "truncated REGISTER: %zu of %zu payload bytes, then closed",
                                  c->body_have, c->body_len);
        break;
    case WGW_REG_UP:
        if (i == 0) { /* rank 0 only waits for the TABLE: anything else ends it */
            uint8_t b;
            r = read_into(c, 0, &b, 1, &(size_t){0});
            if (r == 1)
                return wgw_conn_close(c, 0, "unexpected bytes from PB rank 0 during start-up");
            if (r == -2)
                return wgw_conn_close(c, 0, "PB rank 0 closed during start-up");
        } else if (!c->body) {
            r = read_into(c, 1, c->hdr, WIO_HDR, &c->hdr_have);
        } else {
            r = read_into(c, 1, c->body, c->body_len, &c->body_have);
        }
        if (i == 1 && r == -2)
            return wgw_conn_close(c, 1, "the master closed before its reply was complete");
        break;
    default:
        return 0;
    }
    if (r == -1)
        return wgw_conn_close(c, i, "read from %s: %s", who, strerror(errno));
    if (r != 1)
        return 0;
    switch (c->st) {
    case WGW_FIRST:
        return wgw_route_first(c);
    case WGW_REG_IN:
        return wgw_route_register(c);
    default: /* WGW_REG_UP, end 1 */
        if (c->body && c->body_have == c->body_len)
            return wgw_route_reply(c);
        if (wgw_route_reply_hdr(c))
            return -1;
        /* A reply without payload is complete now. */
        return c->body_len ? 0 : wgw_route_reply(c);
    }
}

/* Main thread: see wgw.h. */
void wgw_conn_event(struct wgw_end *e, uint32_t events)
{
    struct wgw_conn *c = e->c;
    int i = (int)(e - c->end);
    if (c->dead) /* closed earlier in this batch of events */
        return;
    if (e->connecting) {
        int err = 0;
        socklen_t sl = sizeof err;
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &sl) || err) {
            err = err ? err : errno;
            if (c->st == WGW_REG_UP) /* as rank 0 itself would, keep trying the master */
                wgw_conn_retry(c, err);
            else
                wgw_conn_close(c, 1, "connect to %s: %s", e->name, strerror(err));
            return;
        }
        e->connecting = false;
    }
    if (c->st == WGW_REG_UP && i == 1 && c->pre[1].off < c->pre[1].len) {
        if (write_to(c, 1) < 0) {
            wgw_conn_close(c, 1, "write to the master %s: %s", e->name, strerror(errno));
            return;
        }
    } else if (c->st != WGW_FWD && startup_read(c, i) < 0) {
        return;
    }
    /* Also right after a start-up ended: it left bytes to send. */
    if (c->st == WGW_FWD && pump(c) < 0)
        return;
    wgw_conn_sync(c);
}

/* Main thread: see wgw.h. */
void wgw_conn_dump(void)
{
    char lb[160], cn[200];
    for (struct wgw_conn *c = conns; c; c = c->next)
        impi_log(0, "%s: %s", label(c, lb, sizeof lb), counters(c, cn, sizeof cn));
    impi_log(0,
             "totals: %llu live, %llu accepted, %llu rejected, %llu forwarded, %llu "
             "registrations, %llu tables, %llu refusals, %llu failed, %llu B relayed",
             (unsigned long long)wgw_stats.live, (unsigned long long)wgw_stats.accepted,
             (unsigned long long)wgw_stats.rejected, (unsigned long long)wgw_stats.forwarded,
             (unsigned long long)wgw_stats.registered, (unsigned long long)wgw_stats.tables,
             (unsigned long long)wgw_stats.refused, (unsigned long long)wgw_stats.failed,
             (unsigned long long)wgw_stats.bytes);
}

/* Main thread: see wgw.h. */
void wgw_conn_expire(double now)
{
    struct wgw_conn *c = conns, *next;
    for (; c; c = next) {
        next = c->next;
        if (c->st == WGW_FIRST && wgw_opts.first_timeout > 0 &&
            now - c->t0 > wgw_opts.first_timeout) {
            wgw_conn_close(c, 0, "no complete first header within %g s (%zu of %d bytes)",
                           wgw_opts.first_timeout, c->hdr_have, WIO_HDR);
        } else if (c->st == WGW_REG_UP && c->end[1].fd < 0 && now >= c->retry_at) {
            if (wgw_conn_open(c, WGW_PUB, wgw_opts.master_ip, wgw_opts.master_port))
                wgw_conn_retry(c, errno);
            else
                wgw_conn_sync(c);
        }
    }
}
