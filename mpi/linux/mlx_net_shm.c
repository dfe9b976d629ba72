/*
 * mlx_net_shm.c: the network thread's side of same-host node pairs (mlx_net.h): a pair of
 * shared-memory rings (mlx_ring.h, set up by mlx_shm.c) instead of a TCP socket. The
 * sender's plat_net_send copies into the ring (from the rank's thread, under its network
 * lock), and the receiver's network thread hands the bytes to the engine straight from
 * ring memory (mpe_net_rx copies them into the posted buffer or an eager slot): one copy
 * in, one out. The pair's unix socket is its doorbell: a byte says "look at the rings",
 * its end says the peer process is gone.
 */
#include "mlx.h"
#include "mlx_net.h"
#include "mlx_ring.h"
#include "mpe.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* ring bytes published or consumed at once: pipelines a large message through the ring */
#define MLX_SHM_CHUNK  65536
#define MLX_BELL_BYTES 64 /* doorbell bytes read at once */

/* The pairs: entries are written under the network lock before nshm is raised (release),
 * and never change, so the network thread scans them without the lock. */
static struct mlx_conn **shm_conns; /* [nodes] */
static int nshm;

/* Task context (start-up); see mlx_net.h. */
int mlx_shm_alloc(int nodes)
{
    shm_conns = calloc((size_t)nodes, sizeof *shm_conns);
    return shm_conns ? 0 : -1;
}

/* Any thread; see mlx_net.h. */
int mlx_shm_pairs(void)
{
    return __atomic_load_n(&nshm, __ATOMIC_ACQUIRE);
}

/* Under the network lock (plat_net_send): copy into the pair's ring what fits, in chunks
 * published one by one so that the peer starts copying out while we copy in. A full ring
 * arms want_out and the flag the peer's consume looks at (writer_waits): its doorbell
 * brings us back (mlx_shm_bell, then drain calls mpe_net_sent). */
long mlx_shm_send(struct mlx_conn *k, const uint8_t *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        int ring;
        size_t want = len - done < MLX_SHM_CHUNK ? len - done : MLX_SHM_CHUNK;
        size_t n = mlx_ring_put(k->tx, data + done, want, &ring);
        if (ring) /* at the unlock: a header and its payload wake the peer once */
            k->corked = mlx_corked_any = 1;
        done += n;
        if (n == 0 && !mlx_ring_wait_room(k->tx)) {
            k->want_out = 1;
            break;
        }
    }
    return (long)done;
}

/* Network thread, under the network lock (mlx_shm_poll, mlx_shm_bell): hand what k's ring
 * holds to the engine (at most a ring's worth, then the other pairs), and pump our sends
 * if the peer made room. 1 if there was anything to do.
 *
 * Hazard: a send that waits for room is looked at with mlx_ring_wait_room (announce again,
 * full fence, then look at tail), never with a bare look at tail. The peer's consume
 * stores tail, fences, and only then takes writer_waits (exchange to 0) to ring: between
 * its store and its exchange this thread may see that room without a doorbell (a poll, or
 * the doorbell of the peer's data), resume the send, fill the ring again and announce a
 * new wait; the exchange then takes that new announcement for the old room, and rings. The
 * doorbell finds no room, and with a bare look nothing is announced any more: the peer
 * consumes the rest without ringing, and the send waits for ever, this thread asleep.
 * Announcing again at each look restores the invariant the peer relies on: whenever a
 * send waits and no doorbell of its peer is unread, writer_waits is set (the memory-order
 * argument is at mlx_ring_wait_room). tests/mpi/linux/belltest.c plays that interleaving
 * step by step. */
static int drain(struct mlx_conn *k)
{
    int did = 0;
    for (size_t budget = MLX_RING_BYTES; budget > 0 && !k->dead;) {
        const uint8_t *p;
        size_t n = mlx_ring_peek(k->rx, &p);
        if (n == 0)
            break;
        if (n > MLX_RING_BYTES)
            plat_fatal("connection to node %d: the shared-memory ring is corrupt", k->peer);
        n = n < MLX_SHM_CHUNK ? n : MLX_SHM_CHUNK;
        n = n < budget ? n : budget;
        mpe_net_rx(k->c, p, n); /* copies out: the engine keeps no pointer into the ring */
        int ring;
        mlx_ring_consume(k->rx, n, &ring);
        if (ring)
            mlx_shm_ring(k->fd);
        budget -= n;
        did = 1;
    }
    if (k->want_out && !k->dead && mlx_ring_wait_room(k->tx)) {
        k->want_out = 0;
        mpe_net_sent(k->c);
        did = 1;
    }
    return did;
}

/* Network thread: every shared-memory pair once (drain). 1 if any had work. The lock
 * (which the rank takes to send) only when a ring has bytes or a send waits for room. */
