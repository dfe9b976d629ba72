/*
 * o2gtest: the guest-side tests of host-kmod/o2g (run by tests/kmod/run.sh inside a Debian
 * guest, never on the host). `o2gtest NAME...` runs the named cases, each in a child
 * process, prints "ok NAME" or "FAIL NAME: why", and after each case checks that the
 * module holds nothing of it any more (no page pinned, no socket attached, no receive
 * posted). Exit status: the number of failed cases. `o2gtest stats` prints the module's
 * counters; `o2gtest traffic SECONDS` is the background load of the rmmod case.
 *
 * Every case talks to itself over the guest's loopback: a listening socket, a connected
 * pair, the "sender" end writing native headers (mpi/core/mpe_wire.c), the "receiver" end
 * attached to /dev/o2g. On loopback the receive path (sk_data_ready) runs in softirq.
 */
#include "../../host-kmod/o2g/o2g_uapi.h"
#include "kt.h"
#include "mpe_wire.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tls.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CTX       7
#define PEER      3          /* the sender's rank: the src of its headers */
#define DUMP_LEN  (1u << 20) /* default dump area */
#define MAX_EAGER (64u << 10)
#define WAIT_MS   5000       /* longest wait for anything under TCG */
#define SMALL_BUF (64 << 10) /* socket buffers of the back-pressure case */
#define SLEEP_S   10         /* a blocking socket call's limit (SO_RCVTIMEO) */

/* A file of /dev/o2g with its dump area and ring mapped. */
struct o2g {
    int fd;
    unsigned char *dump;
    struct o2g_ring_hdr *ring;
    struct o2g_cqe *cqe;
    size_t ring_bytes;
    uint32_t mask, tail;
};

static int o2g_open(struct o2g *o, size_t dump_len)
{
    struct o2g_setup s = {.dump_len = dump_len, .max_eager = MAX_EAGER};
    o->fd = open(O2G_DEV, O_RDWR);
    if (o->fd < 0)
        return fail("open %s: %s", O2G_DEV, strerror(errno));
    o->dump = mmap(NULL, dump_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    s.dump_addr = (uintptr_t)o->dump;
    if (o->dump == MAP_FAILED || ioctl(o->fd, O2G_IOC_SETUP, &s))
        return fail("setup: %s", strerror(errno));
    o->ring = mmap(NULL, s.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, 0);
    if (o->ring == MAP_FAILED)
        return fail("mmap ring: %s", strerror(errno));
    o->cqe = (struct o2g_cqe *)((char *)o->ring + O2G_RING_CQE_OFF);
    o->ring_bytes = s.ring_bytes;
    o->mask = s.entries - 1;
    o->tail = 0;
    return 0;
}

/* The next completion, waiting up to ms. 1: got one; 0: none in time. */
static int next_cqe(struct o2g *o, struct o2g_cqe *out, unsigned ms)
{
    for (;;) {
        /* Acquire pairs with the module's release of head: the entry is whole. */
        uint32_t head = __atomic_load_n(&o->ring->head, __ATOMIC_ACQUIRE);
        if (head != o->tail) {
            *out = o->cqe[o->tail & o->mask];
            /* Release: our read of the slot is done before the module may reuse it. */
            __atomic_store_n(&o->ring->tail, ++o->tail, __ATOMIC_RELEASE);
            return 1;
        }
        uint32_t t = ms;
        if (ioctl(o->fd, O2G_IOC_WAIT, &t) == 0)
            continue;
        if (errno == ETIMEDOUT)
            return 0;
        if (errno != EINTR)
            return 0;
    }
}

/* A connected loopback pair: *tx the sender's end, *rx the receiver's. rcvbuf/sndbuf 0
 * leave Linux's autotuning. */
static int tcp_pair(int *tx, int *rx, int rcvbuf, int sndbuf)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int one = 1;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf)
        setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&a, &al))
        return fail("listen: %s", strerror(errno));
    *tx = socket(AF_INET, SOCK_STREAM, 0);
    if (sndbuf)
        setsockopt(*tx, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    setsockopt(*tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(*tx, (struct sockaddr *)&a, sizeof a))
        return fail("connect: %s", strerror(errno));
    *rx = accept(l, NULL, NULL);
    close(l);
    return *rx < 0 ? fail("accept: %s", strerror(errno)) : 0;
}

