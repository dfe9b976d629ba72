/* libc_malloc.c: in-kernel test: newlib's malloc over the kernel heap (sbrk ->
 * kheap_sbrk), under its retargetable lock. Deterministic, so a failure reproduces. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uk/ktest.h>

#define LIBC_MALLOC_SLOTS  256
#define LIBC_MALLOC_ROUNDS 6000
#define LIBC_MALLOC_MAX    (1024 * 1024)

struct libc_malloc_slot {
    uint8_t *p;
    size_t size;
    uint8_t seed;
};

static struct libc_malloc_slot libc_malloc_slots[LIBC_MALLOC_SLOTS];
static uint64_t libc_malloc_rng = 0x9e3779b97f4a7c15ull;

/* Task context: xorshift64*, deterministic. */
static uint64_t libc_malloc_rand(void)
{
    uint64_t x = libc_malloc_rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    libc_malloc_rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Task context: sizes 1 B .. 1 MiB, mostly small (as real programs allocate). */
static size_t libc_malloc_size(void)
{
    unsigned shift = (unsigned)(libc_malloc_rand() % 21); /* up to 2^20 */

    return 1 + (size_t)(libc_malloc_rand() % ((size_t)1 << shift)) % LIBC_MALLOC_MAX;
}

/* Task context: fills `n` bytes with a pattern derived from `seed` and the offset. */
static void libc_malloc_fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 31 + (i >> 8));
}

/* Task context: 1 if the first `n` bytes still hold the pattern. */
static int libc_malloc_verify(const uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed + i * 31 + (i >> 8)))
            return 0;
    return 1;
}

/* Task context: checks and frees slot `s` (if used). */
static int libc_malloc_release(struct libc_malloc_slot *s)
{
    int ok = 1;

    if (s->p) {
        ok = libc_malloc_verify(s->p, s->size, s->seed);
        free(s->p);
    }
    s->p = NULL;
    s->size = 0;
    return ok;
}

/* Task context (the ktest runner). */
KTEST(libc_malloc)
{
    long ops = 0;
    void *brk_before = sbrk(0), *brk_after = brk_before, *brk_final;

    for (int pass = 0; pass < 2; pass++) {
        for (int round = 0; round < LIBC_MALLOC_ROUNDS; round++) {
            struct libc_malloc_slot *s = &libc_malloc_slots[libc_malloc_rand() % LIBC_MALLOC_SLOTS];
            unsigned op = (unsigned)(libc_malloc_rand() % 4);
            size_t n = libc_malloc_size();
            uint8_t seed = (uint8_t)libc_malloc_rand();

            if (s->p && op == 0) { /* realloc: the common prefix must survive */
                size_t keep = s->size < n ? s->size : n;
                uint8_t *q = realloc(s->p, n);

                if (!q || !libc_malloc_verify(q, keep, s->seed)) {
                    printf("libc_malloc: realloc %zu -> %zu broke the data\n", s->size, n);
                    return 1;
                }
                s->p = q;
                s->size = n;
                libc_malloc_fill(q, n, s->seed);
            } else if (s->p) { /* free, in random slot order */
                if (!libc_malloc_release(s)) {
                    printf("libc_malloc: block of %zu bytes corrupted\n", s->size);
                    return 1;
                }
            } else if (op == 1) { /* calloc: must come back zeroed */
                uint8_t *q = calloc(1, n);

                if (!q) {
                    printf("libc_malloc: calloc(%zu) failed\n", n);
                    return 1;
                }
                for (size_t i = 0; i < n; i++) {
                    if (q[i]) {
                        printf("libc_malloc: calloc(%zu) not zeroed at %zu\n", n, i);
                        return 1;
                    }
                }
                s->p = q;
                s->size = n;
                s->seed = seed;
                libc_malloc_fill(q, n, seed);
            } else {
                s->p = malloc(n);
                if (!s->p || ((uintptr_t)s->p & 15) != 0) {
                    printf("libc_malloc: malloc(%zu) = %p\n", n, (void *)s->p);
                    return 1;
                }
                s->size = n;
                s->seed = seed;
                libc_malloc_fill(s->p, n, seed);
            }
            ops++;
        }
        /* Free everything, in slot order (which is random with respect to allocation). */
        for (int i = 0; i < LIBC_MALLOC_SLOTS; i++) {
            if (!libc_malloc_release(&libc_malloc_slots[i])) {
                printf("libc_malloc: block corrupted at the end of pass %d\n", pass);
                return 1;
            }
            ops++;
        }
        if (pass == 0)
            brk_after = sbrk(0);
    }
    brk_final = sbrk(0);
    /* Memory is reused: the second pass, with the same mix, must not need (much) more heap
     * than the first. Allow one maximum-size block of slack for fragmentation. */
    if ((uintptr_t)brk_final > (uintptr_t)brk_after + 2 * LIBC_MALLOC_MAX) {
        printf("libc_malloc: heap grew from %p to %p on the second pass\n", brk_after, brk_final);
        return 1;
    }
    printf("libc_malloc: %ld ops ok (heap %lu KiB)\n", ops,
           (unsigned long)(((uintptr_t)brk_final - (uintptr_t)brk_before) / 1024));
    return 0;
}
