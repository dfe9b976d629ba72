/* smp.h: bringing up the other CPUs, and asking them to do things (IPIs). */
#ifndef UK_SMP_H
#define UK_SMP_H
#include <stdint.h>

/* Boot only (BSP): start every CPU the MADT lists; returns how many are online. */
int smp_boot(void);
/* CPUs online: indices 0..ncpus_online-1. */
int smp_ncpus(void);

/* Task context, not on `cpu` itself. Runs fn(arg) on `cpu` in its idle loop (task context,
 * interrupts on) and waits for it to return. Returns 0, or -1 if `cpu` is not online.
 * (With the scheduler, this becomes a task pinned to `cpu`.) */
int smp_run(int cpu, void (*fn)(void *), void *arg);
/* AP start-up: the loop an idle AP runs, halted until an IPI brings work. Never returns. */
void smp_idle_loop(void) __attribute__((noreturn));
/* Any context. Send a bare IPI (one of VEC_IPI_* in arch/x86_64/trap.h) to `cpu`. */
void ipi_send(int cpu, int vector);
/* Task context, interrupts on. One IPI ping from this CPU to `cpu` and its pong back;
 * returns the round trip in TSC cycles, or 0 if no pong came within 100 ms. */
uint64_t ipi_ping(int cpu);

/* Boot only: install the IPI handlers. */
void ipi_init(void);

#endif
