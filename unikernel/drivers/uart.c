/* uart.c: 16550 UARTs, polled, output only: COM1 (the console) and COM2 (output files). */
#include "drivers/uart.h"
#include "arch/x86_64/io.h"

#define UART_DATA     0 /* register offsets */
#define UART_IER      1
#define UART_FCR      2
#define UART_LCR      3
#define UART_MCR      4
#define UART_LSR      5
#define UART_SCRATCH  7
#define LSR_THR_EMPTY 0x20
#define UART_WAIT_MAX 100000 /* polls of LSR before a byte goes out anyway */
#define SCRATCH_PROBE 0xa5

/* Boot or task context: 115200 8N1, FIFO on, interrupts off (we poll). */
static void setup(uint16_t port)
{
    outb(port + UART_IER, 0x00);  /* no interrupts */
    outb(port + UART_LCR, 0x80);  /* DLAB on */
    outb(port + UART_DATA, 0x01); /* divisor 1: 115200 baud */
    outb(port + UART_IER, 0x00);
    outb(port + UART_LCR, 0x03); /* 8N1, DLAB off */
    outb(port + UART_FCR, 0xc7); /* FIFO on, cleared, 14-byte threshold */
    outb(port + UART_MCR, 0x03); /* DTR, RTS */
}

/* Any context; the caller serialises. */
static void put(uint16_t port, uint8_t c)
{
    /* Bounded wait for the transmit holding register: a missing UART must not hang us. */
    for (int i = 0; i < UART_WAIT_MAX && !(inb(port + UART_LSR) & LSR_THR_EMPTY); i++)
        ;
    outb(port + UART_DATA, c);
}

/* Boot only. */
void uart_init(void)
{
    setup(UART_COM1);
}

/* Any context; the caller serialises (console.c holds the console lock). */
void uart_putc(char c)
{
    put(UART_COM1, (uint8_t)c);
}

/* Task context, once. A port with no UART reads as 0xff everywhere: its scratch register
 * does not keep what we write. */
int uart_port_init(uint16_t port)
{
    outb(port + UART_SCRATCH, SCRATCH_PROBE);
    if (inb(port + UART_SCRATCH) != SCRATCH_PROBE)
        return -1;
    setup(port);
    return 0;
}

/* Any context; the caller serialises. */
void uart_port_write(uint16_t port, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        put(port, p[i]);
}
