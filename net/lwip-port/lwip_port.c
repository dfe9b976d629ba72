/*
 * lwip_port.c: lwIP's platform layer in the unikernel: clock, random numbers, the
 * lightweight protection lwIP takes inside its pools, and the one lwIP lock.
 *
 * Lock order: lwip_lock (outer) -> sys_arch_protect (inner, taken by lwIP itself). Both
 * mask interrupts first, so neither can be interrupted on its own CPU by a handler that
 * wants it.
 */
#include <stdint.h>
#include "lwip/init.h"
#include "lwip/sys.h"
#include "lwip/debug.h"
#include "arch/sys_arch.h"
#include "lwip_port.h"
#include <uk/cpu.h>
#include <uk/spinlock.h>
#include <uk/time.h>

static spinlock_t lwip_port_core = SPINLOCK_INIT;
/* CPU holding lwip_port_core, -1 if none; written only by the holder. */
static volatile int lwip_port_core_cpu = -1;
/* Interrupt flags of the holder before lwip_lock(); only the holder touches them. */
static uint64_t lwip_port_core_flags;

static spinlock_t lwip_port_prot = SPINLOCK_INIT;
static volatile int lwip_port_prot_cpu = -1;
static unsigned lwip_port_prot_depth;

/* Any context: milliseconds since boot, lwIP's timer clock (wraps after 49 days; lwIP
 * compares times with wrap-safe subtraction). */
u32_t sys_now(void)
{
    return (u32_t)(time_ns() / 1000000u);
}

/* Any context (called under the lwIP lock): initial sequence numbers and port choices.
 * xorshift64 seeded from the TSC; not cryptographic, only unpredictable enough. */
uint32_t lwip_port_rand(void)
{
    static uint64_t s;
    uint64_t x = s;

    if (x == 0)
        x = rdtsc() | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s = x;
    return (uint32_t)(x >> 32);
}

/* Any context: lwIP's short critical sections (pool lists, pbuf reference counts). lwIP
 * may nest them, so the lock is recursive for the CPU holding it. Returns the interrupt
 * flags to hand back to sys_arch_unprotect(). */
sys_prot_t sys_arch_protect(void)
{
    uint64_t flags = irq_save();
    int me = cpu_id();

    if (lwip_port_prot_cpu != me) {
        spin_lock(&lwip_port_prot);
        lwip_port_prot_cpu = me;
    }
    lwip_port_prot_depth++;
    return flags;
}

/* Any context, by the holder, in reverse order of sys_arch_protect(). */
void sys_arch_unprotect(sys_prot_t flags)
{
    if (--lwip_port_prot_depth == 0) {
        lwip_port_prot_cpu = -1;
        spin_unlock(&lwip_port_prot);
    }
    irq_restore(flags);
}

/* Any context; see lwip_port.h. Not recursive: taking it twice on one CPU is a bug that
 * would deadlock, so it is reported. */
void lwip_lock(void)
{
    uint64_t flags = irq_save();

    LWIP_ASSERT("lwip_lock: already held by this CPU", lwip_port_core_cpu != cpu_id());
    spin_lock(&lwip_port_core);
    lwip_port_core_cpu = cpu_id();
    lwip_port_core_flags = flags;
}

/* Any context, by the holder. */
void lwip_unlock(void)
{
    uint64_t flags = lwip_port_core_flags;

    LWIP_ASSERT("lwip_unlock: not the holder", lwip_port_core_cpu == cpu_id());
    lwip_port_core_cpu = -1;
    spin_unlock(&lwip_port_core);
    irq_restore(flags);
}

/* Any context. Reading another CPU's id here is harmless: it is only ever compared with
 * ours, and only we can write ours. */
int lwip_core_locked(void)
{
    uint64_t flags = irq_save();
    int held = lwip_port_core_cpu == cpu_id();

    irq_restore(flags);
    return held;
}

/* Any context: LWIP_ASSERT_CORE_LOCKED() in every raw-API function. */
void lwip_port_assert_core_locked(void)
{
    LWIP_ASSERT("lwIP called without lwip_lock()", lwip_core_locked());
}

/* Task context, once: see lwip_port.h. */
void lwip_port_init(void)
{
    static volatile int done;

    lwip_lock();
    if (!done) {
        lwip_init();
        done = 1;
    }
    lwip_unlock();
}
