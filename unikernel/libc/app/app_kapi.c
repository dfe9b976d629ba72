/*
 * app_kapi.c: the kernel functions the shared newlib glue (unikernel/libc/libc_io.c,
 * libc_time.c, libc_mem.c) calls, provided in an application through the kernel's ABI
 * table. So one copy of the glue serves the kernel and every application.
 */
#include <stddef.h>
#include <stdint.h>
#include <uk/abi.h>
#include <uk/console.h>
#include <uk/heap.h>
#include <uk/time.h>

extern const struct uk_abi *uk_abi;

/* Task context: console output of this rank (the kernel prefixes each line). */
void console_write(const char *buf, size_t len)
{
    uk_abi->write(1, buf, len);
}

/* Task context. */
uint64_t time_ns(void)
{
    return uk_abi->time_ns();
}

/* Task context. */
uint64_t time_realtime_ns(void)
{
    return uk_abi->time_realtime_ns();
}

/* Task context. */
uint64_t time_task_cpu_ns(void)
{
    return uk_abi->cpu_time_ns();
}

/* Task context: this task's heap, inside its partition. */
void *kheap_sbrk(intptr_t incr)
{
    return uk_abi->sbrk(incr);
}
