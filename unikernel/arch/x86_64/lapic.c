/*
 * lapic.c: local APIC access in two modes behind one ops table, chosen once at boot:
 *   xAPIC:  registers in a 4 KiB MMIO page, 8-bit APIC ids, the ICR as two 32-bit writes
 *           (destination in ICR_HI bits 31:24) and a delivery-status bit to wait on;
 *   x2APIC: registers as MSRs (0x800 + MMIO offset / 16), 32-bit APIC ids, the ICR one
 *           64-bit MSR write (destination in bits 63:32), no delivery status.
 * QEMU 7.2's TCG has no x2APIC, so the qemu board runs in xAPIC mode; the knl board (APIC
 * ids above 255) needs x2APIC, emulated by QEMU 10 (mk/deps.d/55-qemu-bpo.sh).
 */
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "arch/x86_64/percpu.h"
#include "kernel/vmm.h"
#include "uk/cpu.h"

/* Registers by their xAPIC MMIO offset (Intel SDM vol. 3, table 10-1). */
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

#define APIC_BASE_X2      (1 << 10) /* IA32_APIC_BASE: x2APIC mode enabled */
#define APIC_BASE_ENABLE  (1 << 11) /* IA32_APIC_BASE: the APIC is on */
#define CPUID1_ECX_X2APIC (1u << 21)
#define X2APIC_MSR_BASE   0x800
#define X2APIC_MSR_ICR    0x830 /* the ICR, both halves in one MSR */
#define XAPIC_ID_SHIFT    24    /* xAPIC: the id is in bits 31:24 of REG_ID and ICR_HI */
#define ICR_PENDING       (1 << 12)
#define ICR_ASSERT        (1 << 14)
#define ICR_DEST_ALL      (2 << 18)
#define ICR_DEST_OTHERS   (3 << 18)
#define ICR_INIT          0x500
#define ICR_STARTUP       0x600
#define LVT_MASKED        (1 << 16)
#define LVT_PERIODIC      (1 << 17)
#define SVR_ENABLE        0x100
#define TMR_DIV_16        0x3
#define XAPIC_MMIO_SIZE   0x1000

struct lapic_ops {
    const char *name;
    uint32_t (*read)(uint32_t reg);
    void (*write)(uint32_t reg, uint32_t v);
    void (*send)(uint32_t dest, uint32_t icr_lo); /* one IPI: ICR with its destination */
    uint32_t (*id)(void);
    uint64_t base_bits; /* IA32_APIC_BASE bits this mode sets on each CPU */
};

static volatile uint32_t *mmio; /* xAPIC only */

/* Any context on this CPU (the MMIO page is per CPU): xAPIC register access. */
static uint32_t xapic_read(uint32_t reg)
{
    return mmio[reg / 4];
}

static void xapic_write(uint32_t reg, uint32_t v)
{
    mmio[reg / 4] = v;
}

/* Any context: the two ICR writes must not interleave with another sender's on this CPU. */
static void xapic_send(uint32_t dest, uint32_t lo)
{
    uint64_t f = irq_save();
    while (mmio[REG_ICR_LO / 4] & ICR_PENDING) /* previous IPI still pending delivery */
        __asm__ volatile("pause");
    mmio[REG_ICR_HI / 4] = dest << XAPIC_ID_SHIFT;
    mmio[REG_ICR_LO / 4] = lo;
    irq_restore(f);
}

/* Any context: this CPU's 8-bit xAPIC id. */
static uint32_t xapic_id(void)
{
    return xapic_read(REG_ID) >> XAPIC_ID_SHIFT;
}

/* Any context on this CPU: x2APIC register access (MSRs are per CPU). */
static uint32_t x2apic_read(uint32_t reg)
{
    return (uint32_t)rdmsr(X2APIC_MSR_BASE + reg / 16);
}

static void x2apic_write(uint32_t reg, uint32_t v)
{
    wrmsr(X2APIC_MSR_BASE + reg / 16, v);
}

/* Any context: one MSR write is atomic, so no interrupt masking and nothing to wait on. */
static void x2apic_send(uint32_t dest, uint32_t lo)
{
    /* HAZARD: a WRMSR to an x2APIC register is not serializing (Intel SDM 10.12.3), and
     * wrmsr() has no memory clobber: without the fence, what the sender stored for the
     * target (a mailbox, ipi.c's ping_from) may not be visible when the IPI lands. The
     * xAPIC's MMIO ICR write is ordered after earlier stores by itself. Seen under TCG:
     * about one run in two lost a pong between two APs. */
    __asm__ volatile("mfence; lfence" ::: "memory");
    wrmsr(X2APIC_MSR_ICR, ((uint64_t)dest << 32) | lo);
}

/* Any context: this CPU's 32-bit x2APIC id. */
static uint32_t x2apic_id(void)
{
    return x2apic_read(REG_ID); /* the full 32-bit id */
}

static const struct lapic_ops xapic_ops = {
    "xAPIC", xapic_read, xapic_write, xapic_send, xapic_id, APIC_BASE_ENABLE,
};
static const struct lapic_ops x2apic_ops = {
    "x2APIC", x2apic_read, x2apic_write, x2apic_send, x2apic_id, APIC_BASE_ENABLE | APIC_BASE_X2,
};

