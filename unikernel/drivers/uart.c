/* uart.c: the 16550 UART on COM1, polled. The only console device; output only. */
#include "drivers/uart.h"
#include "arch/x86_64/io.h"

#define COM1 0x3f8

/* Boot only. 115200 8N1, FIFO on, interrupts off (we poll). */
void uart_init(void)
{
    outb(COM1 + 1, 0x00); /* no interrupts */
    outb(COM1 + 3, 0x80); /* DLAB on */
    outb(COM1 + 0, 0x01); /* divisor 1: 115200 baud */
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03); /* 8N1, DLAB off */
    outb(COM1 + 2, 0xc7); /* FIFO on, cleared, 14-byte threshold */
    outb(COM1 + 4, 0x03); /* DTR, RTS */
}

/* Any context; the caller serialises (console.c holds the console lock). */
void uart_putc(char c)
{
    /* Bounded wait for the transmit holding register: a missing UART must not hang us. */
    for (int i = 0; i < 100000 && !(inb(COM1 + 5) & 0x20); i++)
        ;
    outb(COM1, (uint8_t)c);
}
