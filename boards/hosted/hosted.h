/* hosted.h: boards/hosted's platform hooks (hosted.c), called from the kernel's boot path,
 * console and exit where the QEMU board uses the PIT, ACPI, the UART and isa-debug-exit. */
#ifndef UK_HOSTED_H
#define UK_HOSTED_H

/* Boot only (BSP), before anything prints: the console ring is the loader's. */
void hosted_console_init(void);
/* Under the console lock, or by the panicking CPU. */
void hosted_console_putc(char c);
/* Boot only (BSP), after vmm_init(): fills `acpi` with this CPU alone. */
void hosted_platform_init(void);
/* Boot only (BSP): the TSC rate and the time of day from the command line. */
void hosted_tsc_init(void);
/* machine_exit() only, once, interrupts off: tells the loader the exit code. */
void hosted_exit(int code);

#endif
