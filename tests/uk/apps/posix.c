/*
 * posix.c: a plain C program written as for Linux (no project headers) that uses the POSIX
 * surface of the application runtime: clocks and sleeps from <time.h>/<unistd.h>, sysconf,
 * getopt_long on the case's arguments, <math.h> from -lm (tests/uk/uk.mk), the identity
 * calls, aligned allocation, and the process calls that must fail with ENOSYS. One line
 * per check, then "posix: N passed, N failed"; exit code 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000LL
#define SLEEP_NS   (10 * 1000 * 1000LL) /* the 10 ms nanosleep */
#define EPOCH_2020 1577836800LL         /* 2020-01-01T00:00:00Z */
#define ALIGN      4096

static int passed, failed;

/* main's context: one line per check. */
static void check(int ok, const char *what)
{
    printf("posix: %s: %s\n", what, ok ? "ok" : "BAD");
    if (ok)
        passed++;
    else
        failed++;
}

static long long ts_ns(const struct timespec *t)
{
    return (long long)t->tv_sec * NS_PER_SEC + t->tv_nsec;
}

static long long mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return ts_ns(&t);
}

static void check_time(void)
{
    struct timespec a, b, res, req = {0, SLEEP_NS};
    struct timeval tv;

    check(clock_gettime(CLOCK_MONOTONIC, &a) == 0 && nanosleep(&req, NULL) == 0 &&
              clock_gettime(CLOCK_MONOTONIC, &b) == 0 && ts_ns(&b) - ts_ns(&a) >= SLEEP_NS,
          "monotonic advances >= 10 ms across nanosleep(10 ms)");
    check(clock_gettime(CLOCK_REALTIME, &a) == 0 && a.tv_sec > EPOCH_2020, "realtime after 2020");
    check(clock_getres(CLOCK_MONOTONIC, &res) == 0 && ts_ns(&res) > 0 &&
              clock_getres(CLOCK_REALTIME, &res) == 0,
          "clock_getres");
    check(gettimeofday(&tv, NULL) == 0 && tv.tv_sec > EPOCH_2020, "gettimeofday after 2020");
    long long t0 = mono_ns();
    check(usleep(2000) == 0 && mono_ns() - t0 >= 2000 * 1000LL, "usleep(2 ms)");
    t0 = mono_ns();
    check(sleep(1) == 0 && mono_ns() - t0 >= NS_PER_SEC, "sleep(1)");
    check(clock_gettime((clockid_t)99, &a) == -1 && errno == EINVAL, "bad clock: EINVAL");
}

static void check_system(void)
{
    char host[64];
    struct utsname u;
    void *p = NULL;
    volatile double two = 2.0; /* not a constant: sqrt and sin must be called, from libm */

    check(sysconf(_SC_PAGESIZE) == ALIGN && getpagesize() == ALIGN, "page size 4096");
    check(sysconf(_SC_NPROCESSORS_ONLN) >= 1, "processors online >= 1");
    check(sysconf(_SC_CLK_TCK) > 0, "clock ticks > 0");
    check(getpid() > 0, "getpid");
    check(gethostname(host, sizeof host) == 0 && strncmp(host, "uk-node", 7) == 0,
          "gethostname uk-node*");
    check(uname(&u) == 0 && strcmp(u.machine, "x86_64") == 0 && u.sysname[0], "uname");
    check(sched_yield() == 0, "sched_yield");
    check(isatty(1) == 1, "isatty(stdout)");
    check(posix_memalign(&p, ALIGN, 100) == 0 && ((uintptr_t)p % ALIGN) == 0, "posix_memalign");
    free(p);
    p = aligned_alloc(ALIGN, ALIGN);
    check(p && ((uintptr_t)p % ALIGN) == 0, "aligned_alloc");
    free(p);
    check(fabs(sqrt(two) * sqrt(two) - two) < 1e-12 && fabs(sin(M_PI / two) - 1.0) < 1e-12,
          "sqrt, sin from -lm");
    check(setenv("POSIX_T", "v", 1) == 0 && strcmp(getenv("POSIX_T"), "v") == 0, "setenv");
}

static void check_processes(void)
{
    char *argv[] = {"true", NULL};

    errno = 0;
    check(fork() == -1 && errno == ENOSYS, "fork: ENOSYS");
    errno = 0;
    check(system("true") == -1 && errno == ENOSYS, "system: ENOSYS");
    errno = 0;
    check(popen("true", "r") == NULL && errno == ENOSYS, "popen: ENOSYS");
    errno = 0;
    check(execvp("true", argv) == -1 && errno == ENOSYS, "execvp: ENOSYS");
    check(WEXITSTATUS(3 << 8) == 3 && WIFEXITED(3 << 8), "WEXITSTATUS");
}

/* Expects the case's arguments: -v -n 3 --name=abc rest */
static void check_getopt(int argc, char **argv)
{
    static const struct option longs[] = {{"name", required_argument, NULL, 'N'}, {0}};
    int c, verbose = 0, n = 0;
    const char *name = "";

    while ((c = getopt_long(argc, argv, "vn:", longs, NULL)) != -1) {
        if (c == 'v')
            verbose = 1;
        else if (c == 'n')
            n = atoi(optarg);
        else if (c == 'N')
            name = optarg;
    }
    check(verbose && n == 3 && strcmp(name, "abc") == 0 && optind == argc - 1 &&
              strcmp(argv[optind], "rest") == 0,
          "getopt_long");
}

static void at_exit(void)
{
    printf("posix: atexit handler ran\n");
}

int main(int argc, char **argv)
{
    check(atexit(at_exit) == 0, "atexit registers");
    check_time();
    check_system();
    check_processes();
    check_getopt(argc, argv);
    printf("posix: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
