/* console.h: the serial console (COM1), the only output device of the kernel. */
#ifndef UK_CONSOLE_H
#define UK_CONSOLE_H
#include <stddef.h>

/* Any context (task, interrupt, IPI, panic). Serialised by a spinlock with interrupts off;
 * writes `len` bytes with '\n' turned into "\r\n". Never allocates. */
void console_write(const char *buf, size_t len);

/* Any context. printf-like formatting without newlib: safe in interrupt and fault handlers,
 * where newlib's stdio (which takes locks and may allocate) must not be used. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Boot only: set up the UART. */
void console_init(void);

#endif
