/*
 * netif_vnet.c: lwIP on the virtio-net device, run from the NIC interrupt (lwIP's
 * "mainloop mode, option 1"; docs/architecture.md §3.6).
 *
 * Every lwIP entry point here holds the one lwIP lock (lwip_lock(): interrupts masked on
 * this CPU, then a spinlock): the RX interrupt, the timer tick running
 * sys_check_timeouts(), and (through ksock.c) every application call. The RX interrupt
 * handles at most NET_RX_BUDGET frames, then re-arms the queue; if frames remain it sends
 * itself an IPI on the same vector, so other interrupts (and the interrupted task) get a
 * turn between batches and no frame waits for the next device interrupt. It also ends a
 * batch after any NET_RX_SLICE frames once the tail has work due (net_set_rx_tail): a
 * collective's next SEND then leaves at most NET_RX_SLICE - 1 frames after the one that
 * completed its RECV, not up to NET_RX_BUDGET - 1 (a 1 MiB chained Ibcast's
 * interrupt-to-SEND median on 2 nodes x 1 CPU went from 613-827 to 128-172 us).
 *
 * Buffers: RX frames are copied from the driver's DMA buffer into a PBUF_POOL pbuf (pools
 * only in interrupt context, never lwIP's heap); lwIP owns the pbuf from netif->input().
 * TX: linkoutput copies the pbuf chain into a driver TX buffer; lwIP keeps its pbuf.
 */
#include <string.h>
#include "net_internal.h"
#include "drivers/vnet.h"
/* Two x86 headers, for what the kernel has no arch-neutral header for yet: the NIC's
 * vector number and irq_register() (trap.h), and the TSC the interrupt entry stamped
 * (percpu.h: irq_entry_tsc, the start of the interrupt-to-callback latency). This file is
 * the glue of a board with a PCI virtio NIC on an x86 machine. */
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "kernel/bootinfo.h"
#include "kernel/smp.h"
#include "kernel/fmt.h"
#include "kernel/timer.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#include "lwip_port.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/net_prof.h"
#include "uk/time.h"

#define NET_RX_CPU      0   /* the CPU the NIC interrupts (and its self-IPI) go to */
#define NET_RX_BUDGET   64  /* frames per interrupt before yielding (self-IPI) */
#define NET_RX_SLICE    4   /* frames between two looks at the tail's due() */
#define NET_TIMER_HZ    100 /* sys_check_timeouts() rate; CPU 0 ticks at least this fast */
#define NET_LAT_SAMPLES 4096

static struct netif net_if;
static struct net_node net_self;
static int net_is_up;
/* TSC at entry of the RX interrupt being served (under the lwIP lock); 0 otherwise. */
static uint64_t net_rx_entry;
/* The same, kept for the whole service of the interrupt, and the CPU serving it
 * (net_rx_irq_entry: a reader on another CPU must not take it for its own). */
static uint64_t net_rx_cur;
static volatile int net_rx_cpu = -1;
static void (*net_rx_tail)(void);
static int (*net_rx_due)(void);
static net_frame_hook_fn net_frame_hook;
static uint64_t net_lat[NET_LAT_SAMPLES];
static uint64_t net_lat_count;

/* Under the lwIP lock (any context): a driver TX buffer for a frame of len bytes, to fill
 * and vnet_tx_commit; NULL if the ring is full or the frame longer than a buffer. */
static uint8_t *net_tx_begin(size_t len)
{
    size_t cap;
    uint8_t *buf = vnet_tx_buf(&cap);
    if (buf && len > cap) {
        vnet_tx_cancel(buf); /* cannot happen for lwIP's frames (MTU 1500) */
        return 0;
    }
    return buf;
}

/* Under the lwIP lock (any context): one frame out. lwIP keeps `p`. */
static err_t net_linkoutput(struct netif *nif, struct pbuf *p)
{
    uint8_t *buf = net_tx_begin(p->tot_len);
    if (!buf)
        return ERR_MEM;
    net_prof_mark(NP_LINKOUT, 0);
    pbuf_copy_partial(p, buf, p->tot_len, 0);
    vnet_tx_commit(buf, p->tot_len);
    net_prof_mark(NP_KICKED, 0);
    return ERR_OK;
}

/* Under the lwIP lock: netif_add() callback. */
static err_t net_netif_init(struct netif *nif)
{
    nif->name[0] = 'v';
    nif->name[1] = 'n';
    nif->output = etharp_output;
    nif->linkoutput = net_linkoutput;
    nif->mtu = 1500;
    nif->hwaddr_len = 6;
    memcpy(nif->hwaddr, vnet_mac(), 6);
    nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    return ERR_OK;
}

