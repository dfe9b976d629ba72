/*
 * net_tap.c: a node answers one TCP client that is not a node: a Linux process behind the
 * hub's TAP port (run by tests/uk/net/run.sh, case tap_linux; the client is
 * tests/uk/net/tap_peer.py).
 *
 * The node listens on NET_TAP_PORT and takes one connection from anyone. The client sends
 * [magic, size][size bytes of tap_byte(node, 0, i)]; the node checks every byte in the
 * tcp_recv callback (NIC interrupt), then answers from task context with
 * [magic, size][size bytes of tap_byte(node, 1, i)], closes, and exits. Both sides check
 * the other's bytes, so a frame lost or mangled in either direction through the TAP fails.
 *
 * Command line: tap_wait_ms= (how long to wait for the client, default 60000).
 * Exit: 0 good; 4 data corrupted or bad header; 5 set-up failed; 10 no client or the
 * connection failed.
 */
#include <string.h>
#include "kernel/bootinfo.h"
#include "uk/console.h"
#include "uk/ksock.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#include "arch/x86_64/io.h"

#define NET_TAP_PORT  5002
#define NET_TAP_MAGIC 0x50544b55u /* "UKTP" little-endian */
#define NET_TAP_MAX   (16u << 20)
#define NET_TAP_CHUNK 8192

/* The pattern both sides compute; tests/uk/net/tap_peer.py has the same formula. */
static inline uint8_t tap_byte(int node, int dir, uint32_t i)
{
    return (uint8_t)(i * 7u + (i >> 8) + (uint32_t)node * 13u + (uint32_t)dir * 101u);
}

/* State shared by the NIC interrupt (callbacks) and the task: flags only. */
static struct {
    struct ksock *s;
    int me;
    uint8_t hdr[8];
    int hdr_got;
    uint32_t size, got;
    volatile int done, bad, err;
} tap;

/* NIC interrupt, lwIP lock held: the client's bytes, checked as they come. */
static void tap_rx(struct ksock *s, void *arg, const void *data, size_t len)
{
    const uint8_t *p = data;
    (void)s, (void)arg;
    while (len && !tap.done && !tap.bad) {
        if (tap.hdr_got < 8) {
            tap.hdr[tap.hdr_got++] = *p++, len--;
            if (tap.hdr_got == 8) {
                uint32_t m;
                memcpy(&m, tap.hdr, 4), memcpy(&tap.size, tap.hdr + 4, 4);
                if (m != NET_TAP_MAGIC || tap.size > NET_TAP_MAX)
                    tap.bad = 1;
                tap.done = !tap.bad && tap.size == 0;
            }
            continue;
        }
        if (*p != tap_byte(tap.me, 0, tap.got))
            tap.bad = 1;
        p++, len--;
        if (++tap.got == tap.size)
            tap.done = 1;
    }
}

/* NIC interrupt: the connection's events. */
static void tap_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)arg;
    if (ev == KSOCK_EV_ERROR)
        tap.err = err;
    else if (ev == KSOCK_EV_EOF && !tap.done)
        tap.err = KSOCK_ECLOSED;
}

static const struct ksock_ops tap_ops = {tap_rx, tap_event};

/* NIC interrupt: a client connected; only the first one is served. */
static void tap_accept(struct ksock *l, void *arg, struct ksock *s)
{
    (void)l, (void)arg;
    if (tap.s) {
        ksock_abort(s);
        return;
    }
    tap.s = s;
    ksock_set_ops(s, &tap_ops, 0);
    ksock_expect_data(s, 1);
}

/* Task context: send the answer; returns 0 or a KSOCK_E*. */
static int tap_answer(void)
{
    static uint8_t buf[NET_TAP_CHUNK];
    uint32_t h[2] = {NET_TAP_MAGIC, tap.size}, off = 0;
    long r;
    for (size_t o = 0; o < sizeof h; o += (size_t)r) {
        r = ksock_send(tap.s, (uint8_t *)h + o, sizeof h - o);
        if (r < 0)
            return (int)-r;
        if (r == 0)
            halt(); /* until an ack makes room */
    }
    while (off < tap.size) {
        uint32_t n = tap.size - off < sizeof buf ? tap.size - off : (uint32_t)sizeof buf;
        for (uint32_t i = 0; i < n; i++)
            buf[i] = tap_byte(tap.me, 1, off + i);
        size_t done = 0;
        while (done < n) {
            r = ksock_send(tap.s, buf + done, n - done);
            if (r < 0)
                return (int)-r;
            if (r == 0 && tap.err)
                return tap.err;
            if (r == 0)
                halt();
            done += (size_t)r;
        }
        off += n;
    }
    return 0;
}

KTEST(net_tap)
{
    if (!net_up()) {
        kprintf("tap: no network (boot with qemu/uknodes)\n");
        return 5;
    }
    tap.me = net_node()->id;
    struct ksock *l = ksock_listen(NET_TAP_PORT, tap_accept, 0);
    if (!l) {
        kprintf("tap: listen failed\n");
        return 5;
    }
    kprintf("tap: node %d: listening on port %d\n", tap.me, NET_TAP_PORT);
    uint64_t end = time_ns() + cmdline_get_u64("tap_wait_ms", 60000) * 1000000ull;
    while (!tap.done && !tap.bad && !tap.err && time_ns() < end)
        halt(); /* until the NIC or the timer interrupt */
    int rc = 0;
    if (tap.bad) {
        kprintf("tap: node %d: DATA CORRUPTED or bad header (%u of %u bytes)\n", tap.me, tap.got,
                tap.size);
        rc = 4;
    } else if (!tap.done) {
        kprintf("tap: node %d: ERROR: %s\n", tap.me,
                tap.err ? ksock_strerror(tap.err) : "no client within tap_wait_ms");
        rc = 10;
    } else {
        uint32_t a = ksock_peer_ip(tap.s);
        kprintf("tap: node %d: %u bytes from %u.%u.%u.%u verified\n", tap.me, tap.size, a >> 24,
                (a >> 16) & 255, (a >> 8) & 255, a & 255);
        int e = tap_answer();
        while (!e && !ksock_flushed(tap.s) && !tap.err && time_ns() < end)
            halt();
        if (e || !ksock_flushed(tap.s)) {
            kprintf("tap: node %d: ERROR sending the answer: %s\n", tap.me,
                    ksock_strerror(e         ? e
                                   : tap.err ? tap.err
                                             : KSOCK_ETIMEDOUT));
            rc = 10;
        } else {
            kprintf("tap: node %d: %u bytes sent back\n", tap.me, tap.size);
        }
    }
    if (tap.s)
        ksock_close(tap.s);
    ksock_close(l);
    udelay(100000); /* the FIN leaves before the VM stops */
    return rc;
}
