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

struct ktest {
    const char *name;
    int (*fn)(const char *args);
};

#define KTEST(tname)                                                                               \
    static int ktest_fn_##tname(const char *args);                                                 \
    static const struct ktest ktest_##tname                                                        \
        __attribute__((used, section(".ktests"), aligned(16))) = {#tname, ktest_fn_##tname};       \
    static int ktest_fn_##tname(const char *args)

#endif
