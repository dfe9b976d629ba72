/* ipi_test.c: an IPI ping and its pong between every ordered pair of CPUs. */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "kernel/smp.h"
#include "arch/x86_64/percpu.h"

static volatile int failures, pairs;

static void ping_all(void *arg)
{
    int me = cpu_id(), n = smp_ncpus();
    for (int j = 0; j < n; j++) {
        if (j == me)
            continue;
        uint64_t cycles = ipi_ping(j);
        __atomic_add_fetch(&pairs, 1, __ATOMIC_RELAXED);
        if (!cycles) {
            kprintf("ipi: %d -> %d: no pong\n", me, j);
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        }
    }
}

KTEST(ipi_pairs)
{
    int n = smp_ncpus();
    ping_all(0);
    for (int i = 1; i < n; i++)
        smp_run(i, ping_all, 0); /* one pinger at a time: ipi_ping's rule */
    kprintf("ipi: %d pairs, %d without a pong\n", pairs, failures);
    return failures || pairs != n * (n - 1) ? 1 : 0;
}
