/*
 * bench_knl_test.c: the knl board's in-kernel figure for `make bench`
 * (tests/bench/knl.bench.sh): the IPI round trip from CPU 0 to its nearest neighbour in
 * the APIC id range (the next id: on KNL another thread of the same core) and to the CPU
 * with the largest APIC id (above 255 with more than 256 CPUs: x2APIC only). Prints
 * "bench: key=value" lines; always returns 0 (figures, not verdicts).
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/time.h"
#include "kernel/smp.h"
#include "arch/x86_64/percpu.h"

#define IPI_SAMPLES 201

/* Task context. The median IPI round trip from this CPU to `cpu`, in TSC cycles. */
static uint64_t rtt(int cpu)
{
    static uint64_t s[IPI_SAMPLES];
    for (int i = 0; i < IPI_SAMPLES; i++)
        s[i] = ipi_ping(cpu);
    return ktest_median(s, IPI_SAMPLES);
}

KTEST(bench_knl_ipi)
{
    (void)args;
    int n = smp_ncpus(), near = smp_cpu_of_apic(percpu[0].apic_id + 1), far = 0;
    for (int c = 1; c < n; c++)
        if (percpu[c].apic_id > percpu[far].apic_id)
            far = c;
    if (n < 2 || near < 0 || far == 0) {
        kprintf("bench: knl_ipi needs 2 CPUs with APIC ids 0 and 1\n");
        return 0;
    }
    uint64_t a = rtt(near), b = rtt(far);
    kprintf("bench: ipi_near_apic=%u ipi_near_ns=%lu ipi_far_apic=%u ipi_far_ns=%lu\n",
            percpu[near].apic_id, a * 1000000000 / tsc_hz, percpu[far].apic_id,
            b * 1000000000 / tsc_hz);
    return 0;
}
