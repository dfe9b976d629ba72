/*
 * ipi.c: inter-processor interrupts and work for idle CPUs.
 *
 * smp_run() puts a function in the target's mailbox and wakes it with an IPI; the target's
 * idle loop runs it in task context with interrupts on (so it may itself wait for IPIs,
 * which a function run inside an IPI handler could not: the in-service vector would block
 * every IPI of the same priority class). PING/PONG measure the bare IPI round trip; STOP
 * parks a CPU for good (machine_exit, fault reports).
 */
#include "kernel/smp.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/io.h"
#include "uk/spinlock.h"
#include "uk/time.h"
#include "uk/cpu.h"

struct mailbox {
    spinlock_t lock; /* held by the caller of smp_run() until the work is done */
    void (*volatile fn)(void *);
    void *volatile arg;
    volatile int done;
    volatile int ping_from;
    volatile uint64_t pongs;
} __attribute__((aligned(64)));

static struct mailbox mbox[MAX_CPUS];

/* Any context. */
void ipi_send(int cpu, int vector)
{
    lapic_send_ipi(percpu[cpu].apic_id, vector);
}

/* Any context. */
void ipi_broadcast(int vector)
{
    lapic_send_ipi_all(vector);
}

static void on_ping(struct trapframe *tf)
{
    struct percpu *p = this_cpu();
    p->ipi_count++;
    ipi_send(mbox[p->id].ping_from, VEC_IPI_PONG);
}

static void on_pong(struct trapframe *tf)
{
    __atomic_add_fetch(&mbox[this_cpu()->id].pongs, 1, __ATOMIC_RELEASE);
}

static void on_wake(struct trapframe *tf)
{
    this_cpu()->ipi_count++; /* returning from the interrupt ends the hlt: that is the point */
}

static void on_stop(struct trapframe *tf)
{
    irq_disable();
    for (;;)
        halt();
}

/* Boot only. */
void ipi_init(void)
{
    irq_register(VEC_IPI_PING, on_ping);
    irq_register(VEC_IPI_PONG, on_pong);
    irq_register(VEC_IPI_WAKE, on_wake);
    irq_register(VEC_IPI_STOP, on_stop);
}

/* Task context; see smp.h. The mailbox lock is held from here until smp_wait(). */
int smp_post(int cpu, void (*fn)(void *), void *arg)
{
    if (cpu < 0 || cpu >= MAX_CPUS || !percpu[cpu].online || cpu == cpu_id())
        return -1;
    struct mailbox *m = &mbox[cpu];
    spin_lock(&m->lock);
    m->arg = arg;
    m->done = 0;
    __atomic_store_n(&m->fn, fn, __ATOMIC_RELEASE);
    ipi_send(cpu, VEC_IPI_WAKE);
    return 0;
}

/* Task context; after a successful smp_post(cpu, ...). */
void smp_wait(int cpu)
{
    struct mailbox *m = &mbox[cpu];
    while (!__atomic_load_n(&m->done, __ATOMIC_ACQUIRE))
        cpu_relax();
    spin_unlock(&m->lock);
}

/* Task context; see smp.h. */
int smp_run(int cpu, void (*fn)(void *), void *arg)
{
    if (smp_post(cpu, fn, arg))
        return -1;
    smp_wait(cpu);
    return 0;
}

/* Scheduler context, interrupts off; see smp.h. */
int smp_mailbox_poll(void)
{
    struct mailbox *m = &mbox[cpu_id()];
    void (*fn)(void *) = __atomic_load_n(&m->fn, __ATOMIC_ACQUIRE);
    if (!fn)
        return 0;
    m->fn = 0;
    irq_enable();
    fn(m->arg);
    __atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
    return 1;
}

/* Task context, interrupts on; see smp.h. One ping in flight per target at a time:
 * callers serialise (tests and benchmarks run one pinger per target). */
uint64_t ipi_ping(int cpu)
{
    struct mailbox *me = &mbox[cpu_id()];
    uint64_t before = __atomic_load_n(&me->pongs, __ATOMIC_ACQUIRE);
    mbox[cpu].ping_from = cpu_id();
    uint64_t t0 = rdtsc();
    ipi_send(cpu, VEC_IPI_PING);
    uint64_t limit = tsc_hz / 10;
    while (__atomic_load_n(&me->pongs, __ATOMIC_ACQUIRE) == before) {
        if (rdtsc() - t0 > limit)
            return 0;
        cpu_relax();
    }
    return rdtsc() - t0;
}
