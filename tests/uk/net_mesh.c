/*
 * net_mesh.c: multi-node TCP test (run by tests/uk/net/run.sh through qemu/uknodes).
 *
 * Every node connects to every other node (port NET_MESH_PORT) and sends, on its own
 * outgoing connection, each payload size of mesh_sizes= as [magic, size][bytes][checksum];
 * it receives the peer's stream on the connection the peer opened, and checks every byte
 * (a pattern of sender, receiver, size and offset) and the checksum inside the tcp_recv
 * callback, i.e. in the NIC interrupt. A receiver that got everything answers "OK!!" on
 * that connection (a send from interrupt context). So each pair exchanges all sizes in
 * both directions at once.
 *
 * Command line: mesh_sizes=1,1024,... (default 1,1K,64K,1M,16M), mesh_garbage=K (wait
 * until the RX filter dropped K frames before finishing), ksock_timeout_ms= (dead peers).
 * Exit: 0 all good; 10 a peer failed (printed per peer); 4 data corrupted; 5 set-up failed
 * (3 is lwIP's failed assertion, arch/cc.h).
 */
#include <string.h>
#include "kernel/bootinfo.h"
#include "uk/console.h"
#include "uk/ksock.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#include "arch/x86_64/io.h"
#include "kernel/smp.h"
#include "kernel/timer.h"

#define NET_MESH_PORT  5000
#define MESH_MAX_SIZES 8
#define MESH_MAGIC     0x554b4e4du /* "UKNM" */
#define MESH_CHUNK     16384

struct mesh_rx { /* one incoming stream; touched in the NIC interrupt only (lwIP lock) */
    struct ksock *s;
    int idx; /* which size we are receiving */
    int hdr_got, trl_got;
    uint8_t hdr[8], trl[4];
    uint64_t got;
    uint32_t sum;
    volatile int done, bad;
    char why[80];
};

struct mesh_tx { /* one outgoing stream; the task sends, callbacks set flags */
    struct ksock *s;
    volatile int connected, ok_got, err;
    int idx;      /* size being sent */
    uint64_t off; /* bytes of the current record sent (header + payload + trailer) */
    uint32_t sum; /* checksum of the payload sent so far (sent in order) */
    uint64_t retry_at;
    int done_sending;
};

static int me, nn, nsizes;
static uint64_t sizes[MESH_MAX_SIZES];
static struct mesh_rx rx[NET_MAX_NODES];
static struct mesh_tx tx[NET_MAX_NODES];
static volatile int rx_err[NET_MAX_NODES];
static uint64_t total_to_send, total_sent;

static inline uint8_t mesh_byte(int from, int to, uint64_t size, uint64_t off)
{
    uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ull ^ size * 0xbf58476d1ce4e5b9ull ^
                 (uint64_t)(from * 64 + to) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    x *= 0xd6e9e5b1d1a0ee8bull;
    x ^= x >> 29;
    return (uint8_t)(x >> ((off & 7) * 8));
}

static inline uint32_t mesh_sum(uint32_t s, uint8_t b)
{
    return (s ^ b) * 16777619u;
}

static int mesh_peer_of(uint32_t ip)
{
    for (int j = 0; j < nn; j++)
        if (net_node()->peer_ip[j] == ip)
            return j;
    return -1;
}

/* NIC interrupt, lwIP lock held: bytes of peer j's stream. */
static void mesh_rx_data(struct ksock *s, void *arg, const void *data, size_t len)
{
    struct mesh_rx *r = arg;
    int j = (int)(r - rx);
    const uint8_t *p = data;
    while (len && !r->done && !r->bad) {
        if (r->hdr_got < 8) {
            r->hdr[r->hdr_got++] = *p++, len--;
            if (r->hdr_got == 8) {
                uint32_t m, sz;
                memcpy(&m, r->hdr, 4), memcpy(&sz, r->hdr + 4, 4);
                if (m != MESH_MAGIC || r->idx >= nsizes || sz != sizes[r->idx]) {
                    r->bad = 1;
                    strcpy(r->why, "bad record header");
                }
                r->got = 0;
                r->sum = 2166136261u;
            }
            continue;
        }
        uint64_t size = sizes[r->idx];
        if (r->got < size) {
            size_t n = size - r->got < len ? (size_t)(size - r->got) : len;
            uint32_t sum = r->sum;
            for (size_t i = 0; i < n; i++) {
                uint8_t want = mesh_byte(j, me, size, r->got + i);
                if (p[i] != want && !r->bad) {
                    r->bad = 1;
                    strcpy(r->why, "payload byte differs from what was sent");
                }
                sum = mesh_sum(sum, p[i]);
            }
            r->sum = sum;
            r->got += n, p += n, len -= n;
            continue;
        }
        r->trl[r->trl_got++] = *p++, len--;
        if (r->trl_got == 4) {
            uint32_t c;
            memcpy(&c, r->trl, 4);
            if (c != r->sum) {
                r->bad = 1;
                strcpy(r->why, "checksum mismatch");
                break;
            }
            r->idx++;
            r->hdr_got = r->trl_got = 0;
            if (r->idx == nsizes) {
                kprintf("mesh: node %d: all %d records from peer %d verified\n", me, nsizes, j);
                r->done = 1;
                ksock_expect_data(s, 0);
                ksock_send(s, "OK!!", 4); /* interrupt-context send */
            }
        }
    }
}

