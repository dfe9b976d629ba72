/*
 * ukvnic.c: the hosted board's NIC (boards/hosted): the shared-memory rings that
 * host-kmod/ukload/ukload_vnic.c (Linux's ukvnic0) serves, behind the same interface as
 * virtio-net (vnet.h), so net/uknet/netif_vnet.c runs lwIP on it unchanged. The hosted
 * board builds this file instead of vnet.c (BOARD_NIC in boards/hosted/board.mk).
 *
 * Shared memory (the loader's part of the reserved range, never allocated by us; layout
 * and memory order in ukload_shm.h): struct ukl_vnic and two rings of frame slots.
 *   to_uk     Linux produces, we consume: a slot is Linux's until its `prod` publishes
 *             it, then ours until our `cons` passes it. Each frame is copied into a
 *             private buffer before it is checked or handed on, so neither lwIP nor the
 *             filter reads memory Linux may still rewrite.
 *   to_linux  we produce: vnet_tx_buf() lends the next free slot's frame area to the
 *             caller until vnet_tx_commit() publishes it; from then on it is Linux's until
 *             its `cons` passes it.
 * Notification: Linux sends UKL_VNIC_VECTOR (= VEC_VNET_RX) to our first CPU when we set
 * to_uk's kick. Towards Linux: none when the loader left linux_vector 0 (Linux polls
 * to_linux from a timer); else, after publishing a frame while Linux armed to_linux's
 * kick, linux_vector to APIC id linux_apic (the module's vnic_ipi, ukload_vnic.c).
 */
#include "drivers/vnet.h"
#include "ukload_shm.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/trap.h"
#include "kernel/vmm.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/time.h"
#include <string.h>

_Static_assert(VEC_VNET_RX == UKL_VNIC_VECTOR, "ukload_vnic.c kicks VEC_VNET_RX");
_Static_assert(sizeof(struct ukl_vnic_slot) == UKL_VNIC_SLOT_SIZE, "slot layout");
_Static_assert(UKL_VNIC_END <= UKL_KERNEL_OFF, "the rings lie in the loader's part");

#define UKV_TX_WAIT_US 2000 /* a full to_linux waits this long for Linux's poll */
#define UKV_RX_CPU     0    /* Linux kicks the first CPU */

static struct ukl_vnic *ukv_ctl;
static uint8_t *ukv_to_uk, *ukv_to_linux;
static uint32_t ukv_rx_cons, ukv_tx_prod;         /* our indices: never read back from the ring */
static uint32_t ukv_linux_vector, ukv_linux_apic; /* the loader's, copied at init */
static uint8_t ukv_macaddr[UKL_VNIC_MAC_LEN];
static uint8_t ukv_frame[UKL_VNIC_FRAME_MAX]; /* the private copy of one received frame */
static struct vnet_stats ukv_st;

/* Any context: slot `idx` of `ring`. */
static struct ukl_vnic_slot *ukv_slot(uint8_t *ring, uint32_t idx)
{
    return (struct ukl_vnic_slot *)(ring +
                                    (size_t)(idx & (UKL_VNIC_SLOTS - 1)) * UKL_VNIC_SLOT_SIZE);
}

