/*
 * mlx_net.h: what the two halves of a Linux node's network thread share (internal to
 * mpi/linux/): mlx_net.c (the thread, the TCP connections) and mlx_net_shm.c (the
 * same-host pairs over shared memory, mlx_ring.h). A connection is a struct mlx_conn,
 * the engine's transport handle either way.
 */
#ifndef MPI_LINUX_MLX_NET_H
#define MPI_LINUX_MLX_NET_H
#include "mpe_wire.h"
#include <stddef.h>
#include <stdint.h>

struct mlx_ring;

enum ev_kind { EV_KICK, EV_LISTEN, EV_ULISTEN, EV_CONN, EV_O2G, EV_KACC };

/* One node-pair socket: the engine's transport handle (mpe_conn_attach). */
struct mlx_conn {
    enum ev_kind kind;        /* EV_CONN: first, epoll's data points here */
    int fd;                   /* the TCP socket, or a shared-memory pair's doorbell socket */
    struct mlx_ring *tx, *rx; /* a shared-memory pair's rings (mlx_ring.h), or NULL */
    int peer;                 /* a shared-memory pair's other node */
    struct mpe_conn *c;       /* NULL while an accepted socket has not said HELLO */
    uint8_t hello[MPE_WIRE_HDR];
    size_t hello_n;
    int want_out; /* under the network lock: waiting for EPOLLOUT (plat_net_send got 0) */
    int corked;   /* under the network lock: TCP_CORK set, data held (plat_net_send); for a
                   * shared-memory pair: its doorbell is to be rung (mlx_shm_send) */
    int dead;     /* under the network lock: closed or failed, out of epoll */
    int o2g;      /* attached to /dev/o2g (mlx_o2g.c): never read here, output only */
};

/* mlx_net.c. Under the network lock: by peer, once attached; some conn is corked. */
extern struct mlx_conn **mlx_conns;
extern int mlx_corked_any;
/* Any thread: epoll interest of k (EPOLL_CTL_ADD or _MOD): input (unless /dev/o2g reads
 * it), and output while it waits for room. */
void mlx_conn_interest(struct mlx_conn *k, int op);
/* Under the network lock: k is finished with (out of epoll, its fd open until
 * mlx_net_stop). */
void mlx_conn_dead(struct mlx_conn *k);

/* mlx_net_shm.c. Task context (start-up): room for `nodes` pairs. 0, or -1. */
int mlx_shm_alloc(int nodes);
/* Any thread: the pairs attached so far. */
int mlx_shm_pairs(void);
/* Under the network lock: a same-host pair's connection to node `peer` is up (its
 * doorbell socket fd, the rings we write and read). Hazard: from a thread other than the
 * network thread, kick it after the unlock (its sleep announcement misses the pair). */
void mlx_shm_attach(int fd, int peer, struct mlx_ring *tx, struct mlx_ring *rx);
/* Under the network lock (plat_net_send to a pair): the bytes taken, as plat_net_send. */
long mlx_shm_send(struct mlx_conn *k, const uint8_t *data, size_t len);
/* Network thread: hand every pair's bytes to the engine, pump sends that waited for room.
 * 1 if there was anything to do. */
int mlx_shm_poll(void);
/* Network thread, about to wait in epoll: tell every pair's peer to ring for its next
 * byte. The epoll timeout (ms): -1 sleep, 0 bytes arrived meanwhile. mlx_shm_awake
 * follows either way. */
int mlx_shm_sleep(void);
void mlx_shm_awake(void);
/* Network thread: pair k's doorbell socket is readable. */
void mlx_shm_bell(struct mlx_conn *k);
/* Network thread: accept the higher-numbered same-host nodes on listener lfd. */
void mlx_shm_accept_all(int lfd);

#endif
