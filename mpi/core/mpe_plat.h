/*
 * mpe_plat.h: what the engine (mpe_*.c) needs from the platform it runs on. The
 * unikernel implements it in unikernel/mpi/mpe_uk.c (and mpe_uk_inline.h: see
 * MPE_PLAT_INLINE below), the Linux library in mpi/linux/mlx_plat.c; a host test may
 * implement it too.
 */
#ifndef MPI_MPE_PLAT_H
#define MPI_MPE_PLAT_H
#include <stddef.h>
#include <stdint.h>

struct mpe_conn;
struct mpe_node;

/* The most CPUs the engine keeps per-CPU state for: plat_cpu() is below it. A platform
 * with more CPUs raises it for its build (the unikernel asserts its MAX_CPUS fits). */
#ifndef MPE_MAX_CPUS
#define MPE_MAX_CPUS 64
#endif

/* The calls every engine operation makes (plat_node, plat_rank, plat_cpu), and plat_poll
 * (every test that finds nothing done), may be inline: a platform whose build defines
 * MPE_PLAT_INLINE (a header's name) defines them there, static inline (the unikernel:
 * unikernel/mpi/mpe_uk_inline.h); the others in a .c file. */
#ifdef MPE_PLAT_INLINE
#include MPE_PLAT_INLINE
#else
/* Any context: the engine of the node the caller runs on (the one the platform made with
 * mpe_node_create, mpe_transport.h), or NULL before there is one. */
struct mpe_node *plat_node(void);
/* Task context: the world rank of the calling task. */
int plat_rank(void);
/* CAD progress (mpe_cad.c) and every engine call (mpe_enter). Any context: this CPU
 * (< MPE_MAX_CPUS). */
int plat_cpu(void);
/* Task context of a rank that found nothing complete in a test (mpe_ops.poll), no engine
 * call under way: progress that nothing else makes while the rank runs (the Linux
 * library without its network thread: mlx.h's caller mode); returns without waiting.
 * Nothing where interrupts or a thread make it (the unikernel: empty, inline). */
void plat_poll(void);
#endif

/* Task context: the calling task, as a token for plat_wake(). */
void *plat_task(void);
/* Any context: make `task` runnable if it sleeps in plat_block(), else remember the
 * wake-up so its next plat_block() returns at once. */
void plat_wake(void *task);
/* Task context: sleep (the CPU halts) until plat_wake() of this task. */
void plat_block(void);
/* Any context: a hint inside a spin-wait loop (x86: pause), nothing else. */
void plat_relax(void);
/* Task context only (never from an interrupt): zeroed memory, or NULL. */
void *plat_alloc(size_t n);
void plat_free(void *p);

/* The network lock (lwIP's): masks interrupts on this CPU; recursive for the CPU that
 * holds it (callbacks from the network already run under it). Returns a token for unlock. */
int plat_net_lock(void);
void plat_net_unlock(int token);
/* Under the network lock: queue up to `len` bytes on a byte stream the platform attached
 * (a node-pair connection's, mpe_conn_attach, or an IMPI link's, mpe_impi_attach), copied.
 * Returns the bytes taken (0: no room now, mpe_net_sent()/mpe_impi_sent() follows), or
 * negative when the transport has failed. */
long plat_net_send(void *transport, const void *data, size_t len);
/* CAD progress (mpe_cad.c). Any context: a task's CPU (tasks are pinned). Interrupt
 * context: was this CPU idle (no task) when interrupted? (0 in task context.) */
int plat_task_cpu(void *task);
int plat_cpu_idle(void);
/* Any context: interrupt `cpu` (this one too); its handler calls mpe_cad_flush(1). */
void plat_cad_ipi(int cpu);
/* Any context: the TSC, its rate, and the TSC at entry of the NIC interrupt this CPU is
 * serving right now (0 when not inside one). */
uint64_t plat_tsc(void);
uint64_t plat_tsc_hz(void);
uint64_t plat_irq_tsc(void);
/* Task context: the calling rank's partition, where every buffer of its graphs must be. */
void plat_partition(uint64_t *base, uint64_t *size);

/* Any context: report a fatal condition of the job (printed with "mpi: " in front) and
 * end the job with a failure code. Never returns. */
void plat_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
