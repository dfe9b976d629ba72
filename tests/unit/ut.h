/*
 * ut.h: the host unit-test framework (one runner binary for all of tests/unit/).
 *
 *   UT_TEST(name) { UT_ASSERT(x == 1); UT_EQ(a, b); ... }
 *
 * Each test registers itself at load time; `build/unit/unit-tests [substring]` runs all
 * (or those whose name contains the substring), prints one line per test and closes with
 * "N passed, N failed". A failed assertion ends its test (not the run) and names file:line.
 */
#ifndef UT_H
#define UT_H
#include <setjmp.h>
#include <stdio.h>

struct ut_test {
    const char *name;
    void (*fn)(void);
    struct ut_test *next;
};

void ut_register(struct ut_test *t);
void ut_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

#define UT_TEST(name)                                                                              \
    static void ut_fn_##name(void);                                                                \
    static struct ut_test ut_t_##name = {#name, ut_fn_##name, 0};                                  \
    __attribute__((constructor)) static void ut_reg_##name(void)                                   \
    {                                                                                              \
        ut_register(&ut_t_##name);                                                                 \
    }                                                                                              \
    static void ut_fn_##name(void)

#define UT_ASSERT(c)                                                                               \
    do {                                                                                           \
        if (!(c))                                                                                  \
            ut_fail(__FILE__, __LINE__, "assertion failed: %s", #c);                               \
    } while (0)

#define UT_EQ(a, b)                                                                                \
    do {                                                                                           \
        long long ut_a = (long long)(a), ut_b = (long long)(b);                                    \
        if (ut_a != ut_b)                                                                          \
            ut_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, ut_a, ut_b);             \
    } while (0)

#endif
