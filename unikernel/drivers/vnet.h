/*
 * vnet.h: the virtio-net driver (one device), independent of lwIP. The network layer
 * (net/uknet/netif_vnet.c) serialises every call after vnet_init() with its one lock (the
 * lwIP lock, interrupts masked on the calling CPU); the driver has no lock of its own.
 */
#ifndef UK_VNET_H
#define UK_VNET_H
#include <stddef.h>
#include <stdint.h>
#include "drivers/vnet_frame.h"

struct vnet_stats {
    uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
    uint64_t rx_dropped[VNET_DROP_NKINDS]; /* by verdict; [0] unused */
    uint64_t rx_nomem;                     /* the consumer had no buffer (pool empty) */
    uint64_t tx_ring_full;                 /* sends refused: no TX descriptor freed in time */
    uint64_t irqs; /* vnet_rx_service() calls: an interrupt's batch makes one or more */
    uint64_t rx_rounds_over_budget, bad_used;
    uint64_t kicks; /* RX vector interrupts acknowledged (ukvnic: Linux's IPIs, self-IPIs) */
};

/* Boot or task context, once. Finds the first virtio-net PCI function, negotiates
 * features, fills the RX ring, routes its RX interrupt to `vector` on CPU `cpu` (MSI-X;
 * INTx through the IOAPIC otherwise). Returns 0, or -1 (no device). The device does not
 * interrupt until the caller has registered `vector`. */
int vnet_init(int vector, int cpu);
const uint8_t *vnet_mac(void);
const char *vnet_transport(void);

/* Called by vnet_rx_service() for each good frame: `frame` is valid only during the call
 * (the driver reuses the buffer); return 0 if it was taken, -1 if the consumer had no
 * memory (counted as rx_nomem). */
typedef int (*vnet_rx_fn)(void *arg, const uint8_t *frame, size_t len);
/* Interrupt context (the RX vector) under the caller's lock. Disable - drain at most
 * `budget` frames - refill - enable - re-check. Returns frames handled; *more = 1 if the
 * budget ran out with frames left (the caller must come back: a self-IPI). */
int vnet_rx_service(int budget, vnet_rx_fn fn, void *arg, int *more);
/* Interrupt context, INTx only: acknowledge the device's interrupt status. */
void vnet_irq_ack(void);

/* Any context under the caller's lock. A free TX buffer for one frame of at most *cap
 * bytes (reclaiming completed sends first, and waiting briefly if the ring is full), or
 * NULL (counted as tx_ring_full). Must be followed by vnet_tx_commit() before the lock is
 * released. */
uint8_t *vnet_tx_buf(size_t *cap);
/* Hand the buffer from vnet_tx_buf(), filled with `len` bytes, to the device. */
void vnet_tx_commit(uint8_t *buf, size_t len);
/* Or give it back unsent. */
void vnet_tx_cancel(uint8_t *buf);

const struct vnet_stats *vnet_get_stats(void);
/* Any context under the caller's lock: 1 when the device has taken (sent to its backend)
 * every frame committed so far. */
int vnet_tx_drained(void);

#endif
