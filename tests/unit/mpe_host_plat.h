/*
 * mpe_host_plat.h: mpe_plat.h on the host, for deterministic tests of the MPI engine
 * (mpi/core/mpe_*.c) with several simulated nodes in one single-threaded process.
 *
 * Each node is a real mpe_node with an mpe_conn per peer. The transport between two nodes
 * is an in-memory byte pipe per direction with a fixed capacity: plat_net_send() takes
 * what fits (a partial count, or 0 when full, like a TCP send buffer). Nothing moves by
 * itself: host_pump() hands bytes from each pipe to the receiving node's mpe_net_rx() in
 * chunks of a configured (or random) size, as "interrupt context", then tells a sender
 * that was short of room with mpe_net_sent(), as the SENT event would.
 *
 * The simulator reaches the engine through mpe_transport.h only, as a platform does. The
 * engine's task-context entry points (mpe_ops) find the calling rank through plat_rank()
 * and plat_node(); host_as_rank() sets both before a call made "as" a rank.
 * plat_block() never sleeps: it pumps until the calling rank is woken, and fails the test
 * (host_fail_hook) when nothing can move any more (a deadlock). plat_fatal() longjmps to
 * host_catch() if one is active, else it too fails the test.
 *
 * The host also checks the engine's context rules: plat_net_send only under the network
 * lock; no allocation, blocking or plat_rank/plat_task in interrupt context.
 */
#ifndef TESTS_MPE_HOST_PLAT_H
#define TESTS_MPE_HOST_PLAT_H
#include "mpe_plat.h"
#include "mpe_transport.h"
#include <stddef.h>
#include <stdint.h>

#define HOST_MAX_NODES 8
#define HOST_MAX_RANKS 64 /* of MPI_COMM_WORLD, other IMPI clients' too */
#define HOST_MAX_HOSTS 8  /* IMPI hosts of a job */

struct host_cfg {
    size_t cap;    /* bytes a pipe holds (the TCP send buffer); 0: 64 KiB */
    size_t chunk;  /* most bytes one host_pump() step hands to mpe_net_rx; 0: all there are */
    int random;    /* each step hands 1..chunk bytes, drawn from `seed` */
    uint32_t seed; /* for random chunks */
    int solo;      /* if > 0: only node solo-1 runs an engine; the test plays the others
                    * (host_inject, host_pipe_take) and their ranks cannot make calls */
};

/* A job of `size` ranks on `nodes` nodes (block placement, as job.c does it), every node
 * with its connections attached to their pipes (through mpe_transport.h, as a platform
 * does when a connection comes up): each sends its HELLO now, which arrives on the next
 * pumps. Replaces any previous world. 0 or -1. */
int host_world_create(int nodes, int size, const struct host_cfg *cfg);
/* Frees every node and everything the engine allocated (plat_alloc'ed blocks). */
void host_world_destroy(void);
/* A fuzz target's cheap reset (task context, nothing in flight inside the host): keep the
 * world as it is now, every plat_alloc block's bytes, the pipes and the simulator's state;
 * host_restore() puts all of it back, at the same addresses: blocks allocated since are
 * freed, blocks freed since come back (until then a use is an ASan report). What the
 * engine keeps outside plat_alloc blocks (the caller's requests and buffers) is the
 * caller's to restore. host_snapshot: 0, or -1 when out of memory. */
int host_snapshot(void);
void host_restore(void);
struct mpe_node *host_node(int id); /* NULL for a node the test plays */
struct mpe_conn *host_conn(int node, int peer);
int host_node_of(int world); /* rank `world` of the job, not counting host_impi_layout's base */

/* Make the next engine calls come from rank `world` (plat_rank, plat_task, plat_node). */
void host_as_rank(int world);
/* Every rank calls mpe_ops.init (waits for every HELLO). */
void host_init_all(void);

/* One step: each non-empty pipe hands one chunk to its receiver. Bytes moved. */
size_t host_pump(void);
/* Pump until every pipe is empty. Bytes moved. */
size_t host_pump_all(void);

/* The test plays a peer: bytes waiting in pipe from->to; take up to max of them out;
 * hand bytes to node's connection to peer as if they came from the wire (interrupt
 * context, under the network lock). */
size_t host_pipe_len(int from, int to);
size_t host_pipe_take(int from, int to, void *buf, size_t max);
void host_inject(int node, int peer, const void *data, size_t len);
/* Discard the bytes waiting in pipe from->to (a peer that reads and ignores them), and
 * tell the sender there is room, as host_pump() would. Bytes dropped. */
size_t host_pipe_drop(int from, int to);
/* From now on plat_net_send from->to fails (the connection broke). */
void host_pipe_break(int from, int to);

/* IMPI (mpe_impi.h): the job's nodes as hosts of IMPI client `client` of `nclients`
 * (client_first as for mpe_node_set_clients); the test plays the other clients' hosts.
 * Right after host_world_create, before host_init_all: every engine node gets
 * mpe_node_set_clients and mpe_impi_setup(cfg), node i as host cfg->self_host + i, and
 * each of its links (a host of another client) is attached to a pipe of its own. World
 * ranks are MPI_COMM_WORLD's from then on (host_as_rank: client_first[client] + the job's
 * rank). 0, or -1 if the engine refused the layout. */
int host_impi_layout(int nclients, const int32_t *client_first, int client,
                     const struct mpe_impi_cfg *cfg);
struct mpe_ilink *host_impi_link(int node, int host);
/* The test plays remote host `host`: bytes it says to node's link (mpe_impi_rx, interrupt
 * context, under the network lock); what the node sent it so far (bytes waiting, take up
 * to max of them out: room for the link, as host_pipe_take and host_pump give). */
void host_impi_inject(int node, int host, const void *data, size_t len);
size_t host_impi_len(int node, int host);
size_t host_impi_take(int node, int host, void *buf, size_t max);

/* Run fn(arg). 1 if it ended the job through plat_fatal (message in host_fatal_msg,
 * "node N: ..." with N the node whose engine called it), else 0. */
int host_catch(void (*fn)(void *), void *arg);
extern char host_fatal_msg[512];

/* What a failed check of the host does (default: print and abort). The unit tests fail
 * the current test instead. */
extern void (*host_fail_hook)(const char *msg) __attribute__((noreturn));

/* Wake-ups recorded for rank `world` so far; outstanding plat_alloc blocks. */
unsigned host_wakes(int world);
size_t host_allocs(void);

/* Deterministic random numbers for tests (xorshift32; *s must not be 0). */
uint32_t host_rand(uint32_t *s);

#endif