static int attach(struct o2g *o, int sock, uint32_t *conn)
{
    struct o2g_attach a = {.fd = sock, .peer = PEER};
    if (ioctl(o->fd, O2G_IOC_ATTACH, &a))
        return -1;
    if (conn)
        *conn = a.conn;
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Write a header of `type` and, for EAGER, `len` bytes of payload (first `part` bytes
 * only if part < len: the rest is the caller's). */
static int send_msg(int fd, int type, int tag, const void *payload, size_t len, size_t part)
{
    struct mpe_wire h = {.type = (uint8_t)type, .ctx = CTX, .src = PEER, .tag = tag, .len = len};
    uint8_t b[MPE_WIRE_HDR];
    mpe_wire_encode(&h, b);
    if (write_all(fd, b, sizeof b))
        return -1;
    return part ? write_all(fd, payload, part < len ? part : len) : 0;
}

/* The payload of message i: bytes everyone can recompute. */
static void fill(unsigned char *p, size_t n, unsigned i)
{
    uint32_t x = 2166136261u ^ i;
    for (size_t k = 0; k < n; k++) {
        x = x * 1664525u + 1013904223u;
        p[k] = (unsigned char)(x >> 24);
    }
}

static int check_fill(const unsigned char *p, size_t n, unsigned i)
{
    unsigned char *want = malloc(n ? n : 1);
    fill(want, n, i);
    int bad = memcmp(p, want, n);
    free(want);
    return bad;
}

static int post(struct o2g *o, uint64_t cookie, void *buf, size_t len, int src, int tag,
                struct o2g_post *out)
{
    struct o2g_post p = {
        .cookie = cookie, .buf = (uintptr_t)buf, .len = len, .ctx = CTX, .src = src, .tag = tag};
    int rc = ioctl(o->fd, O2G_IOC_POST, &p);
    if (out)
        *out = p;
    return rc ? -errno : (int)p.result;
}

/* Wait until the module's counter `field` went up by `n` from `base`. */
#define WAIT_STAT(field, base, n)                                                                  \
    ({                                                                                             \
        int ok_ = 0;                                                                               \
        for (int i_ = 0; i_ < WAIT_MS / 10 && !ok_; i_++) {                                        \
            ok_ = kt_o2g_stats().field >= (base).field + (n);                                      \
            if (!ok_)                                                                              \
                usleep(10000);                                                                     \
        }                                                                                          \
        ok_;                                                                                       \
    })

/* eager: receives posted first; the messages are matched and copied in softirq. */
static int t_eager(void)
{
    enum { N = 64, LEN = 3000 };
    static unsigned char bufs[N][LEN], tmp[LEN];
    struct o2g o;
    int tx, rx;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    for (int i = 0; i < N; i++)
        if (post(&o, 100 + i, bufs[i], LEN, PEER, i, NULL) != O2G_POST_QUEUED)
            return fail("post %d not queued", i);
    for (int i = 0; i < N; i++) {
        fill(tmp, LEN - (size_t)i, i);
        send_msg(tx, MPE_W_EAGER, i, tmp, LEN - (size_t)i, LEN);
    }
    for (int i = 0; i < N; i++) {
        struct o2g_cqe e;
        if (!next_cqe(&o, &e, WAIT_MS))
            return fail("%d completions of %d", i, N);
        int k = (int)e.cookie - 100;
        if (e.kind != O2G_CQE_RECV || e.status || k < 0 || k >= N || e.tag != k || e.src != PEER ||
            e.len != LEN - (uint64_t)k)
            return fail("bad completion kind %u status %d cookie %llu", e.kind, e.status,
                        (unsigned long long)e.cookie);
        if (check_fill(bufs[k], LEN - (size_t)k, (unsigned)k))
            return fail("payload %d differs", k);
    }
    struct o2g_stats s1 = kt_o2g_stats();
    if (s1.matched_softirq - s0.matched_softirq != N || s1.unexpected != s0.unexpected)
        return fail("matched in softirq %llu, unexpected %llu (want %d, 0)",
                    (unsigned long long)(s1.matched_softirq - s0.matched_softirq),
                    (unsigned long long)(s1.unexpected - s0.unexpected), N);
    return 0;
}

/* unexp: messages first (dumped), receives later (answered from the dump area); poll()
 * sleeps until the first arrives. */
static int t_unexp(void)
{
    enum { N = 10, LEN = 2500 };
    unsigned char tmp[LEN];
    struct o2g o;
    int tx, rx;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    /* poll(): nothing to read yet, then woken by the softirq's first entry */
    struct pollfd pf = {.fd = o.fd, .events = POLLIN};
    if (poll(&pf, 1, 0) != 0)
        return fail("poll: readable with an empty ring");
    if (fork() == 0) {
        usleep(200000);
        for (int i = 0; i < N; i++) {
            fill(tmp, LEN, 50 + i);
            send_msg(tx, MPE_W_EAGER, 50 + i, tmp, LEN, LEN);
        }
        _exit(0);
    }
    if (poll(&pf, 1, WAIT_MS) != 1 || !(pf.revents & POLLIN))
        return fail("poll: not woken by an arriving message");
    wait(NULL);
    for (int i = 0; i < N; i++) {
        struct o2g_cqe e;
        if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_UNEXP || e.tag != 50 + i)
            return fail("unexpected entry %d missing", i);
    }
    for (int i = N - 1; i >= 0; i--) { /* in reverse: matching is by tag, not position */
        struct o2g_post p;
        unsigned char buf[LEN];
        if (post(&o, i, buf, LEN, PEER, 50 + i, &p) != O2G_POST_UNEXP)
            return fail("post %d: not answered from the dump area", i);
        if (p.msg_len != LEN || p.msg_tag != 50 + i || check_fill(o.dump + p.off, LEN, 50 + i))
            return fail("dump record %d differs", i);
        uint64_t off = p.off;
        if (ioctl(o.fd, O2G_IOC_FREE, &off))
            return fail("free: %s", strerror(errno));
        if (ioctl(o.fd, O2G_IOC_FREE, &off) == 0 || errno != EINVAL)
            return fail("double free accepted");
    }
    struct o2g_stats s1 = kt_o2g_stats();
    if (s1.unexpected - s0.unexpected != N || s1.matched_post - s0.matched_post != N)
        return fail("counters: unexpected %llu matched_post %llu",
                    (unsigned long long)(s1.unexpected - s0.unexpected),
                    (unsigned long long)(s1.matched_post - s0.matched_post));
    return 0;
}

/* race: the seed's race rule. M1 (tag 7) is complete in the dump area, M2 (tag 7) is
 * arriving (header read, half of its payload). A receive takes M1; the next receive must
 * take M2, the oldest matching message, although it is not complete: DEFERRED, and its
 * completion carries M2's bytes once they are in. */
static int t_race(void)
{
    enum { LEN = 6000 };
    unsigned char m1[LEN], m2[LEN], b1[LEN], b2[LEN];
    struct o2g o;
    int tx, rx;
    struct o2g_post p;
    struct o2g_cqe e;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    fill(m1, LEN, 1);
    fill(m2, LEN, 2);
    send_msg(tx, MPE_W_EAGER, 7, m1, LEN, LEN);
    send_msg(tx, MPE_W_EAGER, 7, m2, LEN, LEN / 2);
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_UNEXP)
        return fail("M1 not dumped");
    if (!WAIT_STAT(unexpected, s0, 2))
        return fail("M2's header not read");
    if (post(&o, 1, b1, LEN, PEER, 7, &p) != O2G_POST_UNEXP || check_fill(o.dump + p.off, LEN, 1))
        return fail("first receive did not take M1");
    uint64_t off = p.off;
    ioctl(o.fd, O2G_IOC_FREE, &off);
    int r = post(&o, 2, b2, LEN, O2G_ANY_SOURCE, 7, &p);
    if (r != O2G_POST_DEFERRED)
        return fail("second receive: result %d, want DEFERRED", r);
    uint64_t c = 2;
    if (ioctl(o.fd, O2G_IOC_CANCEL, &c) == 0 || errno != EBUSY)
        return fail("cancel of a deferred receive was not EBUSY");
    write_all(tx, m2 + LEN / 2, LEN - LEN / 2);
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_RECV || e.cookie != 2 || e.status ||
        e.len != LEN)
        return fail("no completion of the deferred receive");
    if (memcmp(b2, m2, LEN))
        return fail("deferred receive holds the wrong bytes");
    if (next_cqe(&o, &e, 200))
        return fail("stray entry kind %u", e.kind);
    return 0;
}

/* order: MPI's matching order with wildcards, for arrivals and for posts. */
static int t_order(void)
{
    unsigned char m[3][100], b[3][100];
    struct o2g o;
    int tx, rx;
    struct o2g_cqe e;
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    /* Posted: any/any, then tag 5, then any/any. Arriving: tag 5, tag 5, tag 6. The first
     * tag 5 takes the oldest receive (any/any), the second tag 5 the exact one, tag 6 the
     * last. */
    post(&o, 0, b[0], 100, O2G_ANY_SOURCE, O2G_ANY_TAG, NULL);
    post(&o, 1, b[1], 100, PEER, 5, NULL);
    post(&o, 2, b[2], 100, O2G_ANY_SOURCE, O2G_ANY_TAG, NULL);
    int tags[3] = {5, 5, 6};
    for (int i = 0; i < 3; i++) {
        fill(m[i], 100, 10 + i);
        send_msg(tx, MPE_W_EAGER, tags[i], m[i], 100, 100);
    }
    for (int i = 0; i < 3; i++) {
        if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_RECV)
            return fail("posted: completion %d missing", i);
    }
    for (int i = 0; i < 3; i++)
        if (check_fill(b[i], 100, 10 + i))
            return fail("posted: receive %d took the wrong message", i);
    /* Unexpected: tag 1, tag 2, tag 1. any-tag takes the first, tag 1 the third (the
     * first is gone), any-tag the second. */
    int utags[3] = {1, 2, 1};
    for (int i = 0; i < 3; i++) {
        fill(m[i], 100, 20 + i);
        send_msg(tx, MPE_W_EAGER, utags[i], m[i], 100, 100);
    }
    for (int i = 0; i < 3; i++)
        if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_UNEXP)
            return fail("unexpected %d missing", i);
    int ptag[3] = {O2G_ANY_TAG, 1, O2G_ANY_TAG}, want[3] = {20, 22, 21};
    for (int i = 0; i < 3; i++) {
        struct o2g_post p;
        if (post(&o, 10 + i, b[i], 100, O2G_ANY_SOURCE, ptag[i], &p) != O2G_POST_UNEXP ||
            check_fill(o.dump + p.off, 100, (unsigned)want[i]))
            return fail("unexpected: receive %d took the wrong message", i);
        uint64_t off = p.off;
        ioctl(o.fd, O2G_IOC_FREE, &off);
    }
    return 0;
}

