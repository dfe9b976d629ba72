/*
 * vnic_hostile.c: a hostile peer on ukvnic0's rings (the ukload suite's vnichostile case,
 * tests/kmod/ukload-init; rings: host-kmod/ukload/ukload_shm.h). Hosted board only. It
 * publishes what a broken or malicious unikernel could, then good frames, so that Linux
 * (host-kmod/ukload/ukload_vnic.c) must drop every bad entry with a counter and deliver
 * every good one intact:
 *   1. ARP requests to Linux (hostile_to=A.B.C.D) until it answers: its address is up.
 *   2. to_linux: five impossible lengths (0, 13, 1515, the slot's size, ~0), each slot's
 *      bytes a "poison" datagram, interleaved with good datagrams 1..5.
 *   3. to_linux's producer index moved more than a ring ahead, then one behind Linux's
 *      consumer index, each held HV_HOLD_US, then put back.
 *   4. good datagrams 6..8 (one of them a full 1514-byte frame).
 *   5. to_uk's consumer index moved more than a ring ahead while an ARP request makes
 *      Linux answer (its send must be refused), then put back.
 *   6. ARP requests again until Linux answers: both directions work after all this.
 * Good datagrams go to UDP port hostile_port= (5004) on Linux: [seq u32 LE][bytes
 * hv_byte(seq, i)], seq 1..HV_GOOD; tests/kmod/vnicpeer.c -u checks them. Poison datagrams
 * carry seq HV_POISON.
 * Exit: 0 done; 5 not the hosted board, no network or no hostile_to=; 6 Linux never
 * answered an ARP request (before or after); 7 a frame could not be published.
 */
#include <string.h>
#include "drivers/vnet.h"
#include "drivers/vnet_frame.h"
#include "kernel/bootinfo.h"
#include "lwip_port.h"
#include "uk/console.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#ifdef BOARD_HOSTED /* everything but the test's refusal: the rings are the hosted board's */
#include "kernel/vmm.h"
#include "ukload_shm.h"

#define HV_PORT_DEFAULT 5004
#define HV_GOOD         8       /* good datagrams, seq 1..HV_GOOD */
#define HV_POISON       0xdeadu /* the seq of the bytes behind a bad length */
#define HV_ETH          14
#define HV_IP           20
#define HV_UDP          8
#define HV_HDRS         (HV_ETH + HV_IP + HV_UDP)
#define HV_PAYLOAD_MAX  (VNET_MAX_FRAME - HV_HDRS) /* 1472: a full frame */
#define HV_ARP_LEN      42                         /* Ethernet + ARP for IPv4 */
#define HV_ARP_RETRY_US 100000u
#define HV_ARP_TRIES    300     /* 30 s: Linux brings ukvnic0 up after the boot */
#define HV_HOLD_US      200000u /* a bad index stays this long: Linux polls every 100 us */
#define HV_DRAIN_US     2000000u
#define HV_SLOT_SIZE    UKL_VNIC_SLOT_SIZE /* a length beyond the slot */

/* Payload sizes of the good datagrams 1..HV_GOOD (at least the 4-byte seq). */
static const uint16_t hv_sizes[HV_GOOD] = {4,   100, 1000, HV_PAYLOAD_MAX, 18, HV_PAYLOAD_MAX,
                                           500, 4};
/* The lengths published for bad entries, one before each of good datagrams 1..5. */
static const uint32_t hv_bad_lens[] = {0, HV_ETH - 1, VNET_MAX_FRAME + 1, HV_SLOT_SIZE,
                                       0xffffffffu};

/* Written by the frame hook (NIC interrupt), read by the task. */
static volatile int hv_answers;
static uint8_t hv_linux_mac[6];
static uint32_t hv_linux_ip;

/* Any context: the pattern of good datagram seq's byte i (vnicpeer.c's hv_byte). */
static uint8_t hv_byte(uint32_t seq, uint32_t i)
{
    return (uint8_t)(i * 11u + seq * 29u + (i >> 8));
}

/* Any context: a at p, most significant byte first. */
static void hv_put_be(uint8_t *p, uint32_t a, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(a >> (8 * (bytes - 1 - i)));
}

