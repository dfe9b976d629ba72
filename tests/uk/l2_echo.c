/*
 * l2_echo.c: the floor of cross-node latency (tests/bench/mpi.bench.sh): one frame from
 * node 0's driver to node 1's and back, through the same QEMU NIC, hub and netdev as MPI,
 * with no protocol stack: node 1 echoes in its NIC interrupt (net_set_frame_hook, under
 * the lwIP lock, before lwIP), node 0 spins until the echo arrives. Run by
 *   qemu/uknodes --nodes 2 --append test=l2_echo
 * Node 0 prints
 *   bench: l2_half_rtt_us=X l2_min_half_rtt_us=Y l2_halt_half_rtt_us=Z
 *          l2_halt_min_half_rtt_us=W pings=N lost=L
 * X, Y: node 0 spins on the echo; Z, W: node 0 halts until the echo's interrupt, as an MPI
 * rank blocked in a receive does (under QEMU a halted vCPU is woken through the host's
 * scheduler, which a spinning one is not). The two kinds alternate ping by ping, so both
 * see the same host load.
 *
 * The frames are IPv4/UDP (zero checksum: "none") so that the driver's filter, which only
 * lets IPv4 and ARP through, passes them unchanged; the port marks them as ours, every
 * other frame goes on to lwIP. Node 0 broadcasts (it need not know node 1's MAC); node 1
 * answers to the sender's MAC. At the end node 0 sends L2E_BYE frames: node 1 then ends.
 */
#include <string.h>
#include "drivers/vnet.h"
#include "drivers/vnet_frame.h"
#include "kernel/bootinfo.h"
#include "uk/console.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#include "arch/x86_64/io.h"

#define L2E_PINGS    1000
#define L2E_WARMUP   50
#define L2E_PORT     6010                   /* UDP destination port of our frames */
#define L2E_LEN      60                     /* the minimum Ethernet frame (no FCS) */
#define L2E_ETH      14                     /* Ethernet header */
#define L2E_IP       20                     /* IPv4 header */
#define L2E_SEQ      (L2E_ETH + L2E_IP + 8) /* after the UDP header: 4-byte sequence */
#define L2E_FLAG     (L2E_SEQ + 4)          /* 1 byte: L2E_PING, L2E_ECHO or L2E_BYE */
#define L2E_PING     1
#define L2E_ECHO     2
#define L2E_BYE      3
#define L2E_RETRY_NS 100000000ull   /* node 0 re-sends its first ping while node 1 boots */
#define L2E_BOOT_NS  60000000000ull /* ... for at most this long */
#define L2E_LOST_NS  1000000000ull  /* a timed ping whose echo takes longer is lost */

static volatile uint32_t l2e_echoed = ~0u; /* node 0: sequence of the last echo */
static volatile int l2e_bye;               /* node 1: node 0 is done */

/* Any context: 1 if f is one of our frames. */
static int l2e_ours(const uint8_t *f, size_t len)
{
    return len >= L2E_LEN && f[12] == 0x08 && f[13] == 0x00 && f[L2E_ETH + 9] == 17 &&
           (f[L2E_ETH + L2E_IP + 2] << 8 | f[L2E_ETH + L2E_IP + 3]) == L2E_PORT;
}

/* NIC interrupt under the lwIP lock (node 1): echo our frames to their sender. */
static int l2e_echo_hook(const uint8_t *f, size_t len)
{
    if (!l2e_ours(f, len))
        return 0;
    uint8_t e[L2E_LEN];
    memcpy(e, f, L2E_LEN);
    memcpy(e, f + 6, 6); /* to the sender */
    memcpy(e + 6, vnet_mac(), 6);
    if (e[L2E_FLAG] == L2E_BYE)
        l2e_bye = 1;
    e[L2E_FLAG] = L2E_ECHO;
    net_frame_send_locked(e, L2E_LEN); /* a full TX ring loses the echo: node 0 re-sends */
    return 1;
}

/* NIC interrupt under the lwIP lock (node 0): note the echo's sequence number. */
static int l2e_client_hook(const uint8_t *f, size_t len)
{
    if (!l2e_ours(f, len) || f[L2E_FLAG] != L2E_ECHO)
        return 0;
    uint32_t seq;
    memcpy(&seq, f + L2E_SEQ, 4);
    l2e_echoed = seq;
    return 1;
}

