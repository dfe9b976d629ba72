/* ioapic.c: the first I/O APIC of the MADT (QEMU has one, with 24 inputs). */
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/acpi.h"
#include "kernel/vmm.h"
#include "uk/spinlock.h"

static volatile uint32_t *regs;
static int nlines;
static spinlock_t ioapic_lock = SPINLOCK_INIT;

static uint32_t rd(uint32_t reg)
{
    regs[0] = reg;
    return regs[4];
}

static void wr(uint32_t reg, uint32_t v)
{
    regs[0] = reg;
    regs[4] = v;
}

/* Boot only. */
void ioapic_init(void)
{
    if (!acpi.ioapic_phys)
        return;
    regs = mmio_map(acpi.ioapic_phys, 0x20);
    nlines = (int)((rd(1) >> 16) & 0xff) + 1;
    for (int i = 0; i < nlines; i++) {
        wr(0x10 + 2 * (uint32_t)i, 1 << 16); /* masked */
        wr(0x11 + 2 * (uint32_t)i, 0);
    }
}

/* Boot or task context. */
int ioapic_route(uint32_t gsi, int vector, uint32_t apic_id, int level)
{
    uint32_t line = gsi - acpi.ioapic_gsi_base;
    if (!regs || line >= (uint32_t)nlines)
        return -1;
    uint32_t lo = (uint32_t)vector;
    if (level)
        lo |= (1 << 15) | (1 << 13); /* level, active low */
    for (int irq = 0; irq < 16; irq++) {
        if (acpi.isa_gsi[irq] == gsi && acpi.isa_flags[irq]) {
            uint16_t fl = acpi.isa_flags[irq];
            lo &= ~((1u << 15) | (1u << 13));
            if ((fl & 3) == 3)
                lo |= 1 << 13; /* active low */
            if (((fl >> 2) & 3) == 3)
                lo |= 1 << 15; /* level */
        }
    }
    uint64_t f = spin_lock_irqsave(&ioapic_lock);
    wr(0x11 + 2 * line, apic_id << 24);
    wr(0x10 + 2 * line, lo);
    spin_unlock_irqrestore(&ioapic_lock, f);
    return 0;
}
