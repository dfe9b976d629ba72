/* spinlock.c: see uk/spinlock.h. Test-and-test-and-set with pause; no fairness needed at our
 * core counts, and no sleeping: a holder never blocks. */
#include "uk/spinlock.h"
#include "uk/cpu.h"

/* Any context (the caller decides about interrupts, see spinlock.h). */
void spin_lock(spinlock_t *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            cpu_relax();
    }
    l->cpu = cpu_id();
}

/* Any context. */
int spin_trylock(spinlock_t *l)
{
    if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        return 0;
    l->cpu = cpu_id();
    return 1;
}

/* Any context; the caller holds `l`. */
void spin_unlock(spinlock_t *l)
{
    l->cpu = -1;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* Any context. Returns the previous interrupt state for spin_unlock_irqrestore(). */
uint64_t spin_lock_irqsave(spinlock_t *l)
{
    uint64_t f = irq_save();
    spin_lock(l);
    return f;
}

/* Any context; the caller holds `l`. */
void spin_unlock_irqrestore(spinlock_t *l, uint64_t flags)
{
    spin_unlock(l);
    irq_restore(flags);
}

/* The owner of a recursive lock: the CPU for now (the scheduler will make it the task). */
static long rspin_self(void)
{
    return cpu_id() + 1;
}

/* Task context only (never from an interrupt: the interrupted owner would be re-entered). */
void rspin_lock(rspinlock_t *l)
{
    long me = rspin_self();
    if (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) == me) {
        l->depth++;
        return;
    }
    spin_lock(&l->lock);
    __atomic_store_n(&l->owner, me, __ATOMIC_RELEASE);
    l->depth = 1;
}

/* Task context only. */
int rspin_trylock(rspinlock_t *l)
{
    long me = rspin_self();
    if (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) == me) {
        l->depth++;
        return 1;
    }
    if (!spin_trylock(&l->lock))
        return 0;
    __atomic_store_n(&l->owner, me, __ATOMIC_RELEASE);
    l->depth = 1;
    return 1;
}

/* Task context only; the caller owns `l`. */
void rspin_unlock(rspinlock_t *l)
{
    if (--l->depth == 0) {
        __atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
        spin_unlock(&l->lock);
    }
}
