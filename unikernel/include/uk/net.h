/*
 * net.h: the node's network: identity from the command line, the virtio-net interface
 * under lwIP (driven from the NIC interrupt), statistics.
 *
 * Command line (qemu/uknodes writes it):
 *   node=I nodes=N        this node's index and the job's node count
 *   ip=A.B.C.D            this node's address (default: 10.0.0.(I+1))
 *   mask=A.B.C.D          netmask (default 255.255.255.0)
 *   gw=A.B.C.D            the router for every address off our subnet (lwIP's netif
 *                         gateway; default none): a hosted unikernel's Linux (ukvnic0's
 *                         address), or that Linux's hub address for a VM node reaching it
 *   peers=IP0,IP1,...     addresses of nodes 0..N-1; default rule: node j is the address
 *                         of this node minus I plus j (consecutive addresses)
 */
#ifndef UK_NET_H
#define UK_NET_H
#include <stddef.h>
#include <stdint.h>

#define NET_MAX_NODES 64

/* Any context: parse "A.B.C.D" into host byte order (*end: the first byte after it, if
 * end is given). 0, or -1 if malformed. */
int net_parse_ip(const char *s, uint32_t *out, const char **end);

struct net_node {
    int id, nodes;
    uint32_t ip, mask;               /* host byte order */
    uint32_t gw;                     /* gw=: the router off our subnet; 0 = none */
    uint32_t peer_ip[NET_MAX_NODES]; /* host byte order */
};

/* Boot (after SMP), once. Finds the NIC; if there is one, brings up lwIP on it with the
 * identity from the command line, routes its interrupt to the boot CPU and starts lwIP's
 * timers on the boot CPU's LAPIC timer. Returns 0, -1 if there is no NIC (silently: most
 * tests have none), -2 on a bad command line or driver failure (printed). */
int net_init(void);
/* Any context. 1 once net_init() brought the interface up. */
int net_up(void);
/* Task context: 1 when the NIC has sent every frame lwIP handed it (before powering off:
 * frames still in the TX ring die with the machine). */
int net_tx_drained(void);
/* Any context after net_init(). */
const struct net_node *net_node(void);

/* Any context. Print the driver's and the RX path's counters as one line
 * "net: rx N tx N drops K (runt a, ...) nomem n irqs i over_budget o". */
void net_print_stats(const char *prefix);
/* Any context. Total frames the RX filter dropped (every verdict). */
uint64_t net_rx_dropped(void);

/* Interrupt-to-callback latency: TSC cycles from the entry of the NIC interrupt to the
 * first tcp_recv callback it runs (ksock records them). Task context: summary. */
void net_latency_record(uint64_t cycles);
void net_latency_summary(uint64_t *count, uint64_t *min, uint64_t *median);
/* Any context: the TSC at entry of the NIC interrupt being served on this CPU, or 0 when
 * the caller is not inside one (or its first callback already took the sample). */
uint64_t net_rx_irq_entry_take(void);
/* Any context: the same without taking it (0 unless this CPU is inside that interrupt). */
uint64_t net_rx_irq_entry(void);
/* Boot or task context: fn runs at the end of every NIC interrupt and timer tick that
 * served the network, in interrupt context after lwIP's lock is released (the MPI engine
 * progresses collectives there). `due`, if not NULL, is asked between slices of an
 * interrupt's frames (interrupt context, lwIP's lock held: it must not take it); 1 ends
 * the batch there, fn runs at once and the rest of the frames follow by self-IPI, so that
 * what a frame made ready waits for a few frames after it, not a whole batch. One hook;
 * NULL removes it. */
void net_set_rx_tail(void (*fn)(void), int (*due)(void));

/* Frames below lwIP, for what must not pay for a protocol stack (the raw frame echo that
 * is the floor of cross-node latency in `make bench`: tests/uk/l2_echo.c). The hook sees
 * every frame that passed the driver's filter (vnet_frame.h), in the NIC interrupt under
 * the lwIP lock, before lwIP does; it returns 1 if it took the frame (lwIP never sees it),
 * 0 to pass it on. `frame` is the driver's copy, valid during the call only. One hook; NULL
 * removes it. Boot or task context. */
typedef int (*net_frame_hook_fn)(const uint8_t *frame, size_t len);
void net_set_frame_hook(net_frame_hook_fn fn);
/* One frame (Ethernet header first, no FCS, at most 1514 bytes) out of the NIC, copied.
 * net_frame_send: task context (takes the lwIP lock); net_frame_send_locked: under it (a
 * frame hook). 0, or -1 if the TX ring is full or the frame too long. */
int net_frame_send(const uint8_t *frame, size_t len);
int net_frame_send_locked(const uint8_t *frame, size_t len);

#endif
