/*
 * gdt.c: one GDT for all CPUs (kernel code/data, plus a TSS descriptor per CPU) and each
 * CPU's TSS, whose interrupt stack table gives faults a known-good stack.
 */
#include "arch/x86_64/gdt.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"

/* 0: null, 0x08: kernel code 64, 0x10: kernel data, 0x18: 32-bit code (unused here),
 * 0x20 + 16*i: TSS of CPU i (16-byte system descriptor). */
static uint64_t gdt[4 + 2 * MAX_CPUS] __attribute__((aligned(16))) = {
    0,
    0x00af9a000000ffff,
    0x00cf92000000ffff,
    0x00cf9a000000ffff,
};

static void tss_descriptor(int cpu, struct tss *t)
{
    uint64_t base = (uint64_t)t, limit = sizeof *t - 1;
    uint64_t lo = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
                  (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    gdt[4 + 2 * cpu] = lo;
    gdt[4 + 2 * cpu + 1] = base >> 32;
}

/* Boot / AP start-up, on the CPU itself: load the GDT, the segments and this CPU's TSS.
 * `ist` gives the tops of the stacks for IST slots 1..4. */
void gdt_init_this(const uint64_t ist[4])
{
    struct percpu *p = this_cpu();
    for (int i = 0; i < 4; i++)
        p->tss.ist[i] = ist[i];
    p->tss.iomap = sizeof p->tss; /* no I/O bitmap */
    tss_descriptor(p->id, &p->tss);

    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) ptr = {sizeof gdt - 1, (uint64_t)gdt};
    __asm__ volatile("lgdt %0\n\t"
                     "pushq $0x08\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "movw $0x10, %%ax\n\t"
                     "movw %%ax, %%ds\n\t"
                     "movw %%ax, %%es\n\t"
                     "movw %%ax, %%ss\n\t"
                     :
                     : "m"(ptr)
                     : "rax", "memory");
    uint16_t sel = SEL_TSS0 + 16 * p->id;
    __asm__ volatile("ltr %0" ::"r"(sel));
}
