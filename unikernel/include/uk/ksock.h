/*
 * ksock.h: a small TCP socket API for code inside the kernel (the MPI engine), on top of
 * lwIP's raw API.
 *
 * Context: every function may be called from a task or from interrupt context, including
 * from inside a ksock callback (it then runs under the lwIP lock already held; otherwise
 * it takes it). Callbacks run with the lwIP lock held and interrupts masked, usually in
 * the NIC interrupt: they must be short, must not sleep, must not use newlib's stdio or
 * malloc; they may call ksock functions.
 *
 * Ownership: a struct ksock comes from a fixed pool; the user owns it from
 * ksock_connect()/the accept callback until ksock_close() or ksock_abort(), even after an
 * error (which only detaches it from lwIP). Received data is lent to the recv callback
 * for the duration of the call. ksock_send() copies.
 */
#ifndef UK_KSOCK_H
#define UK_KSOCK_H
#include <stddef.h>
#include <stdint.h>

struct ksock;

/* Error codes (negative returns, and the `err` of KSOCK_EV_ERROR). */
#define KSOCK_ECLOSED   1 /* not connected (closed, aborted, or never connected) */
#define KSOCK_EREFUSED  2 /* peer refused or reset the connection */
#define KSOCK_ETIMEDOUT 3 /* peer silent for longer than the socket's timeout */
#define KSOCK_ENOMEM    4 /* out of pool memory (sockets, pcbs) */
#define KSOCK_ERESET    5 /* connection reset or aborted by lwIP */

enum ksock_event {
    KSOCK_EV_CONNECTED, /* connect completed */
    KSOCK_EV_SENT,      /* the peer acknowledged data: send room may be free */
    KSOCK_EV_EOF,       /* the peer closed its sending side */
    KSOCK_EV_ERROR,     /* the connection is gone (err says why); no more callbacks */
};

struct ksock_ops {
    /* `len` bytes arrived (in order). */
    void (*recv)(struct ksock *s, void *arg, const void *data, size_t len);
    void (*event)(struct ksock *s, void *arg, enum ksock_event ev, int err);
};

/* Called for each accepted connection; it should call ksock_set_ops() on `s`. */
typedef void (*ksock_accept_fn)(struct ksock *listener, void *arg, struct ksock *s);

struct ksock *ksock_listen(uint16_t port, ksock_accept_fn fn, void *arg);
/* Start connecting to `ip` (host byte order):`port`. NULL if no socket/pcb is free. */
struct ksock *ksock_connect(uint32_t ip, uint16_t port, const struct ksock_ops *ops, void *arg);
/* Task context: connect and wait until connected, retrying every retry_us while the peer
 * refuses (it may not listen yet) until time_ns() passes deadline_ns. The socket, or NULL
 * (the caller says why). Halts the CPU while it waits; callbacks may run meanwhile. */
struct ksock *ksock_connect_wait(uint32_t ip, uint16_t port, const struct ksock_ops *ops, void *arg,
                                 uint64_t deadline_ns, uint32_t retry_us);
void ksock_set_ops(struct ksock *s, const struct ksock_ops *ops, void *arg);

/* Queue up to `len` bytes (copied); returns the bytes taken (0: no room now, wait for
 * KSOCK_EV_SENT) or -KSOCK_E*. */
long ksock_send(struct ksock *s, const void *data, size_t len);
/* Graceful close (FIN after queued data) and release of `s`. Returns 0. */
int ksock_close(struct ksock *s);
/* Reset the connection and release `s`. */
void ksock_abort(struct ksock *s);

/* An owner (any pointer, e.g. a task) for `s`; sockets accepted by a listener get the
 * listener's. ksock_abort_owned() aborts (listeners: closes) every socket of `owner`, so
 * no callback runs for an owner that is gone; not from inside one of their callbacks. */
void ksock_set_owner(struct ksock *s, const void *owner);
void ksock_abort_owned(const void *owner);

/* Abort with KSOCK_ETIMEDOUT when nothing has been heard from the peer for `ms` while we
 * have unacknowledged data or are waiting for data (ksock_expect_data). 0: off (default
 * NET_KSOCK_TIMEOUT_MS from the command line key `ksock_timeout_ms`, 10 s if absent). */
void ksock_set_timeout(struct ksock *s, uint32_t ms);
void ksock_expect_data(struct ksock *s, int on);

/* Any context: 1 when everything queued has been sent and acknowledged by the peer. */
int ksock_flushed(struct ksock *s);
/* Any context: acknowledge what the peer sent so far now, not after lwIP's delayed-ACK
 * timer (for a node about to power off: its peer waits for that ACK). */
void ksock_ack_now(struct ksock *s);
/* Any context: take the lwIP lock (interrupts masked) unless this CPU holds it already
 * (inside a callback); pass the token to ksock_unlock(). For callers that must update
 * their own state and send atomically with respect to the callbacks. */
int ksock_lock(void);
void ksock_unlock(int token);

int ksock_connected(struct ksock *s);
int ksock_error(struct ksock *s); /* 0, or the KSOCK_E* that ended the connection */
uint32_t ksock_peer_ip(struct ksock *s);
const char *ksock_strerror(int err);

#endif
