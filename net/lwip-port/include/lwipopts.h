/*
 * lwipopts.h: how lwIP 2.1.3 is configured for the unikernel (and for its host test).
 *
 * Model (docs/architecture.md §3.6): lwIP runs without an OS layer (NO_SYS) and is entered
 * from the NIC interrupt, from ranks sending, and from the timer poll, always under the one
 * lwIP lock (lwip_lock(): interrupts masked on this CPU + a spinlock). So lwIP itself needs
 * no threads, no mailboxes and no semaphores, and its allocators must never sleep or call
 * newlib's malloc (which is not interrupt safe).
 *
 * Every option: what it does, lwIP's default, why we chose this value, what goes wrong if
 * it is changed carelessly.
 */
#ifndef LWIP_LWIPOPTS_H
#define LWIP_LWIPOPTS_H

/* ---- Operating-system integration ---------------------------------------------------- */

/* No OS layer: only the raw (callback) API; timers run when someone calls
 * sys_check_timeouts(). Default 0. Danger: with 0, lwIP wants threads, mailboxes and
 * semaphores from sys_arch, which the kernel does not provide in interrupt context. */
#define NO_SYS 1

/* Netconn and socket APIs need NO_SYS=0 (a tcpip thread). Defaults 1. Danger: turning
 * either on with NO_SYS=1 is a compile error in lwIP's sanity checks. */
#define LWIP_NETCONN 0
#define LWIP_SOCKET  0

/* lwIP guards its pools and pbuf reference counts with SYS_ARCH_PROTECT, implemented by
 * sys_arch_protect() (lwip_port.c: interrupts off + a recursive spinlock). Default 0.
 * Danger: with 0, a pbuf freed on one CPU while another allocates from the same pool
 * corrupts the pool's free list. */
#define SYS_LIGHTWEIGHT_PROT 1

/* Every raw-API entry point checks that the caller holds the lwIP lock. Default: no check.
 * Danger: removing it lets a missing lwip_lock() corrupt TCP state silently and rarely. */
void lwip_port_assert_core_locked(void);
#define LWIP_ASSERT_CORE_LOCKED() lwip_port_assert_core_locked()

/* lwIP's own timers (TCP fast/slow timers, ARP aging, IP reassembly). Default 1.
 * Danger: with 0 TCP never retransmits. */
#define LWIP_TIMERS 1

/* ---- Memory ------------------------------------------------------------------------- */

/* Alignment of everything lwIP allocates. Default 1. 8 suits x86_64 (u64 fields, and
 * virtio descriptors pointing into pbufs). Danger: too small gives misaligned structures. */
#define MEM_ALIGNMENT 8

/* lwIP's heap (PBUF_RAM: copied TCP send data, loopback copies) is lwIP's own allocator in
 * a static array, not newlib's malloc. Default 0 (lwIP's own). Danger: 1 would call
 * newlib's malloc under the lwIP lock, possibly in interrupt context: deadlock. */
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 0

/* Size of that heap. Default 1600 bytes. It holds the copies of unacknowledged send data
 * (TCP_SND_BUF per connection being filled) and, with the loopback netif, the in-flight
 * packets. Danger: too small makes tcp_write() fail with ERR_MEM under load; it is
 * static .bss, so every byte is paid by every image. */
#define MEM_SIZE (4 * 1024 * 1024)

/* Pool of RX buffers (PBUF_POOL), what the NIC interrupt allocates from. Default 16
 * buffers. 1024 buffers of PBUF_POOL_BUFSIZE (default: one full Ethernet frame) let several
 * connections each have a full receive window in flight. Danger: if the pool is smaller
 * than the advertised windows, a burst drops frames and TCP falls back to retransmission
 * timeouts (hundreds of ms). */
#define PBUF_POOL_SIZE 1024

/* pbufs that point at caller memory (PBUF_REF/ROM, zero-copy tcp_write without
 * TCP_WRITE_FLAG_COPY). Default 16. Danger: too few makes zero-copy sends fail with
 * ERR_MEM. */
#define MEMP_NUM_PBUF 512

/* Connection control blocks. Defaults 5 TCP, 8 listening, 4 UDP. An MPI job keeps one TCP
 * connection per peer node plus the relay. Danger: exhausting them makes tcp_new() return
 * NULL (no connection), not an error the peer sees. */
#define MEMP_NUM_TCP_PCB        64
#define MEMP_NUM_TCP_PCB_LISTEN 8
#define MEMP_NUM_UDP_PCB        8

/* Queued TCP segments, shared by all connections. Default 16. Must cover TCP_SND_QUEUELEN
 * for every connection sending at once. Danger: too few gives ERR_MEM from tcp_write. */
#define MEMP_NUM_TCP_SEG 2048

/* Timers that can be pending at once. Default: what the enabled protocols need. We add
 * room for the kernel's own sys_timeout() users. Danger: too few makes sys_timeout() fail
 * an assertion. */
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 8)

/* ---- Protocols ---------------------------------------------------------------------- */

#define LWIP_IPV4     1 /* default 1 */
#define LWIP_IPV6     0 /* default 0; the cluster network is IPv4 */
#define LWIP_ARP      1 /* default 1; needed on Ethernet */
#define LWIP_ETHERNET 1 /* default: LWIP_ARP; netif/ethernet.c */
#define LWIP_ICMP     1 /* default 1; answers ping, useful for bring-up */
#define LWIP_RAW      0 /* default 0; no raw IP sockets */
#define LWIP_UDP      1 /* default 1 */
#define LWIP_TCP      1 /* default 1 */
#define LWIP_DHCP     0 /* default 0; addresses are static (from the command line) */
#define LWIP_AUTOIP   0 /* default 0 */
#define LWIP_IGMP     0 /* default 0 */
#define LWIP_DNS      0 /* default 0; peers are given by address */

