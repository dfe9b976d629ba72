/*
 * app_sleep.c: the sleeps of <time.h> and <unistd.h>, and clock_getres, for a task.
 *
 * A sleeping task yields its CPU to the other tasks of that CPU until the monotonic clock
 * (time_ns(), the same clock CLOCK_MONOTONIC reads) passes the deadline. There are no
 * signals, so a sleep is never interrupted and never reports time left.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <uk/abi.h>

#define NS_PER_SEC          1000000000ull
#define NS_PER_US           1000ull
/* time_ns() and the realtime clock count whole nanoseconds. */
#define CLOCK_RESOLUTION_NS 1

extern const struct uk_abi *uk_abi;

/* Task context: returns once `ns` nanoseconds of CLOCK_MONOTONIC have passed. */
static void sleep_ns(uint64_t ns)
{
    uint64_t deadline = uk_abi->time_ns() + ns;

    while (uk_abi->time_ns() < deadline)
        uk_abi->yield();
}

/* Task context; EINVAL for a negative or non-normalised request. *rem, if given, is zeroed:
 * the whole interval always elapses. */
int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (req->tv_sec < 0 || req->tv_nsec < 0 || (uint64_t)req->tv_nsec >= NS_PER_SEC) {
        errno = EINVAL;
        return -1;
    }
    sleep_ns((uint64_t)req->tv_sec * NS_PER_SEC + (uint64_t)req->tv_nsec);
    if (rem) {
        rem->tv_sec = 0;
        rem->tv_nsec = 0;
    }
    return 0;
}

/* Task context; returns 0, the seconds left unslept. */
unsigned sleep(unsigned seconds)
{
    sleep_ns((uint64_t)seconds * NS_PER_SEC);
    return 0;
}

/* Task context. */
int usleep(useconds_t us)
{
    sleep_ns((uint64_t)us * NS_PER_US);
    return 0;
}

/* Any context; every clock clock_gettime() serves counts nanoseconds, else EINVAL. */
int clock_getres(clockid_t clock_id, struct timespec *res)
{
    if (clock_id != CLOCK_MONOTONIC && clock_id != CLOCK_REALTIME &&
        clock_id != CLOCK_PROCESS_CPUTIME_ID && clock_id != CLOCK_THREAD_CPUTIME_ID) {
        errno = EINVAL;
        return -1;
    }
    if (res) {
        res->tv_sec = 0;
        res->tv_nsec = CLOCK_RESOLUTION_NS;
    }
    return 0;
}