/* cancel: a cancelled receive is gone (the message becomes unexpected) and unpinned. */
static int t_cancel(void)
{
    unsigned char b[5000], m[5000];
    struct o2g o;
    int tx, rx;
    struct o2g_cqe e;
    struct o2g_post p;
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    struct o2g_stats s0 = kt_o2g_stats();
    if (post(&o, 9, b, sizeof b, PEER, 9, NULL) != O2G_POST_QUEUED)
        return fail("post");
    if (kt_o2g_stats().pinned_pages <= s0.pinned_pages)
        return fail("receive buffer not pinned");
    uint64_t c = 9;
    if (ioctl(o.fd, O2G_IOC_CANCEL, &c))
        return fail("cancel: %s", strerror(errno));
    if (ioctl(o.fd, O2G_IOC_CANCEL, &c) == 0 || errno != ENOENT)
        return fail("second cancel not ENOENT");
    fill(m, sizeof m, 9);
    send_msg(tx, MPE_W_EAGER, 9, m, sizeof m, sizeof m);
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_UNEXP)
        return fail("message went to the cancelled receive (kind %u)", e.kind);
    if (kt_o2g_stats().pinned_pages != s0.pinned_pages)
        return fail("cancelled receive still pinned");
    if (post(&o, 10, b, sizeof b, PEER, 9, &p) != O2G_POST_UNEXP)
        return fail("message not found by the next receive");
    return 0;
}

/* backpressure: a dump area of 64 KiB and 2 MB of unexpected messages. The module must
 * stop reading (the sender blocks: TCP's window is closed), then deliver everything in
 * order as the process frees records. */
static int t_backpressure(void)
{
    enum { N = 2000, LEN = 1000 };
    struct o2g o;
    int tx, rx;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, 64 << 10) || tcp_pair(&tx, &rx, SMALL_BUF, SMALL_BUF))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char m[LEN];
        for (int i = 0; i < N; i++) {
            fill(m, LEN, (unsigned)i);
            if (send_msg(tx, MPE_W_EAGER, i % 1000, m, LEN, LEN))
                _exit(1);
        }
        _exit(0);
    }
    close(tx);
    if (!WAIT_STAT(stalls, s0, 1))
        return fail("the module never stopped reading");
    usleep(300000);
    int st;
    if (waitpid(pid, &st, WNOHANG) != 0)
        return fail("the sender finished: nothing held it back");
    for (int i = 0; i < N; i++) {
        struct o2g_cqe e;
        if (!next_cqe(&o, &e, WAIT_MS))
            return fail("message %d of %d never came", i, N);
        if (e.kind != O2G_CQE_UNEXP || e.tag != i % 1000 || e.len != LEN ||
            check_fill(o.dump + e.off, LEN, (unsigned)i))
            return fail("message %d lost or changed", i);
        uint64_t off = e.off;
        if (ioctl(o.fd, O2G_IOC_FREE, &off))
            return fail("free %d: %s", i, strerror(errno));
    }
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        return fail("sender failed");
    if (kt_o2g_stats().dropped)
        return fail("dropped bytes");
    return 0;
}

/* corrupt: a bad header fails the connection: the receive naming the peer and the
 * connection report -EPROTO; a wildcard receive stays posted. Every way mpe_wire_decode
 * refuses a header, each on a fresh connection after a good message; then 64 KiB of
 * random bytes on each of 8 more connections at once. */