/* Interrupt context, lwIP lock held: one good frame from the driver (copied out). */
static int net_rx_frame(void *arg, const uint8_t *frame, size_t len)
{
    net_frame_hook_fn hook = net_frame_hook;
    net_prof_mark(NP_FRAME, 0);
    if (hook && hook(frame, len))
        return 0;
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    if (!p)
        return -1;
    pbuf_take(p, frame, (u16_t)len);
    if (net_if.input(p, &net_if) != ERR_OK)
        pbuf_free(p);
    return 0;
}

/* Interrupt context, lwIP lock held: up to NET_RX_BUDGET frames into lwIP, fewer once the
 * tail has work due (the file comment). *more: frames remain. */
static void net_rx_batch(int *more)
{
    int n = 0;
    do
        n += vnet_rx_service(NET_RX_SLICE, net_rx_frame, 0, more);
    while (*more && n < NET_RX_BUDGET && !(net_rx_due && net_rx_due()));
}

/* Interrupt context (the RX vector, or our own self-IPI on it). */
static void net_rx_irq(struct trapframe *tf)
{
    uint64_t entry = this_cpu()->irq_entry_tsc;
    int more;
    net_prof_mark(NP_IRQ, entry);
    vnet_irq_ack();
    if (!net_is_up)
        return; /* before the netif exists: the first timer tick drains the ring */
    lwip_lock();
    net_prof_mark(NP_LOCKED, 0);
    net_rx_entry = net_rx_cur = entry;
    net_rx_cpu = cpu_id();
    net_rx_batch(&more);
    net_rx_cpu = -1;
    net_rx_entry = net_rx_cur = 0;
    lwip_unlock();
    if (net_rx_tail)
        net_rx_tail();
    net_prof_mark(NP_IRQ_DONE, 0);
    if (more) /* delivered after our EOI, behind anything already pending */
        ipi_send(cpu_id(), VEC_VNET_RX);
}

/* Interrupt context (LAPIC timer), on every CPU whose timer ticks. lwIP's timers run on
 * whichever ticking CPU first claims each NET_TIMER_HZ period (a compare-and-swap on the
 * period's start), so they keep running if some code stops CPU 0's timer (the demo does,
 * the scheduler's slices use the same timer). Also drains the RX ring in case an
 * interrupt was lost (one index compare when there is nothing). */
