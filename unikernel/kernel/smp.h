/* smp.h: bringing up the other CPUs, and asking them to do things (IPIs). */
#ifndef UK_SMP_H
#define UK_SMP_H
#include <stdint.h>

/* Boot only (BSP): start every CPU the MADT lists; returns how many are online. */
int smp_boot(void);
/* CPUs online: indices 0..ncpus_online-1. */
int smp_ncpus(void);
/* Any context: the CPU index with this APIC id, or -1. */
int smp_cpu_of_apic(uint32_t apic_id);
/* Any context, after smp_boot(): the core a CPU belongs to (its APIC id without the SMT
 * bits of CPUID leaf 0xB: hardware threads of one core share it), and threads per core. */
uint32_t smp_core_of(int cpu);
int smp_threads_per_core(void);
/* Any context, after smp_boot(): the CPU for placement slot `slot` (modulo the CPUs online):
 * one per core first (the first hardware thread of each core), then the cores' second
 * threads, and so on, so that N ranks on N slots share no core while cores are left. */
int smp_place_cpu(int slot);

/* Task context, not on `cpu` itself. Runs fn(arg) on `cpu` in its scheduler context
 * (interrupts on, between tasks) and waits for it to return. Returns 0, or -1 if `cpu` is
 * not online. For work that must block, start a task pinned to `cpu` instead. */
int smp_run(int cpu, void (*fn)(void *), void *arg);
/* The two halves of smp_run(): post the work and return at once, then wait for it. The
 * caller must call smp_wait(cpu) before posting to `cpu` again. */
int smp_post(int cpu, void (*fn)(void *), void *arg);
void smp_wait(int cpu);
/* Scheduler context (sched_loop), interrupts off: run the work smp_post() left for this
 * CPU, if any, with interrupts on; returns 1 if there was some. The scheduler halts with
 * `sti; hlt`, one step for interrupts (sti takes effect after the next instruction), so
 * the wake-up IPI that comes with new work is never lost between the check and the hlt. */
int smp_mailbox_poll(void);
/* Any context. Send a bare IPI (one of VEC_IPI_* in arch/x86_64/trap.h) to `cpu`. */
void ipi_send(int cpu, int vector);
/* Any context. The same IPI to every online CPU, this one included. */
void ipi_broadcast(int vector);
/* Task context, interrupts on. One IPI ping from this CPU to `cpu` and its pong back;
 * returns the round trip in TSC cycles, or 0 if no pong came within 100 ms. */
uint64_t ipi_ping(int cpu);

/* Boot only: install the IPI handlers. */
void ipi_init(void);

#endif