int mlx_shm_poll(void)
{
    int did = 0, n = __atomic_load_n(&nshm, __ATOMIC_ACQUIRE), work = 0;
    for (int i = 0; i < n && !work; i++)
        work = mlx_ring_readable(shm_conns[i]->rx) ||
               __atomic_load_n(&shm_conns[i]->want_out, __ATOMIC_RELAXED);
    if (!work)
        return 0;
    int t = plat_net_lock();
    for (int i = 0; i < n; i++)
        if (!shm_conns[i]->dead)
            did |= drain(shm_conns[i]);
    plat_net_unlock(t);
    return did;
}

/* Network thread (turn), about to wait in epoll: tell every pair's peer to ring for its
 * next byte. The epoll timeout: -1 (sleep), or 0 (bytes arrived meanwhile); mlx_shm_awake
 * follows either way. A send waiting for room needs no timeout: the peer rings when it
 * makes room (drain's hazard keeps writer_waits announced). A dead pair's ring is harmless
 * to look at. */
int mlx_shm_sleep(void)
{
    int empty = 1, n = __atomic_load_n(&nshm, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        empty &= mlx_ring_sleep(shm_conns[i]->rx);
    return empty ? -1 : 0;
}

/* Network thread, after epoll: producers may stop ringing. */
void mlx_shm_awake(void)
{
    int n = __atomic_load_n(&nshm, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        mlx_ring_awake(shm_conns[i]->rx);
}

/* Network thread: k's doorbell socket is readable: doorbell bytes, or its end: the peer
 * process is gone. What it wrote before it went is still in the ring (its BYE perhaps, so
 * that its leaving is no error): drained first.
 *
 * Hazard: a doorbell is drained under the lock, never left to mlx_shm_poll's look without
 * it. The peer rings for room as soon as it sees writer_waits, which mlx_shm_send sets
 * inside the sender's critical section, before its want_out = 1: a look without the lock
 * in between finds no work, the network thread sleeps, and the send that met the full ring
 * never resumes (a 16 MiB exchange hung so under load). Under the lock, this thread waits
 * for that critical section to end and sees want_out. tests/mpi/linux_faults.sh's
 * window.* cases widen the gap. */
void mlx_shm_bell(struct mlx_conn *k)
{
    char b[MLX_BELL_BYTES];
    ssize_t n;
    do /* fewer bytes than asked for: none left for now (a stream socket) */
        n = read(k->fd, b, sizeof b);
    while (n == (ssize_t)sizeof b || (n < 0 && errno == EINTR));
    int err = n < 0 ? errno : 0, t = plat_net_lock();
    drain(k);
    if (n == 0 || (err && err != EAGAIN && err != EWOULDBLOCK)) {
        /* A peer that died with doorbell bytes unread resets the socket rather than
         * closing it: the same end. */
        mlx_conn_dead(k);
        mpe_net_failed(k->c, n == 0 || err == ECONNRESET ? "peer process ended, its doorbell closed"
                                                         : strerror(err));
    }
    plat_net_unlock(t);
}

/* Under the network lock: a same-host pair's connection to node `peer` is up. Hazard: a
 * pair attached by another thread is not yet in the network thread's sleep announcement
 * (mlx_shm_sleep), so its peer would not ring for its first bytes: that thread kicks the
 * network thread after (mlx_net_start). */
void mlx_shm_attach(int fd, int peer, struct mlx_ring *tx, struct mlx_ring *rx)
{
    struct mlx_conn *k = calloc(1, sizeof *k);
    if (!k)
        plat_fatal("out of memory for a connection");
    k->kind = EV_CONN;
    k->fd = fd;
    k->tx = tx;
    k->rx = rx;
    k->peer = peer;
    k->c = mpe_node_conn(mlx_node, peer);
    mlx_conns[peer] = k;
    shm_conns[nshm] = k;
    __atomic_store_n(&nshm, nshm + 1, __ATOMIC_RELEASE);
    mlx_conn_interest(k, EPOLL_CTL_ADD);
    mpe_conn_attach(k->c, k);
}

/* Network thread: accept the higher-numbered same-host nodes. */
void mlx_shm_accept_all(int lfd)
{
    const struct mlx_env *e = mlx_env();
    for (;;) {
        int peer;
        struct mlx_ring *tx, *rx;
        int fd = mlx_shm_accept(e, lfd, &peer, &tx, &rx);
        if (fd == -1)
            return;
        if (fd < 0)
            continue;
        int t = plat_net_lock();
        struct mpe_conn *c = mpe_node_conn(mlx_node, peer);
        if (!c || mpe_conn_transport(c)) {
            fprintf(stderr, "mpi: node %d: refused a duplicate connection from node %d\n", e->node,
                    peer);
            close(fd);
        } else {
            mlx_shm_attach(fd, peer, tx, rx);
        }
        plat_net_unlock(t);
    }
}