static int corrupt_one(struct o2g *o, const uint8_t *bad, size_t n, int k)
{
    unsigned char b[100], b2[100], m[100];
    struct o2g_cqe e;
    int tx, rx;
    if (tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    post(o, 1, b, sizeof b, PEER, 1, NULL);
    post(o, 2, b2, sizeof b2, O2G_ANY_SOURCE, 1, NULL);
    fill(m, sizeof m, 3);
    send_msg(tx, MPE_W_EAGER, 3, m, sizeof m, sizeof m); /* good: dumped */
    write_all(tx, bad, n);
    int got_recv = 0, got_conn = 0, got_good = 0;
    while (next_cqe(o, &e, 500)) {
        if (e.kind == O2G_CQE_UNEXP && e.tag == 3 && !check_fill(o->dump + e.off, 100, 3))
            got_good = 1;
        else if (e.kind == O2G_CQE_RECV && e.cookie == 1 && e.status == -EPROTO)
            got_recv = 1;
        else if (e.kind == O2G_CQE_CONN && e.status == -EPROTO && e.src == PEER)
            got_conn = 1;
        else
            return fail("case %d: unexpected entry kind %u cookie %llu status %d", k, e.kind,
                        (unsigned long long)e.cookie, e.status);
    }
    if (!got_good || !got_recv || !got_conn)
        return fail("case %d: good message %d, error entries: receive %d connection %d", k,
                    got_good, got_recv, got_conn);
    uint64_t c = 2;
    if (ioctl(o->fd, O2G_IOC_CANCEL, &c))
        return fail("case %d: wildcard receive did not stay posted", k);
    close(tx);
    return 0;
}

static int t_corrupt(void)
{
    struct o2g o;
    if (o2g_open(&o, DUMP_LEN))
        return 1;
    struct mpe_wire ok = {.type = MPE_W_EAGER, .ctx = CTX, .src = PEER, .tag = 1, .len = 10};
    for (int k = 0; k < 7; k++) {
        struct mpe_wire h = ok;
        uint8_t b[MPE_WIRE_HDR];
        if (k == 3)
            h.len = MAX_EAGER + 1; /* longer than the eager limit */
        if (k == 4)
            h.tag = -5; /* negative tag on a matched message */
        if (k == 5)
            h.type = MPE_W_CREDIT; /* control header with a length */
        if (k == 6)
            h.type = MPE_W_DATA, h.len = 1ull << 50; /* length out of range */
        mpe_wire_encode(&h, b);
        if (k == 0)
            b[0] ^= 1; /* bad magic */
        if (k == 1)
            b[2] = 9; /* unknown version */
        if (k == 2)
            b[3] = 0x77; /* unknown type */
        if (corrupt_one(&o, b, sizeof b, k))
            return 1;
    }
    /* random bytes on 8 connections at once: each fails, nothing else happens */
    enum { NJ = 8, JLEN = 64 << 10 };
    int tx[NJ], rx[NJ], conns = 0;
    static unsigned char junk[JLEN];
    struct o2g_cqe e;
    for (int k = 0; k < NJ; k++) {
        struct o2g_attach a = {.peer = 100 + k};
        if (tcp_pair(&tx[k], &rx[k], 0, 0))
            return 1;
        a.fd = rx[k];
        if (ioctl(o.fd, O2G_IOC_ATTACH, &a))
            return fail("attach junk %d: %s", k, strerror(errno));
    }
    pid_t pid[NJ];
    for (int k = 0; k < NJ; k++) {
        fill(junk, JLEN, 1000u + (unsigned)k);
        if ((pid[k] = fork()) == 0)
            _exit(write_all(tx[k], junk, JLEN) ? 1 : 0); /* may block: nobody reads */
    }
    while (conns < NJ && next_cqe(&o, &e, 2000)) {
        if (e.kind != O2G_CQE_CONN || e.status != -EPROTO)
            return fail("junk: entry kind %u status %d", e.kind, e.status);
        conns++;
    }
    if (conns != NJ)
        return fail("junk: %d connections of %d failed", conns, NJ);
    for (int k = 0; k < NJ; k++) { /* they hold our /dev/o2g file too */
        kill(pid[k], SIGKILL);
        waitpid(pid[k], NULL, 0);
    }
    return 0;
}

/* closed: the peer closes in the middle of a message: the receive it was filling fails
 * with -ECONNRESET, and so does the connection. */
static int t_closed(void)
{
    unsigned char b[4000], m[4000];
    struct o2g o;
    int tx, rx;
    struct o2g_cqe e;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    close(rx); /* the module keeps its own reference */
    post(&o, 1, b, sizeof b, O2G_ANY_SOURCE, 1, NULL);
    fill(m, sizeof m, 1);
    send_msg(tx, MPE_W_EAGER, 1, m, sizeof m, 1000);
    if (!WAIT_STAT(matched_softirq, s0, 1))
        return fail("header not matched");
    close(tx);
    int got_recv = 0, got_conn = 0;
    while (next_cqe(&o, &e, 1000)) {
        if (e.kind == O2G_CQE_RECV && e.cookie == 1 && e.status == -ECONNRESET)
            got_recv = 1;
        else if (e.kind == O2G_CQE_CONN && e.status == -ECONNRESET)
            got_conn = 1;
        else
            return fail("unexpected entry kind %u status %d", e.kind, e.status);
    }
    if (!got_recv || !got_conn)
        return fail("error entries: receive %d connection %d", got_recv, got_conn);
    return 0;
}

/* control: headers other than EAGER and RTS reach the process as records in the dump
 * area (header, then DATA's payload), in stream order with the connection's messages (an
 * RTS that matched nothing: an UNEXP_RTS notice with its header). */
static int t_control(void)
{
    unsigned char data[500], b[100], m[100];
    struct o2g o;
    int tx, rx;
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    post(&o, 1, b, sizeof b, PEER, 4, NULL);
    fill(m, sizeof m, 4);
    fill(data, sizeof data, 5);
    send_msg(tx, MPE_W_HELLO, 0, NULL, 0, 0);
    send_msg(tx, MPE_W_RTS, 3, NULL, 1 << 20, 0); /* len: the message's, no payload */
    send_msg(tx, MPE_W_EAGER, 4, m, sizeof m, sizeof m);
    send_msg(tx, MPE_W_DATA, 0, data, sizeof data, sizeof data);
    send_msg(tx, MPE_W_BYE, 0, NULL, 0, 0);
    int want[5] = {MPE_W_HELLO, MPE_W_RTS, MPE_W_EAGER, MPE_W_DATA, MPE_W_BYE};
    for (int i = 0; i < 5; i++) {
        struct o2g_cqe e;
        struct mpe_wire w;
        if (!next_cqe(&o, &e, WAIT_MS))
            return fail("entry %d missing", i);
        if (want[i] == MPE_W_EAGER) {
            if (e.kind != O2G_CQE_RECV || e.cookie != 1 || check_fill(b, sizeof b, 4))
                return fail("entry %d: the EAGER message out of order (kind %u)", i, e.kind);
            continue;
        }
        size_t payload = want[i] == MPE_W_DATA ? sizeof data : 0;
        if (want[i] == MPE_W_RTS ? e.kind != O2G_CQE_UNEXP_RTS || e.len != 1 << 20
                                 : e.kind != O2G_CQE_CONTROL || e.len != MPE_WIRE_HDR + payload)
            return fail("entry %d: kind %u len %llu", i, e.kind, (unsigned long long)e.len);
        if (mpe_wire_decode(o.dump + e.off, &w, MAX_EAGER) || w.type != want[i])
            return fail("entry %d: record holds the wrong header", i);
        if (payload && check_fill(o.dump + e.off + MPE_WIRE_HDR, payload, 5))
            return fail("DATA payload differs");
        uint64_t off = e.off;
        if (ioctl(o.fd, O2G_IOC_FREE, &off))
            return fail("free: %s", strerror(errno));
    }
    /* A DATA payload longer than a piece: a CONTROL record, then MORE ones, in order. */
    size_t big = 3 * O2G_DATA_PIECE + 100, got = 0;
    unsigned char *p = malloc(big), *q = malloc(big);
    fill(p, big, 6);
    send_msg(tx, MPE_W_DATA, 0, p, big, big);
    for (int i = 0; got < big; i++) {
        struct o2g_cqe e;
        size_t hdr = i ? 0 : MPE_WIRE_HDR,
               want = big - got < O2G_DATA_PIECE ? big - got : O2G_DATA_PIECE;
        if (!next_cqe(&o, &e, WAIT_MS))
            return fail("DATA piece %d missing", i);
        if (e.kind != (i ? O2G_CQE_MORE : O2G_CQE_CONTROL) || e.len != hdr + want)
            return fail("DATA piece %d: kind %u len %llu", i, e.kind, (unsigned long long)e.len);
        memcpy(q + got, o.dump + e.off + hdr, want);
        got += want;
        uint64_t off = e.off;
        if (ioctl(o.fd, O2G_IOC_FREE, &off))
            return fail("free: %s", strerror(errno));
    }
    if (memcmp(p, q, big))
        return fail("the pieces of a long DATA payload differ from it");
    free(p);
    free(q);
    return 0;
}

/* rts: an RTS is a message for matching, in MPI order with EAGER ones: of two receives
 * posted for one tag, an RTS then an EAGER message take the first and the second; an RTS
 * that arrives first waits in the unexpected queue for the POST that takes it. */
static int t_rts(void)
{
    unsigned char b1[100], b2[100], m[100];
    struct o2g_post p;
    struct o2g_cqe e;
    struct mpe_wire w;
    struct o2g o;
    int tx, rx;
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    post(&o, 1, b1, sizeof b1, PEER, 4, NULL);
    post(&o, 2, b2, sizeof b2, O2G_ANY_SOURCE, 4, NULL);
    fill(m, sizeof m, 4);
    send_msg(tx, MPE_W_RTS, 4, NULL, 1 << 20, 0);
    send_msg(tx, MPE_W_EAGER, 4, m, sizeof m, sizeof m);
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_RTS || e.cookie != 1 || e.len != 1 << 20)
        return fail("the RTS did not take the first receive (kind %u cookie %llu)", e.kind,
                    (unsigned long long)e.cookie);
    if (mpe_wire_decode(o.dump + e.off, &w, MAX_EAGER) || w.type != MPE_W_RTS || w.tag != 4)
        return fail("the RTS record holds the wrong header");
    uint64_t off = e.off;
    if (ioctl(o.fd, O2G_IOC_FREE, &off))
        return fail("free: %s", strerror(errno));
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_RECV || e.cookie != 2 ||
        check_fill(b2, sizeof b2, 4))
        return fail("the EAGER message did not take the second receive (kind %u)", e.kind);
    send_msg(tx, MPE_W_RTS, 6, NULL, 5000, 0);
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_UNEXP_RTS || e.len != 5000)
        return fail("no UNEXP_RTS notice (kind %u)", e.kind);
    if (post(&o, 3, b1, sizeof b1, PEER, 6, &p) != O2G_POST_RTS || p.off != e.off ||
        p.msg_len != 5000)
        return fail("POST did not take the unexpected RTS (result %u)", p.result);
    if (mpe_wire_decode(o.dump + p.off, &w, MAX_EAGER) || w.type != MPE_W_RTS || w.tag != 6)
        return fail("the unexpected RTS record holds the wrong header");
    off = p.off;
    if (ioctl(o.fd, O2G_IOC_FREE, &off))
        return fail("free: %s", strerror(errno));
    return 0;
}

