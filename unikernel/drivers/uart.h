/* uart.h: COM1 16550, polled output. */
#ifndef UK_UART_H
#define UK_UART_H
void uart_init(void);
void uart_putc(char c);
#endif
