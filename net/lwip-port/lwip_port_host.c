/*
 * lwip_port_host.c: lwIP's platform layer for the host unit test (-DLWIP_PORT_HOST).
 *
 * Same functions as lwip_port.c, for one Linux thread: no interrupts to mask, no other
 * CPUs, so the locks only record that they are held (which keeps
 * LWIP_ASSERT_CORE_LOCKED() meaningful in the test).
 */
#include <stdint.h>
#include <time.h>
#include "lwip/init.h"
#include "lwip/sys.h"
#include "lwip/debug.h"
#include "arch/sys_arch.h"
#include "lwip_port.h"

static int lwip_port_host_locked;
static int lwip_port_host_prot_depth;

/* Test thread: milliseconds of CLOCK_MONOTONIC. */
u32_t sys_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (u32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* Test thread: deterministic xorshift32, so runs are reproducible. */
uint32_t lwip_port_rand(void)
{
    static uint32_t s = 2463534242u;

    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

/* Test thread: nesting depth only. */
sys_prot_t sys_arch_protect(void)
{
    lwip_port_host_prot_depth++;
    return 0;
}

/* Test thread: nesting depth only. */
void sys_arch_unprotect(sys_prot_t flags)
{
    LWIP_ASSERT("sys_arch_unprotect without protect", lwip_port_host_prot_depth > 0);
    lwip_port_host_prot_depth--;
}

/* Test thread: not recursive, as in the kernel. */
void lwip_lock(void)
{
    LWIP_ASSERT("lwip_lock: already held", !lwip_port_host_locked);
    lwip_port_host_locked = 1;
}

/* Test thread, by the holder. */
void lwip_unlock(void)
{
    LWIP_ASSERT("lwip_unlock: not held", lwip_port_host_locked);
    lwip_port_host_locked = 0;
}

/* Test thread. */
int lwip_core_locked(void)
{
    return lwip_port_host_locked;
}

/* Test thread: LWIP_ASSERT_CORE_LOCKED(). */
void lwip_port_assert_core_locked(void)
{
    LWIP_ASSERT("lwIP called without lwip_lock()", lwip_port_host_locked);
}

/* Test thread, once. */
void lwip_port_init(void)
{
    static int done;

    lwip_lock();
    if (!done) {
        lwip_init();
        done = 1;
    }
    lwip_unlock();
}
