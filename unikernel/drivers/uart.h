/* uart.h: 16550 UARTs, polled output. COM1 is the console; COM2 carries the job's output
 * files to the host (kernel/files.c) when QEMU has a second serial port. */
#ifndef UK_UART_H
#define UK_UART_H
#include <stddef.h>
#include <stdint.h>

#define UART_COM1 0x3f8
#define UART_COM2 0x2f8

/* Boot only: the console (COM1). */
void uart_init(void);
/* Any context; the caller serialises (console.c holds the console lock). */
void uart_putc(char c);
/* Task context, once: set up the UART at `port`. 0, or -1 if none answers there. */
int uart_port_init(uint16_t port);
/* Any context; the caller serialises: len bytes out of `port`. */
void uart_port_write(uint16_t port, const void *buf, size_t len);
#endif
