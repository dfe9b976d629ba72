/*
 * wio_test_net.h: an in-memory platform for the WaitIO core (mpi/waitio/wio_plat.h), so
 * the unit tests can wire two or three cores together in one process. Streams are byte
 * buffers delivered in random-sized pieces (headers split across wio_rx calls); sends take
 * at most `tn_send_max` bytes per call and stall when a stream holds `tn_stream_max`
 * bytes, so short writes and wio_tx_ready happen. Single-threaded: the lock is a no-op and
 * wio_plat_block runs one delivery round (a test that stops making progress fails).
 */
#ifndef WIO_TEST_NET_H
#define WIO_TEST_NET_H
#include "wio_core.h"

#define TN_CORES 4

extern struct wio_core tn_core[TN_CORES];
extern size_t tn_send_max, tn_stream_max;

/* Main thread: `ncores` cores as one instance of PBs with the given sizes (sum = ncores),
 * every earlier one freed. */
void tn_setup(uint32_t npb, const uint32_t *pb_size);
/* Main thread: free everything. */
void tn_teardown(void);
/* Main thread: one delivery round over every stream; 1 if anything moved. */
int tn_pump(void);
/* Main thread: complete every connect in progress (the streams accept, the connecting
 * side writes its HELLO) without delivering a byte; returns how many. */
int tn_accept_all(void);
/* Bytes written by core a to core b and not delivered yet. */
size_t tn_pending(int a, int b);
/* Main thread: deliver the HELLO core a has written to core b, nothing else; 0 if none. */
int tn_deliver_hello(int a, int b);
/* Main thread: pump until nothing moves. */
void tn_settle(void);
/* The last line core i logged ("" if none), and forget it. */
const char *tn_log(int i);
/* Main thread: a stream that core `to` accepted, fed by the test (not by a core): bytes
 * written with tn_inject reach the core; what the core sends back is dropped. */
void *tn_raw(int to);
void tn_inject(void *raw, const void *bytes, size_t n);
/* Main thread: cut the stream carrying core a's traffic to core b, as a crash would (both
 * sides see the connection lost). */
void tn_cut(int a, int b);
/* The universe-wide group of every core, for index i (filters truef, order by PB id). */
struct PBGroup *tn_world(int i);

#endif