static const struct lapic_ops *ops; /* set once by lapic_init_bsp(), read-only after */

/* Boot (BSP). x2APIC when the CPU has it (CPUID.1:ECX[21]), or when firmware already
 * switched it on (IA32_APIC_BASE[10]): leaving x2APIC mode takes a full APIC disable. */
void lapic_init_bsp(uint64_t phys)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    int x2 = (r[2] & CPUID1_ECX_X2APIC) || (rdmsr(MSR_APIC_BASE) & APIC_BASE_X2);
    if (!x2)
        mmio = mmio_map(phys, XAPIC_MMIO_SIZE);
    ops = x2 ? &x2apic_ops : &xapic_ops;
    lapic_init_this();
}

/* Boot and AP start-up, on the CPU itself: every AP starts in xAPIC mode (INIT resets
 * it) and switches to the BSP's mode here. */
void lapic_init_this(void)
{
    wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | ops->base_bits);
    ops->write(REG_SVR, SVR_ENABLE | VEC_SPURIOUS);
    ops->write(REG_LVT_TMR, LVT_MASKED); /* masked until timer.c arms it */
    ops->write(REG_LVT_LINT0, LVT_MASKED);
    ops->write(REG_LVT_LINT1, LVT_MASKED);
    ops->write(REG_LVT_ERR, LVT_MASKED);
    ops->write(REG_ESR, 0); /* twice: the first write latches, the second clears */
    ops->write(REG_ESR, 0);
    ops->write(REG_EOI, 0);
}

/* Any context. */
int lapic_ready(void)
{
    return ops != 0;
}

/* Any context. */
int lapic_x2apic(void)
{
    return ops == &x2apic_ops;
}

/* Any context. */
const char *lapic_mode_name(void)
{
    return ops ? ops->name : "no APIC";
}

/* Any context, after lapic_init_bsp(). */
uint32_t lapic_id(void)
{
    return ops->id();
}

/* Any context, before the APIC is set up: this CPU's APIC id from CPUID. Leaf 0xB gives
 * the full 32-bit x2APIC id; leaf 1 only its low 8 bits (all an xAPIC has). */
uint32_t lapic_cpuid_id(void)
{
    uint32_t r[4];
    cpuid(0, 0, r);
    if (r[0] >= CPUID_LEAF_TOPO) {
        cpuid(CPUID_LEAF_TOPO, 0, r);
        if (r[1]) /* EBX 0: leaf 0xB not implemented */
            return r[3];
    }
    cpuid(1, 0, r);
    return r[1] >> XAPIC_ID_SHIFT;
}

/* Interrupt context. */
void lapic_eoi(void)
{
    ops->write(REG_EOI, 0);
}

/* Any context. */
void lapic_send_ipi(uint32_t apic_id, int vector)
{
    ops->send(apic_id, (uint32_t)vector | ICR_ASSERT); /* fixed delivery */
}

#ifdef BOARD_HOSTED
/* Hazard: Linux's CPUs share the APIC bus (boards/hosted): a shorthand broadcast would
 * reach them too, as a device interrupt or one of their own IPIs. One IPI per CPU of ours. */
static void send_each(int vector, int self)
{
    int me = cpu_id();
    for (int i = 0; i < MAX_CPUS; i++)
        if (percpu[i].online && (self || i != me))
            lapic_send_ipi(percpu[i].apic_id, vector);
}
#endif

/* Any context. */
void lapic_send_ipi_all_but_self(int vector)
{
#ifdef BOARD_HOSTED
    send_each(vector, 0);
#else
    ops->send(0, (uint32_t)vector | ICR_ASSERT | ICR_DEST_OTHERS);
#endif
}

/* Any context. */
void lapic_send_ipi_all(int vector)
{
#ifdef BOARD_HOSTED
    send_each(vector, 1);
#else
    ops->send(0, (uint32_t)vector | ICR_ASSERT | ICR_DEST_ALL);
#endif
}

/* Boot only. */
void lapic_send_init(uint32_t apic_id)
{
    ops->send(apic_id, ICR_INIT | ICR_ASSERT); /* edge */
}

/* Boot only. */
void lapic_send_sipi(uint32_t apic_id, int page)
{
    ops->send(apic_id, ICR_STARTUP | (uint32_t)page | ICR_ASSERT);
}

/* Any context on this CPU: arm the timer (divide by 16). */
void lapic_timer_set(int mode, uint32_t count, int vector)
{
    ops->write(REG_TMR_DIV, TMR_DIV_16);
    ops->write(REG_LVT_TMR, (uint32_t)vector | (mode == LAPIC_TIMER_PERIODIC ? LVT_PERIODIC : 0));
    ops->write(REG_TMR_INIT, count);
}

/* Any context on this CPU. */
void lapic_timer_stop(void)
{
    ops->write(REG_LVT_TMR, LVT_MASKED);
    ops->write(REG_TMR_INIT, 0);
}

/* Any context on this CPU. */
uint32_t lapic_timer_current(void)
{
    return ops->read(REG_TMR_CUR);
}

/* Any context on this CPU: the timer's LVT entry, as the hardware holds it (tests check
 * the mode and vector through the same access path the timer uses). */
uint32_t lapic_timer_lvt(void)
{
    return ops->read(REG_LVT_TMR);
}