/* IP fragment reassembly and fragmentation. Defaults 1. TCP never fragments (MSS fits the
 * MTU), but UDP from the relay might. Danger: reassembly buffers come from the pbuf pool;
 * many fragmented datagrams at once starve TCP of RX buffers. */
#define IP_REASSEMBLY 1
#define IP_FRAG       1

/* ---- TCP, tuned for bulk MPI transfers ---------------------------------------------- */

/* Maximum segment size: a full 1500-byte Ethernet MTU minus IP and TCP headers. Default
 * 536 (safe for any path). Danger: larger than the path MTU allows and segments are dropped
 * (we never leave the private L2 network, so 1460 is right). */
#define TCP_MSS 1460

/* Window scaling (RFC 7323), so the receive window can exceed 64 KiB. Default off. The
 * window we advertise is TCP_WND >> TCP_RCV_SCALE in the 16-bit header field. Danger:
 * TCP_WND must fit in 0xffff << TCP_RCV_SCALE, and a peer that does not scale sees at most
 * 64 KiB. */
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE  3

/* Receive window: 256 KiB (default 4 * TCP_MSS). A MB-sized MPI message then streams at
 * wire speed over the ~1 ms round trips of a VM network. Danger: the pbuf pool must be able
 * to hold a full window (PBUF_POOL_SIZE * frame size), or a burst drops frames. */
#define TCP_WND (256 * 1024)

/* Send buffer: how many bytes one connection may have queued but unacknowledged. Default
 * 2 * TCP_MSS. 256 KiB matches the peer's window. Danger: every connection may use this
 * much of MEM_SIZE (copied sends) at once. */
#define TCP_SND_BUF (256 * 1024)

/* Segments one connection may queue. Default (4 * TCP_SND_BUF / TCP_MSS). lwIP requires at
 * least 2 * TCP_SND_BUF / TCP_MSS and at most 0xffff. Danger: must not exceed
 * MEMP_NUM_TCP_SEG, which all connections share. */
#define TCP_SND_QUEUELEN (4 * TCP_SND_BUF / TCP_MSS)

/* tcp_sndbuf() level above which lwIP reports the connection writable again (the
 * tcp_sent/poll callbacks). Default: half of TCP_SND_BUF, but lwIP keeps this field 16-bit
 * even with window scaling and refuses anything within 4 * MSS of 64 KiB. Danger: too low
 * and a sender wakes for every few segments; too high is a compile error. */
#define TCP_SNDLOWAT (32 * 1024)

/* Keep out-of-order segments instead of dropping them. Default 1 (when TCP is on). Danger:
 * with 0, one lost frame costs a whole window of retransmissions. */
#define TCP_QUEUE_OOSEQ 1

/* Send-side coalescing: tcp_write() may extend the last queued segment up to TCP_MSS.
 * Default TCP_MSS. Danger: none known; 0 sends one segment per tcp_write() call. */
#define TCP_OVERSIZE TCP_MSS

/* ---- Network interfaces ------------------------------------------------------------- */

/* The 127.0.0.1 loopback interface, created by lwip_init(). Default 0. Used by the tests
 * (TCP echo over loopback) and harmless otherwise. */
#define LWIP_HAVE_LOOPIF        1
#define LWIP_NETIF_LOOPBACK     1
/* Loopback packets are queued and delivered by netif_poll_all(), which the caller runs
 * under the lwIP lock. Default 0 = no limit. Danger: unbounded, a fast sender can fill
 * MEM_SIZE with looped packets before anyone polls. */
#define LWIP_LOOPBACK_MAX_PBUFS 0

/* Let netifs remember their state/name. Default 0. Useful for the driver's callbacks. */
#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK   1

/* ---- Checksums ---------------------------------------------------------------------- */

/* Generate and check every IP/TCP/UDP/ICMP checksum in software. Defaults 1. Danger:
 * turning checking off trusts the NIC; virtio-net without checksum offload negotiated
 * delivers frames unchecked, so corruption would reach MPI buffers. */
#define CHECKSUM_GEN_IP     1
#define CHECKSUM_GEN_UDP    1
#define CHECKSUM_GEN_TCP    1
#define CHECKSUM_GEN_ICMP   1
#define CHECKSUM_CHECK_IP   1
#define CHECKSUM_CHECK_UDP  1
#define CHECKSUM_CHECK_TCP  1
#define CHECKSUM_CHECK_ICMP 1

/* The checksum routine: ours, 8 bytes per addition (net/lwip-port/lwip_chksum.c). Default
 * lwIP's LWIP_CHKSUM_ALGORITHM 2, 2 bytes per step: under TCG about twice as long. */
unsigned short uk_chksum(const void *data, int len);
#define LWIP_CHKSUM uk_chksum

/* ---- Diagnostics -------------------------------------------------------------------- */

/* Statistics counters. Default 1. Off: they are global counters updated without atomics,
 * and nothing reads them yet. Turn on (with LWIP_STATS_DISPLAY) when debugging drops. */
#define LWIP_STATS 0

/* Debug output, routed to LWIP_PLATFORM_DIAG (kprintf). Default off. Turn on per module
 * (e.g. TCP_DEBUG LWIP_DBG_ON) when debugging; it prints from interrupt context. */
#define LWIP_DEBUG_TIMERNAMES 0

#endif
