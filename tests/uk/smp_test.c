/* smp_test.c: every CPU QEMU was given comes online and runs work handed to it. */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "kernel/smp.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu.h"

static volatile int seen[MAX_CPUS];

static void where_am_i(void *arg)
{
    int cpu = cpu_id();
    /* The CPU reports itself from its own registers: percpu via %gs, APIC id from the APIC. */
    if (lapic_id() == percpu[cpu].apic_id)
        seen[cpu] = 1;
}

/* args: the CPU count QEMU was started with. */
KTEST(smp_online)
{
    int want = 0;
    for (const char *s = args; *s >= '0' && *s <= '9'; s++)
        want = want * 10 + (*s - '0');
    int n = smp_ncpus();
    kprintf("smp: %d of %d CPUs in the MADT online\n", n, acpi.ncpus);
    seen[0] = lapic_id() == percpu[0].apic_id;
    for (int i = 1; i < n; i++)
        if (smp_run(i, where_am_i, 0))
            kprintf("smp: cpu %d refused work\n", i);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        kprintf("smp: cpu %d apic %u %s\n", i, percpu[i].apic_id, seen[i] ? "ran work" : "SILENT");
        ok += seen[i];
    }
    kprintf("smp: %d CPUs online and working\n", ok);
    return ok == want && n == want ? 0 : 1;
}
