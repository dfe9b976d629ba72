/* libc_printf.c: in-kernel test: newlib's formatted output as built for the kernel
 * (long long, C99 size modifiers, floating point through SSE registers). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <uk/ktest.h>

struct libc_printf_case {
    const char *want;
    int len; /* snprintf's return value */
};

/* Task context: compares `got` (length `n`) with `want`; prints a mismatch. */
static int libc_printf_check(int line, const char *got, int n, const char *want)
{
    if (n == (int)strlen(want) && strcmp(got, want) == 0)
        return 1;
    printf("libc_printf: line %d: got \"%s\" (%d), want \"%s\"\n", line, got, n, want);
    return 0;
}

#define CHECK(want, ...)                                                                           \
    do {                                                                                           \
        char b_[128];                                                                              \
        int n_ = snprintf(b_, sizeof(b_), __VA_ARGS__);                                            \
        checks++;                                                                                  \
        ok += libc_printf_check(__LINE__, b_, n_, want);                                           \
    } while (0)

/* Task context (the ktest runner). */
KTEST(libc_printf)
{
    int checks = 0, ok = 0;
    volatile double neg = -2.5, big = 1.0e300, third = 1.0 / 3.0, tiny = 6.02e-23;

    CHECK("-9223372036854775808", "%lld", (long long)INT64_MIN);
    CHECK("9223372036854775807", "%lld", (long long)INT64_MAX);
    CHECK("18446744073709551615", "%llu", (unsigned long long)UINT64_MAX);
    CHECK("ffffffffffffffff", "%llx", (unsigned long long)UINT64_MAX);
    CHECK("0X8000000000000000", "%#llX", (unsigned long long)1 << 63);
    CHECK("-2147483648", "%d", INT32_MIN);
    CHECK("4294967295", "%u", UINT32_MAX);
    CHECK("123456789012", "%zu", (size_t)123456789012ull);
    CHECK("-42", "%zd", (ssize_t)-42);
    CHECK("-17", "%jd", (intmax_t)-17);
    CHECK("7fffffffffffffff", "%tx", (ptrdiff_t)INT64_MAX);
    CHECK("0x1000", "%p", (void *)0x1000);
    CHECK("  -42|-42  |-0042", "%5d|%-5d|%05d", -42, -42, -42);
    CHECK("3.142", "%.3f", 3.14159265);
    CHECK("-2.500", "%.3f", neg);
    CHECK("0.333", "%.3f", third);
    CHECK("0.333333", "%g", third);
    CHECK("1e+300", "%g", big);
    CHECK("-2.5", "%g", neg);
    CHECK("6.02e-23", "%g", tiny);
    CHECK("1.000000e+300", "%e", big);
    CHECK("-2.500000e+00", "%e", neg);
    CHECK("6.020e-23", "%.3e", tiny);
    CHECK("100000000000000000000", "%.0f", 1e20);
    CHECK("1500000000000000.250", "%.3f", 1500000000000000.25);
    CHECK("-123456789.125000", "%f", -123456789.125);
    CHECK("    -2.50", "%9.2f", neg);
    CHECK("inf -inf nan", "%g %g %g", __builtin_inf(), -__builtin_inf(), __builtin_nan(""));
    CHECK("|  abc|abc  |ab|", "|%5s|%-5s|%.2s|", "abc", "abc", "abc");
    CHECK("|     hello|", "|%*s|", 10, "hello");
    CHECK("|hel|", "|%.*s|", 3, "hello");
    CHECK("%c=x", "%%c=%c", 'x');

    if (ok != checks) {
        printf("libc_printf: %d of %d checks failed\n", checks - ok, checks);
        return 1;
    }
    printf("libc_printf: %d checks ok\n", checks);
    return 0;
}
