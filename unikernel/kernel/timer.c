/* timer.c: see timer.h. */
#include "kernel/timer.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "uk/time.h"
#include "uk/cpu.h"

uint64_t lapic_timer_hz;
static void (*hooks[TIMER_MAX_HOOKS])(int cpu);
static int nhooks;

static void timer_irq(struct trapframe *tf)
{
    struct percpu *p = this_cpu();
    p->timer_ticks++;
    for (int i = 0; i < nhooks; i++)
        hooks[i](p->id);
}

/* Boot only (BSP), interrupts off: count the timer down for 10 ms of TSC time. */
void timer_calibrate(void)
{
    lapic_timer_set(LAPIC_TIMER_ONESHOT, 0xffffffffu, VEC_LAPIC_TIMER);
    uint64_t t0 = rdtsc();
    uint32_t c0 = lapic_timer_current();
    while (rdtsc() - t0 < tsc_hz / 100)
        cpu_relax();
    uint32_t c1 = lapic_timer_current();
    uint64_t dt = rdtsc() - t0;
    lapic_timer_stop();
    lapic_timer_hz = (uint64_t)(c0 - c1) * tsc_hz / dt;
    irq_register(VEC_LAPIC_TIMER, timer_irq);
}

/* On the CPU itself. */
void timer_start_periodic(uint32_t hz)
{
    uint64_t count = lapic_timer_hz / hz;
    lapic_timer_set(LAPIC_TIMER_PERIODIC, count ? (uint32_t)count : 1, VEC_LAPIC_TIMER);
}

/* On the CPU itself. */
void timer_oneshot_ns(uint64_t ns)
{
    uint64_t count = (ns * lapic_timer_hz + 999999999) / 1000000000;
    if (count > 0xffffffffu)
        count = 0xffffffffu;
    lapic_timer_set(LAPIC_TIMER_ONESHOT, count ? (uint32_t)count : 1, VEC_LAPIC_TIMER);
}

void timer_stop(void)
{
    lapic_timer_stop();
}

/* Boot or task context, before the hook can matter. */
void timer_add_hook(void (*fn)(int cpu))
{
    if (nhooks < TIMER_MAX_HOOKS)
        hooks[nhooks++] = fn;
}

uint64_t timer_ticks(int cpu)
{
    return percpu[cpu].timer_ticks;
}
