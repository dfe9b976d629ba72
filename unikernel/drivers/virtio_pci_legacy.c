/*
 * virtio_pci_legacy.c: the legacy virtio PCI transport (virtio 1.x section 4.1.4.8):
 * registers in I/O BAR 0, 32 feature bits, queue rings given by page frame number, the
 * device-specific config at 0x14 (0x18 once MSI-X is on). QEMU's default virtio-net-pci
 * is transitional, so it speaks this.
 */
#include "drivers/virtio.h"
#include "arch/x86_64/io.h"
#include "memlayout.h"

#define VPL_DEVICE_FEATURES 0x00
#define VPL_GUEST_FEATURES  0x04
#define VPL_QUEUE_PFN       0x08
#define VPL_QUEUE_SIZE      0x0c
#define VPL_QUEUE_SEL       0x0e
#define VPL_QUEUE_NOTIFY    0x10
#define VPL_STATUS          0x12
#define VPL_ISR             0x13
#define VPL_CONFIG_VECTOR   0x14
#define VPL_QUEUE_VECTOR    0x16

/* Any context: 16-bit port write (io.h has only 8 and 32 bits). */
static inline void outw(uint16_t port, uint16_t v)
{
    __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port));
}

/* Any context: 16-bit port read. */
static inline uint16_t inw(uint16_t port)
{
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* Set-up (task/boot): reset the device; it forgets queues and features. */
static void vpl_reset(struct virtio_dev *d)
{
    outb(d->iobase + VPL_STATUS, 0);
    while (inb(d->iobase + VPL_STATUS) != 0) /* reset completes when status reads 0 */
        ;
}

/* Set-up (task/boot). */
static uint8_t vpl_get_status(struct virtio_dev *d)
{
    return inb(d->iobase + VPL_STATUS);
}

/* Set-up (task/boot). */
static void vpl_set_status(struct virtio_dev *d, uint8_t s)
{
    outb(d->iobase + VPL_STATUS, s);
}

/* Set-up (task/boot): the device's 32 legacy feature bits. */
static uint64_t vpl_get_features(struct virtio_dev *d)
{
    return inl(d->iobase + VPL_DEVICE_FEATURES);
}

/* Set-up (task/boot): features the driver implements (legacy: before DRIVER_OK). */
static void vpl_set_features(struct virtio_dev *d, uint64_t f)
{
    outl(d->iobase + VPL_GUEST_FEATURES, (uint32_t)f); /* legacy: 32 bits only */
}

/* Set-up (task/boot): one byte of device-specific config space. */
static uint8_t vpl_config8(struct virtio_dev *d, int off)
{
    return inb((uint16_t)(d->iobase + (d->msix ? 0x18 : 0x14) + off));
}

/* Set-up (task/boot): the fixed size of queue q (0: none). */
static uint16_t vpl_queue_max(struct virtio_dev *d, int q)
{
    outw(d->iobase + VPL_QUEUE_SEL, (uint16_t)q);
    return inw(d->iobase + VPL_QUEUE_SIZE);
}

/* Set-up (task/boot): hand a ring to the device; see struct virtio_ops. */
static int vpl_queue_enable(struct virtio_dev *d, int q, uint64_t ring, uint16_t size, int msix)
{
    outw(d->iobase + VPL_QUEUE_SEL, (uint16_t)q);
    /* Legacy queues have the size the device says; the driver cannot choose. */
    if (inw(d->iobase + VPL_QUEUE_SIZE) != size || (ring & (PAGE_SIZE - 1)) ||
        (ring >> PAGE_SHIFT) > 0xffffffffu)
        return -1;
    if (d->msix) {
        outw(d->iobase + VPL_QUEUE_VECTOR, (uint16_t)msix);
        if (inw(d->iobase + VPL_QUEUE_VECTOR) != (uint16_t)msix)
            return -1; /* the device could not allocate the vector */
    }
    outl(d->iobase + VPL_QUEUE_PFN, (uint32_t)(ring >> PAGE_SHIFT));
    return 0;
}

/* Any context, under the driver's lock: tell the device queue q has new buffers. */
static void vpl_notify(struct virtio_dev *d, int q)
{
    outw(d->iobase + VPL_QUEUE_NOTIFY, (uint16_t)q);
}

/* Interrupt context (INTx): reading the ISR register also clears it. */
static uint8_t vpl_isr_ack(struct virtio_dev *d)
{
    return inb(d->iobase + VPL_ISR);
}

static const struct virtio_ops vpl_ops = {
    .name = "legacy PCI",
    .reset = vpl_reset,
    .get_status = vpl_get_status,
    .set_status = vpl_set_status,
    .get_features = vpl_get_features,
    .set_features = vpl_set_features,
    .config8 = vpl_config8,
    .queue_max = vpl_queue_max,
    .queue_enable = vpl_queue_enable,
    .notify = vpl_notify,
    .isr_ack = vpl_isr_ack,
};

/* Boot or task context; see virtio.h. */
int virtio_pci_legacy_probe(struct pci_dev *p, struct virtio_dev *d, int vector, uint32_t apic_id)
{
    /* Transitional devices: 0x1000-0x103f; the legacy registers are in I/O BAR 0. */
    if (p->vendor != 0x1af4 || p->device < 0x1000 || p->device > 0x103f || !p->bar[0].io)
        return -1;
    d->ops = &vpl_ops;
    d->pci = p;
    d->iobase = (uint16_t)p->bar[0].base;
    d->msix = 0;
    pci_enable(p);
    vpl_reset(d);
    if (vector >= 0 && pci_msix_route(p, 0, vector, apic_id) == 0) {
        d->msix = 1;
        outw(d->iobase + VPL_CONFIG_VECTOR, VIRTIO_NO_VECTOR);
    }
    return 0;
}
