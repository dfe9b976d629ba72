/* fmt.h: a small vsnprintf for kernel paths that must not use newlib (interrupts, faults). */
#ifndef UK_FMT_H
#define UK_FMT_H
#include <stdarg.h>
#include <stddef.h>

/* Any context. Formats %d %i %u %x %X %p %s %c %% with flags '-' '0', a width, and the
 * length modifiers l, ll, z. Writes at most size-1 characters plus a NUL; returns the
 * number written (not the number that would have been). */
size_t kvformat(char *buf, size_t size, const char *fmt, va_list ap);
size_t kformat(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
