/*
 * virtio.h: a virtio device behind a small transport ops table. Drivers (virtio-net) only
 * use these operations and struct virtq (virtq.h), so another transport (modern PCI,
 * virtio-mmio) plugs in by providing its own ops, without touching rings or drivers.
 */
#ifndef UK_VIRTIO_H
#define UK_VIRTIO_H
#include <stdint.h>
#include "drivers/pci.h"

/* Device status bits (virtio 1.x 2.1). */
#define VIRTIO_STATUS_ACK         1
#define VIRTIO_STATUS_DRIVER      2
#define VIRTIO_STATUS_DRIVER_OK   4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_FAILED      0x80

#define VIRTIO_NO_VECTOR 0xffff

struct virtio_dev;

/* All operations: task or boot context during set-up; notify() and isr_ack() from any
 * context, serialised by the driver's own lock. */
struct virtio_ops {
    const char *name;
    void (*reset)(struct virtio_dev *d);
    uint8_t (*get_status)(struct virtio_dev *d);
    void (*set_status)(struct virtio_dev *d, uint8_t s);
    uint64_t (*get_features)(struct virtio_dev *d);
    void (*set_features)(struct virtio_dev *d, uint64_t f);
    uint8_t (*config8)(struct virtio_dev *d, int off); /* device-specific config space */
    /* Largest size of queue `q` (0: no such queue). Legacy devices fix it. */
    uint16_t (*queue_max)(struct virtio_dev *d, int q);
    /* Hand queue `q` (ring at device address `ring`, `size` entries) to the device, with
     * MSI-X table entry `msix` for its interrupts (VIRTIO_NO_VECTOR: none). 0 or -1. */
    int (*queue_enable)(struct virtio_dev *d, int q, uint64_t ring, uint16_t size, int msix);
    void (*notify)(struct virtio_dev *d, int q);
    /* INTx only: read-and-clear the interrupt status (bit 0 queue, bit 1 config). */
    uint8_t (*isr_ack)(struct virtio_dev *d);
};

struct virtio_dev {
    const struct virtio_ops *ops;
    struct pci_dev *pci;
    uint16_t iobase; /* legacy: BAR0 I/O ports */
    int msix;        /* 1 if MSI-X is enabled (moves the legacy config space) */
};

/* Boot or task context. Set `d` up as a legacy (0.9.5 / transitional) virtio PCI device
 * and, if `vector` >= 0 and the function has MSI-X, route MSI-X entry 0 to `vector` on
 * `apic_id` (and disable the config-change vector). Returns 0, or -1 if `p` is not a
 * legacy-capable virtio function. */
int virtio_pci_legacy_probe(struct pci_dev *p, struct virtio_dev *d, int vector, uint32_t apic_id);

#endif
