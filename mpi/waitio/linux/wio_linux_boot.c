/*
 * wio_linux_boot.c: wio_boot.h on Linux: start-up streams are blocking-with-deadline
 * wrappers around non-blocking TCP sockets (poll), the data listener is a socket on any
 * port, and the data path is the epoll engine of wio_linux_net.c.
 */
#include "wio_boot.h"
#include "wio_linux.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define POLL_SLICE_MS 1000 /* longest single poll() while waiting for a deadline */

struct wio_bstream {
    int fd;
};

static int self_fd = -1; /* our data listener until wio_boot_start gives it to the core */

long long wio_boot_now_ms(void)
{
    return wio_lx_now_ms();
}

void wio_boot_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&t, &t) && errno == EINTR)
        ;
}

int wio_boot_resolve(const char *host, uint8_t ip[4], char *why)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    int r = getaddrinfo(host, NULL, &hints, &res);
    if (r) {
        snprintf(why, WIO_BOOT_WHY, "cannot resolve WAITIO_MASTER_HOST %s: %s", host,
                 gai_strerror(r));
        return -1;
    }
    memcpy(ip, &((struct sockaddr_in *)res->ai_addr)->sin_addr, 4);
    freeaddrinfo(res);
    return 0;
}

/* Task context: a sockaddr for ip:port. */
static struct sockaddr_in sa_of(const uint8_t ip[4], uint16_t port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    memcpy(&sa.sin_addr, ip, 4);
    return sa;
}

/* Our address is the local address of a route towards the master (no packet is sent). */
int wio_boot_listen_self(const uint8_t master_ip[4], uint16_t master_port, struct wio_addr *me,
                         char *why)
{
    struct sockaddr_in master = sa_of(master_ip, master_port), sa;
    socklen_t len = sizeof sa;
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (u < 0 || connect(u, (const struct sockaddr *)&master, sizeof master) ||
        getsockname(u, (struct sockaddr *)&sa, &len)) {
        snprintf(why, WIO_BOOT_WHY, "no route to the master: %s", strerror(errno));
        if (u >= 0)
            close(u);
        return -1;
    }
    close(u);
    memcpy(me->ip, &sa.sin_addr, 4);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    len = sizeof any;
    if (fd < 0 || bind(fd, (struct sockaddr *)&any, sizeof any) || listen(fd, SOMAXCONN) ||
        getsockname(fd, (struct sockaddr *)&any, &len)) {
        snprintf(why, WIO_BOOT_WHY, "cannot open a listening socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    me->port = ntohs(any.sin_port);
    self_fd = fd;
    return 0;
}

/* Connections made to us before this wait in the listener's backlog. */
int wio_boot_start(struct wio_core *c)
{
    if (wio_lx_net_start(c, self_fd))
        return -1;
    self_fd = -1;
    return 0;
}

void wio_boot_stop(struct wio_core *c)
{
    if (self_fd >= 0)
        close(self_fd);
    self_fd = -1;
    wio_lx_net_stop();
}

void wio_boot_progress(struct wio_core *c, int ms)
{
    wio_lx_poll(ms);
}

/* Task context: wait for fd to be ready for `ev` until `deadline` (ms). 1 ready, 0 late. */
static int wait_fd(int fd, short ev, long long deadline)
{
    for (;;) {
        long long left = deadline - wio_lx_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = fd, .events = ev};
        int r = poll(&p, 1, (int)(left > POLL_SLICE_MS ? POLL_SLICE_MS : left));
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0;
    }
}

/* Task context: a stream for fd (closing fd if there is no memory). */
static struct wio_bstream *bs_of(int fd)
{
    struct wio_bstream *s = fd >= 0 ? malloc(sizeof *s) : NULL;
    if (s)
        s->fd = fd;
    else if (fd >= 0)
        close(fd);
    return s;
}

struct wio_bstream *wio_boot_master_listen(uint16_t port, char *why)
{
    int ms = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (ms >= 0)
        setsockopt(ms, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ms < 0 || bind(ms, (struct sockaddr *)&any, sizeof any) || listen(ms, SOMAXCONN)) {
        snprintf(why, WIO_BOOT_WHY, "the master cannot listen on port %u: %s", port,
                 strerror(errno));
        if (ms >= 0)
            close(ms);
        return NULL;
    }
    return bs_of(ms);
}

struct wio_bstream *wio_boot_accept(struct wio_bstream *l, long long deadline)
{
    while (wait_fd(l->fd, POLLIN, deadline)) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0)
            return bs_of(fd);
    }
    return NULL;
}

struct wio_bstream *wio_boot_connect(const uint8_t ip[4], uint16_t port, long long deadline)
{
    struct sockaddr_in sa = sa_of(ip, port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    int r = connect(fd, (const struct sockaddr *)&sa, sizeof sa), err = 0;
    socklen_t len = sizeof err;
    if (r && errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline)) {
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        r = err ? -1 : 0;
    }
    if (r) {
        close(fd);
        return NULL;
    }
    return bs_of(fd);
}

int wio_boot_io(struct wio_bstream *s, void *buf, size_t n, int out, long long deadline)
{
    uint8_t *b = buf;
    while (n) {
        if (!wait_fd(s->fd, out ? POLLOUT : POLLIN, deadline))
            return -1;
        ssize_t k =
            out ? send(s->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(s->fd, b, n, MSG_DONTWAIT);
        if (k == 0 && !out)
            return -1;
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return -1;
        }
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

void wio_boot_close(struct wio_bstream *s)
{
    if (!s)
        return;
    close(s->fd);
    free(s);
}