/* ringfull: the ring never overflows. With every slot promised (receives posted until
 * POST says ENOSPC, all then completed and left unread), an unexpected message has no slot:
 * its connection stops reading, and once the process has read the ring (and makes an
 * ioctl: WAIT) it is delivered. */
static int t_ringfull(void)
{
    unsigned char m[100];
    struct o2g o;
    struct o2g_cqe e;
    int tx, rx, n = 0, r;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, 64 << 10) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    while ((r = post(&o, (uint64_t)n, NULL, 0, PEER, 1, NULL)) == O2G_POST_QUEUED)
        n++;
    if (r != -ENOSPC || n < 1000 || (uint32_t)n != o.mask)
        return fail("posts: %d, then %d (want ENOSPC after ring entries - 1 = %u)", n, r, o.mask);
    for (int i = 0; i < n; i++)
        send_msg(tx, MPE_W_EAGER, 1, NULL, 0, 0);
    fill(m, sizeof m, 2);
    send_msg(tx, MPE_W_EAGER, 2, m, sizeof m, sizeof m);
    if (!WAIT_STAT(stalls, s0, 1))
        return fail("the connection did not stop with the ring full");
    for (int i = 0; i < n; i++)
        if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_RECV || e.cookie != (uint64_t)i)
            return fail("entry %d overwritten or missing (kind %u cookie %llu)", i, e.kind,
                        (unsigned long long)e.cookie);
    if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_UNEXP || e.tag != 2 ||
        check_fill(o.dump + e.off, sizeof m, 2))
        return fail("the held-back message did not come");
    return 0;
}

/* stallzero: a message without payload whose header was read just as the dump area
 * was full (the connection stops with no byte of it left in the socket) arrives once a
 * record is freed, without waiting for a byte that may never come. */