/* NIC interrupt: events on an incoming connection. */
static void mesh_rx_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    struct mesh_rx *r = arg;
    if (ev == KSOCK_EV_ERROR && !r->done)
        rx_err[r - rx] = err;
    if (ev == KSOCK_EV_EOF && !r->done)
        rx_err[r - rx] = KSOCK_ECLOSED;
}

static const struct ksock_ops mesh_rx_ops = {mesh_rx_data, mesh_rx_event};

/* NIC interrupt: a peer connected to us. */
static void mesh_accept(struct ksock *l, void *arg, struct ksock *s)
{
    int j = mesh_peer_of(ksock_peer_ip(s));
    if (j < 0 || j == me || rx[j].s) {
        kprintf("mesh: node %d: refusing a second connection from peer %d\n", me, j);
        ksock_abort(s);
        return;
    }
    rx[j].s = s;
    kprintf("mesh: node %d: peer %d connected to us\n", me, j);
    ksock_set_ops(s, &mesh_rx_ops, &rx[j]);
    ksock_expect_data(s, 1);
}

/* NIC interrupt: the peer's "OK!!" on our outgoing connection. */
static void mesh_tx_data(struct ksock *s, void *arg, const void *data, size_t len)
{
    struct mesh_tx *t = arg;
    t->ok_got += (int)len;
}

static void mesh_tx_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    struct mesh_tx *t = arg;
    if (ev == KSOCK_EV_CONNECTED) {
        t->connected = 1;
        kprintf("mesh: node %d: connected to peer %d\n", me, (int)(t - tx));
    } else if (ev == KSOCK_EV_ERROR) {
        t->err = err;
    }
}

static const struct ksock_ops mesh_tx_ops = {mesh_tx_data, mesh_tx_event};

