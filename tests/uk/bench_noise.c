/*
 * bench_noise.c: the unikernel's half of the noise benchmark (tests/bench/ukload.bench.sh,
 * issue 19): tests/kmod/uknoise.h's fixed-work loop timed NOISE_ITERS times on this CPU,
 * summarised on the console in uknoise.h's line. Nothing else runs here: no periodic timer
 * (only the scheduler starts one), no device interrupt; tests/kmod/uknoise.c is the same
 * loop on a Linux CPU. Always returns 0: a figure, not a verdict.
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "../kmod/uknoise.h"

KTEST(bench_noise)
{
    static uint64_t t[NOISE_ITERS];
    struct noise_sum s;
    uint64_t x = noise_run(t, NOISE_ITERS);
    noise_summary(t, NOISE_ITERS, &s);
    kprintf(NOISE_FMT, "uk", NOISE_ITERS, s.median, s.p99, s.p999, s.max, s.slow, s.slow10,
            s.slow100);
    kprintf("noise: chain=%lx\n", x); /* the work's result, so it cannot be dropped */
    return 0;
}
