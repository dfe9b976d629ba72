/* acpi.h: what we need from the ACPI tables: the CPUs and I/O APICs of the MADT. */
#ifndef UK_ACPI_H
#define UK_ACPI_H
#include <stdint.h>
#include "memlayout.h"

struct acpi_info {
    uint64_t lapic_phys;
    int ncpus;
    uint32_t cpu_apic_id[MAX_CPUS]; /* [0] is the boot CPU */
    int cpus_ignored;               /* enabled CPUs beyond MAX_CPUS or MAX_APIC_ID */
    uint32_t max_apic_id;           /* the largest APIC id among the CPUs kept */
    uint64_t ioapic_phys;           /* the first I/O APIC (0 if none) */
    uint32_t ioapic_gsi_base;
    /* ISA IRQ -> GSI and polarity/trigger flags, from interrupt source overrides. */
    uint32_t isa_gsi[16];
    uint16_t isa_flags[16];
};

extern struct acpi_info acpi;

/* Boot only (BSP), after vmm_init(). Falls back to one CPU and the standard addresses
 * when no usable MADT is found (and says so). */
void acpi_init(uint32_t bsp_apic_id);

#endif
