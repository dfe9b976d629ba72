/*
 * fault_test.c: faults end the job with a report that names the fault, the address, the
 * CPU and the code (backtrace with symbols), and exit code EXIT_FAULT. The case files check
 * the report's content.
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "kernel/kstack.h"
#include "kernel/smp.h"
#include "memlayout.h"

__attribute__((noinline)) static void write_null(void)
{
    volatile int *p = 0;
    __asm__ volatile("" : "+r"(p)); /* the compiler must not see the NULL and drop the store */
    *p = 42;
}

KTEST(fault_null_write)
{
    write_null();
    return 0; /* not reached */
}

KTEST(fault_guard_page)
{
    uint64_t top = kstack_alloc();
    volatile uint64_t *guard = (volatile uint64_t *)(top - KSTACK_SIZE - 8);
    kprintf("fault: writing to %p, just below a kernel stack\n", (void *)guard);
    *guard = 1;
    return 0;
}

#pragma GCC diagnostic ignored "-Winfinite-recursion"
__attribute__((noinline)) static uint64_t recurse(uint64_t n)
{
    volatile char pad[512];
    pad[0] = (char)n;
    return recurse(n + 1) + pad[0];
}

KTEST(fault_stack_overflow)
{
    return (int)recurse(0);
}

KTEST(fault_invalid_opcode)
{
    __asm__ volatile("ud2");
    return 0;
}

static void null_on_ap(void *arg)
{
    write_null();
}

KTEST(fault_on_ap)
{
    if (smp_ncpus() < 2)
        return 3;
    smp_run(1, null_on_ap, 0);
    return 0;
}
