/* pic.c: the legacy 8259 PICs. We use the APICs only, but the PICs start out delivering on
 * vectors 8-15, which are CPU exception vectors: remap them (to VEC_PIC_BASE, where a stray
 * one is recognisable) and mask every line for good. */
#include "arch/x86_64/pic.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/trap.h"

/* Boot only. */
void pic_disable(void)
{
    outb(0x20, 0x11); /* ICW1: init, ICW4 follows */
    outb(0xa0, 0x11);
    outb(0x21, VEC_PIC_BASE); /* ICW2: vector bases */
    outb(0xa1, VEC_PIC_BASE + 8);
    outb(0x21, 4); /* ICW3: slave on IRQ2 */
    outb(0xa1, 2);
    outb(0x21, 1); /* ICW4: 8086 mode */
    outb(0xa1, 1);
    outb(0x21, 0xff); /* mask everything */
    outb(0xa1, 0xff);
}
