/*
 * demo.c: the default job of `make run` for now: every CPU reports in from itself, IPI
 * round trips from the boot CPU to each other CPU, timer interrupts on every CPU, and the
 * heap at work. The MPI issues replace this with a real multi-rank job.
 */
#include "kernel/demo.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/pmm.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu.h"
#include "uk/console.h"
#include "uk/time.h"
#include "uk/cpu.h"

static void hello(void *arg)
{
    kprintf("demo: hello from cpu %d (APIC id %u), running on its own stack at %p\n", cpu_id(),
            lapic_id(), (void *)&arg);
}

static void tick(void *arg)
{
    timer_start_periodic(100);
}

static void untick(void *arg)
{
    timer_stop();
}

/* Boot CPU, task context. */
int demo_run(void)
{
    int n = smp_ncpus();
    hello(0);
    for (int i = 1; i < n; i++)
        smp_run(i, hello, 0);

    for (int i = 1; i < n; i++) {
        uint64_t best = ~0ULL, sum = 0;
        for (int k = 0; k < 100; k++) {
            uint64_t c = ipi_ping(i);
            sum += c;
            if (c && c < best)
                best = c;
        }
        kprintf("demo: IPI round trip cpu 0 <-> cpu %d: best %lu ns, mean %lu ns (100 pings)\n", i,
                best * 1000000000 / tsc_hz, sum / 100 * 1000000000 / tsc_hz);
    }

    uint64_t before[MAX_CPUS];
    for (int i = 0; i < n; i++)
        before[i] = timer_ticks(i);
    timer_start_periodic(100);
    for (int i = 1; i < n; i++)
        smp_run(i, tick, 0);
    uint64_t t0 = time_ns();
    while (time_ns() - t0 < 200000000ULL)
        __asm__ volatile("hlt");
    for (int i = 1; i < n; i++)
        smp_run(i, untick, 0);
    timer_stop();
    for (int i = 0; i < n; i++)
        kprintf("demo: cpu %d took %lu timer interrupts in 200 ms at 100 Hz\n", i,
                timer_ticks(i) - before[i]);
    kprintf("demo: %lu MiB of %lu MiB free; done\n", pmm_free_frames() >> 8,
            pmm_total_frames() >> 8);
    return 0;
}
