/*
 * libc_host_kernel.c: just enough of the kernel API (unikernel/include/uk/) on Linux,
 * through raw system calls, to run the kernel's newlib glue (unikernel/libc/) and the
 * newlib ktests as a normal process, linked against our own newlib (app flavor) instead
 * of glibc. One thread: the locks only count.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <uk/console.h>
#include <uk/cpu.h>
#include <uk/heap.h>
#include <uk/power.h>
#include <uk/spinlock.h>
#include <uk/time.h>

volatile int ncpus_online = 1;
uint64_t tsc_hz = 1000000000;

/* Test process: a Linux system call with up to three arguments. */
static long libc_host_syscall(long nr, long a, long b, long c)
{
    long ret;

    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

/* Test process: write(2) to stdout. */
void console_write(const char *buf, size_t len)
{
    libc_host_syscall(1, 1, (long)buf, (long)len);
}

/* Test process. */
void kprintf(const char *fmt, ...)
{
    char b[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(b, sizeof(b), fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(b) - 1)
        n = sizeof(b) - 1;
    if (n > 0)
        console_write(b, (size_t)n);
}

/* Test process: exit_group(2). */
void machine_exit(int code)
{
    for (;;)
        libc_host_syscall(231, code, 0, 0);
}

/* Test process: one CPU. */
int cpu_id(void)
{
    return 0;
}

/* Test process: clock_gettime(2) on clock `id`, in ns. */
static uint64_t libc_host_clock(long id)
{
    struct {
        long sec, nsec;
    } ts;

    libc_host_syscall(228, id, (long)&ts, 0);
    return (uint64_t)ts.sec * 1000000000u + (uint64_t)ts.nsec;
}

/* Test process. */
uint64_t time_ns(void)
{
    return libc_host_clock(1);
}

/* Test process. */
uint64_t time_realtime_ns(void)
{
    return libc_host_clock(0);
}

/* Test process: the process's CPU time stands in for a task's. */
uint64_t time_task_cpu_ns(void)
{
    return libc_host_clock(2);
}

/* Test process: the kernel heap is a static 256 MiB array here. */
void *kheap_sbrk(intptr_t incr)
{
    static uint8_t heap[256u << 20] __attribute__((aligned(4096)));
    static size_t brk;
    void *old = heap + brk;

    if ((incr > 0 && (size_t)incr > sizeof(heap) - brk) || (incr < 0 && (size_t)-incr > brk))
        return (void *)-1;
    brk += (size_t)incr;
    return old;
}

/* Test process, one thread: spinlocks never contend; they only check pairing. */
void spin_lock(spinlock_t *l)
{
    if (l->locked)
        machine_exit(90);
    l->locked = 1;
}

void spin_unlock(spinlock_t *l)
{
    l->locked = 0;
}

int spin_trylock(spinlock_t *l)
{
    if (l->locked)
        return 0;
    l->locked = 1;
    return 1;
}

void rspin_lock(rspinlock_t *l)
{
    l->owner = 1;
    l->depth++;
}

int rspin_trylock(rspinlock_t *l)
{
    rspin_lock(l);
    return 1;
}

void rspin_unlock(rspinlock_t *l)
{
    if (l->depth == 0)
        machine_exit(91);
    if (--l->depth == 0)
        l->owner = 0;
}
