/*
 * main.c: the boot CPU's way from boot.S to a running machine, in order:
 * console, boot information, descriptor tables, memory (frames, page tables, stacks,
 * heap), interrupt controllers and clocks, the other CPUs; then the job (or a test).
 */
#include "kernel/bootinfo.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "kernel/kstack.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/ktest_run.h"
#include "kernel/demo.h"
#include "kernel/sched.h"
#include "pvas/job.h"
#include "pvas/pvas.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/gdt.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/numa.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/pic.h"
#include "arch/x86_64/trap.h"
#include "uk/console.h"
#include "uk/power.h"
#include "uk/time.h"
#include "uk/cpu.h"
#include "uk/net.h"
#ifdef BOARD_HOSTED
#include "hosted.h"
#endif

void kmain(uint32_t kind, uint32_t info_phys, uint32_t mb_magic);

/* The boot CPU's interrupt stacks, before kstack_alloc() exists. */
static uint8_t bsp_ist[4][16384] __attribute__((aligned(16)));

static void kmain_on_kstack(void);

/* Boot only: called once by boot.S on the boot CPU, interrupts off. */
uint64_t boot_tsc; /* TSC when the kernel's C code started (boot benchmarks) */

void kmain(uint32_t kind, uint32_t info_phys, uint32_t mb_magic)
{
    boot_tsc = rdtsc();
    percpu_init_this(0, 0);
    console_init();
    bootinfo_parse(kind, info_phys, mb_magic);
    uint64_t ist[4];
    for (int i = 0; i < 4; i++)
        ist[i] = (uint64_t)bsp_ist[i] + sizeof bsp_ist[i];
    gdt_init_this(ist);
    idt_init();
    pmm_init();
    vmm_init();
    uint64_t stack = kstack_alloc();
    if (!stack)
        panic("no memory for the boot CPU's stack");
    percpu[0].kstack_top = stack;
    stack_switch(stack, kmain_on_kstack);
}

static void report(void)
{
    uint64_t usable = pmm_total_frames() * PAGE_SIZE, free = pmm_free_frames() * PAGE_SIZE;
    kprintf("ukmpi unikernel, booted by %s; command line: \"%s\"\n", bootinfo.loader,
            bootinfo.cmdline);
    kprintf("cpus: %d online (", ncpus_online);
    for (int i = 0; i < MAX_CPUS; i++)
        if (percpu[i].online)
            kprintf(i ? " %u" : "APIC ids %u", percpu[i].apic_id);
    kprintf("), %s, TSC %lu.%03lu MHz, LAPIC timer %lu.%03lu MHz\n", lapic_mode_name(),
            tsc_hz / 1000000, tsc_hz / 1000 % 1000, lapic_timer_hz / 1000000,
            lapic_timer_hz / 1000 % 1000);
    kprintf("topology: largest APIC id %u, %d thread(s) per core\n", acpi.max_apic_id,
            smp_threads_per_core());
    numa_report();
    kprintf("memory: %lu MiB usable, %lu MiB free, %d regions in the map\n", usable >> 20,
            free >> 20, bootinfo.nregions);
    if (bootinfo.initrd_size)
        kprintf("initrd: %lu bytes at 0x%lx\n", bootinfo.initrd_size, bootinfo.initrd_phys);
}

/* The init task: a kernel test, the job in the initrd, or the demo; then the machine ends
 * with its exit code. Jobs end the machine themselves when their last rank exits. */
static void init_main(void *arg)
{
    if (ktest_requested())
        machine_exit(ktest_run_from_cmdline());
    if (job_present())
        machine_exit(job_run());
    machine_exit(demo_run());
}

static void kmain_on_kstack(void)
{
#ifdef BOARD_HOSTED
    hosted_platform_init(); /* CPUs from the command line: the ACPI tables are Linux's */
#else
    pic_disable();
    acpi_init(lapic_cpuid_id());
#endif
    lapic_init_bsp(acpi.lapic_phys);
    percpu[0].apic_id = lapic_id();
    if (percpu[0].apic_id != acpi.cpu_apic_id[0])
        panic("boot CPU: APIC id %u, CPUID said %u", percpu[0].apic_id, acpi.cpu_apic_id[0]);
    ioapic_init();
#ifdef BOARD_HOSTED
    hosted_tsc_init(); /* the PIT and the CMOS clock are Linux's */
#else
    tsc_calibrate();
#endif
    timer_calibrate();
    ipi_init();
    ncpus_online = 1;
    percpu[0].online = 1;
    irq_enable();
    smp_boot();
    report();
    net_init(); /* lwIP on virtio-net, or hosted on ukvnic.c's rings, if there is a NIC */
    sched_init();
    pvas_init();

    /* What this machine is for runs as the first task, on CPU 0; the boot context becomes
     * CPU 0's scheduler, like every AP's. */
    static struct task init_task = {.name = "init", .cpu = 0};
    uint64_t init_stack = kstack_alloc();
    if (!init_stack)
        panic("no memory for the init task's stack");
    init_task.entry = init_main;
    init_task.cr3 = kernel_pml4;
    task_init(&init_task, init_stack);
    task_start(&init_task);
    sched_loop();
}
