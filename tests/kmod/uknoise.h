/*
 * uknoise.h: the noise benchmark's fixed work and its summary (issue 19), shared by the
 * unikernel's bench_noise test (tests/uk/bench_noise.c) and the Linux program
 * tests/kmod/uknoise.c, so that both sides time the same instructions the same number of
 * times with the same clock (the TSC). Freestanding: no libc, no kernel header.
 *
 * The work is a register-only xorshift chain: no memory traffic, no system call, nothing
 * that depends on the OS; a slow iteration is time the CPU spent elsewhere (an interrupt,
 * another task, and under QEMU/TCG the host descheduling the vCPU's thread). Under TCG the
 * guest's TSC is the host's (plus an offset): cycles are the host's wall-clock time, and
 * TCG runs this loop at about the host's own speed (translated once, chained in place).
 */
#ifndef UKNOISE_H
#define UKNOISE_H
#include <stdint.h>

#define NOISE_ITERS  50000 /* timed iterations per run: about a second in all */
#define NOISE_WARMUP 50    /* untimed first iterations (TCG translates the loop on the first) */
#define NOISE_STEPS  10000 /* xorshift steps per iteration: about 36k cycles, 14 us at 2.6 GHz */
#define NOISE_SEED   0x9e3779b97f4a7c15ULL
/* The histogram of slow iterations, in multiples of the median: over 2x (hit by anything),
 * over 10x (over about 140 us: longer than an interrupt's handling under TCG), over 100x
 * (over about 1.4 ms: a time slice, the host descheduling the vCPU). */
#define NOISE_SLOW   2
#define NOISE_SLOW2  10
#define NOISE_SLOW3  100
#define NOISE_PERMIL 1000 /* the percentiles, in thousandths: */
#define NOISE_P99    990
#define NOISE_P999   999

/* The summary line, the same on both sides: SIDE is "uk" or "linux". */
#define NOISE_FMT                                                                                  \
    "noise: side=%s iters=%d median_cycles=%lu p99_cycles=%lu p999_cycles=%lu max_cycles=%lu "     \
    "slow=%d slow10=%d slow100=%d\n"

struct noise_sum {
    uint64_t median, p99, p999, max;
    int slow, slow10, slow100; /* iterations over NOISE_SLOW, NOISE_SLOW2, NOISE_SLOW3 x median */
};

/* Any context: the TSC, after the work before it has finished (lfence). */
static inline uint64_t noise_tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Any context: one iteration's fixed work on X; the result feeds the next, so the compiler
 * can neither drop nor fold it. */
static inline uint64_t noise_work(uint64_t x)
{
    for (int i = 0; i < NOISE_STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

/* Any context: NOISE_WARMUP untimed iterations, then N timed ones into t[0..n-1] (the
 * caller's buffer); returns the chain's value, which the caller must use (print it). */
static inline uint64_t noise_run(uint64_t *t, int n)
{
    uint64_t x = NOISE_SEED;
    for (int i = 0; i < NOISE_WARMUP; i++)
        x = noise_work(x);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = noise_tsc();
        /* HAZARD: the work touches registers only, and the compiler may move it across the
         * TSC reads (volatile asm orders memory and other volatile asm, not arithmetic):
         * the empty asm statements tie X to this side of each read. */
        __asm__ volatile("" : "+r"(x));
        x = noise_work(x);
        __asm__ volatile("" : "+r"(x));
        t[i] = noise_tsc() - t0;
    }
    return x;
}

/* Any context: sorts t[0..n-1] in place (a Shell sort: thousands of samples, no libc) and
 * fills *s; n > 0. */
static inline void noise_summary(uint64_t *t, int n, struct noise_sum *s)
{
    static const int gaps[] = {701, 301, 132, 57, 23, 10, 4, 1}; /* Ciura's sequence */
    for (unsigned g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
        for (int i = gaps[g]; i < n; i++) {
            uint64_t v = t[i];
            int j = i;
            for (; j >= gaps[g] && t[j - gaps[g]] > v; j -= gaps[g])
                t[j] = t[j - gaps[g]];
            t[j] = v;
        }
    s->median = t[n / 2];
    s->p99 = t[(int)((int64_t)n * NOISE_P99 / NOISE_PERMIL)];
    s->p999 = t[(int)((int64_t)n * NOISE_P999 / NOISE_PERMIL)];
    s->max = t[n - 1];
    s->slow = s->slow10 = s->slow100 = 0;
    for (int i = 0; i < n; i++) {
        s->slow += t[i] > NOISE_SLOW * s->median;
        s->slow10 += t[i] > NOISE_SLOW2 * s->median;
        s->slow100 += t[i] > NOISE_SLOW3 * s->median;
    }
}

#endif
