/*
 * bench_test.c: in-kernel measurements for `make bench` (tests/bench/run.sh). They print
 * "bench: key=value" lines and always return 0: figures, never pass/fail on timing. Each
 * figure comes with a baseline measured in the same boot.
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/time.h"
#include "uk/cpu.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"

#define NSAMPLES 401

extern uint64_t boot_tsc;

KTEST(bench_boot)
{
    uint64_t cycles = rdtsc() - boot_tsc;
    kprintf("bench: boot_kernel_to_test_us=%lu\n", cycles * 1000000 / tsc_hz);
    return 0;
}

/* Shared-memory ping-pong, the baseline for the IPI round trip: the same two CPUs passing
 * a cache line back and forth, no interrupt involved. */
static volatile uint64_t flag __attribute__((aligned(64)));
static volatile int responder_stop;

static void responder(void *arg)
{
    uint64_t seen = 0;
    while (!responder_stop) {
        uint64_t v = __atomic_load_n(&flag, __ATOMIC_ACQUIRE);
        if (v != seen && (v & 1)) {
            seen = v + 1;
            __atomic_store_n(&flag, seen, __ATOMIC_RELEASE);
        }
        cpu_relax();
    }
}

static void flag_pingpong(uint64_t *samples)
{
    uint64_t v = 0;
    for (int i = 0; i < NSAMPLES; i++) {
        uint64_t t0 = rdtsc();
        __atomic_store_n(&flag, ++v, __ATOMIC_RELEASE);
        while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != v + 1)
            cpu_relax();
        v++;
        samples[i] = rdtsc() - t0;
    }
}

/* IPI round trip cpu 0 <-> cpu 1 against the shared-memory round trip of the same pair. */
KTEST(bench_ipi)
{
    static uint64_t s[NSAMPLES];
    if (smp_ncpus() < 2) {
        kprintf("bench: ipi needs 2 CPUs\n");
        return 0;
    }
    for (int i = 0; i < NSAMPLES; i++)
        s[i] = ipi_ping(1);
    uint64_t ipi = ktest_median(s, NSAMPLES);
    responder_stop = 0;
    flag = 0;
    smp_post(1, responder, 0);
    flag_pingpong(s);
    responder_stop = 1;
    smp_wait(1);
    uint64_t mem = ktest_median(s, NSAMPLES);
    kprintf("bench: ipi_rtt_cycles=%lu ipi_rtt_ns=%lu\n", ipi, ipi * 1000000000 / tsc_hz);
    kprintf("bench: shm_rtt_cycles=%lu shm_rtt_ns=%lu\n", mem, mem * 1000000000 / tsc_hz);
    return 0;
}

/* Timer interrupt cost: from the interrupt entry (isr.S stamps the TSC) to the timer
 * handler, and from the programmed expiry to the handler; baseline: the same entry path
 * taken by a software interrupt (int $VEC_BENCH) on the same CPU. */
#define VEC_BENCH 0xe0
static volatile uint64_t hook_tsc, hook_entry;

static void timer_hook(int cpu)
{
    if (cpu == 0) {
        hook_tsc = rdtsc();
        hook_entry = this_cpu()->irq_entry_tsc;
    }
}

static void soft_handler(struct trapframe *tf)
{
    hook_tsc = rdtsc();
    hook_entry = this_cpu()->irq_entry_tsc;
}

KTEST(bench_irq)
{
    static uint64_t entry[NSAMPLES], expiry[NSAMPLES], soft[NSAMPLES], softrt[NSAMPLES];
    timer_add_hook(timer_hook);
    irq_register(VEC_BENCH, soft_handler);
    uint32_t count = (uint32_t)(lapic_timer_hz / 2000); /* 0.5 ms */
    for (int i = 0; i < NSAMPLES; i++) {
        hook_tsc = 0;
        uint64_t f = irq_save();
        uint64_t t0 = rdtsc();
        lapic_timer_set(LAPIC_TIMER_ONESHOT, count, VEC_LAPIC_TIMER);
        irq_restore(f);
        while (!hook_tsc)
            __asm__ volatile("hlt");
        uint64_t due = t0 + (uint64_t)count * tsc_hz / lapic_timer_hz;
        entry[i] = hook_tsc - hook_entry;
        expiry[i] = hook_tsc > due ? hook_tsc - due : 0;
    }
    for (int i = 0; i < NSAMPLES; i++) {
        uint64_t t0 = rdtsc();
        __asm__ volatile("int %0" ::"i"(VEC_BENCH) : "memory");
        uint64_t t1 = rdtsc();
        soft[i] = hook_tsc - hook_entry;
        softrt[i] = t1 - t0;
    }
    kprintf("bench: timer_entry_to_handler_cycles=%lu\n", ktest_median(entry, NSAMPLES));
    kprintf("bench: timer_expiry_to_handler_cycles=%lu\n", ktest_median(expiry, NSAMPLES));
    kprintf("bench: softint_entry_to_handler_cycles=%lu\n", ktest_median(soft, NSAMPLES));
    kprintf("bench: softint_round_trip_cycles=%lu\n", ktest_median(softrt, NSAMPLES));
    return 0;
}
