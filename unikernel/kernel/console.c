/*
 * console.c: console output for the whole kernel, and kprintf.
 *
 * kprintf formats into a stack buffer with kvformat() and hands the result to
 * console_write() in one piece, so lines from different CPUs do not interleave mid-line.
 * It allocates nothing and takes only the console lock (with interrupts masked), which is
 * why interrupt and fault handlers may use it. The lock is skipped once the machine is
 * panicking on this CPU: a fault while printing must still get its report out.
 */
#include "uk/console.h"
#include "uk/spinlock.h"
#include "uk/cpu.h"
#include "kernel/fmt.h"
#ifdef BOARD_HOSTED
#include "hosted.h" /* boards/hosted: the console is a ring in shared memory */
#else
#include "drivers/uart.h"
#endif

static spinlock_t console_lock = SPINLOCK_INIT;
volatile int console_panic_cpu = -1; /* set by the fault path: bypass the lock */

/* Boot only. */
void console_init(void)
{
#ifdef BOARD_HOSTED
    hosted_console_init();
#else
    uart_init();
#endif
}

/* Under the console lock (or by the panicking CPU). */
static void console_putc(char c)
{
#ifdef BOARD_HOSTED
    hosted_console_putc(c);
#else
    if (c == '\n')
        uart_putc('\r');
    uart_putc(c);
#endif
}

/* Any context. */
void console_write(const char *buf, size_t len)
{
    int bypass = console_panic_cpu >= 0 && console_panic_cpu == cpu_id();
    uint64_t f = 0;
    if (!bypass)
        f = spin_lock_irqsave(&console_lock);
    for (size_t i = 0; i < len; i++)
        console_putc(buf[i]);
    if (!bypass)
        spin_unlock_irqrestore(&console_lock, f);
}

/* Any context. Output longer than 512 bytes per call is cut. */
void kprintf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    size_t n = kvformat(buf, sizeof buf, fmt, ap);
    va_end(ap);
    console_write(buf, n);
}
