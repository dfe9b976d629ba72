/*
 * smt_test.c: rank placement on SMT cores (tests/knl/run.sh smt_*): the CPUs that share a
 * core (CPUID leaf 0xB's SMT bits of the APIC id) are counted, and the first placement
 * slots (smp_place_cpu) must take one CPU of each core before any core's second thread.
 *
 * args: "CORES,THREADS" as QEMU's -smp gave them. One line per check; the last is
 * "smt: all ok" or "smt: N FAILED".
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "kernel/smp.h"
#include "arch/x86_64/percpu.h"
#include <stdlib.h>

/* Task context. The number of distinct cores among CPUs 0..n-1. */
static int count_cores(int n)
{
    int cores = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = smp_core_of(k) == smp_core_of(i);
        cores += !seen;
    }
    return cores;
}

KTEST(smt)
{
    int want_cores = atoi(args), want_threads = 1, bad = 0;
    for (const char *p = args; *p; p++)
        if (*p == ',')
            want_threads = atoi(p + 1);
    int n = smp_ncpus(), cores = count_cores(n), threads = smp_threads_per_core();
    int ok = cores == want_cores && threads >= want_threads && n == cores * want_threads;
    kprintf("smt: %d CPUs: %d cores, %d thread(s) per core (leaf 0xB): %s\n", n, cores, threads,
            ok ? "ok" : "WRONG");
    bad += !ok;
    /* Slots 0..cores-1 on distinct cores; slot cores+i on the same core as slot i. */
    int dup = 0, out_of_turn = 0;
    for (int s = 0; s < cores; s++)
        for (int k = 0; k < s; k++)
            dup += smp_core_of(smp_place_cpu(k)) == smp_core_of(smp_place_cpu(s));
    for (int s = cores; s < n; s++)
        out_of_turn += smp_core_of(smp_place_cpu(s)) != smp_core_of(smp_place_cpu(s - cores));
    ok = !dup && !out_of_turn;
    kprintf("smt: placement: slots 0-%d on %d distinct cores, then the cores' next threads in "
            "the same order: %s\n",
            cores - 1, cores, ok ? "ok" : "WRONG");
    bad += !ok;
    kprintf("smt: slots:");
    for (int s = 0; s < n; s++)
        kprintf(" %d", smp_place_cpu(s));
    kprintf("\n");
    if (bad)
        kprintf("smt: %d FAILED\n", bad);
    else
        kprintf("smt: all ok\n");
    return bad != 0;
}
