/*
 * lapic.c: local APIC access in both modes. Registers are addressed by their xAPIC MMIO
 * offset; in x2APIC mode offset/16 + 0x800 is the MSR (the ICR becomes one 64-bit MSR).
 * QEMU's TCG (7.2) has no x2APIC, so under QEMU this runs in xAPIC mode; x2APIC is for
 * many-core hardware (knl board) where APIC ids exceed 255.
 */
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "kernel/vmm.h"
#include "uk/cpu.h"

#define REG_ID        0x20
#define REG_EOI       0xb0
#define REG_SVR       0xf0
#define REG_ESR       0x280
#define REG_ICR_LO    0x300
#define REG_ICR_HI    0x310
#define REG_LVT_TMR   0x320
#define REG_LVT_LINT0 0x350
#define REG_LVT_LINT1 0x360
#define REG_LVT_ERR   0x370
#define REG_TMR_INIT  0x380
#define REG_TMR_CUR   0x390
#define REG_TMR_DIV   0x3e0

#define APIC_BASE_ENABLE (1 << 11)
#define APIC_BASE_X2     (1 << 10)

static volatile uint32_t *mmio;
static int x2;

static inline uint32_t rd(uint32_t reg)
{
    return x2 ? (uint32_t)rdmsr(0x800 + reg / 16) : mmio[reg / 4];
}

static inline void wr(uint32_t reg, uint32_t v)
{
    if (x2)
        wrmsr(0x800 + reg / 16, v);
    else
        mmio[reg / 4] = v;
}

/* Boot (BSP). */
void lapic_init_bsp(uint64_t phys)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    x2 = (r[2] >> 21) & 1;
    if (!x2)
        mmio = mmio_map(phys, 0x1000);
    lapic_init_this();
}

/* Boot and AP start-up, on the CPU itself. */
void lapic_init_this(void)
{
    uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE;
    if (x2)
        base |= APIC_BASE_X2;
    wrmsr(MSR_APIC_BASE, base);
    wr(REG_SVR, 0x100 | VEC_SPURIOUS); /* software enable */
    wr(REG_LVT_TMR, 1 << 16);          /* masked until timer.c arms it */
    wr(REG_LVT_LINT0, 1 << 16);
    wr(REG_LVT_LINT1, 1 << 16);
    wr(REG_LVT_ERR, 1 << 16);
    wr(REG_ESR, 0);
    wr(REG_ESR, 0);
    wr(REG_EOI, 0);
}

int lapic_ready(void)
{
    return x2 || mmio;
}

int lapic_x2apic(void)
{
    return x2;
}

/* Any context. */
uint32_t lapic_id(void)
{
    return x2 ? rd(REG_ID) : rd(REG_ID) >> 24;
}

/* Interrupt context. */
void lapic_eoi(void)
{
    wr(REG_EOI, 0);
}

static void icr_send(uint32_t dest, uint32_t lo)
{
    if (x2) {
        wrmsr(0x830, ((uint64_t)dest << 32) | lo);
        return;
    }
    uint64_t f = irq_save();
    while (mmio[REG_ICR_LO / 4] & (1 << 12)) /* previous IPI still pending delivery */
        __asm__ volatile("pause");
    mmio[REG_ICR_HI / 4] = dest << 24;
    mmio[REG_ICR_LO / 4] = lo;
    irq_restore(f);
}

/* Any context. */
void lapic_send_ipi(uint32_t apic_id, int vector)
{
    icr_send(apic_id, (uint32_t)vector | (1 << 14)); /* fixed, assert */
}

/* Any context. */
void lapic_send_ipi_all_but_self(int vector)
{
    icr_send(0, (uint32_t)vector | (1 << 14) | (3 << 18));
}

/* Boot only. */
void lapic_send_init(uint32_t apic_id)
{
    icr_send(apic_id, 0x500 | (1 << 14)); /* INIT, assert, edge */
}

/* Boot only. */
void lapic_send_sipi(uint32_t apic_id, int page)
{
    icr_send(apic_id, 0x600 | (uint32_t)page | (1 << 14));
}

/* Any context on this CPU: arm the timer (divide by 16). */
void lapic_timer_set(int mode, uint32_t count, int vector)
{
    wr(REG_TMR_DIV, 0x3); /* divide by 16 */
    wr(REG_LVT_TMR, (uint32_t)vector | (mode == LAPIC_TIMER_PERIODIC ? (1 << 17) : 0));
    wr(REG_TMR_INIT, count);
}

void lapic_timer_stop(void)
{
    wr(REG_LVT_TMR, 1 << 16);
    wr(REG_TMR_INIT, 0);
}

uint32_t lapic_timer_current(void)
{
    return rd(REG_TMR_CUR);
}
