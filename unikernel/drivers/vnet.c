/*
 * vnet.c: virtio-net (virtio 1.x section 5.1) over a virtio transport (virtio.h).
 *
 * Features: only VIRTIO_NET_F_MAC (read the address from config space) and, when offered,
 * VIRTIO_F_ANY_LAYOUT (header and frame in one descriptor, which is what we do). Nothing
 * else: no checksum offload (lwIP checks every checksum), no TSO/GSO, no mergeable RX
 * buffers (so the header is the 10-byte legacy struct virtio_net_hdr), no control queue.
 *
 * DMA regions (all from pmm_alloc_contig(), physically contiguous, never freed; the device
 * sees physical addresses, the driver the direct map):
 *   rx ring   virtq_ring_bytes(rx size): descriptors + avail (driver writes) and used
 *             (device writes). Owner: the driver; device may write used at any time.
 *   tx ring   the same for the TX queue.
 *   rx bufs   rx size x VNET_BUF bytes. A buffer is the device's from virtq_add() until
 *             vnet_rx_service() takes it back; the frame is copied out (into an lwIP pool
 *             pbuf) and the buffer re-queued at once, so lwIP never holds device memory.
 *   tx bufs   tx size x VNET_BUF bytes. Free (driver's) on tx_free[]; from
 *             vnet_tx_commit() the device's until its used entry is reclaimed on the next
 *             send. lwIP's pbufs are copied in, so lwIP never waits for the device.
 */
#include "drivers/vnet.h"
#include "drivers/virtio.h"
#include "drivers/virtq.h"
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/percpu.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/net_prof.h"
#include "uk/time.h"
#include <string.h>

#define VIRTIO_NET_F_MAC    (1u << 5)
#define VIRTIO_F_ANY_LAYOUT (1u << 27)
#define VNET_HDR            10   /* legacy virtio_net_hdr without num_buffers */
#define VNET_BUF            2048 /* header + a full frame, two per page */
#define VNET_RXQ            0
#define VNET_TXQ            1
#define VNET_TX_WAIT_US     1000 /* how long a send waits for a TX descriptor */

static struct virtio_dev vnet_dev;
static struct virtq vnet_rxq, vnet_txq;
static uint8_t *vnet_rxbufs, *vnet_txbufs;
static uint64_t vnet_rxbufs_phys, vnet_txbufs_phys;
static uint16_t vnet_tx_free[VIRTQ_MAX_SIZE];
static int vnet_tx_nfree;
static uint8_t vnet_macaddr[6];
static struct vnet_stats vnet_st;

/* Boot context: allocate and zero `bytes` of contiguous DMA memory. */
static void *vnet_dma_alloc(size_t bytes, uint64_t *phys)
{
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t p = pmm_alloc_contig(pages);
    if (!p)
        return 0;
    *phys = p;
    memset(P2V(p), 0, pages * PAGE_SIZE);
    return P2V(p);
}

/* Boot context: set up queue `qi` with its ring. */
static int vnet_queue_setup(struct virtq *q, int qi, int msix)
{
    uint16_t size = vnet_dev.ops->queue_max(&vnet_dev, qi);
    uint64_t phys;
    if (size == 0 || size > VIRTQ_MAX_SIZE)
        return -1;
    void *mem = vnet_dma_alloc(virtq_ring_bytes(size), &phys);
    if (!mem || virtq_init(q, size, mem) != 0)
        return -1;
    return vnet_dev.ops->queue_enable(&vnet_dev, qi, phys, size, msix);
}

/* Under the caller's lock: give RX buffer `i` back to the device (not yet published). */
static void vnet_rx_post(int i)
{
    virtq_add(&vnet_rxq, vnet_rxbufs_phys + (uint64_t)i * VNET_BUF, VNET_BUF, 1,
              vnet_rxbufs + (size_t)i * VNET_BUF);
}

