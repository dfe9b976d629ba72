/*
 * uknoise: the Linux half of the noise benchmark (tests/bench/ukload.bench.sh, issue 19),
 * run in the ukload test guest (tests/kmod/ukload-init's noise case), never on the host.
 * `uknoise CPU` pins itself to CPU (sched_setaffinity) and times tests/kmod/uknoise.h's
 * fixed-work loop NOISE_ITERS times, as the unikernel's bench_noise test does on its CPU;
 * prints uknoise.h's summary line. Static (the guest has no libc).
 */
#define _GNU_SOURCE
#include "uknoise.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* main only: the samples (static: no allocation while timing). */
static uint64_t t[NOISE_ITERS];

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: uknoise CPU\n");
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[1]), &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        perror("uknoise: sched_setaffinity");
        return 1;
    }
    struct noise_sum s;
    uint64_t x = noise_run(t, NOISE_ITERS);
    noise_summary(t, NOISE_ITERS, &s);
    printf(NOISE_FMT, "linux", NOISE_ITERS, s.median, s.p99, s.p999, s.max, s.slow, s.slow10,
           s.slow100);
    printf("noise: chain=%lx\n", x); /* the work's result, so it cannot be dropped */
    return 0;
}