static int t_stallzero(void)
{
    enum { DUMP = 4096, RECORDS = DUMP / O2G_DUMP_CHUNK }; /* a page: a record per chunk */
    unsigned char b = 5;
    struct o2g o;
    struct o2g_cqe e[RECORDS], z;
    int tx, rx;
    struct o2g_stats s0 = kt_o2g_stats();
    if (o2g_open(&o, DUMP) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    for (int i = 0; i < RECORDS; i++) /* a one-byte message a record: the dump area fills */
        send_msg(tx, MPE_W_EAGER, i, &b, 1, 1);
    for (int i = 0; i < RECORDS; i++)
        if (!next_cqe(&o, &e[i], WAIT_MS) || e[i].kind != O2G_CQE_UNEXP)
            return fail("unexpected message %d did not come", i);
    send_msg(tx, MPE_W_EAGER, RECORDS, NULL, 0, 0);
    if (!WAIT_STAT(stalls, s0, 1))
        return fail("the connection did not stop with the dump area full");
    uint64_t off = e[0].off;
    if (ioctl(o.fd, O2G_IOC_FREE, &off))
        return fail("free: %s", strerror(errno));
    if (!next_cqe(&o, &z, WAIT_MS) || z.kind != O2G_CQE_UNEXP || z.tag != RECORDS || z.len)
        return fail("the empty message read before the stall never came");
    return 0;
}

/* perm: /dev/o2g is for root and the devices' group (mode 0660); a member reads no
 * module-wide counter (they are every user's traffic). As nobody. */
static int t_perm(void)
{
    pid_t pid = fork();
    if (pid == 0) { /* nobody outside the group */
        if (kt_as_user(0))
            _exit(2);
        _exit(open(O2G_DEV, O_RDWR) < 0 && errno == EACCES ? 0 : 1);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        return fail("a user outside the group opened %s (or could not drop to nobody)", O2G_DEV);
    struct o2g_stats s;
    if (kt_as_user(1))
        return 1;
    int fd = open(O2G_DEV, O_RDWR);
    if (fd < 0)
        return fail("a member of the group cannot open %s: %s", O2G_DEV, strerror(errno));
    errno = 0;
    if (ioctl(fd, O2G_IOC_STATS, &s) == 0 || errno != EPERM)
        return fail("the module's counters: %s, want EPERM", errno ? strerror(errno) : "read");
    return 0;
}

#define MMAPRACE_ROUNDS 3000 /* mmaps of the ring against as many pinning posts */

struct mmaprace {
    struct o2g *o;
    _Atomic int done;
};

/* mmaprace's second thread: map and unmap the ring (mmap_lock held for writing). */
static void *mmaprace_map(void *p)
{
    struct mmaprace *m = p;
    for (int i = 0; i < MMAPRACE_ROUNDS; i++) {
        void *r = mmap(NULL, m->o->ring_bytes, PROT_READ, MAP_SHARED, m->o->fd, 0);
        if (r != MAP_FAILED)
            munmap(r, m->o->ring_bytes);
    }
    m->done = 1;
    return NULL;
}

/* mmaprace: one thread maps the ring while another posts receives whose pages the module
 * pins (and charges: both take mmap_lock inside the ioctl). The module's lock order must
 * be one: a mapping that waited for the ioctl's lock under mmap_lock deadlocked both
 * threads for good (unkillable, pages pinned). The posts end in the case's time. */
static int t_mmaprace(void)
{
    static unsigned char buf[2 * 4096];
    struct o2g o;
    pthread_t t;
    if (kt_as_user(1) || o2g_open(&o, DUMP_LEN))
        return 1;
    struct mmaprace m = {.o = &o};
    if (pthread_create(&t, NULL, mmaprace_map, &m))
        return fail("cannot start the mapping thread");
    for (uint64_t i = 0; i < MMAPRACE_ROUNDS || !m.done; i++) {
        uint64_t c = i;
        if (post(&o, c, buf, sizeof buf, PEER, 1, NULL) != O2G_POST_QUEUED ||
            ioctl(o.fd, O2G_IOC_CANCEL, &c))
            return fail("post and cancel %llu: %s", (unsigned long long)i, strerror(errno));
    }
    pthread_join(t, NULL);
    return 0;
}

/* trunc: a message longer than its receive fills the buffer, no byte past it, and
 * completes with -EMSGSIZE (MPI_ERR_TRUNCATE); the stream stays framed. */
static int t_trunc(void)
{
    static unsigned char page[8192], m[5000];
    struct o2g o;
    struct o2g_cqe e;
    int tx, rx;
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    memset(page, 0xee, sizeof page);
    post(&o, 1, page + 100, 3000, PEER, 1, NULL);
    post(&o, 2, page + 4000, 100, PEER, 2, NULL);
    fill(m, sizeof m, 1);
    send_msg(tx, MPE_W_EAGER, 1, m, sizeof m, sizeof m);
    send_msg(tx, MPE_W_EAGER, 2, m, 100, 100);
    if (!next_cqe(&o, &e, WAIT_MS) || e.cookie != 1 || e.status != -EMSGSIZE || e.len != sizeof m)
        return fail("truncated receive: status %d len %llu", e.status, (unsigned long long)e.len);
    if (!next_cqe(&o, &e, WAIT_MS) || e.cookie != 2 || e.status)
        return fail("the message after a truncated one was lost");
    if (check_fill(page + 100, 3000, 1) || page[99] != 0xee || page[3100] != 0xee)
        return fail("truncated receive: wrong bytes or written past the buffer");
    return 0;
}

/* many: 4 senders (processes) on 4 connections into one file, 300 messages each, taken by
 * 64 wildcard receives reposted as they complete (a repost may be answered from the dump
 * area). Every message arrives once and intact, and MPI's non-overtaking rule holds: of
 * two messages from one source, the earlier takes the earlier-posted receive. */
static uint64_t many_seq[4][300]; /* 1 + the posting order of the receive that took it */

static int many_take(int src, int tag, uint64_t seq, const unsigned char *data, int len)
{
    if (src < 0 || src >= 4 || tag < 0 || tag >= 300 || len != 700)
        return fail("message src %d tag %d len %d", src, tag, len);
    if (many_seq[src][tag])
        return fail("source %d message %d taken twice", src, tag);
    if (check_fill(data, 700, (unsigned)(src * 300 + tag)))
        return fail("source %d message %d differs", src, tag);
    many_seq[src][tag] = seq + 1;
    return 0;
}

/* Post wildcard receive `slot` again until it is queued (each answer from the dump area
 * is a message taken). */
static int many_post(struct o2g *o, unsigned char *buf, int slot, uint64_t *seq, int *done)
{
    for (;;) {
        struct o2g_post p;
        uint64_t s = (*seq)++;
        int r = post(o, s << 8 | (uint64_t)slot, buf, 700, O2G_ANY_SOURCE, O2G_ANY_TAG, &p);
        if (r == O2G_POST_QUEUED || r == O2G_POST_DEFERRED) /* a RECV entry follows */
            return 0;
        if (r != O2G_POST_UNEXP)
            return fail("post: %d", r);
        if (many_take(p.msg_src, p.msg_tag, s, o->dump + p.off, (int)p.msg_len))
            return 1;
        (*done)++;
        uint64_t off = p.off;
        if (ioctl(o->fd, O2G_IOC_FREE, &off))
            return fail("free: %s", strerror(errno));
    }
}

static int t_many(void)
{
    enum { NC = 4, N = 300, LEN = 700, NR = 64 };
    static unsigned char bufs[NR][LEN];
    struct o2g o;
    int tx[NC], rx[NC];
    if (o2g_open(&o, DUMP_LEN))
        return 1;
    for (int c = 0; c < NC; c++) {
        struct o2g_attach a = {.peer = c};
        if (tcp_pair(&tx[c], &rx[c], 0, 0))
            return 1;
        a.fd = rx[c];
        if (ioctl(o.fd, O2G_IOC_ATTACH, &a))
            return fail("attach %d: %s", c, strerror(errno));
    }
    for (int c = 0; c < NC; c++) {
        if (fork() == 0) {
            unsigned char m[LEN];
            for (int i = 0; i < N; i++) {
                struct mpe_wire h = {
                    .type = MPE_W_EAGER, .ctx = CTX, .src = c, .tag = i, .len = LEN};
                uint8_t hb[MPE_WIRE_HDR];
                fill(m, LEN, (unsigned)(c * N + i));
                mpe_wire_encode(&h, hb);
                if (write_all(tx[c], hb, sizeof hb) || write_all(tx[c], m, LEN))
                    _exit(1);
                if (i % 50 == 0)
                    usleep(20000); /* let some arrive with no receive posted */
            }
            _exit(0);
        }
    }
    int done = 0;
    uint64_t seq = 0;
    for (int r = 0; r < NR; r++)
        if (many_post(&o, bufs[r], r, &seq, &done))
            return 1;
    while (done < NC * N) {
        struct o2g_cqe e;
        if (!next_cqe(&o, &e, WAIT_MS))
            return fail("%d messages of %d", done, NC * N);
        if (e.kind == O2G_CQE_UNEXP)
            continue; /* a notice: a repost takes it */
        if (e.kind != O2G_CQE_RECV || e.status)
            return fail("entry kind %u status %d", e.kind, e.status);
        int slot = (int)(e.cookie & 0xff);
        if (many_take(e.src, e.tag, e.cookie >> 8, bufs[slot], (int)e.len))
            return 1;
        done++;
        if (many_post(&o, bufs[slot], slot, &seq, &done))
            return 1;
    }
    for (int c = 0; c < NC; c++)
        for (int i = 1; i < N; i++)
            if (many_seq[c][i] <= many_seq[c][i - 1])
                return fail("source %d: message %d took a receive posted before message "
                            "%d's (overtaking)",
                            c, i, i - 1);
    for (int c = 0; c < NC; c++) {
        int st;
        wait(&st);
        if (!WIFEXITED(st) || WEXITSTATUS(st))
            return fail("a sender failed");
    }
    return 0;
}

/* killed: a process with receives posted, a message half delivered and records in the
 * dump area is killed; its file's release must unpin everything and give the sockets
 * back. */
static int t_killed(void)
{
    int pfd[2];
    if (pipe(pfd))
        return fail("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        static unsigned char bufs[50][65536], m[8000];
        struct o2g o;
        int tx, rx;
        if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0) || attach(&o, rx, NULL))
            _exit(1);
        fill(m, sizeof m, 0);
        send_msg(tx, MPE_W_EAGER, 999, m, 100, 100); /* unexpected, stays dumped */
        for (int i = 0; i < 50; i++)
            post(&o, i, bufs[i], sizeof bufs[i], PEER, i, NULL);
        send_msg(tx, MPE_W_EAGER, 0, m, sizeof m, 3000); /* half into receive 0 */
        usleep(200000);
        write(pfd[1], "r", 1);
        pause();
        _exit(0);
    }
    char c;
    if (read(pfd[0], &c, 1) != 1)
        return fail("child did not get ready");
    struct o2g_stats s = kt_o2g_stats();
    if (s.pinned_pages < 50 * 16 || s.attached != 1 || s.posted != 49)
        return fail("before kill: pinned %llu attached %llu posted %llu",
                    (unsigned long long)s.pinned_pages, (unsigned long long)s.attached,
                    (unsigned long long)s.posted);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0; /* main checks that the module holds nothing any more */
}

/* memlock: pinned pages count against RLIMIT_MEMLOCK for an unprivileged member of the
 * devices' group, and a forked child cannot use its parent's file. */
static int t_memlock(void)
{
    struct rlimit rl = {64 << 10, 64 << 10}; /* 16 pages */
    static unsigned char big[1 << 20];
    unsigned char small[4096];
    struct o2g o;
    if (setrlimit(RLIMIT_MEMLOCK, &rl))
        return fail("cannot set a 64 KiB RLIMIT_MEMLOCK: %s", strerror(errno));
    if (kt_as_user(1)) /* nobody, in the device's group (mode 0660) */
        return 1;
    if (o2g_open(&o, 32 << 10)) /* 8 pages: within the limit */
        return 1;
    int r = post(&o, 1, big, sizeof big, PEER, 1, NULL);
    if (r != -ENOMEM)
        return fail("post of 1 MiB beyond the limit: %d, want ENOMEM", r);
    if (post(&o, 2, small, sizeof small, PEER, 1, NULL) != O2G_POST_QUEUED)
        return fail("post within the limit refused");
    struct o2g o2;
    if (o2g_open(&o2, 64 << 10) == 0)
        return fail("a second dump area beyond the limit was pinned");
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t c = 2;
        _exit(ioctl(o.fd, O2G_IOC_CANCEL, &c) == 0 || errno != EPERM);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        return fail("a forked child used its parent's file");
    return 0;
}

/* double: a socket is claimed once; a second attach (same or another file) is EBUSY,
 * until the first detaches. */
