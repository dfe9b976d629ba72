/*
 * belltest.c: the "room again" doorbell of a same-host pair (mpi/linux/mlx_net_shm.c's
 * drain, mlx_ring.c's writer_waits) played step by step in one thread, linked with
 * mlx_net_shm.o (or a mutant of it) and mlx_ring.o (tests/mpi/linux_faults.sh, bell.*).
 *
 * The sender is the real code: mlx_shm_send fills its ring, mlx_shm_poll and mlx_shm_bell
 * resume it (the engine is a stub whose mpe_net_sent offers more than the ring holds, so
 * every resume fills the ring again and waits). The receiver is this file: it consumes
 * from the sender's ring as mlx_ring_consume does (store tail, full fence, take
 * writer_waits and ring), split at its fence where the interleaving needs it, and rings
 * by writing a byte to the pair's socket. Each round:
 *
 *   1. the receiver publishes room (tail) and stops before it looks at writer_waits;
 *   2. the sender's network thread polls, sees the room without a doorbell, resumes: the
 *      ring is full again and a new wait is announced;
 *   3. the receiver looks at writer_waits (the new announcement), takes it and rings;
 *   4. the sender reads that doorbell: it brings no room;
 *   5. the receiver consumes the whole ring with mlx_ring_consume, ringing when told to.
 *
 * Then the ring is empty and the send waits: a doorbell byte must be unread on the
 * sender's socket, or the send would wait for ever with its network thread asleep (the
 * lost wake-up). The test reads it (mlx_shm_bell) and checks that the send resumed. No
 * timing: every step is a plain call, so a broken drain fails every run.
 *
 * Prints one line; exits 0 when all is well, 1 otherwise.
 */
#define _GNU_SOURCE
#include "mlx.h"
#include "mlx_net.h"
#include "mlx_ring.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define ROUNDS    16              /* scenario rounds: the ring wraps around several times */
#define OFFER     (4u << 20)      /* bytes offered per resume: more than the ring holds */
#define CHUNK     65536           /* the receiver's consume (MLX_SHM_CHUNK) */
#define PEER      1               /* the pair's other node */
#define STUB_CONN ((void *)&conn) /* the engine's connection handle, never looked into */

/* The stubs' state: one thread, no locking. */
static int conn;
static int lock_depth, resumes;
static struct mlx_conn *pair;
static uint8_t src[OFFER];
struct mlx_conn **mlx_conns;
int mlx_corked_any;
struct mpe_node *mlx_node;

/* The stubs below: mlx_net_shm.o's calls out, from the test's one thread. */

/* drain's callers (mlx_shm_poll, mlx_shm_bell): the network lock, only counted. */
int plat_net_lock(void)
{
    lock_depth++;
    return 0;
}

/* drain's callers: the unlock (nothing is corked here: no doorbell is due at it). */
void plat_net_unlock(int token)
{
    (void)token;
    lock_depth--;
}

/* mlx_net_shm.o: the test plays the network thread. */
int plat_cpu(void)
{
    return MLX_CPU_NET;
}

/* Anywhere: a step went wrong: the line, exit 1. */
void plat_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("belltest: fatal: ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    exit(1);
}

/* mlx_net_shm.o: nothing to wake, one thread. */
void mlx_net_kick(int cpu)
{
    (void)cpu;
}

/* mlx_shm_attach: no epoll here. */
void mlx_conn_interest(struct mlx_conn *k, int op)
{
    (void)k, (void)op;
}

/* mlx_shm_bell, on a closed doorbell socket: never here. */
void mlx_conn_dead(struct mlx_conn *k)
{
    k->dead = 1;
}

/* mlx_shm_accept_all: never called here. */
const struct mlx_env *mlx_env(void)
{
    return NULL; /* only mlx_shm_accept_all asks, never called here */
}

/* mlx_shm_accept_all: never called here. */
int mlx_shm_accept(const struct mlx_env *e, int lfd, int *peer, struct mlx_ring **tx,
                   struct mlx_ring **rx)
{
    (void)e, (void)lfd, (void)peer, (void)tx, (void)rx;
    return -1;
}

/* drain, after the sender consumed from its receive ring: never here (it stays empty). */
void mlx_shm_ring(int fd)
{
    (void)fd;
}

/* mlx_shm_attach: the engine's connection, a handle never looked into. */
struct mpe_conn *mpe_node_conn(struct mpe_node *n, int peer)
{
    (void)n, (void)peer;
    return STUB_CONN;
}

/* mlx_shm_attach: the pair's mlx_conn, kept for the test's steps. */
void mpe_conn_attach(struct mpe_conn *c, void *transport)
{
    (void)c;
    pair = transport;
}

