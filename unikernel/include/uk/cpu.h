/* cpu.h: per-CPU identity and the few x86 instructions everybody needs. */
#ifndef UK_CPU_H
#define UK_CPU_H
#include <stdint.h>

/* Any context. Index of the running CPU, 0 = the boot CPU, dense up to ncpus-1. */
int cpu_id(void);
extern volatile int ncpus_online;

static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}

static inline uint64_t irq_save(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(f)::"memory");
    return f;
}

static inline void irq_restore(uint64_t f)
{
    if (f & 0x200)
        __asm__ volatile("sti" ::: "memory");
}

static inline void irq_enable(void)
{
    __asm__ volatile("sti" ::: "memory");
}

static inline void irq_disable(void)
{
    __asm__ volatile("cli" ::: "memory");
}

#endif
