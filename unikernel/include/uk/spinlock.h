/*
 * spinlock.h: spinlocks for SMP.
 *
 * spin_lock()/spin_unlock(): for data never touched from interrupt context.
 * spin_lock_irqsave()/spin_unlock_irqrestore(): for data an interrupt handler may touch on
 *   this CPU; interrupts stay masked while the lock is held, so the handler cannot spin on a
 *   lock its own CPU holds.
 * rspin_*: recursive (re-entrant by the same owner), for newlib's retargetable locks; the
 *   owner is the current CPU (later: the current task). Never take one from an interrupt.
 */
#ifndef UK_SPINLOCK_H
#define UK_SPINLOCK_H
#include <stdint.h>

typedef struct spinlock {
    volatile uint32_t locked;
    int cpu; /* holder, for debugging; -1 when free */
} spinlock_t;

#define SPINLOCK_INIT                                                                              \
    {                                                                                              \
        0, -1                                                                                      \
    }

void spin_lock(spinlock_t *l);
void spin_unlock(spinlock_t *l);
int spin_trylock(spinlock_t *l); /* 1 if taken */
uint64_t spin_lock_irqsave(spinlock_t *l);
void spin_unlock_irqrestore(spinlock_t *l, uint64_t flags);

typedef struct rspinlock {
    spinlock_t lock;
    volatile long owner; /* owner id, 0 when free */
    uint32_t depth;
} rspinlock_t;

#define RSPINLOCK_INIT                                                                             \
    {                                                                                              \
        SPINLOCK_INIT, 0, 0                                                                        \
    }

void rspin_lock(rspinlock_t *l);
int rspin_trylock(rspinlock_t *l);
void rspin_unlock(rspinlock_t *l);

#endif
