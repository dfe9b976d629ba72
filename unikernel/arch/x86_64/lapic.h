/* lapic.h: the local APIC, in x2APIC mode (MSRs) when the CPU has it, else xAPIC (MMIO).
 * The mode is chosen once, on the boot CPU (lapic.c says how). */
#ifndef UK_LAPIC_H
#define UK_LAPIC_H
#include <stdint.h>

/* Boot (BSP) with `phys` from the MADT; then on each AP during its start-up. */
void lapic_init_bsp(uint64_t phys);
void lapic_init_this(void);
int lapic_ready(void);
int lapic_x2apic(void);            /* 1 if running in x2APIC mode */
const char *lapic_mode_name(void); /* "x2APIC" or "xAPIC" */
uint32_t lapic_id(void);           /* this CPU's APIC id (32 bits in x2APIC mode) */
/* Any context, even before lapic_init_bsp(): this CPU's APIC id from CPUID. */
uint32_t lapic_cpuid_id(void);

/* Interrupt context (trap_dispatch): end of interrupt. */
void lapic_eoi(void);

/* Any context. Fixed-delivery IPI to one CPU (by APIC id) / to all others. */
void lapic_send_ipi(uint32_t apic_id, int vector);
void lapic_send_ipi_all_but_self(int vector);
void lapic_send_ipi_all(int vector); /* including this CPU */
/* Boot only: INIT and STARTUP IPIs for bringing up an AP. */
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, int page);

/* Local APIC timer (timer.c drives it). */
#define LAPIC_TIMER_ONESHOT  0
#define LAPIC_TIMER_PERIODIC 1
void lapic_timer_set(int mode, uint32_t count, int vector);
void lapic_timer_stop(void);
uint32_t lapic_timer_current(void);
uint32_t lapic_timer_lvt(void); /* the timer's LVT register (mode, mask, vector) */

#endif
