/*
 * virtq.h: the split virtqueue (virtio 1.x section 2.6, legacy layout of section 2.6.2),
 * independent of the transport and of the kernel, so the host unit tests run the same code
 * against a simulated device (tests/unit/virtq_test.c).
 *
 * Ownership: a descriptor is the driver's while it is on the free list, the device's from
 * virtq_add() until virtq_get_used() returns its cookie. The ring memory itself (one
 * physically contiguous block) belongs to the driver that called virtq_init(); the device
 * writes only the used ring and the buffers marked device-writable.
 *
 * Concurrency: none inside; every call on one queue is serialised by the caller (for
 * virtio-net: the lwIP lock, which also masks interrupts on the calling CPU).
 */
#ifndef UK_VIRTQ_H
#define UK_VIRTQ_H
#include <stddef.h>
#include <stdint.h>

#define VIRTQ_DESC_F_NEXT          1
#define VIRTQ_DESC_F_WRITE         2
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY     1
#define VIRTQ_ALIGN                4096 /* legacy interface: used ring starts on a page */
#define VIRTQ_MAX_SIZE             1024

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[];
};

struct virtq_used_elem {
    uint32_t id;
    uint32_t len;
};

struct virtq_used {
    uint16_t flags;
    uint16_t idx;
    struct virtq_used_elem ring[];
};

struct virtq {
    uint16_t size; /* entries, a power of two */
    uint16_t free_head;
    uint16_t num_free;
    uint16_t avail_idx; /* driver's copy of avail->idx, published by virtq_publish() */
    uint16_t last_used; /* next used->ring slot to consume */
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
    volatile struct virtq_used *used;
    void *cookie[VIRTQ_MAX_SIZE]; /* per descriptor: the caller's token, NULL when free */
    uint64_t bad_used;            /* used entries naming a descriptor we never gave out */
};

/* Any context. Bytes of ring memory (legacy layout) for `size` entries. */
size_t virtq_ring_bytes(uint16_t size);
/* Any context, before the device sees the queue. `mem` (virtq_ring_bytes(size) bytes,
 * VIRTQ_ALIGN-aligned, zeroed by this call) is the ring; its device address is given to
 * the transport separately. Returns 0, or -1 if size is not a power of two <= MAX. */
int virtq_init(struct virtq *q, uint16_t size, void *mem);

/* Add one buffer of `len` bytes at device address `addr` (device_writes: the device fills
 * it, RX; else it reads it, TX). `cookie` (non-NULL) comes back from virtq_get_used().
 * Not visible to the device until virtq_publish(). Returns the descriptor, or -1 if full. */
int virtq_add(struct virtq *q, uint64_t addr, uint32_t len, int device_writes, void *cookie);
/* Make every added buffer visible to the device. Returns 1 if the device asked to be
 * notified (the caller then writes the transport's notify register). */
int virtq_publish(struct virtq *q);

/* 1 if the device has returned a buffer we have not consumed. */
int virtq_has_used(struct virtq *q);
/* The next returned buffer's cookie and the bytes the device wrote (*len), or NULL. An
 * entry naming a descriptor that is not in flight is skipped and counted in bad_used. */
void *virtq_get_used(struct virtq *q, uint32_t *len);

/* Interrupt suppression (a hint to the device, VIRTQ_AVAIL_F_NO_INTERRUPT). */
void virtq_disable_intr(struct virtq *q);
/* Re-enable, then re-check: returns 1 if buffers arrived before the device could see the
 * flag (they would raise no interrupt, so the caller must drain them now). */
int virtq_enable_intr(struct virtq *q);

/* The interrupt-side loop: disable - drain at most `budget` buffers through fn - enable -
 * re-check, repeated until the queue is empty or the budget is spent. Returns the buffers
 * handled; *more is 1 if the budget ran out with work left (interrupts are then left
 * disabled and the caller must come back, e.g. by a self-IPI). */
typedef void (*virtq_fn)(void *arg, void *cookie, uint32_t len);
int virtq_service(struct virtq *q, int budget, virtq_fn fn, void *arg, int *more);

#endif
