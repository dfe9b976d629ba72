/*
 * mlx_net.c: the node-pair TCP connections of a Linux node and the network thread that
 * serves them (mlx.h). The network thread is this platform's NIC interrupt: it waits in
 * epoll, reads what arrived and hands it to the engine under the network lock (matching
 * and the copy into a posted buffer happen there), tells the engine when a socket has
 * room again, and then, with the lock released, runs the CAD progress kicked to it (the
 * unikernel's interrupt tail and CAD IPI).
 *
 * Connections as on the unikernel (mpe_uk.c): the lower-numbered node listens, the higher
 * connects. Every node's first header is its HELLO (mpe_wire.h, aux = node id), so an
 * accepted socket is matched to its node by reading that HELLO (addresses do not tell
 * nodes apart on one host); the header is then fed to the engine like any other bytes.
 *
 * A same-host pair (mlx_shm_local) uses a pair of shared-memory rings instead
 * (mlx_net_shm.c): this thread polls them for UKMPI_SHM_SPIN_NS after the last byte, then
 * announces in each ring that it sleeps and waits in epoll, where a doorbell byte (or the
 * doorbell socket's end: the peer died) wakes it.
 */
#include "mlx.h"
#include "mlx_net.h"
#include "mlx_ring.h"
#include "mpe.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include "mpe_wire.h"
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MLX_CONNECT_NS   60000000000ull /* peers start within a minute of each other */
#define MLX_RETRY_NS     20000000ull    /* between connection attempts while a peer starts */
#define MLX_RX_BYTES     65536          /* one read's buffer (the network thread's) */
#define MLX_RX_READS     16             /* reads of one socket per wake-up, then the others */
#define MLX_EVENTS       64
#define MLX_KEEP_IDLE_S  5 /* a silent connection is probed after this ... */
#define MLX_KEEP_INTVL_S 2 /* ... every this many seconds ... */
#define MLX_KEEP_COUNT   5 /* ... and fails after this many unanswered probes */
#define MLX_MS_PER_S     1000
#define MLX_CORK_MAX     4096 /* sends up to this size wait for the lock's release (corked) */

static int ep = -1;
static struct {
    enum ev_kind kind;
    int fd;
} kick = {EV_KICK, -1}, listener = {EV_LISTEN, -1}, ulistener = {EV_ULISTEN, -1},
  o2g = {EV_O2G, -1}, kacc = {EV_KACC, -1};
static uint32_t pending_ipi; /* bit per "CPU": mpe_cad_flush(1) wanted there */
static volatile int stopping;
static pthread_t thread;
static int thread_started;
struct mlx_conn **mlx_conns; /* [nodes]: by peer, once attached */
static int nconns;
int mlx_corked_any; /* under the network lock: some mlx_conns[p]->corked */

/* Any thread; see mlx_net.h. */
void mlx_conn_interest(struct mlx_conn *k, int op)
{
    struct epoll_event ev = {.events = (k->o2g ? 0 : EPOLLIN) | (k->want_out ? EPOLLOUT : 0),
                             .data.ptr = k};
    epoll_ctl(ep, op, k->fd, &ev);
}

/* Under the network lock: k is finished with; its fd stays open (the engine may still
 * hold the handle) until mlx_net_stop. */
void mlx_conn_dead(struct mlx_conn *k)
{
    if (k->dead)
        return;
    k->dead = 1;
    epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
}

/* Under the network lock (the engine's pump); see mpe_plat.h. The socket's send buffer is
 * the queue: what it takes is copied; when it takes nothing (or not all), EPOLLOUT is
 * armed and its handler calls mpe_net_sent() so the engine pumps the rest. The engine
 * hands a header and its payload over separately: small sends stay corked until the
 * outermost unlock of the network lock (mlx_net_uncork), so a small message leaves in one
 * segment and the peer's network thread wakes once for it. */
