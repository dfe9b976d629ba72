/* power.h: how the machine stops. */
#ifndef UK_POWER_H
#define UK_POWER_H

/* Exit codes the kernel itself uses (tests check them). */
#define EXIT_FAULT 70 /* a CPU exception ended the job (EX_SOFTWARE) */
#define EXIT_PANIC 71 /* the kernel found itself in an impossible state */
#define EXIT_BOOT  72 /* the machine lacks something the kernel needs */
#define EXIT_MPI   73 /* the MPI engine found the job broken (a peer died, bad input) */

/* Any context. Stops every CPU and ends the VM with `code` as the job's exit code.
 * Under QEMU: isa-debug-exit at port 0xf4 (QEMU then exits with (code << 1) | 1, which
 * qemu/ukrun and the test runner turn back into `code`). On bare metal: halts. */
void machine_exit(int code) __attribute__((noreturn));

/* Any context. Park every other CPU for good (they take an IPI and halt with interrupts
 * off), so that what this CPU prints next is the last word. */
void machine_stop_others(void);

/* Any context. Prints "*** PANIC: ..." and exits with EXIT_PANIC. */
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
