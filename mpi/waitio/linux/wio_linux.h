/*
 * wio_linux.h: the Linux platform of the WaitIO core, shared by its files: the epoll
 * progress engine (wio_linux_net.c) and start-up's streams (wio_linux_boot.c).
 * Single-threaded: everything runs in the application thread, and the core's progress
 * happens inside waitio_wait (wio_plat_block runs one epoll round).
 */
#ifndef WIO_LINUX_H
#define WIO_LINUX_H
#include "wio_core.h"
#include <netinet/in.h>

/* Task context: epoll and the listening socket `lfd` (already listening, non-blocking)
 * become core `c`'s (the process's one). 0, or -1 with errno. */
int wio_lx_net_start(struct wio_core *c, int lfd);
/* Task context: close every socket and epoll. */
void wio_lx_net_stop(void);
/* Task context: one epoll round, waiting at most `ms` milliseconds. */
void wio_lx_poll(int ms);
/* Task context: milliseconds of a monotonic clock. */
long long wio_lx_now_ms(void);

#endif
