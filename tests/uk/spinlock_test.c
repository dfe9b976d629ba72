/* spinlock_test.c: every CPU hammers two counters, one under an interrupt-safe spinlock and
 * one under a recursive lock taken twice (nested); both totals must be exact. */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/spinlock.h"
#include "uk/cpu.h"
#include "kernel/smp.h"

#define ITERS 20000

static spinlock_t lock = SPINLOCK_INIT;
static rspinlock_t rlock = RSPINLOCK_INIT;
static volatile uint64_t count_a; /* under lock */
static volatile uint64_t count_b; /* under rlock */

static void hammer(void *arg)
{
    for (int i = 0; i < ITERS; i++) {
        uint64_t f = spin_lock_irqsave(&lock);
        count_a = count_a + 1; /* a plain read-modify-write: only the lock keeps it exact */
        spin_unlock_irqrestore(&lock, f);

        rspin_lock(&rlock);
        rspin_lock(&rlock); /* nested by the same owner */
        count_b = count_b + 1;
        rspin_unlock(&rlock);
        rspin_unlock(&rlock);
    }
}

KTEST(spinlock_smp)
{
    int n = smp_ncpus();
    for (int i = 1; i < n; i++)
        smp_post(i, hammer, 0);
    hammer(0);
    for (int i = 1; i < n; i++)
        smp_wait(i);
    uint64_t want = (uint64_t)n * ITERS;
    int ok = count_a == want && count_b == want;
    kprintf("spinlock: %d CPUs x %d: irqsave lock %lu, recursive lock %lu, expected %lu %s\n", n,
            ITERS, count_a, count_b, want, ok ? "ok" : "LOST UPDATES");
    return ok ? 0 : 1;
}
