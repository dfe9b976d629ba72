/*
 * mlx_o2g.c: a Linux node's inter-node receive path through /dev/o2g (host-kmod/o2g,
 * o2g_uapi.h), the seed's O2G on Linux (issue 17). UKMPI_O2G chooses it:
 *   off   plain sockets and epoll (mlx_net.c), as before;
 *   auto  /dev/o2g when it opens and sets up (the module is loaded), else as off;
 *   on    /dev/o2g or the job fails at start.
 * Both paths are in every build, so the same program runs either way.
 *
 * Design. The engine (mpi/core) runs the native protocol unchanged on both paths; only
 * who reads the sockets differs:
 *   - After a node-pair connection's HELLO (the accepted side reads it to know the peer,
 *     mlx_net.c) the socket is attached to /dev/o2g; the connecting side attaches before
 *     its first read, so its peer's HELLO comes through the module. From then on the
 *     network thread never reads that socket: it sends on it as before (EPOLLOUT still
 *     comes from epoll) and waits for input on /dev/o2g, whose fd sits in the same epoll
 *     set (readable when the completion ring holds entries).
 *   - Every record the module writes is fed to the engine in ring order, which is the
 *     order of the connection's stream: CONTROL records (HELLO, CTS, DATA, CREDIT, BYE)
 *     as they came; an RTS (UNEXP_RTS) as its header; an EAGER message (UNEXP) as a
 *     header rebuilt from the entry (ctx, src, tag, len; the sequence number the stream
 *     had there; the ranks of a one-rank node pair) followed by its payload. The record
 *     is then freed (O2G_IOC_FREE), which also takes the message out of the module's
 *     unexpected queue: the engine is the only matcher, so MPI's order, wildcards,
 *     probe, cancel, synchronous sends and CAD collectives behave exactly as on epoll.
 *   - A connection's end (O2G_CQE_CONN) is the engine's mpe_net_failed(), which is no
 *     error after the peer's BYE.
 * What this gives today: no read() loop and no per-socket epoll for input; one copy more
 * than epoll for EAGER payloads (dump area, then the engine's descriptor).
 *
 * Next step (not built yet; the module already supports it, o2g_uapi.h): receives posted
 * into the module, matched and copied in softirq. It needs a seam in mpi/core through
 * which the engine hands "matching for remote sources" to the transport: a receive the
 * engine's own queues (self-messages) do not satisfy is posted to the module too; a self-
 * send that matches it first must cancel it there (O2G_IOC_CANCEL; EBUSY: the module has
 * it, the self-send stays unexpected); RECV/RTS completions finish the engine's request
 * (RTS: the library answers CTS as mpe_net_bind does) and give the sender its credits
 * back; probe looks at the UNEXP notices not yet taken. RTS must be matched by the
 * module too (it is, since o2g_uapi.h's O2G_CQE_RTS), or an EAGER message behind an RTS
 * of the same tag would overtake it. CAD receives (mpe_cad.c) would stay engine-only
 * until their interrupt-context posting can reach the module.
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

#define MLX_O2G_DUMP (4u << 20) /* dump area: room for many eager messages in flight */

static int fd = -1;
static uint8_t *dump;
static struct o2g_ring_hdr *ring;
static struct o2g_cqe *cqe;
static uint32_t mask, tail;
static int me;
/* By the module's connection id (network thread only, after attach). */
static struct {
    struct mpe_conn *c;
    int peer;
    uint32_t seq; /* sequence number of the stream's next header */
} conn[O2G_MAX_CONNS];

/* Task context (job start, before the network thread runs): UKMPI_O2G's choice. -1: not
 * used (off, or auto without a module); else /dev/o2g's fd for the network thread's epoll.
 * "on" without a working device ends the process with MLX_EXIT_FATAL. */
int mlx_o2g_start(int node)
{
    const char *mode = getenv("UKMPI_O2G");
    if (!mode || !*mode)
        mode = "auto";
    int must = !strcmp(mode, "on");
    if (!strcmp(mode, "off"))
        return -1;
    if (!must && strcmp(mode, "auto")) {
        fprintf(stderr, "mpi: node %d: UKMPI_O2G=%s: not auto, on or off\n", node, mode);
        exit(MLX_EXIT_FATAL);
    }
    me = node;
    struct o2g_setup s = {.dump_len = MLX_O2G_DUMP, .max_eager = MPE_NET_EAGER};
    const char *step = "open " O2G_DEV;
    fd = open(O2G_DEV, O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
        step = "dump area";
        dump = mmap(NULL, MLX_O2G_DUMP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        s.dump_addr = (uintptr_t)dump;
        if (dump != MAP_FAILED) {
            step = "O2G_IOC_SETUP";
            if (ioctl(fd, O2G_IOC_SETUP, &s) == 0) {
                step = "mmap ring";
                ring = mmap(NULL, s.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (ring != MAP_FAILED) {
                    cqe = (struct o2g_cqe *)((uint8_t *)ring + O2G_RING_CQE_OFF);
                    mask = s.entries - 1;
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

/* Under the network lock: feed completion e (copied out of the ring) to the engine. 1 if
 * its record is to be freed. */
static int feed(const struct o2g_cqe *e)
{
    if (e->conn >= O2G_MAX_CONNS || !conn[e->conn].c)
        plat_fatal("o2g: an entry for unknown connection %u", (unsigned)e->conn);
    struct mpe_conn *c = conn[e->conn].c;
    const uint8_t *rec = dump + e->off;
    struct mpe_wire w;
    switch (e->kind) {
    case O2G_CQE_CONTROL:
    case O2G_CQE_UNEXP_RTS:
        /* The header as it came: the engine checks it, its sequence number included. */
        if (!mpe_wire_decode(rec, &w, MPE_NET_EAGER))
            conn[e->conn].seq = w.seq + 1;
        mpe_net_rx(c, rec, e->kind == O2G_CQE_CONTROL ? e->len : MPE_WIRE_HDR);
        return 1;
    case O2G_CQE_UNEXP: {
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
    default: /* RECV, RTS: no receive is ever posted to the module */
        plat_fatal("o2g: unexpected completion kind %u", (unsigned)e->kind);
    }
}

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
        int t = plat_net_lock();
        int rec = feed(&e);
        plat_net_unlock(t);
        uint64_t off = e.off;
        if (rec && ioctl(fd, O2G_IOC_FREE, &off) != 0)
            plat_fatal("o2g: free of record %llu: %s", (unsigned long long)off, strerror(errno));
    }
}

/* Task context (job end, the network thread stopped): the module lets go of every socket. */
void mlx_o2g_stop(void)
{
    if (fd >= 0)
        close(fd);
    fd = -1;
}