/* Boot context, once (net_init). Returns -1 when the loader set up no rings. */
int vnet_init(int vector, int cpu)
{
    struct ukl_vnic *c = phys_ptr(HOSTED_BASE + UKL_VNIC_OFF);
    if (vector != UKL_VNIC_VECTOR || cpu != UKV_RX_CPU)
        return -1;
    if (__atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) != UKL_VNIC_MAGIC ||
        c->slots != UKL_VNIC_SLOTS) {
        kprintf("ukvnic: no rings from the loader\n");
        return -1;
    }
    ukv_ctl = c;
    ukv_to_uk = phys_ptr(HOSTED_BASE + UKL_VNIC_TO_UK_OFF);
    ukv_to_linux = phys_ptr(HOSTED_BASE + UKL_VNIC_TO_LINUX_OFF);
    memcpy(ukv_macaddr, c->uk_mac, sizeof ukv_macaddr);
    ukv_linux_vector = c->linux_vector;
    ukv_linux_apic = c->linux_apic;
    if (ukv_linux_vector && (ukv_linux_vector < VEC_EXCEPTIONS || ukv_linux_vector > UINT8_MAX)) {
        kprintf("ukvnic: loader's vector %#x for Linux out of range: no IPIs to Linux\n",
                ukv_linux_vector);
        ukv_linux_vector = 0;
    }
    ukv_rx_cons = 0; /* the loader emptied both rings */
    ukv_tx_prod = 0;
    /* Kicks from now on: the caller registered the vector first. */
    __atomic_store_n(&c->to_uk.kick, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* Any context after vnet_init(): the MAC (driver-owned, 6 bytes). */
const uint8_t *vnet_mac(void)
{
    return ukv_macaddr;
}

/* Any context: how the device is attached, for the boot report. */
const char *vnet_transport(void)
{
    return "ukload shared-memory rings";
}

/* Under the caller's lock: one slot of to_uk, copied out, checked, handed to fn. */
static void ukv_rx_one(struct ukl_vnic_slot *s, vnet_rx_fn fn, void *arg)
{
    uint32_t len = __atomic_load_n(&s->len, __ATOMIC_RELAXED); /* checked on this copy */
    enum vnet_verdict v;
    if (len < UKL_VNIC_FRAME_MIN)
        v = VNET_DROP_RUNT;
    else if (len > UKL_VNIC_FRAME_MAX)
        v = VNET_DROP_OVERSIZE;
    else {
        memcpy(ukv_frame, s->frame, len);
        v = vnet_frame_check(ukv_frame, len, ukv_macaddr);
    }
    if (v != VNET_FRAME_OK) {
        ukv_st.rx_dropped[v]++;
    } else if (fn(arg, ukv_frame, len) != 0) {
        ukv_st.rx_nomem++;
    } else {
        ukv_st.rx_frames++;
        ukv_st.rx_bytes += len;
    }
}

/* Interrupt context (the kick, its self-IPI, or the network timer), under the caller's
 * lock: the only consumer of to_uk. */
int vnet_rx_service(int budget, vnet_rx_fn fn, void *arg, int *more)
{
    struct ukl_vnic_ring *r = &ukv_ctl->to_uk;
    int n = 0;
    *more = 0;
    ukv_st.irqs++;
    __atomic_store_n(&r->kick, 0, __ATOMIC_RELAXED); /* draining: no kicks needed */
    for (;;) {
        uint32_t prod = __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE); /* before its slots */
        if (prod - ukv_rx_cons > UKL_VNIC_SLOTS) {
            ukv_st.bad_used++; /* a broken producer: read nothing, wait for the next kick */
            break;
        }
        while (ukv_rx_cons != prod && n < budget) {
            ukv_rx_one(ukv_slot(ukv_to_uk, ukv_rx_cons), fn, arg);
            ukv_rx_cons++;
            n++;
            /* our copy of the slot before Linux may reuse it */
            __atomic_store_n(&r->cons, ukv_rx_cons, __ATOMIC_RELEASE);
        }
        if (ukv_rx_cons != prod) { /* budget spent: the caller comes back (self-IPI) */
            *more = 1;
            ukv_st.rx_rounds_over_budget++;
            return n;
        }
        __atomic_store_n(&r->kick, 1, __ATOMIC_RELAXED);
        /* Hazard: store (kick) -> load (prod) needs the full fence (ukload_shm.h). */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&r->prod, __ATOMIC_RELAXED) == ukv_rx_cons)
            break;
        __atomic_store_n(&r->kick, 0, __ATOMIC_RELAXED); /* more came: drain again */
    }
    return n;
}

/* Interrupt context, the RX vector: nothing to acknowledge (the kick is a plain IPI);
 * counted, so a test can tell kicked drains from the network timer's. */
void vnet_irq_ack(void)
{
    ukv_st.kicks++;
}

/* Under the caller's lock: to_linux's free slots (0 if Linux's index is impossible). */
static uint32_t ukv_tx_room(void)
{
    uint32_t cons =
        __atomic_load_n(&ukv_ctl->to_linux.cons, __ATOMIC_ACQUIRE); /* its reads first */
    uint32_t used = ukv_tx_prod - cons;
    if (used > UKL_VNIC_SLOTS) {
        ukv_st.bad_used++;
        return 0;
    }
    return UKL_VNIC_SLOTS - used;
}

/* Any context under the caller's lock: has Linux taken every committed frame? */
int vnet_tx_drained(void)
{
    return ukv_tx_room() == UKL_VNIC_SLOTS;
}

/* Any context under the caller's lock: the next free slot's frame area, or NULL. */
uint8_t *vnet_tx_buf(size_t *cap)
{
    if (!ukv_tx_room()) {
        /* Linux drains on its next poll (vnic_poll_us); wait for it rather than drop. */
        uint64_t end = time_ns() + UKV_TX_WAIT_US * 1000ull;
        while (!ukv_tx_room() && time_ns() < end)
            cpu_relax();
        if (!ukv_tx_room()) {
            ukv_st.tx_ring_full++;
            return 0;
        }
    }
    *cap = UKL_VNIC_FRAME_MAX;
    return ukv_slot(ukv_to_linux, ukv_tx_prod)->frame;
}

/* Any context under the caller's lock: nothing was published, the slot stays free. */
void vnet_tx_cancel(uint8_t *frame)
{
    (void)frame;
}

/* Any context under the caller's lock: publish the frame vnet_tx_buf() lent. */
void vnet_tx_commit(uint8_t *frame, size_t len)
{
    struct ukl_vnic_slot *s = ukv_slot(ukv_to_linux, ukv_tx_prod);
    (void)frame;
    s->len = (uint32_t)len;
    ukv_tx_prod++;
    __atomic_store_n(&ukv_ctl->to_linux.prod, ukv_tx_prod, __ATOMIC_RELEASE); /* frame first */
    if (ukv_linux_vector) {
        /* Hazard: store (prod) -> load (kick) needs the full fence (ukload_shm.h). */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        /* Every frame of a burst sends one until Linux's NAPI starts and disarms the
         * kick: the kick is Linux's word, we never clear it. */
        if (__atomic_load_n(&ukv_ctl->to_linux.kick, __ATOMIC_RELAXED))
            lapic_send_ipi(ukv_linux_apic, (int)ukv_linux_vector);
    }
    ukv_st.tx_frames++;
    ukv_st.tx_bytes += len;
}

/* Any context: the counters (read without the lock: a snapshot, not atomic). */
const struct vnet_stats *vnet_get_stats(void)
{
    return &ukv_st;
}
