/*
 * wio_uk.h: the unikernel platform of the WaitIO core, shared by its files: the hooks of
 * wio_plat.h over the kernel's sockets (wio_uk_net.c) and start-up (wio_uk_boot.c).
 *
 * The library is linked into the application (ukmpicc ... -lwaitio) and reaches the
 * kernel through uk_abi->net (uk/abi.h). Its socket callbacks are its own code, run by the
 * kernel in the NIC interrupt under the network lock: that is where the core's receive
 * path (wio_rx: matching, copies into posted buffers) runs, as the MPI engine's does, and
 * waitio_wait sleeps (the CPU halts) until a callback completes its request.
 *
 * Interrupt-context rules for everything here: no newlib stdio or malloc (wio_plat_alloc
 * serves the receive path from a pool made in task context; log lines wait in a ring
 * until the task prints them), only this partition's memory.
 */
#ifndef WIO_UK_H
#define WIO_UK_H
#include "wio_core.h"
#include <uk/ksock.h>
#include <ukapp.h>

/* Each rank's data listener: this base plus its world rank (ranks of a node share an IP). */
#define WIO_UK_PORT_BASE 7200

/* The kernel's socket table and this rank's task token (set by wio_uk_net_open). */
extern const struct uk_net_abi *wio_uk_net;
extern void *wio_uk_task;

/* Task context: take the ABI, make the receive path's pool, listen on our port. Before
 * the core exists, connections are held (with the bytes they bring) until
 * wio_uk_net_start. 0 or -1 (why[WIO_BOOT_WHY]). */
int wio_uk_net_open(uint16_t port, char *why);
/* Task context: hand the held connections and every later one to core `c`. */
void wio_uk_net_start(struct wio_core *c);
/* Task context: close every socket of the core and the listener; print pending lines. */
void wio_uk_net_stop(void);
/* Task context: print the log lines the receive path left (no lock held). */
void wio_uk_log_flush(void);

#endif
