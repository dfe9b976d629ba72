/* power.h: how the machine stops. */
#ifndef UK_POWER_H
#define UK_POWER_H

/* Exit codes the kernel itself uses (tests check them). A rank's own exit code reaches the
 * user unchanged (0..255, as POSIX exit() keeps it), so a rank may pick one of these too:
 * the console says which it was. qemu/ukboot adds 124 (timeout), 125 (no exit code) and
 * 126 (QEMU failed). */
#define EXIT_FAULT 70 /* a CPU exception ended the job (EX_SOFTWARE) */
#define EXIT_PANIC 71 /* the kernel found itself in an impossible state */
#define EXIT_BOOT  72 /* the machine lacks something the kernel needs; a loader error */
#define EXIT_MPI   73 /* the MPI engine found the job broken (a peer died, bad input) */

#define EXIT_STATUS_MASK 0xff /* a process exit status has 8 bits */

/* The console line machine_exit() prints last: "uk: exit status N\n", N in 0..255. */
#define EXIT_STATUS_LINE "uk: exit status "

/* Any context. Stops every CPU and ends the VM with `code & 0xff` as the job's exit code
 * (the first caller wins; a CPU that calls it later just halts).
 * Under QEMU the code takes two ways out, because isa-debug-exit (port 0xf4) makes QEMU
 * exit with ((code << 1) | 1) & 0xff, which keeps only the low 7 bits of the code:
 *  1. the console line EXIT_STATUS_LINE "N", the full code;
 *  2. isa-debug-exit with the code, which ends QEMU.
 * qemu/ukboot takes the code from the line (the last one whose low 7 bits agree with
 * QEMU's status), removes the line from what it shows, and exits with the code; without
 * the line (another kernel) it falls back to the 7 bits. So 134 (abort()) stays 134 and
 * 200 stays 200. On bare metal: prints the line and halts. */
void machine_exit(int code) __attribute__((noreturn));

/* Any context. Park every other CPU for good (they take an IPI and halt with interrupts
 * off), so that what this CPU prints next is the last word. */
void machine_stop_others(void);

/* Any context. Prints "*** PANIC: ..." and exits with EXIT_PANIC. */
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
