/*
 * libc_time.c: the clocks newlib's time(), clock() and friends read.
 *
 * CLOCK_MONOTONIC is time_ns() (TSC since boot); CLOCK_REALTIME and gettimeofday() are
 * time_realtime_ns() (the CMOS clock at boot plus time_ns()). No time zones: UTC.
 */
#include <errno.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <uk/libc.h>
#include <uk/time.h>

#define NS_PER_SEC 1000000000ull

/* newlib declares these only where the target says it has CPU-time clocks; we do. */
#ifndef CLOCK_PROCESS_CPUTIME_ID
#define CLOCK_PROCESS_CPUTIME_ID ((clockid_t)2)
#endif
#ifndef CLOCK_THREAD_CPUTIME_ID
#define CLOCK_THREAD_CPUTIME_ID ((clockid_t)3)
#endif

/* Any context; fills *tp for CLOCK_REALTIME, CLOCK_MONOTONIC and the CPU-time clocks,
 * else EINVAL. */
int clock_gettime(clockid_t clock_id, struct timespec *tp)
{
    uint64_t ns;

    if (clock_id == CLOCK_MONOTONIC) {
        ns = time_ns();
    } else if (clock_id == CLOCK_REALTIME) {
        ns = time_realtime_ns();
    } else if (clock_id == CLOCK_PROCESS_CPUTIME_ID || clock_id == CLOCK_THREAD_CPUTIME_ID) {
        ns = time_task_cpu_ns(); /* a rank is one task: both are its CPU time */
    } else {
        errno = EINVAL;
        return -1;
    }
    tp->tv_sec = (time_t)(ns / NS_PER_SEC);
    tp->tv_nsec = (long)(ns % NS_PER_SEC);
    return 0;
}

/* Any context; wall-clock time (UTC). The time zone argument is obsolete and ignored. */
int gettimeofday(struct timeval *tv, void *tz)
{
    uint64_t ns = time_realtime_ns();

    if (tv) {
        tv->tv_sec = (time_t)(ns / NS_PER_SEC);
        tv->tv_usec = (suseconds_t)((ns % NS_PER_SEC) / 1000);
    }
    return 0;
}

/* Any context; newlib's clock() adds tms_utime and tms_stime and calls the sum
 * CLOCKS_PER_SEC units, so that is the unit here. All time since boot counts as the
 * process's user time (there is only one process); the return value is the same count. */
clock_t times(struct tms *t)
{
    clock_t ticks = (clock_t)(time_ns() / (NS_PER_SEC / CLOCKS_PER_SEC));

    if (t) {
        t->tms_utime = ticks;
        t->tms_stime = 0;
        t->tms_cutime = 0;
        t->tms_cstime = 0;
    }
    return ticks;
}
