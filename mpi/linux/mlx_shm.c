/*
 * mlx_shm.c: setting up the shared-memory connection of two Linux nodes of one job on the
 * same host (mlx.h): a pair of byte rings (mlx_ring.h) in a memory segment both map, and
 * a unix stream socket between the two processes, which carries the segment (SCM_RIGHTS)
 * and then serves as the pair's doorbell: a byte says "look at the rings", and its end of
 * file says the peer process is gone (the kernel closes a dead process's sockets, while
 * nothing in shared memory would tell).
 *
 * As for TCP, the lower-numbered node listens and the higher connects: the listener is an
 * abstract unix socket named after the job and the node ("ukmpi.JOB.NODE"), so it needs
 * no file and vanishes with the process. The connecting node makes the segment (memfd:
 * no name anywhere, so nothing leaks when a process dies) and sends it with its node id.
 * Ring 0 of the segment carries the lower node's bytes, ring 1 the higher's.
 */
#include "mlx.h"
#include "mlx_ring.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MLX_SHM_RETRY_NS 5000000ull /* between connection attempts while a peer starts */
#define MLX_SHM_HELLO_S  5          /* an accepted socket sends its segment at once */

/* Any thread: make fd non-blocking. 0, or -1. */
static int nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The message a connecting node sends with the segment's fd. */
struct shm_hello {
    int32_t node, nodes;
};

/* Any thread; see mlx.h. */
int mlx_shm_local(const struct mlx_env *e, int p)
{
    return e->job && e->shm && p != e->node && e->peer[p].ip == e->peer[e->node].ip;
}

/* Start-up: node's listener address for the job (abstract: sun_path[0] = 0). */
static socklen_t shm_addr(const struct mlx_env *e, int node, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "ukmpi.%s.%d", e->job, node);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Task context (start-up); see mlx.h. */
int mlx_shm_listen(const struct mlx_env *e)
{
    struct sockaddr_un a;
    socklen_t len = shm_addr(e, e->node, &a);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, e->nodes) != 0) {
        fprintf(stderr, "mpi: node %d: cannot listen on unix socket @%s: %s\n", e->node,
                a.sun_path + 1, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Start-up: the rings of a mapped segment, as node `me` of the pair (lower: 0) sees them. */
static void shm_rings(struct mlx_ring *seg, int higher, struct mlx_ring **tx, struct mlx_ring **rx)
{
    *tx = &seg[higher];
    *rx = &seg[!higher];
}

/* Task context (start-up): a new segment for a pair, mapped; its fd in *fd. NULL on error. */
static struct mlx_ring *shm_create(int *fd)
{
    size_t size = 2 * sizeof(struct mlx_ring);
    *fd = memfd_create("ukmpi-rings", MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, (off_t)size) != 0)
        return NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* The start-up message of a pair: the connecting node's hello, with the segment's fd. */
struct shm_msg {
    struct shm_hello h;
    struct iovec iov;
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
};

/* Start-up: the msghdr that sends or receives *sm (the caller keeps sm alive). */
static struct msghdr shm_msghdr(struct shm_msg *sm)
{
    sm->iov = (struct iovec){&sm->h, sizeof sm->h};
    return (struct msghdr){.msg_iov = &sm->iov,
                           .msg_iovlen = 1,
                           .msg_control = sm->ctl.buf,
                           .msg_controllen = sizeof sm->ctl.buf};
}

/* Task context (start-up): send the segment's fd and our node id on socket s. */
static int shm_send_seg(const struct mlx_env *e, int s, int segfd)
{
    struct shm_msg sm = {.h = {e->node, e->nodes}};
    struct msghdr m = shm_msghdr(&sm);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &segfd, sizeof segfd);
    return sendmsg(s, &m, MSG_NOSIGNAL) == (ssize_t)sizeof sm.h ? 0 : -1;
}

/* Task context (start-up); see mlx.h. */
int mlx_shm_connect(const struct mlx_env *e, int p, uint64_t deadline, struct mlx_ring **tx,
                    struct mlx_ring **rx)
{
    struct sockaddr_un a;
    socklen_t len = shm_addr(e, p, &a);
    for (;;) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            break;
        if (connect(s, (struct sockaddr *)&a, len) == 0) {
            int segfd;
            struct mlx_ring *seg = shm_create(&segfd);
            int err = !seg || shm_send_seg(e, s, segfd) != 0 || nonblock(s) != 0;
            if (segfd >= 0)
                close(segfd); /* the mapping and the peer keep the memory */
            if (err) {
                fprintf(stderr, "mpi: node %d: cannot share memory with node %d: %s\n", e->node, p,
                        strerror(errno));
                close(s);
                return -1;
            }
            shm_rings(seg, 1, tx, rx);
            return s;
        }
        int err = errno;
        close(s);
        if (mlx_now_ns() > deadline ||
            (err != ECONNREFUSED && err != ENOENT && err != EINTR && err != EAGAIN)) {
            fprintf(stderr, "mpi: node %d: cannot connect to node %d (unix socket @%s): %s\n",
                    e->node, p, a.sun_path + 1, strerror(err));
            return -1;
        }
        struct timespec ts = {0, MLX_SHM_RETRY_NS};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "mpi: node %d: socket: %s\n", e->node, strerror(errno));
    return -1;
}

/* Network thread; see mlx.h. */
int mlx_shm_accept(const struct mlx_env *e, int lfd, int *peer, struct mlx_ring **tx,
                   struct mlx_ring **rx)
{
    int s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0)
        return -1;
    /* The connecting node sends at once; a bound in case it died in between. */
    struct timeval tv = {MLX_SHM_HELLO_S, 0};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct shm_msg sm = {0};
    struct msghdr m = shm_msghdr(&sm);
    ssize_t n = recvmsg(s, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC);
    const struct shm_hello h = sm.h;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    int segfd = -1;
    if (n == (ssize_t)sizeof h && c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&segfd, CMSG_DATA(c), sizeof segfd);
    void *seg = MAP_FAILED;
    if (segfd >= 0 && h.nodes == e->nodes && h.node > e->node && h.node < e->nodes)
        seg = mmap(NULL, 2 * sizeof(struct mlx_ring), PROT_READ | PROT_WRITE, MAP_SHARED, segfd, 0);
    if (segfd >= 0)
        close(segfd);
    if (seg == MAP_FAILED || nonblock(s) != 0) {
        fprintf(stderr, "mpi: node %d: refused a shared-memory connection (bad hello)\n", e->node);
        close(s);
        return -2;
    }
    *peer = h.node;
    shm_rings(seg, 0, tx, rx);
    return s;
}

/* Any thread; see mlx.h. A byte already waiting wakes the peer as well (EAGAIN). */
void mlx_shm_ring(int fd)
{
    char b = 0;
    while (send(fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}