/* Boot or task context, once. */
int vnet_init(int vector, int cpu)
{
    uint32_t apic_id = percpu[cpu].apic_id;
    struct pci_dev *p = 0;
    pci_init();
    for (int i = 0; i < pci_count() && !p; i++) {
        struct pci_dev *c = pci_get(i);
        /* Transitional virtio-net: device 0x1000 (subsystem id 1 = network). */
        if (c->vendor == 0x1af4 && c->device == 0x1000)
            p = c;
    }
    if (!p || virtio_pci_legacy_probe(p, &vnet_dev, vector, apic_id) != 0)
        return -1;
    const struct virtio_ops *ops = vnet_dev.ops;
    ops->set_status(&vnet_dev, VIRTIO_STATUS_ACK);
    ops->set_status(&vnet_dev, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER);
    uint64_t offered = ops->get_features(&vnet_dev);
    uint64_t want = offered & (VIRTIO_NET_F_MAC | VIRTIO_F_ANY_LAYOUT);
    ops->set_features(&vnet_dev, want);
    if (!(want & VIRTIO_F_ANY_LAYOUT))
        kprintf("vnet: device does not offer ANY_LAYOUT; sending header and frame in one "
                "buffer anyway\n");
    for (int i = 0; i < 6; i++)
        vnet_macaddr[i] =
            (want & VIRTIO_NET_F_MAC) ? ops->config8(&vnet_dev, i) : (uint8_t)(i == 0 ? 0x02 : i);
    if (vnet_queue_setup(&vnet_rxq, VNET_RXQ, vnet_dev.msix ? 0 : VIRTIO_NO_VECTOR) != 0 ||
        vnet_queue_setup(&vnet_txq, VNET_TXQ, VIRTIO_NO_VECTOR) != 0) {
        ops->set_status(&vnet_dev, VIRTIO_STATUS_FAILED);
        kprintf("vnet: queue set-up failed\n");
        return -1;
    }
    vnet_rxbufs = vnet_dma_alloc((size_t)vnet_rxq.size * VNET_BUF, &vnet_rxbufs_phys);
    vnet_txbufs = vnet_dma_alloc((size_t)vnet_txq.size * VNET_BUF, &vnet_txbufs_phys);
    if (!vnet_rxbufs || !vnet_txbufs) {
        ops->set_status(&vnet_dev, VIRTIO_STATUS_FAILED);
        kprintf("vnet: no memory for buffers\n");
        return -1;
    }
    for (int i = 0; i < vnet_rxq.size; i++)
        vnet_rx_post(i);
    for (int i = 0; i < vnet_txq.size; i++)
        vnet_tx_free[vnet_tx_nfree++] = (uint16_t)i;
    /* TX completions are reclaimed on the send path: no TX interrupts at all. */
    virtq_disable_intr(&vnet_txq);
    virtq_publish(&vnet_rxq);
    if (!vnet_dev.msix && p->irq_pin)
        ioapic_route(p->irq_line, vector, apic_id, 1); /* untested: QEMU has MSI-X */
    ops->set_status(&vnet_dev, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_DRIVER_OK);
    ops->notify(&vnet_dev, VNET_RXQ);
    return 0;
}

/* Any context after vnet_init(): the MAC (driver-owned, 6 bytes). */
const uint8_t *vnet_mac(void)
{
    return vnet_macaddr;
}

/* Any context: how the device is attached, for the boot report. */
const char *vnet_transport(void)
{
    return vnet_dev.msix ? "virtio-net, legacy PCI, MSI-X" : "virtio-net, legacy PCI, INTx";
}

struct vnet_rx_ctx {
    vnet_rx_fn fn;
    void *arg;
};

