/* ipi_test.c: an IPI ping and its pong between every ordered pair of CPUs. */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "kernel/smp.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"

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

/* One broadcast IPI reaches every CPU, this one included. */
#define VEC_TEST 0xe1
static volatile uint64_t hits[MAX_CPUS];

static void count_hit(struct trapframe *tf)
{
    hits[cpu_id()]++;
}

KTEST(ipi_broadcast)
{
    int n = smp_ncpus(), rounds = 50, bad = 0;
    irq_register(VEC_TEST, count_hit);
    for (int r = 1; r <= rounds; r++) {
        ipi_broadcast(VEC_TEST);
        for (int i = 0; i < n; i++) /* each CPU must have taken this round's IPI */
            while (hits[i] < (uint64_t)r)
                cpu_relax();
    }
    for (int i = 0; i < n; i++) {
        kprintf("ipi: cpu %d took %lu broadcast IPIs\n", i, hits[i]);
        bad += hits[i] != (uint64_t)rounds;
    }
    kprintf("ipi: broadcast %s\n", bad ? "WRONG" : "ok");
    return bad;
}