static int t_double(void)
{
    struct o2g a, b;
    int tx, rx;
    uint32_t conn;
    if (o2g_open(&a, DUMP_LEN) || o2g_open(&b, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&a, rx, &conn))
        return fail("first attach: %s", strerror(errno));
    if (attach(&a, rx, NULL) == 0 || errno != EBUSY)
        return fail("second attach in the same file: not EBUSY");
    if (attach(&b, rx, NULL) == 0 || errno != EBUSY)
        return fail("attach in another file: not EBUSY");
    if (attach(&b, tx, NULL))
        return fail("the other end could not be attached");
    if (ioctl(a.fd, O2G_IOC_DETACH, &conn))
        return fail("detach: %s", strerror(errno));
    if (attach(&b, rx, NULL))
        return fail("attach after detach: %s", strerror(errno));
    return 0;
}

/* A blocking call made by a thread of its own, so that a case can act once the call
 * sleeps in the kernel: "the waiter asleep, then the event" is the order that shows the
 * event wakes it (an event that came first would be found without any wake-up). */
struct sleeper {
    pthread_t t;
    int fd;
    ssize_t ret;
    int err;
    ssize_t (*call)(int fd);
    _Atomic pid_t tid;
};

static void *sleeper_main(void *p)
{
    struct sleeper *s = p;
    s->tid = (pid_t)syscall(SYS_gettid);
    s->ret = s->call(s->fd);
    s->err = errno;
    return NULL;
}

/* The thread's scheduler state from /proc ('S': asleep in a wait), 0 if unreadable. */
static char thread_state(pid_t tid)
{
    char path[64], b[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(b, 1, sizeof b - 1, f) : 0;
    if (f)
        fclose(f);
    b[n] = 0;
    char *p = strrchr(b, ')'); /* "tid (comm) S ...": comm may hold anything */
    return p && p[1] == ' ' ? p[2] : 0;
}

/* Start call(fd) on a thread and return once it sleeps in the kernel (1 and why if it
 * never does within WAIT_MS). fd has SO_RCVTIMEO set, so a lost wake-up ends the call. */
static int sleeper_start(struct sleeper *s, ssize_t (*call)(int), int fd)
{
    struct timeval tv = {.tv_sec = SLEEP_S};
    s->fd = fd;
    s->call = call;
    s->tid = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
        pthread_create(&s->t, NULL, sleeper_main, s))
        return fail("cannot start the sleeping thread");
    for (int ms = 0; ms < WAIT_MS; ms++) {
        if (s->tid && thread_state(s->tid) == 'S')
            return 0;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    return fail("the thread's call never slept");
}

/* The call's result (errno in s->err), once it returned. */
static ssize_t sleeper_join(struct sleeper *s)
{
    pthread_join(s->t, NULL);
    return s->ret;
}

static ssize_t call_accept(int fd)
{
    return accept(fd, NULL, NULL);
}

static ssize_t call_recv(int fd)
{
    char c;
    return recv(fd, &c, 1, 0);
}

/* listen: the owner of an attached socket disconnects it (connect with AF_UNSPEC) and
 * makes it a listener; the kernel clones every child it accepts from it, callbacks and
 * all. The listener's accept(), then the child's reader, must be woken as on any socket,
 * and once /dev/o2g is closed (the connection freed) a FIN on the child must not reach
 * it (slub_debug poisons freed objects: a use shows in dmesg, or kills the guest). The
 * attached connection ends with an error entry. As nobody, in the devices' group. */
static int t_listen(void)
{
    struct o2g o;
    struct o2g_cqe e;
    struct sleeper s;
    struct sockaddr unspec = {.sa_family = AF_UNSPEC};
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int tx, rx, cl;
    if (kt_as_user(1) || o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, NULL))
        return fail("attach: %s", strerror(errno));
    if (connect(rx, &unspec, sizeof unspec))
        return fail("disconnect: %s", strerror(errno));
    if (listen(rx, 4) || getsockname(rx, (struct sockaddr *)&a, &al))
        return fail("listen on the attached socket: %s", strerror(errno));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (sleeper_start(&s, call_accept, rx))
        return 1;
    cl = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(cl, (struct sockaddr *)&a, sizeof a))
        return fail("connect to the listener: %s", strerror(errno));
    int ch = (int)sleeper_join(&s);
    if (ch < 0)
        return fail("accept on the former attached socket not woken: %s", strerror(s.err));
    /* checked last: what follows must run on a module that misses it too */
    int ended = next_cqe(&o, &e, WAIT_MS) && e.kind == O2G_CQE_CONN && e.status < 0;
    if (sleeper_start(&s, call_recv, ch))
        return 1;
    if (send(cl, "a", 1, 0) != 1)
        return fail("send to the child: %s", strerror(errno));
    if (sleeper_join(&s) != 1)
        return fail("the child's reader not woken by data: %s", strerror(s.err));
    munmap(o.ring, o.ring_bytes);
    close(o.fd); /* the last reference: release frees the connection */
    if (sleeper_start(&s, call_recv, ch))
        return 1;
    close(cl); /* a FIN on the child: its state change */
    if (sleeper_join(&s) != 0)
        return fail("the child's reader not woken by the FIN: %s", strerror(s.err));
    close(ch);
    close(rx);
    close(tx);
    return ended ? 0 : fail("no error entry for the connection that became a listener");
}

/* ulp: a socket with an upper-layer protocol (kTLS: the guest loads tls.ko) is not taken
 * (its callbacks and protocol are another layer's), nor is one that is not connected. */
static int t_ulp(void)
{
    struct o2g o;
    int tx, rx, u = socket(AF_INET, SOCK_STREAM, 0);
    if (kt_as_user(1) || o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, u, NULL) == 0 || errno != ENOTCONN)
        return fail("an unconnected socket: %s, want ENOTCONN", strerror(errno));
    if (setsockopt(rx, IPPROTO_TCP, TCP_ULP, "tls", sizeof "tls"))
        return fail("cannot put kTLS on the socket: %s", strerror(errno));
    if (attach(&o, rx, NULL) == 0 || errno != EOPNOTSUPP)
        return fail("attach of a kTLS socket: %s, want EOPNOTSUPP",
                    errno ? strerror(errno) : "taken");
    if (attach(&o, tx, NULL))
        return fail("the plain end refused: %s", strerror(errno));
    return 0;
}

#define TLS_HDR       5  /* a TLS record's header: type, version, length */
#define TLS_APPDATA   23 /* its type for application data */
#define TLS_GCM_EXTRA 24 /* an AES-GCM record's explicit nonce (8) and tag (16) */

/* wrap: kTLS stacked on an attached socket takes o2g's data callback as the one it calls
 * (tls_sw_set_crypto_info saves sk_data_ready): after DETACH o2g must leave kTLS's in
 * place, and kTLS's calls into o2g's must wake the socket's reader as the kernel's own
 * would (never call sk_data_ready, kTLS's, which calls o2g's again); the module keeps
 * itself loaded (the guest's init checks that rmmod is refused). As nobody; the guest
 * loads tls.ko and the AES-GCM modules. */
