/*
 * virtq.c: see virtq.h. Portable C (kernel and host tests).
 *
 * Memory ordering: x86 keeps stores in order and loads in order, but a store followed by a
 * load of another location may be reordered. The two places that matter take a full
 * fence: publishing avail->idx then reading used->flags (otherwise we could miss that the
 * device wants a kick), and clearing NO_INTERRUPT then re-reading used->idx (otherwise a
 * buffer used in between raises no interrupt and sits there until the next one).
 */
#include "drivers/virtq.h"
#include <string.h>

#define virtq_fence()   __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define virtq_barrier() __asm__ volatile("" ::: "memory")

/* Any context; see virtq.h. */
size_t virtq_ring_bytes(uint16_t size)
{
    size_t a = 16u * size + 2u * (3u + size);
    a = (a + VIRTQ_ALIGN - 1) & ~(size_t)(VIRTQ_ALIGN - 1);
    return a + 2u * 3u + 8u * size;
}

/* Set-up, before the device sees the ring; see virtq.h. */
int virtq_init(struct virtq *q, uint16_t size, void *mem)
{
    if (size == 0 || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
        return -1;
    memset(mem, 0, virtq_ring_bytes(size));
    memset(q, 0, sizeof *q);
    q->size = size;
    q->desc = (struct virtq_desc *)mem;
    q->avail = (struct virtq_avail *)((uint8_t *)mem + 16u * size);
    size_t uoff = (16u * size + 2u * (3u + size) + VIRTQ_ALIGN - 1) & ~(size_t)(VIRTQ_ALIGN - 1);
    q->used = (struct virtq_used *)((uint8_t *)mem + uoff);
    for (uint16_t i = 0; i < size; i++)
        q->desc[i].next = (uint16_t)(i + 1);
    q->free_head = 0;
    q->num_free = size;
    return 0;
}

/* Under the queue owner's lock; see virtq.h. The buffer becomes the device's. */
int virtq_add(struct virtq *q, uint64_t addr, uint32_t len, int device_writes, void *cookie)
{
    if (q->num_free == 0 || !cookie)
        return -1;
    uint16_t d = q->free_head;
    q->free_head = q->desc[d].next;
    q->num_free--;
    q->desc[d].addr = addr;
    q->desc[d].len = len;
    q->desc[d].flags = device_writes ? VIRTQ_DESC_F_WRITE : 0;
    q->desc[d].next = 0;
    q->cookie[d] = cookie;
    q->avail->ring[q->avail_idx & (q->size - 1)] = d;
    q->avail_idx++;
    return d;
}

/* Under the queue owner's lock; see virtq.h. */
int virtq_publish(struct virtq *q)
{
    virtq_barrier(); /* descriptors and ring slots before the index the device polls */
    q->avail->idx = q->avail_idx;
    virtq_fence();
    return !(q->used->flags & VIRTQ_USED_F_NO_NOTIFY);
}

/* Under the queue owner's lock (or racy but harmless as a hint). */
int virtq_has_used(struct virtq *q)
{
    return q->used->idx != q->last_used;
}

/* Under the queue owner's lock; the returned buffer is the caller's again. */
void *virtq_get_used(struct virtq *q, uint32_t *len)
{
    while (q->used->idx != q->last_used) {
        virtq_barrier(); /* the index before the entry it covers */
        volatile struct virtq_used_elem *e = &q->used->ring[q->last_used & (q->size - 1)];
        uint32_t id = e->id, l = e->len;
        q->last_used++;
        if (id >= q->size || !q->cookie[id]) {
            q->bad_used++;
            continue;
        }
        void *c = q->cookie[id];
        q->cookie[id] = 0;
        q->desc[id].next = q->free_head;
        q->free_head = (uint16_t)id;
        q->num_free++;
        *len = l;
        return c;
    }
    return 0;
}

/* Under the queue owner's lock (usually in its interrupt handler). */
void virtq_disable_intr(struct virtq *q)
{
    q->avail->flags |= VIRTQ_AVAIL_F_NO_INTERRUPT;
}

/* Under the queue owner's lock; see virtq.h. */
int virtq_enable_intr(struct virtq *q)
{
    q->avail->flags &= (uint16_t)~VIRTQ_AVAIL_F_NO_INTERRUPT;
    virtq_fence();
    return virtq_has_used(q);
}

/* Interrupt context of the queue, under its owner's lock; see virtq.h. */
int virtq_service(struct virtq *q, int budget, virtq_fn fn, void *arg, int *more)
{
    int n = 0;
    *more = 0;
    virtq_disable_intr(q);
    for (;;) {
        void *c;
        uint32_t len;
        while (n < budget && (c = virtq_get_used(q, &len))) {
            fn(arg, c, len);
            n++;
        }
        if (n >= budget && virtq_has_used(q)) {
            *more = 1; /* stays disabled: the caller comes back */
            return n;
        }
        if (!virtq_enable_intr(q))
            return n;
        if (n >= budget) {
            *more = 1;
            virtq_disable_intr(q);
            return n;
        }
        virtq_disable_intr(q);
    }
}
