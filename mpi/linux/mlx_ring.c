/*
 * mlx_ring.c: the shared-memory byte ring (mlx_ring.h).
 *
 * Memory order. Data: the producer copies bytes in, then publishes head with a release
 * store; the consumer loads head with acquire before it reads them, and publishes tail
 * with a release store after it copied them out; the producer loads tail with acquire
 * before it overwrites them. Wake-ups are Dekker's pattern, twice:
 *
 *   producer (mlx_ring_put)            consumer (mlx_ring_sleep)
 *     store head                         store reader_sleeps = 1
 *     full fence                         full fence
 *     load reader_sleeps: 1 -> ring      load head: unchanged -> sleep
 *
 * The two fences are ordered one way or the other: if the producer's comes first, the
 * consumer's load sees the new head and does not sleep; if the consumer's comes first,
 * the producer's load sees the flag and rings. Without the fences the store and the
 * later load of another location may be reordered (x86's store buffer does it), both
 * sides miss each other, and the consumer sleeps on a byte nobody rings for.
 * mlx_ring_consume and mlx_ring_wait_room are the same pattern for room (tail,
 * writer_waits). tests/mpi/linux_faults.sh checks both halves with mutants.
 *
 * The flag is taken by whoever rings (an exchange to 0), after that side's fence: the
 * exchange may take an announcement younger than the change it rings for. For
 * reader_sleeps that is harmless: the consumer announces afresh before each sleep
 * (mlx_ring_sleep). For writer_waits the producer must do the same: it announces again
 * (mlx_ring_wait_room) at every look at a waiting send, a doorbell's in particular, never
 * only looks at tail; mlx_ring_wait_room states why that suffices.
 */
#include "mlx_ring.h"
#include <string.h>

#define MASK (MLX_RING_BYTES - 1)

/* The producer's thread, under its network lock; see mlx_ring.h. */
size_t mlx_ring_put(struct mlx_ring *r, const void *src, size_t len, int *ring)
{
    uint64_t head = r->head; /* ours alone */
    uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    size_t room = MLX_RING_BYTES - (size_t)(head - tail);
    size_t n = len < room ? len : room;
    *ring = 0;
    if (!n)
        return 0;
    size_t at = (size_t)(head & MASK), first = MLX_RING_BYTES - at;
    if (first > n)
        first = n;
    memcpy(r->data + at, src, first);
    memcpy(r->data, (const uint8_t *)src + first, n - first);
    __atomic_store_n(&r->head, head + n, __ATOMIC_RELEASE);
    /* Hazard: the store of head and the load of reader_sleeps must not be reordered
     * (see the top of this file); a release store is no barrier against a later load. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *ring = __atomic_load_n(&r->reader_sleeps, __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&r->reader_sleeps, 0, __ATOMIC_RELAXED);
    return n;
}

/* The producer's thread; see mlx_ring.h. */
int mlx_ring_has_room(const struct mlx_ring *r)
{
    return r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) < MLX_RING_BYTES;
}

/* The producer's thread, under its network lock: mlx_shm_send when the ring is full, and
 * the network thread's drain at each look at the send that waits; see mlx_ring.h.
 *
 * Memory order. Each announcement A (store writer_waits = 1, full fence, load tail) and
 * each consume C (store tail, full fence, exchange writer_waits to 0) are Dekker's pair:
 * if A's fence comes first, C's exchange reads A's 1 or a later write; if C's comes first,
 * A's load sees C's tail, there is room and A withdraws. The later writes are: our
 * withdrawal (only when we saw room: the send is not waiting), or an earlier exchange of
 * the consumer (one thread: its exchanges are ordered), which read 1 and rang. That
 * exchange may have taken A although its own tail was already seen by us (we resumed on
 * it without its doorbell, filled the ring, and announced A): its doorbell then brings no
 * room. But we read that doorbell byte after the consumer sent it, after its exchange (the
 * socket orders them), and look again under the lock with a new announcement A', which
 * is thereby younger than that exchange: the argument applies to A'. So while a send
 * waits, the flag holds an announcement that no exchange took, or a doorbell is unread;
 * each consume that makes room after it rings, and no room goes unannounced. */
int mlx_ring_wait_room(struct mlx_ring *r)
{
    __atomic_store_n(&r->writer_waits, 1, __ATOMIC_RELAXED);
    /* Hazard: store the flag, then look at tail: the same Dekker pair as above. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!mlx_ring_has_room(r))
        return 0;
    __atomic_store_n(&r->writer_waits, 0, __ATOMIC_RELAXED);
    return 1;
}

/* The consumer's thread, under its network lock; see mlx_ring.h. */
size_t mlx_ring_peek(const struct mlx_ring *r, const uint8_t **p)
{
    uint64_t tail = r->tail; /* ours alone */
    uint64_t avail = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - tail;
    if (avail > MLX_RING_BYTES)
        return MLX_RING_BYTES + 1; /* the peer wrote nonsense into the shared memory */
    size_t at = (size_t)(tail & MASK), first = MLX_RING_BYTES - at;
    *p = r->data + at;
    return avail < first ? (size_t)avail : first;
}

/* The consumer's thread; see mlx_ring.h. */
int mlx_ring_readable(const struct mlx_ring *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_RELAXED) != r->tail;
}

/* The consumer's thread, under its network lock; see mlx_ring.h. */
void mlx_ring_consume(struct mlx_ring *r, size_t n, int *ring)
{
    __atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
    /* Hazard: the store of tail and the load of writer_waits must not be reordered. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *ring = __atomic_load_n(&r->writer_waits, __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&r->writer_waits, 0, __ATOMIC_RELAXED);
}

/* The consumer's thread; see mlx_ring.h. */
int mlx_ring_sleep(struct mlx_ring *r)
{
    __atomic_store_n(&r->reader_sleeps, 1, __ATOMIC_RELAXED);
    /* Hazard: store the flag, then look at head again (the top of this file). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == r->tail;
}

/* The consumer's thread; see mlx_ring.h. */
void mlx_ring_awake(struct mlx_ring *r)
{
    if (__atomic_load_n(&r->reader_sleeps, __ATOMIC_RELAXED))
        __atomic_store_n(&r->reader_sleeps, 0, __ATOMIC_RELAXED);
}
