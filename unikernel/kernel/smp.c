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
#include "uk/time.h"
#include "uk/cpu.h"

struct ap_params { /* the block at the end of the trampoline (ap_boot.S) */
    uint64_t boot_cr3, entry, cr3, stack, cpu;
};

extern const char ap_tramp_start[], ap_tramp_end[], ap_tramp_params[];
extern char boot_pml4[];
extern void ap_entry64(void);

static uint64_t ap_ist[MAX_CPUS][4];

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
    for (int i = 0; i < 4; i++)
        ap_ist[cpu][i] = kstack_alloc();
    if (!stack || !ap_ist[cpu][3])
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

/* Boot only (BSP). */
int smp_boot(void)
{
    for (int i = 1; i < acpi.ncpus; i++)
        if (start_ap(i, acpi.cpu_apic_id[i]))
            kprintf("smp: cpu %d (APIC id %u) did not come up\n", i, acpi.cpu_apic_id[i]);
    if (acpi.cpus_ignored)
        kprintf("smp: %d more CPUs ignored (MAX_CPUS is %d)\n", acpi.cpus_ignored, MAX_CPUS);
    return ncpus_online;
}

int smp_ncpus(void)
{
    return ncpus_online;
}
