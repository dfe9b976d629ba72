/*
 * mlx_o2g.c: a Linux node's inter-node receive path through /dev/o2g (host-kmod/o2g,
 * o2g_uapi.h), the seed's O2G on Linux. UKMPI_O2G chooses it:
 *   off   plain sockets and epoll (mlx_net.c), as before;
 *   auto  /dev/o2g when it opens and sets up (the module is loaded), else as off;
 *   on    /dev/o2g or the job fails at start.
 * Both paths are in every build, so the same program runs either way.
 *
 * UKMPI_O2G_MATCH=0 keeps the module to reading the sockets (the engine matches all).
 *
 * Connections. After a node-pair connection's HELLO (the accepted side reads it itself
 * to know the peer, mlx_net.c) the socket is attached to /dev/o2g; the connecting side
 * attaches before its first read, so its peer's HELLO comes through the module. From then
 * on the network thread never reads that socket: it sends on it as before (EPOLLOUT
 * still comes from epoll) and waits for input on /dev/o2g, whose fd sits in the same
 * epoll set (readable when the completion ring holds entries).
 *
 * Matching (mpi/core/mpe_rmatch.c is the engine's side). Point-to-point contexts are
 * matched in the module: mpe_irecv posts a receive the engine's own queues do not
 * satisfy (they still hold messages to oneself) into the module too (rm_post); the module
 * matches EAGER and RTS messages against it in softirq and copies EAGER payloads straight
 * into the pinned buffer. Whichever matcher takes the receive first takes it out of the
 * other: a RECV/RTS completion (network thread) or a POST answered from the module's
 * unexpected queue (rank thread) out of the engine (mpe_rmatch_took); a message to
 * oneself out of the module (O2G_IOC_CANCEL; when the module has it already, the message
 * goes on to the next receive or the engine's unexpected queue). MPI_ANY_SOURCE: the
 * earliest of either kind wins, as the race between two sources allows. RTS answers (CTS)
 * and the sender's credits are the engine's (mpe_rmatch_rts, mpe_rmatch_eager), its DATA
 * comes through the dump area like every control record. Probe looks at the module's
 * UNEXP notices not known taken (rm_probe); cancel asks the module first.
 * Collective contexts (odd, mpi/lib's comm.c) stay with the engine: CAD graphs post their
 * receives from interrupt-like contexts straight into the engine (mpe_cad.c), so their
 * messages are fed to it, header rebuilt, in stream order.
 *
 * Order. The ring gives each connection's entries in stream order (o2g_uapi.h): control
 * records are fed to the engine (mpe_net_rx, which checks their sequence numbers; the
 * headers the module consumed count through mpe_rmatch_skip), and per source a message
 * is matched by exactly one of the two matchers, so MPI's non-overtaking rule holds (the
 * module matches RTS too for that: an EAGER message behind an RTS of the same tag must
 * not take the receive the RTS is owed).
 *
 * The rank thread and the network thread both use the device (POST, CANCEL, FREE): the
 * module serialises its ioctls; the notices are under the network lock.
 */
#include "mlx.h"
#include "mpe.h"
#include "mpe_internal.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include "mpe_wire.h"
#include "o2g_uapi.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* The dump area holds every message a peer may have in flight unmatched: its credits'
 * worth (mpe_internal.h: a descriptor each, an eager slot for the larger ones) and a piece
 * of DATA. Less would let one peer's unexpected messages fill it and stop another peer's
 * stream, which the rank may be waiting for. (~3 MiB per peer, pinned: RLIMIT_MEMLOCK.) */
#define MLX_O2G_PEER_DUMP                                                                          \
    ((size_t)MPE_NET_DESCS * O2G_DUMP_CHUNK + (size_t)MPE_NET_SLOTS * MPE_NET_EAGER +              \
     O2G_DATA_PIECE + O2G_DUMP_CHUNK)
#define MLX_O2G_ALIGN (64u << 10) /* dump size: a multiple of the chunk and of any page */
#define MLX_O2G_TAKEN 64          /* first size of the taken list, grown by doubling */

