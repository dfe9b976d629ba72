/*
 * lwip_port.h: the kernel's side of lwIP (net/lwip-port/lwip_port.c).
 *
 * The one lwIP lock. Every call into lwIP (the NIC interrupt's RX path, a rank's
 * tcp_write(), the timer's sys_check_timeouts(), netif_poll_all()) happens between
 * lwip_lock() and lwip_unlock(). While it is held, interrupts are masked on this CPU, so
 * the NIC interrupt cannot arrive on top of a rank that holds it and spin forever; other
 * CPUs spin. lwIP callbacks (tcp_recv, tcp_sent, ...) run with the lock held: they must not
 * call lwip_lock() again, sleep, or use newlib's stdio/malloc.
 */
#ifndef LWIP_PORT_H
#define LWIP_PORT_H

/* Task context, once (later calls do nothing): lwip_init(), which also brings up the
 * 127.0.0.1 loopback netif. Takes the lwIP lock itself. */
void lwip_port_init(void);

/* Any context, not recursive: masks interrupts on this CPU, then takes the lock. */
void lwip_lock(void);
/* Any context, by the holder: releases the lock, then restores this CPU's interrupt flag. */
void lwip_unlock(void);
/* Any context: 1 if the calling CPU holds the lwIP lock. */
int lwip_core_locked(void);

#endif
