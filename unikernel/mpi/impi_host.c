/*
 * impi_host.c: this node as an IMPI host (spec §4, §9): the "dance" that connects it to
 * every host of the other clients, the byte streams of the engine's IMPI links
 * (mpi/core/mpe_impi.h), and FINI at the end.
 *
 * The dance: for every pair of hosts, the higher-indexed one connects to the lower one
 * and sends its global index as 4 big-endian bytes; nothing else. So we connect to the
 * lower-indexed hosts of other clients and accept the higher-indexed ones. An accepted
 * connection is taken only from the address its host advertised (LAM checks the same),
 * and only once the tables exist: no host can connect before our DONE (impi_uk.h).
 * Anything else that connects is dropped with a message, never the job.
 *
 * Callbacks run in the NIC interrupt with the lwIP lock held; they switch to the job's
 * page table before the engine touches rank memory (mpe_uk.c).
 */
#include "mpi/impi_uk.h"
#include "arch/x86_64/io.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/ksock.h"
#include "uk/time.h"

#define HOST_DANCE_NS  60000000000ull /* every host connects within a minute */
#define HOST_FINI_NS   120000000000ull
#define HOST_PENDING   16 /* accepted connections whose index has not arrived yet */
#define HOST_INDEX_LEN 4

static struct ksock *listener;
static struct mpe_node *node;
static const struct impi_job *tables;
static int nlinks;

/* An accepted connection until its 4-byte index is in. */
static struct pending {
    struct ksock *s;
    uint8_t idx[HOST_INDEX_LEN];
    int got;
} pending[HOST_PENDING];

#define IP_ARGS(ip) (ip) >> 24, (ip) >> 16 & 255, (ip) >> 8 & 255, (ip)&255

static void link_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    uint64_t old = mpe_uk_enter();
    mpe_impi_rx(arg, data, len);
    mpe_uk_leave(old);
    /* Acknowledge at once: LAM's impid writes with Nagle on (no TCP_NODELAY), so the
     * payload of a small message waits for the ACK of its 128-byte header; a delayed ACK
     * here cost every 1 KiB message tens of milliseconds (tests/bench/uk_impi.bench.sh). */
    ksock_ack_now(s);
}

static void link_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    struct mpe_ilink *l = arg;
    uint64_t old = mpe_uk_enter();
    switch (ev) {
    case KSOCK_EV_CONNECTED: { /* we connect to a lower host: our index first (§4) */
        uint8_t idx[HOST_INDEX_LEN];
        impi_put32(idx, (uint32_t)tables->self_host);
        if (ksock_send(s, idx, sizeof idx) != (long)sizeof idx)
            mpe_impi_failed(l, "cannot send our host index");
        else
            mpe_impi_attach(l, s);
        break;
    }
    case KSOCK_EV_SENT:
        mpe_impi_sent(l);
        break;
    case KSOCK_EV_EOF:
        mpe_impi_failed(l, "the host closed the connection");
        break;
    case KSOCK_EV_ERROR:
        if (mpe_impi_transport(l) == s)
            mpe_impi_failed(l, ksock_strerror(err));
        break;
    }
    mpe_uk_leave(old);
}

static const struct ksock_ops link_ops = {.recv = link_recv, .event = link_event};

static void drop(struct pending *p, const char *why)
{
    uint32_t ip = ksock_peer_ip(p->s);
    kprintf("impi: dropped a host connection from %u.%u.%u.%u: %s\n", IP_ARGS(ip), why);
    ksock_abort(p->s);
    p->s = 0;
}

/* The index is in: hand the connection (and what came after the index) to its link. */
static void identify(struct pending *p, const uint8_t *rest, size_t len)
{
    uint32_t h = impi_get32(p->idx);
    struct mpe_ilink *l = tables ? mpe_impi_link(node, (int)h) : 0;
    if (!l || (int)h <= tables->self_host)
        return drop(p, "not a host we wait for");
    if (ksock_peer_ip(p->s) != tables->host_ip[h])
        return drop(p, "not from the address that host advertised");
    if (mpe_impi_transport(l))
        return drop(p, "that host is connected already");
    struct ksock *s = p->s;
    p->s = 0;
    ksock_set_ops(s, &link_ops, l);
    uint64_t old = mpe_uk_enter();
    mpe_impi_attach(l, s);
    if (len)
        mpe_impi_rx(l, rest, len);
    mpe_uk_leave(old);
}