static int fd = -1;
static uint8_t *dump;
static struct o2g_ring_hdr *ring;
static struct o2g_cqe *cqe;
static uint32_t mask, tail;
static int me;
/* UKMPI_O2G_MATCH (default 1; 0: the module only reads): receives posted into the module. */
static int matching;
/* Remote unexpected messages the module holds for a POST, in arrival order, for probe
 * (under the network lock): UNEXP and UNEXP_RTS notices not known taken yet. A POST that
 * takes one whose notice is not read yet leaves its record offset in `taken`: the next
 * notice at that offset (in ring order, the one of that message) is dropped. */
struct notice {
    struct notice *next;
    uint64_t off, len;
    uint32_t ctx;
    int32_t src, tag;
};
static struct notice *notices, **notices_end = &notices;
static uint64_t *taken;
static size_t ntaken, taken_cap;
static const struct mpe_rmatch rmatch; /* the engine's seam, at the end of the file */
/* By the module's connection id (network thread only, after attach). */
static struct {
    struct mpe_conn *c;
    int peer;
    uint32_t seq; /* sequence number of the stream's next header */
    int kacc;     /* a kacc connection (mlx_kacc.c): kacc's messages only */
} conn[O2G_MAX_CONNS];

/* Task context (job start, before the network thread runs): UKMPI_O2G's choice. -1: not
 * used (off, or auto without a module); else /dev/o2g's fd for the network thread's epoll.
 * "on" without a working device ends the process with MLX_EXIT_FATAL. */
