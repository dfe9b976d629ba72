/*
 * ktest.h: tests that run inside the unikernel.
 *
 *   KTEST(name) { ...; return 0; }   // 0 = pass; anything else is the guest's exit code
 *
 * A test is compiled into the test image only (build/uk/ukernel-test.elf); the kernel runs
 * the one named by `test=NAME` on its command line after boot (BSP, task context,
 * interrupts on) and exits with its return value. `args` is the value of `targs=` ("" if
 * none). The cases in tests/uk/cases/ say which test to boot with which QEMU flags and what
 * the console must show.
 */
#ifndef UK_KTEST_H
#define UK_KTEST_H
#include <stdint.h>

struct ktest {
    const char *name;
    int (*fn)(const char *args);
};

#define KTEST(tname)                                                                               \
    static int ktest_fn_##tname(const char *args);                                                 \
    static const struct ktest ktest_##tname                                                        \
        __attribute__((used, section(".ktests"), aligned(16))) = {#tname, ktest_fn_##tname};       \
    static int ktest_fn_##tname(const char *args)

/* Any context: the median of v[0..n-1], n > 0, for the figures of bench tests (sorts v in
 * place: an insertion sort, for the few hundred samples a test takes). */
static inline uint64_t ktest_median(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

#endif