static int mesh_parse_sizes(void)
{
    char buf[256];
    if (!cmdline_get("mesh_sizes", buf, sizeof buf))
        strcpy(buf, "1,1024,65536,1048576,16777216");
    const char *p = buf;
    nsizes = 0;
    while (*p && nsizes < MESH_MAX_SIZES) {
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (uint64_t)(*p++ - '0');
        sizes[nsizes++] = v;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return nsizes ? 0 : -1;
}

/* Task context: push as much of stream j as the socket takes; returns bytes sent. Each
 * call sends from one region of the record (header, payload, trailer) at a time, so the
 * trailer is only built once the payload checksum is complete. */
static uint64_t mesh_push(int j)
{
    static uint8_t buf[MESH_CHUNK];
    struct mesh_tx *t = &tx[j];
    uint64_t pushed = 0;
    while (t->idx < nsizes) {
        uint64_t size = sizes[t->idx], reclen = 8 + size + 4, o = t->off;
        size_t n = 0;
        int payload = 0;
        if (o < 8) {
            uint32_t h[2] = {MESH_MAGIC, (uint32_t)size};
            n = (size_t)(8 - o);
            memcpy(buf, (uint8_t *)h + o, n);
        } else if (o < 8 + size) {
            uint64_t k = 8 + size - o;
            n = k < sizeof buf ? (size_t)k : sizeof buf;
            for (size_t i = 0; i < n; i++)
                buf[i] = mesh_byte(me, j, size, o - 8 + i);
            payload = 1;
        } else {
            n = (size_t)(reclen - o);
            memcpy(buf, (uint8_t *)&t->sum + (o - 8 - size), n);
        }
        long r = ksock_send(t->s, buf, n);
        if (r < 0) {
            t->err = (int)-r;
            return pushed;
        }
        for (long i = 0; payload && i < r; i++)
            t->sum = mesh_sum(t->sum, buf[i]);
        t->off += (uint64_t)r;
        pushed += (uint64_t)r;
        if (t->off == reclen) {
            t->idx++;
            t->off = 0;
            t->sum = 2166136261u;
        }
        if ((size_t)r < n)
            return pushed;
    }
    t->done_sending = 1;
    return pushed;
}

static int mesh_main(void);

struct mesh_on_cpu {
    int rc;
};

/* Task context on another CPU (smp_run): the NIC interrupt stays on CPU 0, so every send
 * here contends for the lwIP lock with the receive path there. That CPU has no timer of
 * its own; one is started so its halt() wakes to look at the flags the interrupt set. */
static void mesh_remote(void *arg)
{
    struct mesh_on_cpu *m = arg;
    timer_start_periodic(1000);
    m->rc = mesh_main();
    timer_stop();
}

/* Command line mesh_cpu=C: run the test's task on CPU C instead of the boot CPU. */
KTEST(net_mesh)
{
    int cpu = (int)cmdline_get_u64("mesh_cpu", 0);
    if (cpu > 0 && cpu < smp_ncpus()) {
        struct mesh_on_cpu m = {0};
        kprintf("mesh: sending and waiting on cpu %d, NIC interrupt on cpu 0\n", cpu);
        smp_run(cpu, mesh_remote, &m);
        return m.rc;
    }
    return mesh_main();
}

static int mesh_main(void)
{
    if (!net_up()) {
        kprintf("mesh: no network (boot with qemu/uknodes)\n");
        return 5;
    }
    me = net_node()->id;
    nn = net_node()->nodes;
    if (mesh_parse_sizes() != 0) {
        kprintf("mesh: bad mesh_sizes=\n");
        return 5;
    }
    uint64_t garbage = cmdline_get_u64("mesh_garbage", 0);
    for (int i = 0; i < nsizes; i++)
        total_to_send += (8 + sizes[i] + 4) * (uint64_t)(nn - 1);
    struct ksock *l = ksock_listen(NET_MESH_PORT, mesh_accept, 0);
    if (!l) {
        kprintf("mesh: listen failed\n");
        return 5;
    }
    for (int j = 0; j < nn; j++)
        tx[j].sum = 2166136261u;
    kprintf("mesh: node %d of %d, %d sizes up to %lu bytes, to every peer\n", me, nn, nsizes,
            sizes[nsizes - 1]);
    uint64_t t0 = time_ns(), connect_deadline = t0 + 60000000000ull;
    int next_pct = 25, failed = 0;
    for (;;) {
        uint64_t now = time_ns();
        int busy = 0, all_done = 1;
        for (int j = 0; j < nn; j++) {
            if (j == me)
                continue;
            struct mesh_tx *t = &tx[j];
            if (!t->s && now >= t->retry_at && !t->err) {
                /* Cleared before: the connect may complete in the NIC interrupt before
                 * ksock_connect() returns. */
                t->connected = 0;
                t->s = ksock_connect(net_node()->peer_ip[j], NET_MESH_PORT, &mesh_tx_ops, t);
            }
            if (t->s && t->err && !t->connected && now < connect_deadline) {
                /* peer not up or not listening yet (refused, or SYNs unanswered): again */
                ksock_abort(t->s);
                t->s = 0;
                t->err = 0;
                t->retry_at = now + 200000000ull;
            }
            if (t->s && t->connected && !t->err && !t->done_sending) {
                uint64_t n = mesh_push(j);
                total_sent += n;
                busy |= n > 0;
            }
            int ok = t->ok_got >= 4 && rx[j].done;
            int err = t->err || rx_err[j] || rx[j].bad;
            if (err && !(failed & (1 << (j & 31)))) {
                failed |= 1 << (j & 31);
                int e = t->err ? t->err : rx_err[j];
                uint32_t a = net_node()->peer_ip[j];
                if (rx[j].bad)
                    kprintf("mesh: node %d: peer %d: DATA CORRUPTED: %s (size %lu)\n", me, j,
                            rx[j].why, sizes[rx[j].idx < nsizes ? rx[j].idx : 0]);
                else
                    kprintf("mesh: node %d: peer %d (10.0.0.%u): ERROR: %s (%s)\n", me, j, a & 255,
                            ksock_strerror(e), t->err ? "sending to it" : "receiving from it");
            }
            if (!ok && !err)
                all_done = 0;
        }
        while (total_to_send && total_sent * 100 / total_to_send >= (uint64_t)next_pct &&
               next_pct <= 100) {
            kprintf("mesh: node %d: sent %d%%\n", me, next_pct);
            next_pct += 25;
        }
        if (all_done)
            break;
        if (!busy)
            halt(); /* until the NIC (acks, data) or the timer interrupt */
    }
    uint64_t dt = time_ns() - t0;
    if (garbage) {
        uint64_t end = time_ns() + 30000000000ull;
        while (net_rx_dropped() < garbage && time_ns() < end)
            halt();
        kprintf("mesh: node %d: RX filter dropped %lu frames (expected %lu)\n", me,
                net_rx_dropped(), garbage);
    }
    /* Let the last acks and "OK!!"s leave before the VM stops. */
    udelay(300000);
    for (int j = 0; j < nn; j++) {
        if (tx[j].s)
            ksock_close(tx[j].s);
        if (rx[j].s)
            ksock_close(rx[j].s);
    }
    ksock_close(l);
    net_print_stats("mesh: net");
    uint64_t cnt, mn, med;
    net_latency_summary(&cnt, &mn, &med);
    kprintf("mesh: irq_to_recv_cycles min %lu median %lu (%lu samples)\n", mn, med, cnt);
    for (int j = 0; j < nn; j++)
        if (rx[j].bad)
            return 4;
    if (failed) {
        kprintf("mesh: node %d: FAILED (peers lost)\n", me);
        return 10;
    }
    kprintf("mesh: node %d: all %d peers ok, %lu bytes sent in %lu ms\n", me, nn - 1, total_sent,
            dt / 1000000);
    return 0;
}
