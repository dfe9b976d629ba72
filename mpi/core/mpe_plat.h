/*
 * mpe_plat.h: what the engine (mpe_*.c) needs from the platform it runs on. The
 * unikernel implements it in unikernel/mpi/mpe_uk.c; a host test may implement it too.
 */
#ifndef MPI_MPE_PLAT_H
#define MPI_MPE_PLAT_H
#include <stddef.h>
#include <stdint.h>

struct mpe_conn;

/* Task context: the calling task, as a token for plat_wake(). */
void *plat_task(void);
/* Task context: the world rank of the calling task. */
int plat_rank(void);
/* Any context: make `task` runnable if it sleeps in plat_block(), else remember the
 * wake-up so its next plat_block() returns at once. */
void plat_wake(void *task);
/* Task context: sleep (the CPU halts) until plat_wake() of this task. */
void plat_block(void);
/* Task context only (never from an interrupt): zeroed memory, or NULL. */
void *plat_alloc(size_t n);
void plat_free(void *p);

/* The network lock (lwIP's): masks interrupts on this CPU; recursive for the CPU that
 * holds it (callbacks from the network already run under it). Returns a token for unlock. */
int plat_net_lock(void);
void plat_net_unlock(int token);
/* Under the network lock: queue up to `len` bytes on the node-pair connection's
 * transport (copied). Returns the bytes taken (0: no room now, mpe_net_sent() follows),
 * or negative when the transport has failed. */
long plat_net_send(struct mpe_conn *c, const void *data, size_t len);
/* Any context: report a fatal condition of the job (printed with "mpi: " in front) and
 * end the job with a failure code. Never returns. */
void plat_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