/* Under the caller's lock, from virtq_service(): one used RX buffer. */
static void vnet_rx_one(void *arg, void *cookie, uint32_t len)
{
    struct vnet_rx_ctx *c = arg;
    uint8_t *buf = cookie;
    enum vnet_verdict v;

    if (len < VNET_HDR)
        v = VNET_DROP_RUNT;
    else if (len > VNET_BUF)
        v = VNET_DROP_OVERSIZE;
    else
        v = vnet_frame_check(buf + VNET_HDR, len - VNET_HDR, vnet_macaddr);
    if (v != VNET_FRAME_OK) {
        vnet_st.rx_dropped[v]++;
    } else if (c->fn(c->arg, buf + VNET_HDR, len - VNET_HDR) != 0) {
        vnet_st.rx_nomem++;
    } else {
        vnet_st.rx_frames++;
        vnet_st.rx_bytes += len - VNET_HDR;
    }
    vnet_rx_post((int)((buf - vnet_rxbufs) / VNET_BUF)); /* copied out: reuse at once */
}

/* Interrupt context, under the caller's lock. */
int vnet_rx_service(int budget, vnet_rx_fn fn, void *arg, int *more)
{
    struct vnet_rx_ctx c = {fn, arg};
    vnet_st.irqs++;
    int n = virtq_service(&vnet_rxq, budget, vnet_rx_one, &c, more);
    if (*more)
        vnet_st.rx_rounds_over_budget++;
    vnet_st.bad_used = vnet_rxq.bad_used + vnet_txq.bad_used;
    if (n && virtq_publish(&vnet_rxq))
        vnet_dev.ops->notify(&vnet_dev, VNET_RXQ);
    return n;
}

/* Interrupt context (INTx). */
void vnet_irq_ack(void)
{
    if (!vnet_dev.msix)
        vnet_dev.ops->isr_ack(&vnet_dev);
}

/* Under the caller's lock: take back every TX buffer the device has finished with. */
static void vnet_tx_reclaim(void)
{
    uint32_t len;
    uint8_t *b;
    while ((b = virtq_get_used(&vnet_txq, &len)))
        vnet_tx_free[vnet_tx_nfree++] = (uint16_t)((b - vnet_txbufs) / VNET_BUF);
}

/* Any context under the caller's lock: has the device taken every committed frame? */
int vnet_tx_drained(void)
{
    vnet_tx_reclaim();
    return vnet_tx_nfree == vnet_txq.size;
}

/* Any context under the caller's lock. */
uint8_t *vnet_tx_buf(size_t *cap)
{
    vnet_tx_reclaim();
    if (vnet_tx_nfree == 0) {
        /* QEMU completes TX in its own thread; give it a moment rather than drop. */
        uint64_t end = time_ns() + VNET_TX_WAIT_US * 1000ull;
        while (vnet_tx_nfree == 0 && time_ns() < end) {
            cpu_relax();
            vnet_tx_reclaim();
        }
        if (vnet_tx_nfree == 0) {
            vnet_st.tx_ring_full++;
            return 0;
        }
    }
    uint8_t *b = vnet_txbufs + (size_t)vnet_tx_free[--vnet_tx_nfree] * VNET_BUF;
    memset(b, 0, VNET_HDR); /* no offloads: flags 0, gso_type NONE */
    *cap = VNET_BUF - VNET_HDR;
    return b + VNET_HDR;
}

/* Any context under the caller's lock: give back a buffer from vnet_tx_buf() unsent. */
void vnet_tx_cancel(uint8_t *frame)
{
    vnet_tx_free[vnet_tx_nfree++] = (uint16_t)((frame - VNET_HDR - vnet_txbufs) / VNET_BUF);
}

/* Any context under the caller's lock. */
void vnet_tx_commit(uint8_t *frame, size_t len)
{
    uint8_t *b = frame - VNET_HDR;
    uint64_t phys = vnet_txbufs_phys + (uint64_t)(b - vnet_txbufs);
    virtq_add(&vnet_txq, phys, (uint32_t)(len + VNET_HDR), 0, b);
    vnet_st.tx_frames++;
    vnet_st.tx_bytes += len;
    net_prof_mark(NP_NOTIFY, 0);
    if (virtq_publish(&vnet_txq))
        vnet_dev.ops->notify(&vnet_dev, VNET_TXQ);
}

/* Any context: the counters (read without the lock: a snapshot, not atomic). */
const struct vnet_stats *vnet_get_stats(void)
{
    return &vnet_st;
}