/* Task context (node 0): a ping with sequence seq and flag into f. */
static void l2e_frame(uint8_t *f, uint32_t seq, uint8_t flag)
{
    memset(f, 0, L2E_LEN);
    memset(f, 0xff, 6); /* broadcast */
    memcpy(f + 6, vnet_mac(), 6);
    f[12] = 0x08; /* IPv4 */
    uint8_t *ip = f + L2E_ETH;
    ip[0] = 0x45;
    ip[3] = L2E_LEN - L2E_ETH; /* total length: IP + UDP + payload */
    ip[8] = 64;                /* TTL */
    ip[9] = 17;                /* UDP */
    uint32_t src = net_node()->ip, dst = net_node()->peer_ip[1];
    for (int i = 0; i < 4; i++) {
        ip[12 + i] = (uint8_t)(src >> (24 - 8 * i));
        ip[16 + i] = (uint8_t)(dst >> (24 - 8 * i));
    }
    uint16_t c = vnet_csum(0, ip, L2E_IP);
    ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
    uint8_t *udp = ip + L2E_IP;
    udp[0] = udp[2] = L2E_PORT >> 8, udp[1] = udp[3] = L2E_PORT & 255;
    udp[5] = L2E_LEN - L2E_ETH - L2E_IP; /* UDP length; checksum 0: none */
    memcpy(f + L2E_SEQ, &seq, 4);
    f[L2E_FLAG] = flag;
}

/* Task context (node 0), interrupts on: sleep until the next interrupt unless the echo of
 * seq is in. cli first: an echo landing between the test and hlt would otherwise leave us
 * asleep until the next timer tick; sti's one-instruction shadow makes "sti; hlt" atomic. */
static void l2e_halt(uint32_t seq)
{
    __asm__ volatile("cli" ::: "memory");
    if (l2e_echoed != seq)
        __asm__ volatile("sti; hlt" ::: "memory");
    else
        __asm__ volatile("sti" ::: "memory");
}

/* Task context (node 0): send ping seq and wait for its echo, at most `wait_ns`, spinning
 * or (halt) halting. The round trip in TSC cycles, or 0 if the echo did not come. */
static uint64_t l2e_ping(uint32_t seq, uint8_t flag, uint64_t wait_ns, int halt)
{
    uint8_t f[L2E_LEN];
    l2e_frame(f, seq, flag);
    uint64_t end = time_ns() + wait_ns, t0 = rdtsc();
    if (net_frame_send(f, L2E_LEN) != 0)
        return 0;
    while (l2e_echoed != seq) {
        if (time_ns() > end)
            return 0;
        if (halt)
            l2e_halt(seq);
        else
            __asm__ volatile("pause");
    }
    return rdtsc() - t0;
}

static int l2e_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void qsort(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *));

KTEST(l2_echo)
{
    if (!net_up() || net_node()->nodes != 2) {
        kprintf("l2_echo: needs 2 nodes (qemu/uknodes --nodes 2)\n");
        return 5;
    }
    if (net_node()->id == 1) {
        net_set_frame_hook(l2e_echo_hook);
        while (!l2e_bye)
            halt();
        udelay(100000); /* the last echo leaves the TX ring */
        return 0;
    }
    net_set_frame_hook(l2e_client_hook);
    uint64_t boot_end = time_ns() + L2E_BOOT_NS;
    while (!l2e_ping(0, L2E_PING, L2E_RETRY_NS, 0))
        if (time_ns() > boot_end) {
            kprintf("l2_echo: node 1 never echoed\n");
            return 6;
        }
    static uint64_t rtt[2][L2E_PINGS]; /* [0]: spinning, [1]: halting */
    int n[2] = {0, 0}, lost = 0;
    for (uint32_t seq = 1; n[0] < L2E_PINGS || n[1] < L2E_PINGS; seq++) {
        int halt = seq & 1;
        uint64_t c = l2e_ping(seq, L2E_PING, L2E_LOST_NS, halt);
        if (!c) {
            if (++lost > L2E_PINGS / 10) {
                kprintf("l2_echo: %d echoes lost\n", lost);
                return 6;
            }
            continue;
        }
        if (seq > L2E_WARMUP && n[halt] < L2E_PINGS)
            rtt[halt][n[halt]++] = c;
    }
    uint8_t bye[L2E_LEN];
    l2e_frame(bye, 0, L2E_BYE);
    for (int i = 0; i < 3; i++) /* not waited for; three, in case the hub drops one */
        net_frame_send(bye, L2E_LEN);
    uint64_t half[2], min[2];
    for (int h = 0; h < 2; h++) {
        qsort(rtt[h], L2E_PINGS, sizeof rtt[h][0], l2e_cmp);
        half[h] = rtt[h][L2E_PINGS / 2] * 500000000ull / tsc_hz;
        min[h] = rtt[h][0] * 500000000ull / tsc_hz;
    }
    kprintf("bench: l2_half_rtt_us=%lu.%03lu l2_min_half_rtt_us=%lu.%03lu "
            "l2_halt_half_rtt_us=%lu.%03lu l2_halt_min_half_rtt_us=%lu.%03lu pings=%d lost=%d\n",
            half[0] / 1000, half[0] % 1000, min[0] / 1000, min[0] % 1000, half[1] / 1000,
            half[1] % 1000, min[1] / 1000, min[1] % 1000, L2E_PINGS, lost);
    udelay(200000);
    return 0;
}
