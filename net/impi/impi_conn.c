/* impi_conn.c: buffered non-blocking connections for the server and relay. */
#include "impi_conn.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

/* Main thread: see impi_conn.h. */
void impi_conn_init(struct impi_conn *c, int fd, const char *name)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    snprintf(c->name, sizeof c->name, "%s", name);
}

/* Main thread: see impi_conn.h. */
void impi_conn_close(struct impi_conn *c, int ep)
{
    if (c->fd >= 0) {
        if (ep >= 0)
            epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    free(c->in);
    free(c->out);
    c->in = c->out = NULL;
    c->in_off = c->in_len = c->in_cap = c->out_off = c->out_len = c->out_cap = 0;
}

/* Main thread: see impi_conn.h. */
int impi_conn_watch(struct impi_conn *c, int ep, void *tag)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = tag};
    c->want_out = false;
    return epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Grows a buffer so that it can hold `need` bytes; -1 if out of memory. */
static int grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    uint8_t *p = realloc(*buf, n);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Acknowledge what came in at once. LAM's impid writes with Nagle on (no TCP_NODELAY), so
 * the payload of a small packet waits for the ACK of its header, and Linux delays ACKs up
 * to 40 ms: 1 KiB messages through the relay took 22 ms. Linux turns quick ACKs off again
 * by itself, so this is renewed after every drained read. Failure only costs latency. */
static void quick_ack(int fd)
{
#ifdef TCP_QUICKACK
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
#else
    (void)fd;
#endif
}

/* Main thread: see impi_conn.h. */
int impi_conn_read(struct impi_conn *c, size_t limit)
{
    /* Compact first so that the buffer never creeps: consumed bytes are at the front. */
    if (c->in_off && c->in_off == c->in_len)
        c->in_off = c->in_len = 0;
    else if (c->in_off > c->in_cap / 2) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    for (;;) {
        if (c->in_len - c->in_off >= limit)
            return 0; /* caller consumes first; the fd stays readable (level-triggered) */
        if (grow(&c->in, &c->in_cap, c->in_len + 65536 + 128))
            return -1;
        size_t space = c->in_cap - c->in_len;
        ssize_t n = recv(c->fd, c->in + c->in_len, space, 0);
        if (n > 0) {
            c->in_len += (size_t)n;
            c->rx_bytes += (uint64_t)n;
            if ((size_t)n < space) {
                quick_ack(c->fd);
                return 0; /* short read: drained for now */
            }
            continue;
        }
        if (n == 0) {
            c->eof = true;
            return 0;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        if (errno == ECONNRESET) { /* an abortive close is still a close for our callers */
            c->eof = true;
            return 0;
        }
        return -1;
    }
}

/* Main thread: see impi_conn.h. */
void impi_conn_consume(struct impi_conn *c, size_t n)
{
    c->in_off += n;
    if (c->in_off == c->in_len)
        c->in_off = c->in_len = 0;
}

/* Main thread: see impi_conn.h. */
uint8_t *impi_conn_reserve(struct impi_conn *c, size_t n)
{
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    else if (c->out_off > c->out_cap / 2) {
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    if (grow(&c->out, &c->out_cap, c->out_len + n))
        return NULL;
    uint8_t *p = c->out + c->out_len;
    c->out_len += n;
    return p;
}

/* Main thread: see impi_conn.h. */
int impi_conn_send(struct impi_conn *c, const void *data, size_t n)
{
    uint8_t *p = impi_conn_reserve(c, n);
    if (!p)
        return -1;
    memcpy(p, data, n);
    return 0;
}

/* Main thread: see impi_conn.h. */
int impi_conn_flush(struct impi_conn *c, int ep, void *tag)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            c->tx_bytes += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        return -1;
    }
    bool want = c->out_off < c->out_len;
    if (want != c->want_out && ep >= 0) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0),
                                 .data.ptr = tag};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = want;
    }
    return 0;
}
