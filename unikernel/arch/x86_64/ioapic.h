/* ioapic.h: routing of device interrupt lines (GSIs) to a vector on one CPU. */
#ifndef UK_IOAPIC_H
#define UK_IOAPIC_H
#include <stdint.h>

/* Boot only: map the I/O APIC from the MADT and mask every input. */
void ioapic_init(void);
/* Boot or task context. Route `gsi` to `vector` on the CPU with `apic_id`; level-triggered
 * active-low (PCI) when `level`, else edge active-high (ISA), unless an ACPI override for
 * an ISA IRQ says otherwise. Unmasks the line. Returns 0, or -1 for a line we do not have. */
int ioapic_route(uint32_t gsi, int vector, uint32_t apic_id, int level);

#endif
