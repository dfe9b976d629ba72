/*
 * percpu.h: what each CPU owns. %gs points at the running CPU's struct percpu (set by
 * percpu_init_this()), so cpu_id() is one load and needs no lock.
 */
#ifndef UK_PERCPU_H
#define UK_PERCPU_H
#include <stdint.h>
#include "memlayout.h"
#include "uk/cpu.h"

struct task;

struct tss {
    uint32_t rsv0;
    uint64_t rsp[3];
    uint64_t rsv1;
    uint64_t ist[7];
    uint64_t rsv2;
    uint16_t rsv3;
    uint16_t iomap;
} __attribute__((packed));

/* Interrupt stack table slots (1-based, as the IDT encodes them). */
#define IST_PF  1 /* page faults: a stack overflow must still be reported */
#define IST_DF  2
#define IST_NMI 3
#define IST_MC  4

struct percpu {
    struct percpu *self; /* offset 0: read by this_cpu() */
    int id;              /* offset 8: read by cpu_id() */
    uint32_t apic_id;
    uint64_t irq_entry_tsc; /* offset 16: TSC at the last interrupt entry (isr.S writes it) */
    struct task *current;   /* offset 24: the task running here, NULL in the scheduler
                             * context; written by sched.c only, read by task_current() */
    uint64_t kstack_top;
    volatile int online;
    int fault_depth; /* > 0 while this CPU reports a fault */
    volatile uint64_t timer_ticks;
    volatile uint64_t ipi_count;
    struct tss tss __attribute__((aligned(16)));
};

_Static_assert(__builtin_offsetof(struct percpu, id) == PERCPU_ID_OFFSET,
               "isr.S and cpu_id() use it");
_Static_assert(__builtin_offsetof(struct percpu, irq_entry_tsc) == 16, "isr.S uses offset 16");
_Static_assert(__builtin_offsetof(struct percpu, current) == PERCPU_CURRENT_OFFSET,
               "task_current() uses it");

extern struct percpu percpu[MAX_CPUS];

static inline struct percpu *this_cpu(void)
{
    struct percpu *p;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(p));
    return p;
}

/* Boot (BSP) or AP start-up: make %gs point at percpu[id]. */
void percpu_init_this(int id, uint32_t apic_id);

#endif
