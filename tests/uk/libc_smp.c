/* libc_smp.c: in-kernel test: newlib on every CPU. Each AP (in turn, via smp_run) sets up
 * its own reent (errno) on first use, allocates, prints through the shared stdout and
 * leaves blocks for the BSP to free, so malloc's lock and the FILE locks change owner
 * between CPUs. (Truly concurrent use needs an asynchronous smp_run or the scheduler.) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uk/cpu.h>
#include <uk/ktest.h>
#include <uk/libc.h>
#include "kernel/smp.h"
#include <memlayout.h>

#define LIBC_SMP_BLOCKS 64

struct libc_smp_work {
    void *left[LIBC_SMP_BLOCKS]; /* blocks the AP allocates and the BSP frees */
    int ok;
};

static struct libc_smp_work libc_smp_work[MAX_CPUS];

/* Task context on an AP (smp_run): errno must be this CPU's own, malloc/printf work. */
static void libc_smp_worker(void *arg)
{
    struct libc_smp_work *w = arg;
    int me = cpu_id();

    errno = 1000 + me;
    for (int i = 0; i < LIBC_SMP_BLOCKS; i++) {
        size_t n = 16 + (size_t)i * 997;
        uint8_t *p = malloc(n);

        if (!p)
            return;
        memset(p, me, n);
        w->left[i] = p;
    }
    printf("libc_smp: cpu %d allocated %d blocks\n", me, LIBC_SMP_BLOCKS);
    w->ok = errno == 1000 + me && __getreent() != _impure_ptr &&
            __getreent()->_stdout == _impure_ptr->_stdout;
}

/* Task context (the ktest runner, BSP). */
KTEST(libc_smp)
{
    int n = smp_ncpus(), good = 1;

    errno = 7;
    for (int c = 1; c < n; c++) {
        if (smp_run(c, libc_smp_worker, &libc_smp_work[c]) != 0 || !libc_smp_work[c].ok) {
            printf("libc_smp: cpu %d failed\n", c);
            return 1;
        }
    }
    for (int c = 1; c < n; c++) {
        for (int i = 0; i < LIBC_SMP_BLOCKS; i++) {
            uint8_t *p = libc_smp_work[c].left[i];

            if (p[0] != (uint8_t)c || p[16 + (size_t)i * 997 - 1] != (uint8_t)c)
                good = 0;
            free(p);
        }
    }
    if (errno != 7 || !good) {
        printf("libc_smp: errno %d (want 7) or blocks corrupted\n", errno);
        return 1;
    }
    printf("libc_smp: %d cpus ok\n", n);
    return 0;
}
