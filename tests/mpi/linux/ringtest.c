/*
 * ringtest.c: the shared-memory byte ring of the Linux platform (mpi/linux/mlx_ring.h)
 * between two threads, linked with mlx_ring.o or a mutant of it (tests/mpi/linux_faults.sh).
 *
 *   ringtest stream MIB   a producer writes MIB MiB in puts of varying sizes, the consumer
 *                         checks every byte (wrap-around, partial puts, a full ring)
 *   ringtest wake SECS    the wake-up protocol as a litmus test, round after round for
 *                         SECS seconds: the producer puts one byte while the consumer
 *                         announces it sleeps (mlx_ring_sleep); when the consumer would
 *                         sleep (it saw no byte) the producer must have been told to ring.
 *                         A round where neither saw the other is a lost wake-up: the
 *                         consumer would sleep on a byte nobody rings for; the test stops
 *                         at the first. The two threads are pinned to different CPUs, so
 *                         that they race even when the host is busy.
 *
 * Prints one line; exits 0 when all is well, 1 otherwise.
 */
#define _GNU_SOURCE /* CPU affinity */
#include "mlx_ring.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB           (1u << 20)
#define PUT_MAX       70000 /* the largest put of the stream test: above MLX_SHM_CHUNK */
#define SPINS_YIELD   1000  /* spins at a barrier before yielding the CPU */
#define ROUNDS_CHECK  1024  /* wake rounds between looks at the clock */
#define JITTER_PAUSES 8     /* pauses before the producer's put: 0..this, varied per round */

static struct mlx_ring *ring;
static uint64_t stream_bytes;
static volatile int stop_rounds;
static uint32_t barrier_count, barrier_gen;
static int producer_rang, consumer_would_sleep;

/* Either thread: the byte at stream position i. */
static uint8_t pattern(uint64_t i)
{
    return (uint8_t)(i * 7 + (i >> 13));
}

/* Either thread: spin until both threads arrived. */
static void barrier(void)
{
    uint32_t gen = __atomic_load_n(&barrier_gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&barrier_count, 1, __ATOMIC_ACQ_REL) == 2) {
        __atomic_store_n(&barrier_count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&barrier_gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    for (int spins = 0; __atomic_load_n(&barrier_gen, __ATOMIC_ACQUIRE) == gen; spins++)
        if (spins > SPINS_YIELD)
            sched_yield();
}

/* The producer thread of the stream test. */
static void *stream_producer(void *arg)
{
    static uint8_t chunk[PUT_MAX];
    uint64_t at = 0, seed = 1;
    (void)arg;
    while (at < stream_bytes) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t want = (size_t)(seed >> 33) % PUT_MAX + 1;
        if (want > stream_bytes - at)
            want = (size_t)(stream_bytes - at);
        for (size_t i = 0; i < want; i++)
            chunk[i] = pattern(at + i);
        size_t done = 0;
        while (done < want) {
            int r; /* no doorbell: the consumer polls */
            done += mlx_ring_put(ring, chunk + done, want - done, &r);
            if (done < want)
                sched_yield();
        }
        at += want;
    }
    return NULL;
}

/* Main thread: the stream test's consumer. */
static int stream(unsigned mib)
{
    pthread_t t;
    uint64_t at = 0, bad = 0;
    stream_bytes = (uint64_t)mib * MIB;
    pthread_create(&t, NULL, stream_producer, NULL);
    while (at < stream_bytes) {
        const uint8_t *p;
        int r;
        size_t n = mlx_ring_peek(ring, &p);
        if (n > MLX_RING_BYTES) {
            bad++;
            break;
        }
        for (size_t i = 0; i < n; i++)
            bad += p[i] != pattern(at + i);
        at += n;
        if (n)
            mlx_ring_consume(ring, n, &r);
        else
            sched_yield();
    }
    pthread_join(t, NULL);
    printf("ringtest stream: %u MiB through a %u KiB ring, %llu bad bytes\n", mib,
           MLX_RING_BYTES / 1024, (unsigned long long)bad);
    return bad != 0;
}

/* Either thread: run on the CPU-th CPU this process may use (no effect with one). */
static void pin(int cpu)
{
    cpu_set_t all, one;
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof all, &all) != 0 || CPU_COUNT(&all) < 2)
        return;
    for (int c = 0, seen = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &all) && seen++ == cpu) {
            CPU_SET(c, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
    }
}

/* The producer thread of the wake test. */
static void *wake_producer(void *arg)
{
    uint8_t b = 1;
    (void)arg;
    pin(1);
    for (unsigned round = 0;; round++) {
        barrier(); /* A: the ring is empty, both flags clear */
        if (stop_rounds)
            return NULL;
        for (unsigned i = 0; i < round % (JITTER_PAUSES + 1); i++)
            __builtin_ia32_pause();
        mlx_ring_put(ring, &b, 1, &producer_rang);
        barrier(); /* B: both done */
        barrier(); /* C: the consumer judged and drained */
    }
}

/* Main thread: the wake test's consumer. */
static int wake(unsigned secs)
{
    pthread_t t;
    unsigned long rounds = 0, lost = 0, saw = 0;
    time_t end = time(NULL) + secs;
    pin(0);
    pthread_create(&t, NULL, wake_producer, NULL);
    for (;; rounds++) {
        if ((rounds % ROUNDS_CHECK == 0 && time(NULL) >= end) || lost)
            stop_rounds = 1;
        barrier(); /* A */
        if (stop_rounds)
            break;
        consumer_would_sleep = mlx_ring_sleep(ring);
        barrier(); /* B */
        lost += consumer_would_sleep && !producer_rang;
        saw += !consumer_would_sleep;
        mlx_ring_awake(ring);
        const uint8_t *p;
        int r;
        size_t n = mlx_ring_peek(ring, &p);
        if (n != 1) {
            printf("ringtest wake: round %lu: %zu bytes in the ring, not 1\n", rounds, n);
            exit(1);
        }
        mlx_ring_consume(ring, 1, &r);
        barrier(); /* C */
    }
    pthread_join(t, NULL);
    printf("ringtest wake: %lu rounds, %lu saw the byte, %lu lost wake-ups\n", rounds, saw, lost);
    return lost != 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "stream") && strcmp(argv[1], "wake"))) {
        fprintf(stderr, "usage: ringtest stream MIB | wake SECS\n");
        return 2;
    }
    ring = aligned_alloc(MLX_CACHE_LINE, sizeof *ring);
    if (!ring)
        return 2;
    memset(ring, 0, sizeof *ring);
    unsigned v = (unsigned)strtoul(argv[2], NULL, 10);
    return strcmp(argv[1], "stream") ? wake(v) : stream(v);
}