static int t_wrap(void)
{
    struct o2g o;
    struct sleeper s;
    struct tls12_crypto_info_aes_gcm_128 ci = {
        .info = {.version = TLS_1_2_VERSION, .cipher_type = TLS_CIPHER_AES_GCM_128}};
    unsigned char rec[TLS_HDR + TLS_GCM_EXTRA + 16] = {TLS_APPDATA, 3, 3, 0, TLS_GCM_EXTRA + 16};
    uint32_t conn;
    int tx, rx;
    if (kt_as_user(1) || o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0))
        return 1;
    if (attach(&o, rx, &conn))
        return fail("attach: %s", strerror(errno));
    if (setsockopt(rx, IPPROTO_TCP, TCP_ULP, "tls", sizeof "tls") ||
        setsockopt(rx, SOL_TLS, TLS_RX, &ci, sizeof ci))
        return fail("kTLS receive on the attached socket: %s", strerror(errno));
    if (ioctl(o.fd, O2G_IOC_DETACH, &conn))
        return fail("detach: %s", strerror(errno));
    if (sleeper_start(&s, call_recv, rx))
        return 1;
    if (send(tx, rec, sizeof rec, 0) != (ssize_t)sizeof rec) /* authenticates as nothing */
        return fail("send: %s", strerror(errno));
    if (sleeper_join(&s) >= 0 || s.err == EAGAIN)
        return fail("the kTLS reader not woken by a record (%s)",
                    s.err == EAGAIN ? "timed out" : "read it as good");
    return 0;
}

/* CPU time of the calling thread (system time included), in ns. */
static uint64_t thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#define POSTS_DUMP  (64u << 20) /* the largest dump area: the largest ring */
#define POSTS_BATCH 2000        /* posts timed at the start and at the end */
#define POSTS_RATIO 8           /* a walk of every receive makes the end ~30x dearer */

/* posts: a receive for nearly every ring entry (131 072 with the largest dump area). The
 * module finds a receive by cookie at every post and cancel (and kacc's softirq at its
 * own): a walk of all of them made the last posts about 30 times dearer than the first
 * and the whole case quadratic, with bottom halves off. The last POSTS_BATCH posts must
 * cost under POSTS_RATIO times the first: a ratio inside one run, not a duration. As
 * nobody with a RLIMIT_MEMLOCK for that dump area (HPC nodes often set none). */
static int t_posts(void)
{
    struct rlimit rl = {2 * POSTS_DUMP, 2 * POSTS_DUMP};
    struct o2g o;
    if (setrlimit(RLIMIT_MEMLOCK, &rl))
        return fail("RLIMIT_MEMLOCK: %s", strerror(errno));
    if (kt_as_user(1) || o2g_open(&o, POSTS_DUMP))
        return 1;
    uint64_t n = o.mask + 1 - 2 * POSTS_BATCH, t0 = 0, first = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i == 0 || i == n - POSTS_BATCH)
            t0 = thread_ns();
        int r = post(&o, i * 7919, NULL, 0, PEER, 1, NULL);
        if (r != O2G_POST_QUEUED)
            return fail("post %llu of %llu: %d", (unsigned long long)i, (unsigned long long)n, r);
        if (i == POSTS_BATCH - 1)
            first = thread_ns() - t0;
    }
    uint64_t last = thread_ns() - t0;
    if (post(&o, 0, NULL, 0, PEER, 1, NULL) != -EEXIST ||
        post(&o, (n - 1) * 7919, NULL, 0, PEER, 1, NULL) != -EEXIST)
        return fail("a cookie posted twice was not refused");
    for (uint64_t i = n; i-- > n - POSTS_BATCH;) {
        uint64_t c = i * 7919;
        if (ioctl(o.fd, O2G_IOC_CANCEL, &c))
            return fail("cancel of cookie %llu: %s", (unsigned long long)c, strerror(errno));
    }
    printf("posts: %llu receives, the first %d posts %llu us, the last %llu us\n",
           (unsigned long long)n, POSTS_BATCH, (unsigned long long)first / 1000,
           (unsigned long long)last / 1000);
    if (last > POSTS_RATIO * first)
        return fail("the last %d posts took %.1fx the first: a lookup walks every receive",
                    POSTS_BATCH, (double)last / (double)first);
    return 0;
}

/* traffic SECONDS: not a case; ping-pong over two attached sockets until killed or the
 * time is up (tests/kmod/run.sh's rmmod case runs it in the background). */
static int traffic(int secs)
{
    static unsigned char m[4000], b[4000];
    struct o2g o;
    int tx, rx;
    if (o2g_open(&o, DUMP_LEN) || tcp_pair(&tx, &rx, 0, 0) || attach(&o, rx, NULL))
        return 1;
    printf("traffic running\n");
    fflush(stdout);
    time_t end = time(NULL) + secs;
    for (uint64_t i = 0; time(NULL) < end; i++) {
        struct o2g_cqe e;
        post(&o, i, b, sizeof b, PEER, 1, NULL);
        send_msg(tx, MPE_W_EAGER, 1, m, sizeof m, sizeof m);
        if (!next_cqe(&o, &e, WAIT_MS) || e.kind != O2G_CQE_RECV || e.status)
            return fail("traffic: message %llu lost", (unsigned long long)i);
    }
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void);
} cases[] = {
    {"eager", t_eager},       {"unexp", t_unexp},         {"race", t_race},
    {"order", t_order},       {"cancel", t_cancel},       {"backpressure", t_backpressure},
    {"ringfull", t_ringfull}, {"trunc", t_trunc},         {"many", t_many},
    {"control", t_control},   {"corrupt", t_corrupt},     {"closed", t_closed},
    {"killed", t_killed},     {"memlock", t_memlock},     {"double", t_double},
    {"rts", t_rts},           {"listen", t_listen},       {"ulp", t_ulp},
    {"posts", t_posts},       {"stallzero", t_stallzero}, {"perm", t_perm},
    {"mmaprace", t_mmaprace}, {"wrap", t_wrap},
};

/* One case in a child process (a crash of the case is its failure, not ours), then the
 * check that the module let go of everything the child had. */
static int run_case(int i)
{
    if (kt_child(cases[i].name, cases[i].fn))
        return 1;
    struct o2g_stats s = kt_o2g_stats();
    if (s.pinned_pages || s.attached || s.posted) {
        printf("FAIL %s: left in the module: %llu pages pinned, %llu sockets, %llu receives\n",
               cases[i].name, (unsigned long long)s.pinned_pages, (unsigned long long)s.attached,
               (unsigned long long)s.posted);
        return 1;
    }
    printf("ok %s\n", cases[i].name);
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0;
    signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && !strcmp(argv[1], "stats")) {
        struct o2g_stats t = kt_o2g_stats();
        printf("matched_softirq=%llu unexpected=%llu matched_post=%llu deferred=%llu "
               "control=%llu stalls=%llu conn_errors=%llu dropped=%llu pinned_pages=%llu\n",
               (unsigned long long)t.matched_softirq, (unsigned long long)t.unexpected,
               (unsigned long long)t.matched_post, (unsigned long long)t.deferred,
               (unsigned long long)t.control, (unsigned long long)t.stalls,
               (unsigned long long)t.conn_errors, (unsigned long long)t.dropped,
               (unsigned long long)t.pinned_pages);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "traffic")) {
        int bad = traffic(atoi(argv[2]));
        if (bad)
            printf("traffic: %s\n", why);
        return bad;
    }
    for (int a = 1; a < argc; a++) {
        int i = 0, n = (int)(sizeof cases / sizeof cases[0]);
        while (i < n && strcmp(cases[i].name, argv[a]))
            i++;
        if (i == n) {
            printf("FAIL %s: no such case\n", argv[a]);
            failed++;
            continue;
        }
        failed += run_case(i);
    }
    return failed;
}
