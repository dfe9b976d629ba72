/* power.h: how the machine stops. */
#ifndef UK_POWER_H
#define UK_POWER_H

/* Any context. Stops every CPU and ends the VM with `code` as the job's exit code.
 * Under QEMU: isa-debug-exit at port 0xf4 (QEMU then exits with (code << 1) | 1, which
 * qemu/ukrun and the test runner turn back into `code`). On bare metal: halts. */
void machine_exit(int code) __attribute__((noreturn));

#endif