long plat_net_send(void *transport, const void *data, size_t len)
{
    struct mlx_conn *k = transport;
    int on = 1;
    if (k->dead)
        return -1;
    if (k->want_out)
        return 0; /* mpe_net_sent() follows when the socket has room */
    if (k->tx)
        return mlx_shm_send(k, data, len);
    if (len > MLX_CORK_MAX && k->corked) {
        /* A large payload: send what is held now and this uncorked, so that the peer
         * starts on the first segments while we copy the rest. */
        int off = 0;
        setsockopt(k->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
        k->corked = 0;
    } else if (len <= MLX_CORK_MAX && !k->corked &&
               setsockopt(k->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on) == 0) {
        k->corked = mlx_corked_any = 1;
    }
    ssize_t n;
    do
        n = send(k->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        return -1;
    if (n < 0 || (size_t)n < len) {
        k->want_out = 1;
        mlx_conn_interest(k, EPOLL_CTL_MOD);
    }
    return n < 0 ? 0 : n;
}

/* Under the network lock; see mlx.h. */
void mlx_net_uncork(void)
{
    int off = 0;
    if (!mlx_corked_any)
        return;
    mlx_corked_any = 0;
    for (int p = 0; p < nconns; p++) {
        struct mlx_conn *k = mlx_conns[p];
        if (k && k->corked && k->tx) {
            k->corked = 0;
            mlx_shm_ring(k->fd);
        } else if (k && k->corked) {
            k->corked = 0;
            setsockopt(k->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
        }
    }
}

/* Any thread; see mlx.h. The eventfd stays readable until the network thread reads it,
 * so a wake-up written while it computes its sleep is not lost. */
void mlx_net_wake(void)
{
    uint64_t one = 1;
    if (write(kick.fd, &one, sizeof one) < 0 && errno != EAGAIN)
        plat_fatal("cannot kick the network thread: %s", strerror(errno));
}

/* Any thread; see mlx.h. The bit is set before the eventfd is written, so the network
 * thread, which reads the bits after epoll returned for the eventfd, sees it. */
void mlx_net_kick(int cpu)
{
    __atomic_fetch_or(&pending_ipi, 1u << cpu, __ATOMIC_SEQ_CST);
    mlx_net_wake();
}

/* Network thread, under the network lock: the HELLO of accepted socket k is complete:
 * attach it to its node's connection, or refuse it. */
static void hello_done(struct mlx_conn *k)
{
    struct mpe_wire w;
    int me = mpe_node_id(mlx_node);
    const char *why = mpe_wire_decode(k->hello, &w, UINT64_MAX);
    int peer = why || w.type != MPE_W_HELLO ? -1 : (int)w.aux;
    struct mpe_conn *c = peer > me ? mpe_node_conn(mlx_node, peer) : NULL;
    if (!c || mpe_conn_transport(c)) {
        fprintf(stderr, "mpi: node %d: refused a connection from an unknown or duplicate peer\n",
                me);
        mlx_conn_dead(k);
        close(k->fd);
        free(k);
        return;
    }
    k->c = c;
    mlx_conns[peer] = k;
    mpe_conn_attach(c, k);
    mpe_net_rx(c, k->hello, sizeof k->hello);
    /* Exactly the HELLO was read: the module takes the stream from the next header. */
    if (mlx_o2g_attach(k->fd, peer, c, 1) == 0) {
        k->o2g = 1;
        mlx_conn_interest(k, EPOLL_CTL_MOD);
    }
}

/* Network thread: read what k has (bounded), into the engine. */
static void conn_read(struct mlx_conn *k)
{
    static uint8_t buf[MLX_RX_BYTES]; /* the network thread's only */
    for (int i = 0; i < MLX_RX_READS; i++) {
        uint8_t *to = k->c ? buf : k->hello + k->hello_n;
        size_t room = k->c ? sizeof buf : sizeof k->hello - k->hello_n;
        ssize_t n = read(k->fd, to, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        int t = plat_net_lock();
        if (n > 0 && k->c) {
            mpe_net_rx(k->c, buf, (size_t)n);
        } else if (n > 0) {
            k->hello_n += (size_t)n;
            if (k->hello_n == sizeof k->hello)
                hello_done(k); /* may free k */
            plat_net_unlock(t);
            return;
        } else {
            const char *why = n == 0 ? "peer closed the connection" : strerror(errno);
            mlx_conn_dead(k);
            if (k->c) {
                mpe_net_failed(k->c, why);
            } else { /* an accepted socket that never said HELLO */
                close(k->fd);
                free(k);
            }
            plat_net_unlock(t);
            return;
        }
        plat_net_unlock(t);
        if ((size_t)n < room)
            return;
    }
}

/* Network thread: the socket has room again. */
static void conn_writable(struct mlx_conn *k)
{
    int t = plat_net_lock();
    if (!k->dead && k->want_out) {
        k->want_out = 0;
        mlx_conn_interest(k, EPOLL_CTL_MOD);
        mpe_net_sent(k->c);
    }
    plat_net_unlock(t);
}

/* Any thread: a connected socket as the engine wants it: no Nagle (small sends are
 * corked by plat_net_send instead), and keepalive probes, so that a peer that vanished
 * without closing (a unikernel node's VM powers off when its job fails) is found while we
 * wait for it: its silence fails the socket (ETIMEDOUT) after MLX_KEEP_IDLE_S +
 * MLX_KEEP_COUNT x MLX_KEEP_INTVL_S seconds. A live peer's TCP answers the probes even
 * while its rank computes. Keepalive only probes an idle connection: when data of ours
 * is still unacknowledged, TCP retransmits instead, for many minutes by default, so
 * TCP_USER_TIMEOUT bounds that wait by the same time (mpi-mixed's abort.linux-node0 hung
 * until its 120 s limit without it, when the peer died with our last bytes in flight). */
static struct mlx_conn *conn_new(int fd)
{
    int one = 1, idle = MLX_KEEP_IDLE_S, intvl = MLX_KEEP_INTVL_S, count = MLX_KEEP_COUNT;
    unsigned user_ms = (MLX_KEEP_IDLE_S + MLX_KEEP_COUNT * MLX_KEEP_INTVL_S) * MLX_MS_PER_S;
    struct mlx_conn *k = calloc(1, sizeof *k);
    if (!k)
        plat_fatal("out of memory for a connection");
    k->kind = EV_CONN;
    k->fd = fd;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
    return k;
}

/* Network thread: accept the higher-numbered nodes; they are known by their HELLO. */
static void accept_all(void)
{
    int fd;
    while ((fd = accept4(listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        struct mlx_conn *k = conn_new(fd);
        mlx_conn_interest(k, EPOLL_CTL_ADD);
    }
}

/* Network thread: after the network work, the lock released: CAD progress kicked to this
 * "CPU", then what other contexts asked of the rank's CPU (plat_cad_ipi). While flushing
 * for the rank's CPU the thread is that CPU: mpe_cad_flush(1) then leaves the work to the
 * rank when it is inside the engine (its mpe_leave flushes), as an interrupt would.
 * Hazard: unlike an interrupted task, the rank keeps running meanwhile and may enter the
 * engine and flush the same list from its mpe_leave: each takes entries off the lock-free
 * list (lf_take_all), so every kicked run goes to one of them, and a run's own try-lock
 * (mpe_cad.c's progress) keeps two contexts out of one run. */
static void cad_tail(void)
{
    uint32_t ipi = __atomic_exchange_n(&pending_ipi, 0, __ATOMIC_SEQ_CST);
    mpe_cad_flush(1);
    for (int cpu = 0; cpu < MLX_NCPUS; cpu++) {
        if (!(ipi & (1u << cpu)) || cpu == MLX_CPU_NET)
            continue;
        mlx_plat_set_cpu(cpu);
        mpe_cad_flush(1);
        mlx_plat_set_cpu(MLX_CPU_NET);
    }
}

/* The network thread, or the rank in caller mode as MLX_CPU_NET (mlx.h: one of them,
 * never both): one turn of the "interrupt". may_sleep 0: only what is there now. */
static void turn(int may_sleep)
{
    static uint64_t idle_since; /* the rings' last busy time (0: not known) */
    struct epoll_event evs[MLX_EVENTS];
    uint64_t spin_ns = mlx_env()->spin_ns;
    /* The rings first; while they were busy within spin_ns, epoll only looks. */
    mlx_plat_set_irq_time(mlx_now_ns());
    int busy = mlx_shm_poll(), timeout = 0, shm = mlx_shm_pairs();
    uint64_t now = mlx_now_ns();
    if (busy) {
        mlx_plat_set_irq_time(0);
        cad_tail(); /* before a sleep: the interrupt's tail */
    }
    if (busy || !idle_since)
        idle_since = now;
    /* Hazard: a rank taking this turn (caller mode) may have been woken by what the
     * rings just brought; it looks at its wake-up only between turns, so this turn must
     * not sleep (a job of three hung at start so, its HELLO woken for and slept on). */
    if (busy && mlx_env()->caller)
        may_sleep = 0;
    if (!may_sleep)
        timeout = 0;
    else if (!shm)
        timeout = -1;
    else if (now - idle_since >= spin_ns) /* at once without spinning: one epoll_wait */
        timeout = mlx_shm_sleep();
    int kt = mlx_kacc_retry_ms(); /* graphs kacc refused for now: retried below */
    if (kt >= 0 && (timeout < 0 || timeout > kt))
        timeout = kt;
    int n = epoll_wait(ep, evs, MLX_EVENTS, timeout);
    if (n < 0 && errno != EINTR)
        plat_fatal("epoll_wait: %s", strerror(errno));
    if (shm && timeout) {
        idle_since = 0;
        mlx_shm_awake();
    }
    mlx_plat_set_irq_time(mlx_now_ns());
    for (int i = 0; i < n; i++) {
        enum ev_kind *kind = evs[i].data.ptr;
        uint64_t v;
        if (*kind == EV_KICK) {
            if (read(kick.fd, &v, sizeof v) < 0 && errno != EAGAIN)
                plat_fatal("eventfd: %s", strerror(errno));
        } else if (*kind == EV_LISTEN) {
            accept_all();
        } else if (*kind == EV_O2G) {
            mlx_o2g_run();
        } else if (*kind == EV_KACC) {
            mlx_kacc_run();
        } else if (*kind == EV_ULISTEN) {
            mlx_shm_accept_all(ulistener.fd);
        } else if (((struct mlx_conn *)kind)->rx) {
            mlx_shm_bell((struct mlx_conn *)kind);
        } else {
            struct mlx_conn *k = (struct mlx_conn *)kind;
            /* Output first: conn_read may free a refused socket. */
            if (evs[i].events & EPOLLOUT)
                conn_writable(k);
            if (k->o2g && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
                /* The module reports the end (O2G_CQE_CONN) after the last byte,
                 * which may still be on its way to the engine: only stop epoll
                 * repeating it (a later EPOLL_CTL_MOD fails harmlessly). */
                epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
            } else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                conn_read(k);
            }
        }
    }
    mlx_kacc_retry();
    mlx_plat_set_irq_time(0);
    cad_tail();
}

/* Task context, caller mode; see mlx.h. */
void mlx_net_turn(int may_sleep)
{
    if (ep < 0)
        return; /* before mlx_net_start */
    mlx_plat_set_cpu(MLX_CPU_NET);
    turn(may_sleep);
    mlx_plat_set_cpu(MLX_CPU_RANK);
}

static void *net_thread(void *arg)
{
    (void)arg;
    mlx_plat_set_cpu(MLX_CPU_NET);
    while (!stopping)
        turn(1);
    return NULL;
}

/* Task context (start-up): listen for the higher-numbered nodes on our own port. */
static int listen_higher(const struct mlx_env *e)
{
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons(e->peer[e->node].port),
                            .sin_addr.s_addr = htonl(INADDR_ANY)};
    listener.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener.fd < 0 ||
        setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(listener.fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(listener.fd, e->nodes) != 0) {
        fprintf(stderr, "mpi: node %d: cannot listen on port %d: %s\n", e->node,
                e->peer[e->node].port, strerror(errno));
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listener};
    return epoll_ctl(ep, EPOLL_CTL_ADD, listener.fd, &ev);
}

/* Task context (start-up): connect to node p, retrying while it starts. */
static int connect_one(const struct mlx_env *e, int p, uint64_t deadline)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons(e->peer[p].port),
                            .sin_addr.s_addr = e->peer[p].ip};
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            break;
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            int fl = SOCK_NONBLOCK;
            if (ioctl(fd, FIONBIO, &fl) != 0)
                break;
            struct mlx_conn *k = conn_new(fd);
            int t = plat_net_lock();
            k->c = mpe_node_conn(mlx_node, p);
            mlx_conns[p] = k;
            /* Before the first read: the peer's HELLO (header 0) comes through o2g. */
            k->o2g = mlx_o2g_attach(fd, p, k->c, 0) == 0;
            mlx_conn_interest(k, EPOLL_CTL_ADD);
            mpe_conn_attach(k->c, k);
            plat_net_unlock(t);
            return 0;
        }
        int err = errno;
        close(fd);
        if (mlx_now_ns() > deadline || (err != ECONNREFUSED && err != ETIMEDOUT && err != EINTR)) {
            fprintf(stderr, "mpi: node %d: cannot connect to node %d: %s\n", e->node, p,
                    strerror(err));
            return -1;
        }
        struct timespec ts = {0, MLX_RETRY_NS};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "mpi: node %d: socket: %s\n", e->node, strerror(errno));
    return -1;
}

