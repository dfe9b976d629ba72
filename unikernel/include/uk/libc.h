/*
 * libc.h: what the kernel's newlib glue (unikernel/libc/) adds to newlib's headers.
 *
 * newlib's stdio and malloc are for task context only: they take recursive spinlocks
 * (libc_lock.c) that an interrupt handler could find held by the code it interrupted, and
 * malloc may grow the heap. Interrupt and fault handlers use kprintf() and pools instead.
 */
#ifndef UK_LIBC_H
#define UK_LIBC_H
#include <time.h>
#include <sys/reent.h>

/* newlib declares clock_gettime() only for targets it knows to have POSIX timers; ours
 * does (libc_time.c), with these two clocks. */
#ifndef CLOCK_REALTIME
#define CLOCK_REALTIME ((clockid_t)1)
#endif
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC ((clockid_t)4)
#endif
int clock_gettime(clockid_t clock_id, struct timespec *tp);

/* Task context. newlib's per-thread state (errno, strtok, rand, ...) of the calling CPU;
 * what _REENT means in this kernel (the build defines __DYNAMIC_REENT__). */
struct _reent *__getreent(void);

#endif