/* mlx_net_shm.o: the pair. */
void *mpe_conn_transport(const struct mpe_conn *c)
{
    (void)c;
    return pair;
}

/* drain: the sender's receive ring stays empty, nothing to hand over. */
void mpe_net_rx(struct mpe_conn *c, const void *data, size_t len)
{
    (void)c, (void)data, (void)len;
}

/* mlx_shm_bell, on a closed doorbell socket: never here. */
void mpe_net_failed(struct mpe_conn *c, const char *why)
{
    (void)c;
    plat_fatal("connection failed: %s", why);
}

/* drain, under the lock (and main for the first send): the engine's pump, which offers
 * more than the ring holds, so the send fills it and waits again. */
void mpe_net_sent(struct mpe_conn *c)
{
    (void)c;
    resumes++;
    if (mlx_shm_send(pair, src, OFFER) >= (long)OFFER)
        plat_fatal("the ring took %u bytes", OFFER);
}

/* main, as the receiver: mlx_ring_consume's first half (publish the room, then the full fence). */
static void publish_room(struct mlx_ring *r, size_t n)
{
    __atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* main, as the receiver: mlx_ring_consume's second half (take writer_waits); 1 if it rang. */
static int ring_if_waited(struct mlx_ring *r, int bell)
{
    int ring = __atomic_load_n(&r->writer_waits, __ATOMIC_RELAXED) &&
               __atomic_exchange_n(&r->writer_waits, 0, __ATOMIC_RELAXED);
    if (ring && write(bell, "", 1) != 1)
        plat_fatal("doorbell write: %s", strerror(errno));
    return ring;
}

/* main, as the receiver: consume all r holds with mlx_ring_consume; the doorbells it rang. */
static int consume_all(struct mlx_ring *r, int bell)
{
    int rang = 0;
    for (;;) {
        const uint8_t *p;
        size_t n = mlx_ring_peek(r, &p);
        if (n == 0)
            return rang;
        n = n < CHUNK ? n : CHUNK;
        int ring;
        mlx_ring_consume(r, n, &ring);
        if (ring && write(bell, "", 1) != 1)
            plat_fatal("doorbell write: %s", strerror(errno));
        rang += ring;
    }
}

/* main: are doorbell bytes unread on the sender's socket? */
static int bell_unread(int fd)
{
    char b;
    return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/* The scenario's rounds (top of this file). */
int main(void)
{
    int sv[2];
    size_t seg = 2 * sizeof(struct mlx_ring);
    struct mlx_ring *rings =
        mmap(NULL, seg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    mlx_conns = calloc(PEER + 1, sizeof *mlx_conns);
    if (rings == MAP_FAILED || !mlx_conns || mlx_shm_alloc(PEER + 1) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
        plat_fatal("set-up: %s", strerror(errno));
    struct mlx_ring *tx = &rings[0];
    mlx_shm_attach(sv[0], PEER, tx, &rings[1]);
    mpe_net_sent(STUB_CONN); /* the first send: fills the ring, waits */
    for (int round = 1; round <= ROUNDS; round++) {
        if (!pair->want_out || mlx_ring_has_room(tx))
            plat_fatal("round %d: the send does not wait on a full ring", round);
        int before = resumes;
        publish_room(tx, CHUNK); /* 1 */
        mlx_shm_poll();          /* 2 */
        if (resumes != before + 1 || !pair->want_out)
            plat_fatal("round %d: the poll did not resume the send on the room", round);
        if (!ring_if_waited(tx, sv[1])) /* 3 */
            plat_fatal("round %d: the new wait was not announced", round);
        mlx_shm_bell(pair); /* 4 */
        if (resumes != before + 1 || !pair->want_out)
            plat_fatal("round %d: the doorbell resumed a send with no room", round);
        consume_all(tx, sv[1]); /* 5 */
        if (!bell_unread(sv[0])) {
            printf("belltest: round %d: lost wake-up: the send waits on an empty ring, no "
                   "doorbell on its way (writer_waits %u)\n",
                   round, __atomic_load_n(&tx->writer_waits, __ATOMIC_RELAXED));
            return 1;
        }
        mlx_shm_bell(pair);
        if (resumes != before + 2)
            plat_fatal("round %d: the doorbell did not resume the send", round);
        if (lock_depth)
            plat_fatal("round %d: the network lock is held", round);
    }
    printf("belltest: ok, %d rounds, %d resumes, no lost wake-up\n", ROUNDS, resumes);
    return 0;
}
