/*
 * vnic_victim.c: the unikernel's end of a hostile Linux (the ukload suite's vnicvictim
 * case, tests/kmod/ukload-init; the hostile writer tests/kmod/vnicevil.c, through
 * /dev/mem on the rings of host-kmod/ukload/ukload_shm.h). Says "vnic_victim: ready" once
 * its frame hook is in, then waits for VV_GOOD marker frames (IPv4/UDP broadcasts to port
 * VV_PORT: [seq u32 LE] after the UDP header, seq 1..VV_GOOD), taken in the NIC interrupt
 * before lwIP. Meanwhile vnicevil publishes impossible lengths and an impossible producer
 * index: the driver (unikernel/drivers/ukvnic.c) must count them (runt, oversize, bad_used)
 * and deliver every good frame, in order.
 * Exit: 0 good; 5 no network; 6 good frames missing or out of order, or a bad entry not
 * counted; 7 a poison frame (behind a bad length) was delivered.
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

#define VV_PORT     5005
#define VV_GOOD     4
#define VV_POISON   0xdeadu
#define VV_SEQ_OFF  (14 + 20 + 8) /* Ethernet, IPv4, UDP headers */
#define VV_MIN_RUNT 2             /* vnicevil's lengths 0 and 13 */
#define VV_MIN_OVER 2             /* vnicevil's lengths 1515 and ~0 */
#define NS_PER_MS   1000000ull

/* Written by the hook (NIC interrupt), read by the task. */
static volatile uint32_t vv_next = 1; /* the seq expected next */
static volatile int vv_disorder, vv_poison;

/* NIC interrupt, lwIP lock held: takes the marker frames, in order. */
static int vv_hook(const uint8_t *f, size_t len)
{
    if (len < VV_SEQ_OFF + 4 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 17 ||
        (f[14 + 20 + 2] << 8 | f[14 + 20 + 3]) != VV_PORT)
        return 0;
    uint32_t seq;
    memcpy(&seq, f + VV_SEQ_OFF, 4);
    if (seq == VV_POISON)
        vv_poison = 1;
    else if (seq != vv_next)
        vv_disorder = 1;
    else
        vv_next = seq + 1;
    return 1;
}

/* Task context (the ktest runner). */
KTEST(vnic_victim)
{
    if (!net_up()) {
        kprintf("vnic_victim: no network\n");
        return 5;
    }
    net_set_frame_hook(vv_hook);
    kprintf("vnic_victim: ready\n");
    uint64_t end = time_ns() + cmdline_get_u64("victim_wait_ms", 30000) * NS_PER_MS;
    while (vv_next <= VV_GOOD && !vv_disorder && !vv_poison && time_ns() < end)
        halt(); /* the network tick drains the ring: Linux sends no kick here */
    const struct vnet_stats *st = vnet_get_stats();
    uint64_t runt = st->rx_dropped[VNET_DROP_RUNT], over = st->rx_dropped[VNET_DROP_OVERSIZE];
    kprintf("vnic_victim: %u good frames in order; dropped %lu runt, %lu oversize, %lu bad "
            "producer indices\n",
            vv_next - 1, runt, over, st->bad_used);
    if (vv_poison)
        return 7;
    if (vv_disorder || vv_next <= VV_GOOD || runt < VV_MIN_RUNT || over < VV_MIN_OVER ||
        st->bad_used < 1)
        return 6;
    return 0;
}