/* Task context; see mlx.h. */
int mlx_net_start(const struct mlx_env *e)
{
    ep = epoll_create1(EPOLL_CLOEXEC);
    kick.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    mlx_conns = calloc((size_t)e->nodes, sizeof *mlx_conns);
    nconns = e->nodes;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &kick};
    if (ep < 0 || kick.fd < 0 || !mlx_conns || mlx_shm_alloc(e->nodes) != 0 ||
        epoll_ctl(ep, EPOLL_CTL_ADD, kick.fd, &ev) != 0) {
        fprintf(stderr, "mpi: node %d: cannot set up epoll: %s\n", e->node, strerror(errno));
        return -1;
    }
    int tcp_higher = 0, shm_higher = 0;
    for (int p = e->node + 1; p < e->nodes; p++)
        *(mlx_shm_local(e, p) ? &shm_higher : &tcp_higher) = 1;
    if (tcp_higher && listen_higher(e) != 0)
        return -1;
    if (shm_higher) {
        struct epoll_event uev = {.events = EPOLLIN, .data.ptr = &ulistener};
        ulistener.fd = mlx_shm_listen(e);
        if (ulistener.fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ulistener.fd, &uev) != 0)
            return -1;
    }
    o2g.fd = mlx_o2g_start(e);
    ev.data.ptr = &o2g;
    if (o2g.fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, o2g.fd, &ev) != 0) {
        fprintf(stderr, "mpi: node %d: cannot poll /dev/o2g: %s\n", e->node, strerror(errno));
        return -1;
    }
    if (!e->caller) {
        if (pthread_create(&thread, NULL, net_thread, NULL) != 0) {
            fprintf(stderr, "mpi: node %d: cannot start the network thread\n", e->node);
            return -1;
        }
        thread_started = 1;
    }
    uint64_t deadline = mlx_now_ns() + MLX_CONNECT_NS;
    for (int p = 0; p < e->node; p++) {
        if (!mlx_shm_local(e, p)) {
            if (connect_one(e, p, deadline) != 0)
                return -1;
            continue;
        }
        struct mlx_ring *tx, *rx;
        int fd = mlx_shm_connect(e, p, deadline, &tx, &rx);
        if (fd < 0)
            return -1;
        int t = plat_net_lock();
        mlx_shm_attach(fd, p, tx, rx);
        plat_net_unlock(t);
        mlx_net_kick(MLX_CPU_NET); /* mlx_shm_attach's hazard */
    }
    return 0;
}

