/*
 * mlx_ring.h: a single-producer single-consumer byte ring in memory shared by two
 * processes of one host (mlx_shm.c maps it): the node-pair byte stream of two Linux nodes
 * on the same host, instead of a TCP connection over loopback.
 *
 * The producer is whichever thread of the sending process holds its network lock (the
 * engine's pump, plat_net_send); the consumer is the receiving process's network thread
 * (or any thread under its network lock). Both sides may sleep: the consumer in epoll
 * while the ring is empty, the producer (its network thread, again) while the ring is
 * full. Each announces it with a flag in the ring, and the other side rings the pair's
 * doorbell (a byte on the unix socket between the two processes, mlx_shm.c) when it finds
 * the flag set after changing the ring. The memory-order argument is at mlx_ring.c's
 * functions.
 *
 * Indices are free-running byte counts (never wrap in practice: 2^64 bytes); the data of
 * byte i is at data[i % MLX_RING_BYTES].
 */
#ifndef MPI_LINUX_MLX_RING_H
#define MPI_LINUX_MLX_RING_H
#include <stddef.h>
#include <stdint.h>

#define MLX_RING_BYTES (1u << 20) /* per direction; a power of two */
#define MLX_CACHE_LINE 64

struct mlx_ring {
    /* Written by the producer only. */
    _Alignas(MLX_CACHE_LINE) uint64_t head; /* bytes ever written */
    uint32_t writer_waits;                  /* the producer waits for room: ring when you
                                             * make some */
    /* Written by the consumer only (and cleared by whoever rings). */
    _Alignas(MLX_CACHE_LINE) uint64_t tail; /* bytes ever consumed */
    uint32_t reader_sleeps;                 /* the consumer may sleep: ring when you write */
    _Alignas(MLX_CACHE_LINE) uint8_t data[MLX_RING_BYTES];
};

/* Producer: copy up to len bytes of src into r; the bytes taken (0 when full). Returns
 * with *ring set when the consumer announced it sleeps: the caller rings the doorbell. */
size_t mlx_ring_put(struct mlx_ring *r, const void *src, size_t len, int *ring);
/* Producer, after mlx_ring_put took less than it was given, and again at every later look
 * at the waiting send: announce that we wait for room. 1: there is room after all (flag
 * withdrawn, try again); 0: the consumer will ring the doorbell when it makes room. A look
 * at a waiting send with mlx_ring_has_room alone can lose the wake-up (mlx_ring.c). */
int mlx_ring_wait_room(struct mlx_ring *r);
/* Producer: is there room for a byte? */
int mlx_ring_has_room(const struct mlx_ring *r);

/* Consumer: the readable bytes that are contiguous in memory, from *p (0: empty). A
 * corrupt ring (more bytes than it holds) reports MLX_RING_BYTES + 1. */
size_t mlx_ring_peek(const struct mlx_ring *r, const uint8_t **p);
/* Consumer (its network lock not needed): are there bytes to read? */
int mlx_ring_readable(const struct mlx_ring *r);
/* Consumer: n bytes of mlx_ring_peek's are consumed (the caller copied them out). Sets
 * *ring when the producer waits for room: the caller rings the doorbell. */
void mlx_ring_consume(struct mlx_ring *r, size_t n, int *ring);
/* Consumer, before it sleeps: announce it. 1: the ring is empty, sleep (the producer rings
 * for the next byte); 0: bytes arrived meanwhile, do not sleep (mlx_ring_awake follows). */
int mlx_ring_sleep(struct mlx_ring *r);
/* Consumer, after a sleep (or a mlx_ring_sleep that said 0): withdraw the announcement,
 * so producers stop ringing. */
void mlx_ring_awake(struct mlx_ring *r);

#endif
