/*
 * libc_lock.c: newlib's retargetable locks on the kernel's recursive spinlocks.
 *
 * newlib (built with --enable-newlib-retargetable-locking) calls these around stdio
 * (one lock per FILE plus the stream-list and init locks), malloc, atexit, the
 * environment and the time zone. We back every one of them, recursive or not, with an
 * rspinlock_t: a recursive lock is a correct implementation of a plain one, and
 * printf -> malloc -> (nested stdio) re-enters on the same CPU.
 *
 * Hazard: these locks are owned by a CPU and spin with interrupts enabled. An interrupt
 * handler that called printf or malloc could spin forever on a lock its own CPU holds,
 * or (worse, being recursive) walk into a half-updated malloc arena. So newlib's stdio and
 * malloc are for task context only; interrupt handlers use kprintf() and pools.
 *
 * newlib's dummy lock.o defines all of these symbols together; defining them here keeps
 * it out of the link (defining only some would give duplicate symbols).
 */
#include <sys/lock.h>
#include <uk/spinlock.h>

struct __lock {
    rspinlock_t l;
};

/* The static locks newlib names (see newlib's libc/misc/lock.c for the list). */
struct __lock __lock___sinit_recursive_mutex = {RSPINLOCK_INIT};
struct __lock __lock___sfp_recursive_mutex = {RSPINLOCK_INIT};
struct __lock __lock___atexit_recursive_mutex = {RSPINLOCK_INIT};
struct __lock __lock___at_quick_exit_mutex = {RSPINLOCK_INIT};
struct __lock __lock___malloc_recursive_mutex = {RSPINLOCK_INIT};
struct __lock __lock___env_recursive_mutex = {RSPINLOCK_INIT};
struct __lock __lock___tz_mutex = {RSPINLOCK_INIT};
struct __lock __lock___dd_hash_mutex = {RSPINLOCK_INIT};
struct __lock __lock___arc4random_mutex = {RSPINLOCK_INIT};

/*
 * Dynamic locks (one per FILE) come from a fixed pool, not from malloc: fopen() creates
 * its lock while holding the stream-list lock, and malloc here would tie the two lock
 * orders together. When the pool is empty, streams share libc_lock_overflow: slower,
 * still correct.
 */
#define LIBC_LOCK_POOL 128
static struct __lock libc_lock_pool[LIBC_LOCK_POOL];
static unsigned char libc_lock_used[LIBC_LOCK_POOL];
static spinlock_t libc_lock_pool_lock = SPINLOCK_INIT;
static struct __lock libc_lock_overflow = {RSPINLOCK_INIT};

/* Task context; returns a free lock from the pool (or the shared overflow lock). */
static struct __lock *libc_lock_alloc(void)
{
    struct __lock *l = &libc_lock_overflow;

    spin_lock(&libc_lock_pool_lock);
    for (int i = 0; i < LIBC_LOCK_POOL; i++) {
        if (!libc_lock_used[i]) {
            libc_lock_used[i] = 1;
            l = &libc_lock_pool[i];
            l->l = (rspinlock_t)RSPINLOCK_INIT;
            break;
        }
    }
    spin_unlock(&libc_lock_pool_lock);
    return l;
}

/* Task context; gives a pool lock back (the overflow and static locks are never freed). */
static void libc_lock_free(struct __lock *l)
{
    if (l < libc_lock_pool || l >= libc_lock_pool + LIBC_LOCK_POOL)
        return;
    spin_lock(&libc_lock_pool_lock);
    libc_lock_used[l - libc_lock_pool] = 0;
    spin_unlock(&libc_lock_pool_lock);
}

/* Task context (newlib, when it creates a FILE). */
void __retarget_lock_init(_LOCK_T *lock)
{
    *lock = libc_lock_alloc();
}

/* Task context (newlib, when it creates a FILE). */
void __retarget_lock_init_recursive(_LOCK_T *lock)
{
    *lock = libc_lock_alloc();
}

/* Task context (newlib, when it closes a FILE); the lock must be free. */
void __retarget_lock_close(_LOCK_T lock)
{
    libc_lock_free(lock);
}

/* Task context (newlib, when it closes a FILE); the lock must be free. */
void __retarget_lock_close_recursive(_LOCK_T lock)
{
    libc_lock_free(lock);
}

/* Task context only (see the hazard above); spins until the lock is ours. */
void __retarget_lock_acquire(_LOCK_T lock)
{
    rspin_lock(&lock->l);
}

/* Task context only; spins until the lock is ours, or at once if this CPU holds it. */
void __retarget_lock_acquire_recursive(_LOCK_T lock)
{
    rspin_lock(&lock->l);
}

/* Task context only; returns nonzero if the lock was taken. */
int __retarget_lock_try_acquire(_LOCK_T lock)
{
    return rspin_trylock(&lock->l);
}

/* Task context only; returns nonzero if the lock was taken. */
int __retarget_lock_try_acquire_recursive(_LOCK_T lock)
{
    return rspin_trylock(&lock->l);
}

/* Task context, by the holder. */
void __retarget_lock_release(_LOCK_T lock)
{
    rspin_unlock(&lock->l);
}

/* Task context, by the holder; the lock is free after as many releases as acquires. */
void __retarget_lock_release_recursive(_LOCK_T lock)
{
    rspin_unlock(&lock->l);
}