/* Task context; see mlx.h. */
void mlx_net_watch_kacc(int fd)
{
    /* Edge-triggered: a user op kacc offers keeps the file readable until the rank ran
     * it; each offer (and each finished graph) is one event, and mlx_kacc_run looks at
     * every slot each time. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = &kacc};
    kacc.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        plat_fatal("cannot poll /dev/kacc: %s", strerror(errno));
}

/* Task context; see mlx.h. TCP's SIOCOUTQ counts the bytes not yet acknowledged by the
 * peer: 0 means the peer's kernel has all we sent (the unikernel's ksock_flushed); a ring
 * is flushed when the peer consumed all of it. */
int mlx_net_flushed(int peer)
{
    struct mpe_conn *c = mpe_node_conn(mlx_node, peer);
    if (!mpe_conn_done(c))
        return 0;
    int t = plat_net_lock();
    struct mlx_conn *k = mpe_conn_transport(c);
    int queued = 0, done;
    if (!k)
        done = 0;
    else if (k->dead)
        done = 1;
    else if (k->tx) /* the peer read every byte of its ring */
        done = !k->want_out && __atomic_load_n(&k->tx->tail, __ATOMIC_ACQUIRE) == k->tx->head;
    else
        done = ioctl(k->fd, SIOCOUTQ, &queued) == 0 && !queued;
    plat_net_unlock(t);
    return done;
}

/* Task context; see mlx.h. */
void mlx_net_stop(void)
{
    if (thread_started) {
        stopping = 1;
        mlx_net_kick(MLX_CPU_NET);
        pthread_join(thread, NULL);
        thread_started = 0;
    }
    for (int p = 0; p < nconns; p++)
        if (mlx_conns[p])
            close(mlx_conns[p]->fd);
    if (listener.fd >= 0)
        close(listener.fd);
    if (ulistener.fd >= 0)
        close(ulistener.fd);
    mlx_kacc_stop(); /* before o2g: kacc holds its file */
    mlx_o2g_stop();
}
