/* time.h: kernel clocks, all derived from the TSC (calibrated at boot). */
#ifndef UK_TIME_H
#define UK_TIME_H
#include <stdint.h>

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

extern uint64_t tsc_hz; /* TSC ticks per second, set once by tsc_calibrate() */

/* Any context. Nanoseconds since boot (monotonic). */
uint64_t time_ns(void);
/* Boot only: the TSC rate and the time of day given by a loader (boards/hosted). */
void tsc_set(uint64_t hz, uint64_t epoch_ns);
/* Any context. Nanoseconds since the Unix epoch: the CMOS clock read at boot + time_ns(). */
uint64_t time_realtime_ns(void);
/* Task context. CPU time the calling task has run, in ns (0 outside a task). */
uint64_t time_task_cpu_ns(void);
/* Any context. Busy-waits (no sleep) for at least `us` microseconds. */
void udelay(uint64_t us);

/* Boot only (BSP). */
void tsc_calibrate(void);

#endif