int mlx_o2g_start(const struct mlx_env *env)
{
    int node = env->node;
    size_t dump_len = (MLX_O2G_PEER_DUMP * (size_t)(env->nodes - 1) + MLX_O2G_ALIGN - 1) /
                      MLX_O2G_ALIGN * MLX_O2G_ALIGN;
    const char *mode = getenv("UKMPI_O2G");
    if (!mode || !*mode)
        mode = "auto";
    int must = !strcmp(mode, "on");
    if (!strcmp(mode, "off") || env->nodes < 2) { /* one node: no connection to read */
        mlx_kacc_open(env, 0);
        return -1;
    }
    if (!must && strcmp(mode, "auto")) {
        fprintf(stderr, "mpi: node %d: UKMPI_O2G=%s: not auto, on or off\n", node, mode);
        exit(MLX_EXIT_FATAL);
    }
    me = node;
    struct o2g_setup s = {.dump_len = dump_len, .max_eager = MPE_NET_EAGER};
    const char *step = "open " O2G_DEV;
    fd = open(O2G_DEV, O_RDWR | O_CLOEXEC);
    if (fd >= 0 && mlx_kacc_open(env, 1)) { /* kacc's messages arrive through o2g too */
        s.max_eager = MLX_KACC_EAGER;
        dump_len += (size_t)MLX_KACC_DUMP * (size_t)(env->nodes - 1);
        s.dump_len = dump_len;
    }
    if (fd >= 0) {
        step = "dump area";
        dump = mmap(NULL, dump_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        s.dump_addr = (uintptr_t)dump;
        if (dump != MAP_FAILED) {
            step = "O2G_IOC_SETUP";
            if (ioctl(fd, O2G_IOC_SETUP, &s) == 0) {
                step = "mmap ring";
                ring = mmap(NULL, s.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (ring != MAP_FAILED) {
                    cqe = (struct o2g_cqe *)((uint8_t *)ring + O2G_RING_CQE_OFF);
                    mask = s.entries - 1;
                    const char *m = getenv("UKMPI_O2G_MATCH");
                    matching = !m || strcmp(m, "0") != 0;
                    if (matching)
                        mpe_node_set_rmatch(mlx_node, &rmatch);
                    return fd;
                }
            }
        }
    }
    if (must) {
        fprintf(stderr, "mpi: node %d: UKMPI_O2G=on: %s: %s\n", node, step, strerror(errno));
        exit(MLX_EXIT_FATAL);
    }
    if (fd >= 0)
        close(fd);
    fd = -1;
    mlx_kacc_stop();
    mlx_kacc_open(env, 0); /* "on" ends the job here */
    return -1;
}

/* Under the network lock, network thread or start-up: hand connected socket sock of c's
 * peer to the module; `seq` is the sequence number of the next header the stream carries
 * (1 once the caller read the HELLO itself). 0, or -1 (not in use, or refused: the caller
 * keeps reading the socket itself). */
int mlx_o2g_attach(int sock, int peer, struct mpe_conn *c, uint32_t seq)
{
    struct o2g_attach a = {.fd = sock, .peer = peer};
    if (fd < 0)
        return -1;
    if (ioctl(fd, O2G_IOC_ATTACH, &a) != 0 || a.conn >= O2G_MAX_CONNS) {
        fprintf(stderr, "mpi: node %d: o2g refused the connection to node %d: %s\n", me, peer,
                strerror(errno));
        return -1;
    }
    conn[a.conn].c = c;
    conn[a.conn].peer = peer;
    conn[a.conn].seq = seq;
    return 0;
}

/* Task context (start-up), under the network lock; see mlx.h. */
int mlx_o2g_attach_kacc(int sock, int peer)
{
    /* KFREE: kacc's RECVs give the records of the messages they take back themselves;
     * this file never frees a kacc connection's (kacc_entry). */
    struct o2g_attach a = {.fd = sock, .peer = peer, .flags = O2G_ATTACH_KFREE};
    if (fd < 0 || ioctl(fd, O2G_IOC_ATTACH, &a) != 0 || a.conn >= O2G_MAX_CONNS)
        return -1;
    conn[a.conn].peer = peer;
    conn[a.conn].kacc = 1;
    return 0;
}

/* Any thread; see mlx.h. */
int mlx_o2g_fd(void)
{
    return fd;
}

/* Network thread: entry e of a kacc connection. Its UNEXP notices are left alone: the
 * message stays in o2g's unexpected queue for kacc's RECV, whose post frees its record
 * (O2G_ATTACH_KFREE). Its end is kacc's business (its SENDs and RECVs on it fail).
 * Anything else is a peer that does not speak kacc's messages on it. */
static void kacc_entry(const struct o2g_cqe *e)
{
    if (e->kind != O2G_CQE_UNEXP && e->kind != O2G_CQE_CONN)
        plat_fatal("o2g: the kacc connection to node %d carried an entry of kind %u",
                   conn[e->conn].peer, (unsigned)e->kind);
}

/* Under the network lock: c's connection id. */
static struct mpe_conn *conn_of(uint32_t id)
{
    if (id >= O2G_MAX_CONNS || !conn[id].c)
        plat_fatal("o2g: an entry for unknown connection %u", (unsigned)id);
    return conn[id].c;
}

/* Any thread: collective contexts (mpi/lib's comm.c: ctx + 1, odd) are the engine's: CAD
 * graphs post their receives in the engine from any context, so their messages must
 * reach it; point-to-point contexts (even) are matched in the module. */
static int engine_ctx(uint32_t ctx)
{
    return !matching || (ctx & 1);
}

/* Under the network lock: the notice of the message at `off` goes (a POST took it). */
static void notice_taken(uint64_t off)
{
    for (struct notice **p = &notices; *p; p = &(*p)->next) {
        if ((*p)->off == off) {
            struct notice *n = *p;
            *p = n->next;
            if (notices_end == &n->next)
                notices_end = p;
            free(n);
            return;
        }
    }
    if (ntaken == taken_cap) { /* the rank ran ahead of the network thread */
        taken_cap = taken_cap ? 2 * taken_cap : MLX_O2G_TAKEN;
        taken = realloc(taken, taken_cap * sizeof *taken);
        if (!taken)
            plat_fatal("o2g: out of memory for taken messages");
    }
    taken[ntaken++] = off;
}

/* Under the network lock: an UNEXP or UNEXP_RTS notice of a point-to-point message. */
static void notice_add(const struct o2g_cqe *e)
{
    for (size_t i = 0; i < ntaken; i++) {
        if (taken[i] == e->off) { /* a POST took it already */
            taken[i] = taken[--ntaken];
            return;
        }
    }
    struct notice *n = malloc(sizeof *n);
    if (!n)
        plat_fatal("o2g: out of memory for a notice");
    *n = (struct notice){.off = e->off, .len = e->len, .ctx = e->ctx, .src = e->src, .tag = e->tag};
    *notices_end = n;
    notices_end = &n->next;
    plat_wake(plat_task()); /* the rank's token (mlx_plat.c): it may wait in MPI_Probe */
}

/* Network thread, no lock held: RECV or RTS entry e finishes receive r. */
static void finish(const struct o2g_cqe *e)
{
    struct mpe_req *r = (struct mpe_req *)(uintptr_t)e->cookie;
    mpe_rmatch_took(mlx_node, r); /* out of the engine's queue first (its lock) */
    int t = plat_net_lock();
    struct mpe_conn *c = conn_of(e->conn);
    mpe_rmatch_skip(c);
    conn[e->conn].seq++;
    if (e->kind == O2G_CQE_RTS)
        mpe_rmatch_rts(c, r, dump + e->off);
    else if (e->status && e->status != -EMSGSIZE) /* its connection failed (CONN follows) */
        mpe_complete(r, MPE_EPEER);
    else
        mpe_rmatch_eager(c, r, e->src, e->tag, e->len);
    plat_net_unlock(t);
}

/* Under the network lock: feed completion e (copied out of the ring) to the engine. 1 if
 * its record is to be freed. */
static int feed(const struct o2g_cqe *e)
{
    struct mpe_conn *c = conn_of(e->conn);
    const uint8_t *rec = dump + e->off;
    struct mpe_wire w;
    switch (e->kind) {
    case O2G_CQE_MORE: /* the next bytes of a long DATA payload: the stream goes on */
        mpe_net_rx(c, rec, e->len);
        return 1;
    case O2G_CQE_UNEXP_RTS:
        if (!engine_ctx(e->ctx)) {
            mpe_rmatch_skip(c);
            conn[e->conn].seq++;
            notice_add(e);
            return 0;
        }
        __attribute__((fallthrough)); /* an engine context's RTS: its header as it came */
    case O2G_CQE_CONTROL:
        /* The header as it came: the engine checks it, its sequence number included. */
        if (!mpe_wire_decode(rec, &w, MPE_NET_EAGER))
            conn[e->conn].seq = w.seq + 1;
        mpe_net_rx(c, rec, e->kind == O2G_CQE_CONTROL ? e->len : MPE_WIRE_HDR);
        return 1;
    case O2G_CQE_UNEXP: {
        if (!engine_ctx(e->ctx)) {
            mpe_rmatch_skip(c);
            conn[e->conn].seq++;
            notice_add(e);
            return 0;
        }
        /* The module keeps EAGER headers: rebuild it. One rank per Linux node: the
         * sender is world rank `peer`, the receiver us (mlx_job.c's layout). */
        uint8_t h[MPE_WIRE_HDR];
        w = (struct mpe_wire){.type = MPE_W_EAGER,
                              .seq = conn[e->conn].seq++,
                              .ctx = e->ctx,
                              .src = e->src,
                              .tag = e->tag,
                              .src_world = (uint32_t)conn[e->conn].peer,
                              .dst_world = (uint32_t)me,
                              .len = e->len};
        mpe_wire_encode(&w, h);
        mpe_net_rx(c, h, sizeof h);
        mpe_net_rx(c, rec, e->len);
        return 1;
    }
    case O2G_CQE_CONN:
        mpe_net_failed(c, e->status ? strerror(-e->status) : "closed");
        return 0;
    default:
        plat_fatal("o2g: unexpected completion kind %u", (unsigned)e->kind);
    }
}

/* Any thread: give record `off` back to the module. */
static void free_record(uint64_t off)
{
    if (ioctl(fd, O2G_IOC_FREE, &off) != 0)
        plat_fatal("o2g: free of record %llu: %s", (unsigned long long)off, strerror(errno));
}

/* Any thread: see struct mpe_rmatch. */
static int rm_takes(uint32_t ctx)
{
    return !engine_ctx(ctx);
}

/* The rank's task context (mpe_irecv), no lock held: see struct mpe_rmatch. The cookie is
 * the request's address. */
static void rm_post(struct mpe_req *r)
{
    struct o2g_post p = {.cookie = (uintptr_t)r,
                         .buf = (uintptr_t)r->buf,
                         .len = r->len,
                         .ctx = r->m.key.comm,
                         .src = r->m.key.src,
                         .tag = r->m.key.tag};
    /* Hazard: a receive the module refuses (too long, RLIMIT_MEMLOCK) would never see
     * the remote messages the module holds: the job cannot go on. */
    if (ioctl(fd, O2G_IOC_POST, &p) != 0)
        plat_fatal("o2g: cannot post a receive of %zu bytes: %s", r->len, strerror(errno));
    if (p.result == O2G_POST_QUEUED)
        return;
    mpe_rmatch_took(mlx_node, r);
    if (p.result == O2G_POST_DEFERRED)
        return; /* bound to a message still arriving: its RECV entry finishes r */
    if (p.result == O2G_POST_UNEXP)
        memcpy(r->buf, dump + p.off, p.msg_len < r->len ? p.msg_len : r->len);
    int t = plat_net_lock();
    struct mpe_conn *c = conn_of(p.msg_conn);
    notice_taken(p.off);
    if (p.result == O2G_POST_RTS)
        mpe_rmatch_rts(c, r, dump + p.off);
    else
        mpe_rmatch_eager(c, r, p.msg_src, p.msg_tag, p.msg_len);
    plat_net_unlock(t);
    free_record(p.off);
}

/* Under the rank's engine lock, or its task: take r back from the module. 1: done; 0: the
 * module has matched it (EBUSY: being filled, ENOENT: its completion is in the ring). */
static int rm_cancel(struct mpe_req *r)
{
    uint64_t cookie = (uintptr_t)r;
    return ioctl(fd, O2G_IOC_CANCEL, &cookie) == 0;
}

/* The rank's task context: the first notice a receive (ctx, src, tag) would take. */
static int rm_probe(uint32_t ctx, int src, int tag, struct mpe_status *st)
{
    int found = 0;
    int t = plat_net_lock();
    for (struct notice *n = notices; n && !found; n = n->next) {
        if (n->ctx == ctx && (src == MPE_ANY_SOURCE || src == n->src) &&
            (tag == MPE_ANY_TAG || tag == n->tag)) {
            st->src = n->src;
            st->tag = n->tag;
            st->len = n->len;
            found = 1;
        }
    }
    plat_net_unlock(t);
    return found;
}

static const struct mpe_rmatch rmatch = {
    .takes = rm_takes, .post = rm_post, .claim = rm_cancel, .cancel = rm_cancel, .probe = rm_probe};

/* Network thread, no lock held: everything the ring holds, to the engine. Each entry is
 * copied out and the slot given back before the engine sees it; each record is freed
 * after (the FREE ioctl also restarts connections stalled on a full ring or dump). */
void mlx_o2g_run(void)
{
    if (fd < 0)
        return;
    for (;;) {
        /* Acquire pairs with the module's release of head: entries below it are whole. */
        uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
        if (head == tail)
            return;
        struct o2g_cqe e = cqe[tail & mask];
        /* Release: our read of the slot is done before the module reuses it. */
        __atomic_store_n(&ring->tail, ++tail, __ATOMIC_RELEASE);
        /* Under the lock: the rank thread attaches kacc connections (mlx_o2g_attach_kacc),
         * and an entry of one may come before the attach returns. */
        int t = plat_net_lock();
        int kacc = e.conn < O2G_MAX_CONNS && conn[e.conn].kacc;
        plat_net_unlock(t);
        if (kacc) {
            kacc_entry(&e);
            continue;
        }
        if (e.kind == O2G_CQE_RECV || e.kind == O2G_CQE_RTS) {
            finish(&e);
            if (e.kind == O2G_CQE_RTS)
                free_record(e.off);
            continue;
        }
        t = plat_net_lock();
        int rec = feed(&e);
        plat_net_unlock(t);
        if (rec)
            free_record(e.off);
    }
}

/* Task context (job end, the network thread stopped): the module lets go of every socket. */
void mlx_o2g_stop(void)
{
    if (fd >= 0)
        close(fd);
    fd = -1;
}
