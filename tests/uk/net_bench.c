/*
 * net_bench.c: TCP benchmark between two unikernel nodes (tests/bench/net.bench.sh runs it
 * through qemu/uknodes, and the same protocol between two Linux VMs with
 * tests/bench/net/pingpong.c, so the figures compare like with like).
 *
 * Node 1 serves: port 6000 echoes every byte back (from the tcp_recv callback, i.e. in
 * the NIC interrupt); port 6001 reads an 8-byte length, then that many bytes, then answers
 * one byte. Node 0 measures: NET_BENCH_PINGS round trips of 1 byte (median), then the
 * time to push bench_bytes= (default 32 MiB) and get the answer. The waiting task halts
 * until an interrupt (no polling). Node 0 prints
 *   bench: tcp_rtt_us=X tcp_bulk_MBps=Y irq_to_recv_cycles=Z irq_to_recv_min_cycles=W
 */
#include <string.h>
#include "kernel/bootinfo.h"
#include "uk/console.h"
#include "uk/ksock.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#include "arch/x86_64/io.h"

#define NET_BENCH_PINGS  1000
#define NET_BENCH_WARMUP 50
#define NB_ECHO_PORT     6000
#define NB_SINK_PORT     6001

static volatile int nb_connected, nb_err, nb_eof;
static volatile uint64_t nb_got; /* bytes received by the client (echoes, answer) */
static uint64_t nb_sink_total, nb_sink_got, nb_sink_hdr_got;
static uint8_t nb_sink_hdr[8];
static volatile int nb_server_done;

/* NIC interrupt (server): echo. */
static void nb_echo_recv(struct ksock *s, void *arg, const void *d, size_t len)
{
    ksock_send(s, d, len); /* 1-byte messages: always room */
}

/* NIC interrupt (server): count the bulk stream, answer at its end. */
static void nb_sink_recv(struct ksock *s, void *arg, const void *d, size_t len)
{
    const uint8_t *p = d;
    while (len && nb_sink_hdr_got < 8) {
        nb_sink_hdr[nb_sink_hdr_got++] = *p++;
        len--;
        if (nb_sink_hdr_got == 8)
            memcpy(&nb_sink_total, nb_sink_hdr, 8);
    }
    nb_sink_got += len;
    if (nb_sink_hdr_got == 8 && nb_sink_got == nb_sink_total)
        ksock_send(s, "!", 1);
}

static void nb_server_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    if (ev == KSOCK_EV_EOF || ev == KSOCK_EV_ERROR)
        nb_server_done += (arg != 0) ? 1 : 0; /* the sink connection ends the run */
}

static const struct ksock_ops nb_echo_ops = {nb_echo_recv, nb_server_event};
static const struct ksock_ops nb_sink_ops = {nb_sink_recv, nb_server_event};

static void nb_accept(struct ksock *l, void *arg, struct ksock *s)
{
    if (arg)
        ksock_set_ops(s, &nb_sink_ops, (void *)1);
    else
        ksock_set_ops(s, &nb_echo_ops, 0);
    ksock_set_timeout(s, 0);
}

static void nb_client_recv(struct ksock *s, void *arg, const void *d, size_t len)
{
    nb_got += len;
}

static void nb_client_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    if (ev == KSOCK_EV_CONNECTED)
        nb_connected = 1;
    else if (ev == KSOCK_EV_ERROR)
        nb_err = err;
}

static const struct ksock_ops nb_client_ops = {nb_client_recv, nb_client_event};

/* Task: connect to node 1's `port`, retrying while it boots. */
static struct ksock *nb_connect(uint16_t port)
{
    uint64_t end = time_ns() + 60000000000ull;
    while (time_ns() < end) {
        nb_connected = 0;
        nb_err = 0;
        struct ksock *s = ksock_connect(net_node()->peer_ip[1], port, &nb_client_ops, 0);
        while (s && !nb_connected && !nb_err)
            halt();
        if (s && nb_connected)
            return s;
        if (s)
            ksock_abort(s);
        udelay(200000);
    }
    return 0;
}

static int nb_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void qsort(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *));

KTEST(net_bench)
{
    if (!net_up() || net_node()->nodes != 2) {
        kprintf("net_bench: needs 2 nodes (qemu/uknodes --nodes 2)\n");
        return 5;
    }
    if (net_node()->id == 1) {
        ksock_listen(NB_ECHO_PORT, nb_accept, 0);
        ksock_listen(NB_SINK_PORT, nb_accept, (void *)1);
        while (!nb_server_done)
            halt();
        udelay(100000);
        return 0;
    }
    static uint64_t rtt[NET_BENCH_PINGS];
    struct ksock *e = nb_connect(NB_ECHO_PORT);
    if (!e) {
        kprintf("net_bench: cannot connect\n");
        return 5;
    }
    for (int i = 0; i < NET_BENCH_WARMUP + NET_BENCH_PINGS; i++) {
        uint64_t want = nb_got + 1, t0 = rdtsc();
        if (ksock_send(e, "x", 1) != 1)
            return 6;
        while (nb_got < want && !nb_err)
            halt();
        if (nb_err)
            return 6;
        if (i >= NET_BENCH_WARMUP)
            rtt[i - NET_BENCH_WARMUP] = rdtsc() - t0;
    }
    ksock_close(e);
    qsort(rtt, NET_BENCH_PINGS, sizeof rtt[0], nb_cmp);
    uint64_t rtt_ns = rtt[NET_BENCH_PINGS / 2] * 1000000000ull / tsc_hz;

    uint64_t total = cmdline_get_u64("bench_bytes", 32u << 20);
    struct ksock *b = nb_connect(NB_SINK_PORT);
    if (!b)
        return 5;
    static uint8_t chunk[65536];
    for (size_t i = 0; i < sizeof chunk; i++)
        chunk[i] = (uint8_t)i;
    uint64_t got0 = nb_got, t0 = time_ns(), sent = 0;
    while (ksock_send(b, &total, 8) != 8)
        halt();
    while (sent < total && !nb_err) {
        uint64_t n = total - sent < sizeof chunk ? total - sent : sizeof chunk;
        long r = ksock_send(b, chunk, n);
        if (r < 0)
            return 6;
        sent += (uint64_t)r;
        if (r == 0)
            halt();
    }
    while (nb_got == got0 && !nb_err)
        halt();
    uint64_t dt = time_ns() - t0;
    ksock_close(b);
    uint64_t cnt, mn, med;
    net_latency_summary(&cnt, &mn, &med);
    kprintf("bench: tcp_rtt_us=%lu.%03lu tcp_bulk_MBps=%lu.%02lu irq_to_recv_cycles=%lu "
            "irq_to_recv_min_cycles=%lu\n",
            rtt_ns / 1000, rtt_ns % 1000, total * 1000 / dt, total * 100000 / dt % 100, med, mn);
    udelay(200000); /* the FIN reaches node 1, which then exits too */
    return 0;
}