/* NIC interrupt, lwIP lock held: notes Linux's ARP answers (lwIP sees them too). */
static int hv_hook(const uint8_t *f, size_t len)
{
    if (len >= HV_ARP_LEN && f[12] == 0x08 && f[13] == 0x06 && f[21] == 2 &&
        (uint32_t)(f[28] << 24 | f[29] << 16 | f[30] << 8 | f[31]) == hv_linux_ip) {
        memcpy(hv_linux_mac, f + 22, 6);
        hv_answers++;
    }
    return 0;
}

/* Task context: an ARP request for Linux's address into f (HV_ARP_LEN bytes). */
static void hv_arp_request(uint8_t *f)
{
    memset(f, 0, HV_ARP_LEN);
    memset(f, 0xff, 6);
    memcpy(f + 6, vnet_mac(), 6);
    f[12] = 0x08, f[13] = 0x06;
    f[15] = 1;               /* Ethernet */
    f[16] = 0x08, f[17] = 0; /* IPv4 */
    f[18] = 6, f[19] = 4;    /* address lengths */
    f[21] = 1;               /* request */
    memcpy(f + 22, vnet_mac(), 6);
    hv_put_be(f + 28, net_node()->ip, 4);
    hv_put_be(f + 38, hv_linux_ip, 4);
}

/* Task context: ARP requests until Linux answers one more time; 0, or -1 after tries. */
static int hv_wait_answer(int tries)
{
    uint8_t f[HV_ARP_LEN];
    int seen = hv_answers;
    hv_arp_request(f);
    for (int i = 0; i < tries && hv_answers == seen; i++) {
        net_frame_send(f, HV_ARP_LEN);
        udelay(HV_ARP_RETRY_US);
    }
    return hv_answers == seen ? -1 : 0;
}

/* Task context: datagram seq with `size` payload bytes to Linux into f; its length. */
static size_t hv_datagram(uint8_t *f, uint32_t seq, uint32_t size, uint16_t port)
{
    size_t len = HV_HDRS + size;
    memset(f, 0, HV_HDRS);
    memcpy(f, hv_linux_mac, 6);
    memcpy(f + 6, vnet_mac(), 6);
    f[12] = 0x08;
    uint8_t *ip = f + HV_ETH;
    ip[0] = 0x45;
    hv_put_be(ip + 2, HV_IP + HV_UDP + size, 2);
    ip[8] = 64;
    ip[9] = 17; /* UDP */
    hv_put_be(ip + 12, net_node()->ip, 4);
    hv_put_be(ip + 16, hv_linux_ip, 4);
    hv_put_be(ip + 10, vnet_csum(0, ip, HV_IP), 2);
    uint8_t *udp = ip + HV_IP;
    hv_put_be(udp, port, 2);
    hv_put_be(udp + 2, port, 2);
    hv_put_be(udp + 4, HV_UDP + size, 2); /* checksum 0: none */
    uint8_t *d = udp + HV_UDP;
    memcpy(d, &seq, 4); /* little-endian, as vnicpeer.c reads it */
    for (uint32_t i = 4; i < size; i++)
        d[i] = hv_byte(seq, i);
    return len;
}

/* Task context: a frame into the next to_linux slot, published with length word `word`
 * (not len when the test lies about it). 0, or -1 (no slot). */
static int hv_publish(const uint8_t *f, size_t len, uint32_t word)
{
    size_t cap;
    lwip_lock(); /* the driver's TX path: the one producer */
    uint8_t *buf = vnet_tx_buf(&cap);
    if (buf) {
        memcpy(buf, f, len < cap ? len : cap);
        vnet_tx_commit(buf, word); /* published as given: the driver trusts its callers */
    }
    lwip_unlock();
    return buf ? 0 : -1;
}

/* Task context: every published to_linux frame taken by Linux, at most HV_DRAIN_US. */
static void hv_drain(void)
{
    uint64_t end = time_ns() + HV_DRAIN_US * 1000ull;
    while (time_ns() < end) {
        lwip_lock();
        int done = vnet_tx_drained();
        lwip_unlock();
        if (done)
            return;
        udelay(1000);
    }
}

