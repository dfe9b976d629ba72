/*
 * wio_plat.h: everything the freestanding WaitIO core (mpi/waitio/wio_*.c) needs from the
 * platform it runs on, and the entry points the platform calls. Implemented by the Linux
 * library (mpi/waitio/linux/wio_linux_net.c), the host unit tests (tests/unit/wio_test_net.c)
 * and the unikernel over its kernel sockets (mpi/waitio/uk/wio_uk_net.c).
 *
 * Contexts. "Task": the application thread inside a waitio_* call. "Rx": wherever the
 * platform delivers bytes and transport events (Linux: inside wio_plat_block, i.e. inside
 * waitio_wait; unikernel: the NIC interrupt). The core never blocks and never calls
 * wio_plat_block from rx context. State shared between the two is changed only under the
 * lock hook.
 */
#ifndef WIO_PLAT_H
#define WIO_PLAT_H
#include <stddef.h>
#include <stdint.h>

struct wio_core;
struct wio_conn;

/* ---- Hooks: the platform implements these; the core calls them. ---- */

/* Under the lock, task or rx context (the transmit pump runs from both): queue up to `n`
 * bytes of data (copied or fully consumed before returning) on the byte stream `transport`.
 * Returns the bytes taken, 0..n: fewer than n means "no room now", and the platform calls
 * wio_tx_ready() when there is (Linux: EPOLLOUT after EAGAIN; a connect still in progress
 * counts as no room). Negative: the transport failed; the core fails the connection. Must
 * not call back into the core. */
long wio_plat_send(struct wio_core *c, void *transport, const void *data, size_t n);

/* Under the lock, task or rx context: start opening a byte stream to process `peer`
 * (universe index; its address is wio_peer_addr()) on behalf of `conn`. Returns the
 * platform's transport handle, or NULL when it failed at once (the core fails the
 * connection). The platform later calls wio_tx_ready() when the stream can take bytes, or
 * wio_conn_lost() when opening failed. */
void *wio_plat_connect(struct wio_core *c, uint32_t peer, struct wio_conn *conn);

/* Under the lock, task or rx context (also from inside wio_rx for the same transport):
 * close `transport`. Afterwards the platform delivers nothing more for it (no wio_rx,
 * wio_tx_ready or wio_conn_lost); it must defer freeing whatever its own caller still uses. */
void wio_plat_close(struct wio_core *c, void *transport);

/* Any context: the lock over the core's state. Recursive for a context that already holds
 * it (the platform may call the entry points below with it held). Returns a token for
 * unlock. Single-threaded platforms may make these no-ops. */
unsigned long wio_plat_lock(struct wio_core *c);
void wio_plat_unlock(struct wio_core *c, unsigned long token);

/* Task context, without the lock: waitio_wait's sleep. Returns when wio_plat_wake() was
 * called since the previous return (a wake-up before the call is remembered, never lost),
 * or whenever the platform made progress (Linux: after one epoll round, which is where
 * its rx runs). May return spuriously; the caller re-checks. */
void wio_plat_block(struct wio_core *c);
/* Under the lock, any context: a request of this core completed; wake wio_plat_block. */
void wio_plat_wake(struct wio_core *c);

/* Any context: memory for the core, zeroed; NULL when there is none. Rx context asks only
 * for one bounded unexpected-message record at a time (struct wio_ux, under 256 bytes). */
void *wio_plat_alloc(size_t n);
void wio_plat_free(void *p);

/* Any context: one finished line of text (no newline), an error or event worth telling
 * the user (a peer failed, a message truncated). */
void wio_plat_log(struct wio_core *c, const char *line);

/* ---- Entry points: the platform calls these; each takes the lock itself. ---- */

/* Rx context: `n` more bytes arrived on the stream of `conn`. Consumes them all
 * incrementally (a header may be split across calls; payload is copied straight into the
 * posted receive buffer), never blocks, allocates at most one unexpected record per
 * packet. May close the transport (wio_plat_close) when the bytes are invalid. */
void wio_rx(struct wio_conn *conn, const void *bytes, size_t n);
/* Rx context: the stream of `conn` can take bytes again (or has just connected). */
void wio_tx_ready(struct wio_conn *conn);
/* Rx context: the stream of `conn` closed or failed; `why` (static or the caller's, copied)
 * says how. The core fails what depended on it unless the peer had said BYE. The platform
 * closes the transport itself. */
void wio_conn_lost(struct wio_conn *conn, const char *why);
/* Rx context: the platform accepted a stream (`transport`). Returns the connection the
 * core will read it as, or NULL when it has no room (the platform closes the stream). */
struct wio_conn *wio_conn_accept(struct wio_core *c, void *transport);

#endif
