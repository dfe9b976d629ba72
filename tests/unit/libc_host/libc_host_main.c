/*
 * libc_host_main.c: runs the newlib ktests (tests/uk/libc_*.c) as a Linux process on our
 * newlib + the kernel's glue (see libc_host_kernel.c). Includes the test files so their
 * static KTEST functions can be called directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>
#include <uk/libc.h>
#include "../../uk/libc_printf.c"
#include "../../uk/libc_malloc.c"

int libc_host_main(void);

/* Test process: the glue itself (errno per reent, clocks, fds), then the two ktests. */
static int libc_host_glue(void)
{
    struct timespec a, b;
    int bad = 0;

    errno = 0;
    if (write(5, "x", 1) != -1 || errno != EBADF)
        bad++, printf("libc_host: write(5) did not fail with EBADF\n");
    if (__getreent() != _impure_ptr || &errno != &_impure_ptr->_errno)
        bad++, printf("libc_host: errno is not in CPU 0's reent\n");
    if (clock_gettime(CLOCK_MONOTONIC, &a) || clock_gettime(CLOCK_MONOTONIC, &b) ||
        b.tv_sec < a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec < a.tv_nsec))
        bad++, printf("libc_host: CLOCK_MONOTONIC went backwards\n");
    if (time(NULL) < 1600000000)
        bad++, printf("libc_host: time() is not wall-clock time\n");
    if (!isatty(1) || isatty(7))
        bad++, printf("libc_host: isatty wrong\n");
    return bad;
}

/* Test process: "libc-host: N passed, N failed", exit code 0 only if all passed. */
int libc_host_main(void)
{
    int passed = 0, failed = 0;

    if (libc_host_glue() == 0)
        passed++, printf("PASS libc_glue\n");
    else
        failed++, printf("FAIL libc_glue\n");
    if (ktest_fn_libc_printf("") == 0)
        passed++, printf("PASS libc_printf\n");
    else
        failed++, printf("FAIL libc_printf\n");
    if (ktest_fn_libc_malloc("") == 0)
        passed++, printf("PASS libc_malloc\n");
    else
        failed++, printf("FAIL libc_malloc\n");
    printf("libc-host: %d passed, %d failed\n", passed, failed);
    /* newlib's exit(): flushes stdout, then the glue's _exit(). */
    exit(failed ? 1 : 0);
}
