/*
 * wio_boot.h: what WaitIO's start-up and finalisation (wio_init.c, PROTOCOL.md 4) need from
 * the platform, beyond the core's hooks (wio_plat.h): blocking byte streams with deadlines
 * for the exchange with the master, the process's own data listener, and a clock.
 * Implemented by mpi/waitio/linux/wio_linux_boot.c (sockets) and
 * mpi/waitio/uk/wio_uk_boot.c (kernel sockets through uk_abi->net).
 *
 * Every function runs in task context (inside waitio_init or waitio_finalize) and may
 * block until its deadline, a monotonic time in milliseconds (wio_boot_now_ms). Failures
 * that deserve a reason write one line into why[WIO_BOOT_WHY].
 */
#ifndef WIO_BOOT_H
#define WIO_BOOT_H
#include "wio_core.h"

#define WIO_BOOT_WHY 200

struct wio_bstream; /* one start-up connection (the platform's) */

/* Monotonic milliseconds; sleep for ms. */
long long wio_boot_now_ms(void);
void wio_boot_sleep_ms(int ms);

/* WAITIO_MASTER_HOST (a name or a dotted quad) to an IPv4 address. 0 or -1 (why). */
int wio_boot_resolve(const char *host, uint8_t ip[4], char *why);

/* Open this process's data listener and say where others reach it: *me gets its port and
 * the local address of a route towards the master. 0 or -1 (why). */
int wio_boot_listen_self(const uint8_t master_ip[4], uint16_t master_port, struct wio_addr *me,
                         char *why);
/* Give the listener and the data path to core `c` once the table is known (0 or -1), and
 * take them back (closing every socket of the core). */
int wio_boot_start(struct wio_core *c);
void wio_boot_stop(struct wio_core *c);
/* Progress of `c` for at most ms milliseconds (waitio_finalize waits for BYEs with it). */
void wio_boot_progress(struct wio_core *c, int ms);

/* The master's listener on `port` (any address): a stream handle to accept on, or NULL
 * (why). */
struct wio_bstream *wio_boot_master_listen(uint16_t port, char *why);
/* A connection on the master's listener by the deadline, or NULL. */
struct wio_bstream *wio_boot_accept(struct wio_bstream *l, long long deadline);
/* One attempt to connect to ip:port by the deadline: the stream, or NULL (refused, late). */
struct wio_bstream *wio_boot_connect(const uint8_t ip[4], uint16_t port, long long deadline);
/* All n bytes out (out != 0) or in, by the deadline. 0, or -1 (late, closed, failed). */
int wio_boot_io(struct wio_bstream *s, void *buf, size_t n, int out, long long deadline);
void wio_boot_close(struct wio_bstream *s);

#endif
