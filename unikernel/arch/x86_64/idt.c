/* idt.c: the shared IDT and the dispatch of every vector to its handler. */
#include "arch/x86_64/trap.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/x86.h"
#include "uk/console.h"
#include "kernel/sched.h"

struct gate {
    uint16_t off0, sel;
    uint8_t ist, type;
    uint16_t off1;
    uint32_t off2, rsv;
} __attribute__((packed));

static struct gate idt[256] __attribute__((aligned(16)));
static irq_handler_t handlers[256];
extern const uint64_t isr_table[256];
volatile uint64_t spurious_count;

static void set_gate(int v, uint64_t fn, int ist)
{
    idt[v] = (struct gate){
        .off0 = fn & 0xffff,
        .sel = SEL_KCODE,
        .ist = (uint8_t)ist,
        .type = 0x8e, /* present, DPL 0, 64-bit interrupt gate (IF cleared on entry) */
        .off1 = (fn >> 16) & 0xffff,
        .off2 = fn >> 32,
    };
}

/* Boot only (BSP), before interrupts are enabled. */
void idt_init(void)
{
    for (int v = 0; v < 256; v++)
        set_gate(v, isr_table[v], 0);
    set_gate(VEC_PAGE_FAULT, isr_table[VEC_PAGE_FAULT], IST_PF);
    set_gate(VEC_DOUBLE_FAULT, isr_table[VEC_DOUBLE_FAULT], IST_DF);
    set_gate(VEC_NMI, isr_table[VEC_NMI], IST_NMI);
    set_gate(VEC_MACHINE_CHK, isr_table[VEC_MACHINE_CHK], IST_MC);
    idt_load_this();
}

/* Boot / AP start-up, on the CPU itself. */
void idt_load_this(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) ptr = {sizeof idt - 1, (uint64_t)idt};
    __asm__ volatile("lidt %0" ::"m"(ptr));
}

/* Boot or task context, before the vector can fire. */
void irq_register(int vector, irq_handler_t fn)
{
    __atomic_store_n(&handlers[vector], fn, __ATOMIC_RELEASE);
}

/* Interrupt context (isr.S). Exceptions without a handler end the job with a report;
 * everything else runs its handler and is acknowledged at the local APIC. */
void trap_dispatch(struct trapframe *tf)
{
    int v = (int)tf->vector;
    irq_handler_t h = __atomic_load_n(&handlers[v], __ATOMIC_ACQUIRE);
    if (v < VEC_EXCEPTIONS) {
        if (h) {
            h(tf);
            return;
        }
        fault_report(tf, 0);
    }
    if (v == VEC_SPURIOUS) { /* no EOI for spurious interrupts */
        spurious_count++;
        return;
    }
    if (v >= VEC_PIC_BASE && v < VEC_DEVICE) {
        spurious_count++; /* a legacy PIC interrupt got through: the PIC is masked, ignore */
        return;
    }
    if (h)
        h(tf);
    else
        kprintf("cpu %d: unexpected interrupt vector %d\n", this_cpu()->id, v);
    lapic_eoi();
    /* After the EOI: a task switched away here must not keep this vector in service. */
    if (v == VEC_LAPIC_TIMER || v == VEC_IPI_WAKE)
        sched_preempt_check(tf);
}