/* Task context: to_linux's prod set to `bad` (relative to the real one) for HV_HOLD_US,
 * then back. The lwIP lock is held throughout: no real frame is published meanwhile. */
static void hv_jump_prod(struct ukl_vnic *c, int64_t bad)
{
    lwip_lock();
    uint32_t p = __atomic_load_n(&c->to_linux.prod, __ATOMIC_RELAXED);
    __atomic_store_n(&c->to_linux.prod, (uint32_t)(p + bad), __ATOMIC_RELEASE);
    udelay(HV_HOLD_US);
    __atomic_store_n(&c->to_linux.prod, p, __ATOMIC_RELEASE);
    lwip_unlock();
}

/* Task context: to_uk's cons more than a ring ahead while Linux answers an ARP request
 * (it must refuse to send), then back unless the driver consumed a frame meanwhile (then
 * its own store is the right value). */
static void hv_jump_cons(struct ukl_vnic *c)
{
    uint8_t f[HV_ARP_LEN];
    hv_arp_request(f);
    lwip_lock();
    uint32_t real = __atomic_load_n(&c->to_uk.cons, __ATOMIC_RELAXED);
    uint32_t bad = real + UKL_VNIC_SLOTS + 1;
    __atomic_store_n(&c->to_uk.cons, bad, __ATOMIC_RELEASE);
    net_frame_send_locked(f, HV_ARP_LEN);
    lwip_unlock();
    udelay(HV_HOLD_US); /* interrupts on: a frame Linux sent anyway would be taken */
    lwip_lock();
    __atomic_compare_exchange_n(&c->to_uk.cons, &bad, real, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    lwip_unlock();
}
#endif

/* Task context (the ktest runner). */
KTEST(vnic_hostile)
{
#ifndef BOARD_HOSTED
    kprintf("vnic_hostile: the hosted board's rings only (make BOARD=hosted)\n");
    return 5;
#else
    char buf[32];
    struct ukl_vnic *c = phys_ptr(HOSTED_BASE + UKL_VNIC_OFF);
    if (!net_up() || !cmdline_get("hostile_to", buf, sizeof buf) ||
        net_parse_ip(buf, &hv_linux_ip, 0) != 0) {
        kprintf("vnic_hostile: needs the network and hostile_to=LINUX_IP\n");
        return 5;
    }
    uint16_t port = (uint16_t)cmdline_get_u64("hostile_port", HV_PORT_DEFAULT);
    static uint8_t f[VNET_MAX_FRAME];
    net_set_frame_hook(hv_hook);
    if (hv_wait_answer(HV_ARP_TRIES) != 0) {
        kprintf("vnic_hostile: Linux never answered\n");
        return 6;
    }
    uint32_t seq = 1;
    unsigned nbad = sizeof hv_bad_lens / sizeof hv_bad_lens[0];
    for (unsigned i = 0; i < nbad; i++) {
        size_t plen = hv_datagram(f, HV_POISON, HV_PAYLOAD_MAX, port);
        if (hv_publish(f, plen, hv_bad_lens[i]) != 0)
            return 7;
        size_t len = hv_datagram(f, seq, hv_sizes[seq - 1], port);
        if (hv_publish(f, len, (uint32_t)len) != 0)
            return 7;
        seq++;
    }
    hv_drain();
    hv_jump_prod(c, UKL_VNIC_SLOTS + 1); /* ahead by more than the ring */
    hv_drain();
    hv_jump_prod(c, -1); /* behind Linux's consumer index: as far ahead as it gets */
    for (; seq <= HV_GOOD; seq++) {
        size_t len = hv_datagram(f, seq, hv_sizes[seq - 1], port);
        if (hv_publish(f, len, (uint32_t)len) != 0)
            return 7;
    }
    hv_drain();
    hv_jump_cons(c);
    if (hv_wait_answer(HV_ARP_TRIES) != 0) {
        kprintf("vnic_hostile: Linux never answered after the bad consumer index\n");
        return 6;
    }
    kprintf("vnic_hostile: %u bad lengths, 2 producer jumps, %d good datagrams, 1 consumer "
            "jump; Linux answered after all of them\n",
            nbad, HV_GOOD);
    return 0;
#endif
}
