/* cpu.h: per-CPU identity and the few x86 instructions everybody needs. */
#ifndef UK_CPU_H
#define UK_CPU_H
#include <stdint.h>

/* Where %gs's per-CPU block (arch/x86_64/percpu.h) keeps the CPU's index, and the task
 * running on the CPU (kernel/sched.h's task_current). */
#define PERCPU_ID_OFFSET      8
#define PERCPU_CURRENT_OFFSET 24

/* Any context, once percpu_init_this() ran on this CPU. Index of the running CPU, 0 = the
 * boot CPU, dense up to ncpus-1. One load: inline, as most kernel paths ask for it. The
 * host tests of the kernel's libc (UK_CPU_ID_EXTERN) run as a Linux process and supply
 * their own. */
#ifdef UK_CPU_ID_EXTERN
int cpu_id(void);
#else
static inline int cpu_id(void)
{
    int id;
    __asm__ volatile("movl %%gs:%c1, %0" : "=r"(id) : "i"(PERCPU_ID_OFFSET));
    return id;
}
#endif
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