static void pending_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)s;
    struct pending *p = arg;
    const uint8_t *d = data;
    while (len && p->got < HOST_INDEX_LEN) {
        p->idx[p->got++] = *d++;
        len--;
    }
    if (p->got == HOST_INDEX_LEN)
        identify(p, d, len);
}

static void pending_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)err;
    struct pending *p = arg;
    if (ev == KSOCK_EV_EOF || ev == KSOCK_EV_ERROR)
        drop(p, "closed before it said which host it is");
}

static const struct ksock_ops pending_ops = {.recv = pending_recv, .event = pending_event};

static void host_accept(struct ksock *l, void *arg, struct ksock *s)
{
    (void)l, (void)arg;
    for (int i = 0; i < HOST_PENDING; i++)
        if (!pending[i].s) {
            pending[i] = (struct pending){.s = s};
            ksock_set_ops(s, &pending_ops, &pending[i]);
            return;
        }
    kprintf("impi: too many unidentified host connections: dropped one\n");
    ksock_abort(s);
}

/* Task context; see impi_uk.h. */
int impi_host_listen(void)
{
    listener = ksock_listen(IMPI_UK_HOST_PORT, host_accept, 0);
    if (!listener)
        kprintf("impi: cannot listen on port %d\n", IMPI_UK_HOST_PORT);
    return listener ? 0 : -1;
}

/* Task context; see impi_uk.h. Published under the lwIP lock: an accept callback sees
 * either no tables (and drops) or all of them. */
void impi_host_tables(struct mpe_node *n, const struct impi_job *job)
{
    int t = ksock_lock();
    node = n;
    tables = job;
    ksock_unlock(t);
    for (int h = 0; h < job->nhosts; h++)
        nlinks += mpe_impi_link(n, h) != 0;
}

static int all_attached(void)
{
    int t = ksock_lock(), up = 0;
    for (int h = 0; h < tables->nhosts; h++) {
        struct mpe_ilink *l = mpe_impi_link(node, h);
        up += l && mpe_impi_transport(l);
    }
    ksock_unlock(t);
    return up == nlinks;
}

/* Task context; see impi_uk.h. */
int impi_host_dance(void)
{
    for (int h = 0; h < tables->self_host; h++) {
        struct mpe_ilink *l = mpe_impi_link(node, h);
        if (l && !ksock_connect(tables->host_ip[h], tables->host_port[h], &link_ops, l)) {
            kprintf("impi: no socket to connect to host %d\n", h);
            return -1;
        }
    }
    uint64_t deadline = time_ns() + HOST_DANCE_NS;
    while (!all_attached()) {
        if (time_ns() > deadline) {
            for (int h = 0; h < tables->nhosts; h++) {
                struct mpe_ilink *l = mpe_impi_link(node, h);
                if (l && !mpe_impi_transport(l))
                    kprintf("impi: host %d (%u.%u.%u.%u:%u) did not connect\n", h,
                            IP_ARGS(tables->host_ip[h]), tables->host_port[h]);
            }
            return -1;
        }
        halt();
    }
    return 0;
}

/* Task context, at the end (impi_host_end): once, what host h sent to our finished ranks
 * after our FINI. Those packets were dropped unanswered (mpe_impi_late); it is the peer
 * program's doing, not a failure of this job, hence a note rather than an error. */
static void report_late(int h, struct mpe_ilink *l)
{
    uint32_t pkts;
    const char *type;
    int rank, t = ksock_lock();
    uint32_t msgs = mpe_impi_late(l, &pkts, &type, &rank);
    ksock_unlock(t);
    if (msgs)
        kprintf("impi: IMPI host %d (%u.%u.%u.%u) sent %u packet%s after our FINI (the first: "
                "%s to rank %d): dropped, unanswered: our ranks had finished\n",
                h, IP_ARGS(tables->host_ip[h]), pkts, pkts == 1 ? "" : "s", type, rank);
}

/* Task context; see impi_uk.h. */
int impi_host_end(void)
{
    if (!tables)
        return 0;
    mpe_impi_finish(node);
    uint64_t deadline = time_ns() + HOST_FINI_NS;
    for (int h = 0; h < tables->nhosts; h++) {
        struct mpe_ilink *l = mpe_impi_link(node, h);
        while (l && !(mpe_impi_done(l) && ksock_flushed(mpe_impi_transport(l)))) {
            if (time_ns() > deadline) {
                report_late(h, l);
                kprintf("impi: host %d did not finish (no FINI)\n", h);
                return -1;
            }
            halt();
        }
        if (l) {
            report_late(h, l);
            ksock_ack_now(mpe_impi_transport(l));
        }
    }
    impi_client_fini();
    return 0;
}
