/*
 * wio_linux_net.c: the hooks of wio_plat.h on Linux. Non-blocking TCP sockets under one
 * epoll set; a send is a direct write() first, and only when the kernel takes less
 * (EAGAIN) does the socket wait for EPOLLOUT; EINTR is retried. Reads go to the core as
 * they come (wio_rx). All of it runs in the application thread, inside waitio_wait
 * (wio_plat_block) or inside the waitio_* call that queued a packet.
 */
#include "wio_linux.h"
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RX_BUF     (256 * 1024) /* bytes read per read() */
#define RX_ROUNDS  8            /* reads per socket per epoll round (fairness) */
#define MAX_EVENTS 64
#define BLOCK_MS   200 /* wio_plat_block's epoll wait: waitio_wait re-checks after it */

static struct wio_core *lx_core; /* the process's one core, from wio_lx_net_start */

/* One socket of the core. */
struct lx_sock {
    int fd;
    struct wio_conn *conn;
    int connecting; /* non-blocking connect in progress */
    int want_out;   /* EPOLLOUT armed */
    int closed;
    struct lx_sock *dead_next;
};

static int epfd = -1, lfd = -1;
static struct lx_sock *dead;      /* closed, freed at the end of the epoll round */
static struct lx_sock listen_tag; /* epoll data of the listening socket */
static uint8_t *rxbuf;

/* Task context. */
long long wio_lx_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Task context: (re)arm s's events. */
static void arm(struct lx_sock *s, int out)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0), .data.ptr = s};
    s->want_out = out;
    epoll_ctl(epfd, EPOLL_CTL_MOD, s->fd, &ev);
}

/* Task context: a new socket in the set. */
static struct lx_sock *sock_add(int fd, int out)
{
    struct lx_sock *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fd = fd;
    s->want_out = out;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0), .data.ptr = s};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
        free(s);
        return NULL;
    }
    return s;
}

/* Task context, under the core's (no-op) lock: a direct send() first; EAGAIN arms
 * EPOLLOUT and reports "no room"; EINTR retries. */
long wio_plat_send(struct wio_core *c, void *transport, const void *data, size_t n)
{
    struct lx_sock *s = transport;
    if (s->closed)
        return -1;
    if (s->connecting)
        return 0; /* EPOLLOUT is armed: wio_tx_ready follows the connect */
    for (;;) {
        ssize_t k = send(s->fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k >= 0) {
            if ((size_t)k < n && !s->want_out)
                arm(s, 1);
            return (long)k;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!s->want_out)
                arm(s, 1);
            return 0;
        }
        return -1;
    }
}

/* Task context: a non-blocking connect to the peer's table address. */
void *wio_plat_connect(struct wio_core *c, uint32_t peer, struct wio_conn *conn)
{
    struct wio_addr a = wio_peer_addr(c, peer);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(a.port)};
    memcpy(&sa.sin_addr, a.ip, 4);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int r;
    do
        r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (r && errno == EINTR);
    if (r && errno != EINPROGRESS) {
        close(fd);
        return NULL;
    }
    struct lx_sock *s = sock_add(fd, 1);
    if (!s) {
        close(fd);
        return NULL;
    }
    s->conn = conn;
    s->connecting = r != 0;
    return s;
}

/* Task context (also from inside wio_rx on this socket): close now, free after the
 * epoll round (the caller's loop may still hold s). */
void wio_plat_close(struct wio_core *c, void *transport)
{
    struct lx_sock *s = transport;
    if (s->closed)
        return;
    epoll_ctl(epfd, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->closed = 1;
    s->conn = NULL;
    s->dead_next = dead;
    dead = s;
}

/* Any context. Single-threaded (progress runs in the application thread): no lock needed. */
unsigned long wio_plat_lock(struct wio_core *c)
{
    return 0;
}

void wio_plat_unlock(struct wio_core *c, unsigned long token) {}

/* Task context: progress happens here, in the waiting thread itself, so a completion can
 * only happen inside this call: no wake-up can be lost and wio_plat_wake has nothing to do. */
void wio_plat_block(struct wio_core *c)
{
    wio_lx_poll(BLOCK_MS);
}

void wio_plat_wake(struct wio_core *c) {}

void *wio_plat_alloc(size_t n)
{
    return calloc(1, n ? n : 1);
}

/* Any context. */
void wio_plat_free(void *p)
{
    free(p);
}

/* Any context: one line on stderr, with who we are. */
void wio_plat_log(struct wio_core *c, const char *line)
{
    fprintf(stderr, "%s [at PB %u rank %u]\n", line, c->pbid,
            c->peers ? c->peers[c->self].rank : 0);
}

/* Task context: accept every pending connection. */
static void accept_all(void)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN, or out of descriptors: try again next round */
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct lx_sock *s = sock_add(fd, 0);
        if (!s) {
            close(fd);
            continue;
        }
        s->conn = wio_conn_accept(lx_core, s);
        if (!s->conn)
            wio_plat_close(lx_core, s);
    }
}

/* Task context: the socket failed or ended; tell the core, then close it. */
static void lost(struct lx_sock *s, const char *why)
{
    struct wio_conn *k = s->conn;
    wio_plat_close(lx_core, s);
    if (k)
        wio_conn_lost(k, why);
}

/* Task context: read what s has (bounded), hand it to the core. */
static void readable(struct lx_sock *s)
{
    for (int i = 0; i < RX_ROUNDS && !s->closed; i++) {
        ssize_t n = read(s->fd, rxbuf, RX_BUF);
        if (n > 0) {
            wio_rx(s->conn, rxbuf, (size_t)n);
            continue;
        }
        if (n == 0) {
            lost(s, "the peer closed the connection");
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            lost(s, strerror(errno));
        return;
    }
}

/* Task context: s can take bytes (or its connect finished). */
static void writable(struct lx_sock *s)
{
    if (s->connecting) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            char why[128];
            snprintf(why, sizeof why, "connect: %s", strerror(err));
            lost(s, why);
            return;
        }
        s->connecting = 0;
    }
    arm(s, 0); /* the pump re-arms it if the kernel is full again */
    wio_tx_ready(s->conn);
}

/* Task context. */
void wio_lx_poll(int ms)
{
    struct epoll_event ev[MAX_EVENTS];
    int n = epoll_wait(epfd, ev, MAX_EVENTS, ms);
    for (int i = 0; i < n; i++) {
        struct lx_sock *s = ev[i].data.ptr;
        if (s == &listen_tag) {
            accept_all();
            continue;
        }
        if (!s->closed && (ev[i].events & EPOLLOUT))
            writable(s);
        if (!s->closed && (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            readable(s);
    }
    while (dead) {
        struct lx_sock *s = dead;
        dead = s->dead_next;
        free(s);
    }
}

/* Task context, waitio_init. */
int wio_lx_net_start(struct wio_core *c, int listen_fd)
{
    lx_core = c;
    rxbuf = malloc(RX_BUF);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!rxbuf || epfd < 0)
        return -1;
    lfd = listen_fd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
}

/* Task context, waitio_finalize. */
void wio_lx_net_stop(void)
{
    if (!lx_core)
        return; /* never started */
    wio_core_close_all(lx_core);
    wio_lx_poll(0); /* frees the closed sockets */
    if (lfd >= 0)
        close(lfd);
    if (epfd >= 0)
        close(epfd);
    lfd = epfd = -1;
    free(rxbuf);
    rxbuf = NULL;
    lx_core = NULL;
}
