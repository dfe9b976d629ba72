/*
 * smp.c: start the application processors (INIT, STARTUP, STARTUP, as the MP
 * specification has it), one at a time, each on its own guarded kernel stack, and give
 * each its GDT/TSS/IDT, local APIC and per-CPU data.
 */
#include "kernel/smp.h"
#include "kernel/sched.h"
#include "kernel/kstack.h"
#include "kernel/vmm.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/gdt.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "uk/console.h"
#include "uk/power.h"
#include "uk/time.h"
#include "uk/cpu.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/x86.h"

struct ap_params { /* the block at the end of the trampoline (ap_boot.S) */
    uint64_t boot_cr3, entry, cr3, stack, cpu;
};

extern const char ap_tramp_start[], ap_tramp_end[], ap_tramp_params[];
extern char boot_pml4[];
extern void ap_entry64(void);

static uint64_t ap_ist[MAX_CPUS][KSTACKS_PER_CPU - 1];

/* APIC id -> CPU index (-1: none), one entry per id the board allows; filled by
 * smp_boot() before any AP starts, read-only after. */
static int16_t cpu_of_apic[MAX_APIC_ID + 1];
_Static_assert(MAX_CPUS <= 32767, "cpu_of_apic holds CPU indices in 16 bits");

/* Bits of the APIC id below the core id (CPUID leaf 0xB, SMT level): threads of one core
 * differ only there. 0 when the CPU does not say (every CPU its own core). */
static int smt_shift;

/* Rank placement order (smp_place_cpu): CPU indices, the first thread of every core first,
 * then the second of every core, and so on; built by smp_boot(), read-only after. */
static int16_t place_order[MAX_CPUS];

void ap_main(int cpu);

/* AP start-up, on the AP itself: from here on it is a CPU like the boot CPU. */
void ap_main(int cpu)
{
    percpu_init_this(cpu, percpu[cpu].apic_id);
    gdt_init_this(ap_ist[cpu]);
    idt_load_this();
    lapic_init_this();
    __atomic_add_fetch(&ncpus_online, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&percpu[cpu].online, 1, __ATOMIC_RELEASE);
    sched_loop();
}

static int start_ap(int cpu, uint32_t apic_id)
{
    uint64_t stack = kstack_alloc();
    for (int i = 0; i < KSTACKS_PER_CPU - 1; i++)
        ap_ist[cpu][i] = kstack_alloc();
    if (!stack || !ap_ist[cpu][KSTACKS_PER_CPU - 2])
        return -1;
    percpu[cpu].apic_id = apic_id;
    percpu[cpu].kstack_top = stack;

    char *tramp = P2V(AP_TRAMPOLINE_PHYS);
    for (const char *s = ap_tramp_start; s < ap_tramp_end; s++)
        tramp[s - ap_tramp_start] = *s;
    struct ap_params *p = (void *)(tramp + (ap_tramp_params - ap_tramp_start));
    p->boot_cr3 = (uint64_t)boot_pml4; /* boot tables live at their physical address */
    p->entry = (uint64_t)ap_entry64;
    p->cr3 = kernel_pml4;
    p->stack = stack;
    p->cpu = (uint64_t)cpu;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    lapic_send_init(apic_id);
    udelay(10000);
    for (int i = 0; i < 2 && !percpu[cpu].online; i++) {
        lapic_send_sipi(apic_id, AP_TRAMPOLINE_PHYS >> 12);
        uint64_t t0 = time_ns();
        /* TCG may take a while to schedule a fresh vCPU thread: wait up to 1 s. */
        while (!__atomic_load_n(&percpu[cpu].online, __ATOMIC_ACQUIRE) &&
               time_ns() - t0 < (i ? 1000000000ULL : 200000ULL))
            cpu_relax();
    }
    return percpu[cpu].online ? 0 : -1;
}

/* Boot only (BSP): the SMT width from CPUID leaf 0xB sub-leaf 0, if it is the SMT level. */
static void topology_init(void)
{
    uint32_t r[4];
    cpuid(0, 0, r);
    if (r[0] < CPUID_LEAF_TOPO)
        return;
    cpuid(CPUID_LEAF_TOPO, 0, r);
    if (r[1] && ((r[2] >> 8) & 0xff) == CPUID_TOPO_LEVEL_SMT)
        smt_shift = (int)(r[0] & 0x1f);
}

/* Boot only (BSP), the CPUs online. Sorted by (thread within its core, CPU index): without
 * SMT every thread index is 0 and the order is the CPUs' own. Insertion sort: 288 CPUs at
 * most, once. */
static void place_init(void)
{
    uint32_t mask = (1u << smt_shift) - 1;
    for (int i = 0; i < ncpus_online; i++) {
        int16_t c = (int16_t)i;
        int k = i;
        for (; k > 0 && (percpu[place_order[k - 1]].apic_id & mask) > (percpu[c].apic_id & mask);
             k--)
            place_order[k] = place_order[k - 1];
        place_order[k] = c;
    }
}

/* Boot only (BSP). */
int smp_boot(void)
{
    for (uint32_t a = 0; a <= MAX_APIC_ID; a++)
        cpu_of_apic[a] = -1;
    if (percpu[0].apic_id > MAX_APIC_ID) /* the other CPUs' ids acpi.c already checked */
        panic("boot CPU: APIC id %u above MAX_APIC_ID %d (boards/*/board.mk)", percpu[0].apic_id,
              MAX_APIC_ID);
    cpu_of_apic[percpu[0].apic_id] = 0;
    topology_init();
    for (int i = 1; i < acpi.ncpus; i++) {
        cpu_of_apic[acpi.cpu_apic_id[i]] = (int16_t)i;
        if (start_ap(i, acpi.cpu_apic_id[i]))
            kprintf("smp: cpu %d (APIC id %u) did not come up\n", i, acpi.cpu_apic_id[i]);
    }
    if (acpi.cpus_ignored)
        kprintf("smp: %d more CPUs ignored (MAX_CPUS is %d, MAX_APIC_ID %d)\n", acpi.cpus_ignored,
                MAX_CPUS, MAX_APIC_ID);
    place_init();
    return ncpus_online;
}

/* Any context. */
int smp_cpu_of_apic(uint32_t apic_id)
{
    return apic_id <= MAX_APIC_ID ? cpu_of_apic[apic_id] : -1;
}

/* Any context, after smp_boot(). */
uint32_t smp_core_of(int cpu)
{
    return percpu[cpu].apic_id >> smt_shift;
}

/* Any context, after smp_boot(). */
int smp_threads_per_core(void)
{
    return 1 << smt_shift;
}

/* Any context, after smp_boot(). */
int smp_place_cpu(int slot)
{
    return place_order[(unsigned)slot % (unsigned)ncpus_online];
}

int smp_ncpus(void)
{
    return ncpus_online;
}
