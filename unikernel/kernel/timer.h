/* timer.h: the local APIC timer of each CPU, calibrated against the TSC. */
#ifndef UK_TIMER_H
#define UK_TIMER_H
#include <stdint.h>

extern uint64_t lapic_timer_hz; /* timer counts per second (divide-by-16 input) */

/* Boot only (BSP), after tsc_calibrate(). */
void timer_calibrate(void);
/* On the CPU itself (task or boot context). Periodic ticks at `hz` on this CPU. */
void timer_start_periodic(uint32_t hz);
/* On the CPU itself. One tick after `ns` nanoseconds (rounded up to a timer count). */
void timer_oneshot_ns(uint64_t ns);
void timer_stop(void);

/* Boot or task context. Called on every tick of every CPU, in interrupt context, with the
 * CPU's index. At most TIMER_MAX_HOOKS. */
#define TIMER_MAX_HOOKS 8
void timer_add_hook(void (*fn)(int cpu));

/* Statistics for tests and benchmarks. */
uint64_t timer_ticks(int cpu);

#endif