static void net_timer_tick(int cpu)
{
    static uint64_t last_ns;
    int more;
    if (!net_is_up)
        return;
    uint64_t now = time_ns(), last = __atomic_load_n(&last_ns, __ATOMIC_RELAXED);
    if (now - last < 1000000000u / NET_TIMER_HZ ||
        !__atomic_compare_exchange_n(&last_ns, &last, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return;
    lwip_lock();
    sys_check_timeouts();
    netif_poll_all(); /* the loopback netif's queue */
    net_rx_batch(&more);
    lwip_unlock();
    if (net_rx_tail)
        net_rx_tail();
    if (more) /* continue on the CPU that owns the NIC vector */
        ipi_send(NET_RX_CPU, VEC_VNET_RX);
}

/* Task context; see uk/net.h. */
int net_tx_drained(void)
{
    if (!net_is_up)
        return 1;
    lwip_lock();
    int r = vnet_tx_drained();
    lwip_unlock();
    return r;
}

/* Boot, once. */
int net_init(void)
{
    if (net_is_up)
        return 0;
    /* The handler first: the device may interrupt as soon as it sees the RX ring. */
    irq_register(VEC_VNET_RX, net_rx_irq);
    if (vnet_init(VEC_VNET_RX, NET_RX_CPU) != 0)
        return -1;
    if (net_node_parse(&net_self) != 0)
        return -2;
    ksock_default_timeout_ms = (uint32_t)cmdline_get_u64("ksock_timeout_ms", 10000);
    lwip_port_init();
    ip4_addr_t ip, mask, gw;
    ip4_addr_set_u32(&ip, lwip_htonl(net_self.ip));
    ip4_addr_set_u32(&mask, lwip_htonl(net_self.mask));
    ip4_addr_set_u32(&gw, lwip_htonl(net_self.gw)); /* 0: no default route */
    lwip_lock();
    struct netif *ok = netif_add(&net_if, &ip, &mask, &gw, 0, net_netif_init, ethernet_input);
    if (ok) {
        netif_set_default(&net_if);
        netif_set_link_up(&net_if);
        netif_set_up(&net_if);
    }
    lwip_unlock();
    if (!ok) {
        kprintf("net: netif_add failed\n");
        return -2;
    }
    net_is_up = 1;
    timer_add_hook(net_timer_tick);
    if (cpu_id() == 0)
        timer_start_periodic(NET_TIMER_HZ);
    const uint8_t *m = vnet_mac();
    uint32_t a = net_self.ip;
    kprintf("net: node %d/%d ip %u.%u.%u.%u mac %02x:%02x:%02x:%02x:%02x:%02x (%s)\n", net_self.id,
            net_self.nodes, a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, m[0], m[1], m[2],
            m[3], m[4], m[5], vnet_transport());
    a = lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(&net_if))); /* lwIP's own: what it routes by */
    if (a)
        kprintf("net: gateway %u.%u.%u.%u\n", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
    return 0;
}

/* Any context. */
int net_up(void)
{
    return net_is_up;
}

/* Any context after net_init(): this node's identity (read-only). */
const struct net_node *net_node(void)
{
    return &net_self;
}

/* Any context (called from the tcp_recv callback under the lwIP lock). */
uint64_t net_rx_irq_entry_take(void)
{
    uint64_t e = net_rx_entry;
    net_rx_entry = 0;
    return e;
}

/* Any context. */
uint64_t net_rx_irq_entry(void)
{
    return net_rx_cpu == cpu_id() ? net_rx_cur : 0;
}

/* Boot or task context; see uk/net.h. */
void net_set_rx_tail(void (*fn)(void), int (*due)(void))
{
    net_rx_tail = fn;
    net_rx_due = due;
}

/* Boot or task context; see uk/net.h. */
void net_set_frame_hook(net_frame_hook_fn fn)
{
    net_frame_hook = fn;
}

/* Under the lwIP lock; see uk/net.h. */
int net_frame_send_locked(const uint8_t *frame, size_t len)
{
    uint8_t *buf = net_tx_begin(len);
    if (!buf)
        return -1;
    memcpy(buf, frame, len);
    vnet_tx_commit(buf, len);
    return 0;
}

/* Task context; see uk/net.h. */
int net_frame_send(const uint8_t *frame, size_t len)
{
    if (!net_is_up)
        return -1;
    lwip_lock();
    int r = net_frame_send_locked(frame, len);
    lwip_unlock();
    return r;
}

/* Any context under the lwIP lock (ksock's recv path). */
void net_latency_record(uint64_t cycles)
{
    net_lat[net_lat_count++ % NET_LAT_SAMPLES] = cycles;
}

/* Task context. Sorts a copy of the samples (insertion into a histogram would do too). */
void net_latency_summary(uint64_t *count, uint64_t *min, uint64_t *median)
{
    static uint64_t s[NET_LAT_SAMPLES];
    lwip_lock();
    uint64_t n = net_lat_count < NET_LAT_SAMPLES ? net_lat_count : NET_LAT_SAMPLES;
    memcpy(s, net_lat, n * sizeof s[0]);
    *count = net_lat_count;
    lwip_unlock();
    for (uint64_t i = 1; i < n; i++) { /* shell sort would be faster; n <= 4096 */
        uint64_t v = s[i], j = i;
        for (; j > 0 && s[j - 1] > v; j--)
            s[j] = s[j - 1];
        s[j] = v;
    }
    *min = n ? s[0] : 0;
    *median = n ? s[n / 2] : 0;
}

/* Any context (a snapshot of the driver's counters). */
uint64_t net_rx_dropped(void)
{
    const struct vnet_stats *st = vnet_get_stats();
    uint64_t d = 0;
    for (int v = 1; v < VNET_DROP_NKINDS; v++)
        d += st->rx_dropped[v];
    return d;
}

/* Any context (kprintf only; the counters are read without the lock: a snapshot). */
void net_print_stats(const char *prefix)
{
    const struct vnet_stats *st = vnet_get_stats();
    char drops[256];
    size_t o = 0;
    for (int v = 1; v < VNET_DROP_NKINDS; v++)
        if (st->rx_dropped[v] && o < sizeof drops)
            o += kformat(drops + o, sizeof drops - o, "%s%s %lu", o ? ", " : "",
                         vnet_verdict_name(v), st->rx_dropped[v]);
    kprintf("%s: rx %lu tx %lu dropped %lu (%s) nomem %lu tx_full %lu irqs %lu over_budget "
            "%lu bad_used %lu\n",
            prefix, st->rx_frames, st->tx_frames, net_rx_dropped(), o ? drops : "none",
            st->rx_nomem, st->tx_ring_full, st->irqs, st->rx_rounds_over_budget, st->bad_used);
}
