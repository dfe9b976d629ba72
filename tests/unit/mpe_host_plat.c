/* mpe_host_plat.c: see mpe_host_plat.h. Single-threaded: every function runs on the
 * test's (or the fuzzer's) thread; "interrupt context" is a flag, not a real interrupt. */
#include "mpe_host_plat.h"
#include "mpe.h" /* the ranks' entry points (mpe_ops), as the ABI exports them */
#include <sanitizer/asan_interface.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One direction of a node pair, or what a node sends one of its IMPI links: a ring buffer
 * (the connection's or the link's transport). */
struct pipe {
    int from, to;            /* nodes; an IMPI link's: from the node to the remote host */
    struct mpe_ilink *ilink; /* an IMPI link's pipe: the link that sends into it */
    uint8_t *buf;
    size_t head, len;
    int want_room; /* a send was short: call mpe_net_sent (mpe_impi_sent) once bytes leave */
    int broken;
};

struct task {
    int pending; /* woken since the last plat_block */
    unsigned wakes;
};

/* Every plat_alloc block is linked here so that a world (or a fuzz input that ended in
 * plat_fatal half way through) is freed completely. 32 bytes keep the payload aligned. */
struct blk {
    struct blk *prev, *next;
    size_t n;
    uint32_t snap;  /* in the snapshot (host_snapshot): kept when freed, for host_restore */
    uint32_t freed; /* ... and freed since (poisoned for ASan until restored) */
};

static struct {
    int live, nodes, size;
    struct host_cfg cfg;
    uint32_t rnd;
    struct mpe_node *node[HOST_MAX_NODES];
    struct pipe pipe[HOST_MAX_NODES][HOST_MAX_NODES];
    struct pipe ipipe[HOST_MAX_NODES][HOST_MAX_HOSTS]; /* node -> remote IMPI host */
    int base;     /* world rank of the job's rank 0 (host_impi_layout: our client's first) */
    int cur_node; /* whose engine runs now (plat_node): the rank's, or the interrupted one */
} sim;

/* Test's thread: the k-th pipe of either kind (node pairs, then IMPI links), to treat them
 * alike; NULL past the last. */
static struct pipe *pipe_at(int k)
{
    if (k < HOST_MAX_NODES * HOST_MAX_NODES)
        return &sim.pipe[k / HOST_MAX_NODES][k % HOST_MAX_NODES];
    k -= HOST_MAX_NODES * HOST_MAX_NODES;
    return k < HOST_MAX_NODES * HOST_MAX_HOSTS ? &sim.ipipe[k / HOST_MAX_HOSTS][k % HOST_MAX_HOSTS]
                                               : 0;
}

static struct task tasks[HOST_MAX_RANKS];
static int cur_rank;
static int lock_depth, in_irq;
#define HOLD_MIN 4096 /* smallest held buffer */

static struct blk *blocks;
static size_t nblocks; /* live ones (freed snapshot blocks do not count) */
static jmp_buf *catch_env;
char host_fatal_msg[512];
/* Buffers handed to the engine (the bytes of one injection, one pumped chunk): kept for
 * the next one, so that a fuzz input's thousands of pieces cost no malloc each, yet
 * exactly `n` bytes are addressable while held (the rest poisoned, as a malloc of n bytes
 * would be surrounded by redzones) and none once let go. */
static void host_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static struct held {
    uint8_t *p;
    size_t cap;
} held[2];

static uint8_t *hold(int i, size_t n)
{
    struct held *h = &held[i];
    if (n > h->cap || !h->p) {
        if (h->p)
            ASAN_UNPOISON_MEMORY_REGION(h->p, h->cap);
        free(h->p);
        h->cap = n > HOLD_MIN ? n : HOLD_MIN;
        if (!(h->p = malloc(h->cap)))
            host_fail("out of memory for %zu bytes", n);
    }
    ASAN_UNPOISON_MEMORY_REGION(h->p, n);
    ASAN_POISON_MEMORY_REGION(h->p + n, h->cap - n);
    return h->p;
}

/* Also when plat_fatal longjmps past the holder. */
static void unhold(int i)
{
    if (held[i].p)
        ASAN_POISON_MEMORY_REGION(held[i].p, held[i].cap);
}

/* World destruction: the held buffers go. */
static void held_free(void)
{
    for (int i = 0; i < 2; i++) {
        if (held[i].p)
            ASAN_UNPOISON_MEMORY_REGION(held[i].p, held[i].cap);
        free(held[i].p);
        held[i].p = 0;
        held[i].cap = 0;
    }
}

static void default_fail(const char *msg) __attribute__((noreturn));
static void default_fail(const char *msg)
{
    fprintf(stderr, "mpe host: %s\n", msg);
    abort();
}

void (*host_fail_hook)(const char *msg) __attribute__((noreturn)) = default_fail;

static void host_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void host_fail(const char *fmt, ...)
{
    static char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    in_irq = lock_depth = 0;
    host_fail_hook(msg);
}

uint32_t host_rand(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* ---- mpe_plat.h ---- */

void *plat_task(void)
{
    if (in_irq)
        host_fail("plat_task in interrupt context");
    return &tasks[cur_rank];
}

int plat_rank(void)
{
    if (in_irq)
        host_fail("plat_rank in interrupt context");
    return cur_rank;
}

void plat_relax(void)
{
    __builtin_ia32_pause();
}

void plat_wake(void *task)
{
    struct task *t = task;
    if (t) {
        t->pending = 1;
        t->wakes++;
    }
}

/* Nothing else runs while a rank "sleeps": move bytes until someone wakes it. */
void plat_block(void)
{
    if (in_irq || lock_depth)
        host_fail("plat_block in interrupt context or under the network lock");
    int rank = cur_rank, node = sim.cur_node;
    while (!tasks[rank].pending)
        if (!host_pump())
            host_fail("deadlock: rank %d blocks and nothing can move", rank);
    tasks[rank].pending = 0;
    cur_rank = rank;
    sim.cur_node = node;
}

struct mpe_node *plat_node(void)
{
    return sim.live ? sim.node[sim.cur_node] : 0;
}

/* One CPU: every rank's home, so CAD progress never needs an IPI. */
int plat_cpu(void)
{
    return 0;
}

/* Every arrival is fed by the test itself. */
void plat_poll(void) {}

int plat_task_cpu(void *task)
{
    (void)task;
    return 0;
}

int plat_cpu_idle(void)
{
    return in_irq > 0;
}

void plat_cad_ipi(int cpu)
{
    (void)cpu;
    host_fail("CAD IPI on a host with one CPU");
}

uint64_t plat_tsc(void)
{
    static uint64_t t;
    return ++t;
}

uint64_t plat_tsc_hz(void)
{
    return 1000000000u;
}

uint64_t plat_irq_tsc(void)
{
    return in_irq ? plat_tsc() : 0;
}

void plat_partition(uint64_t *base, uint64_t *size)
{
    *base = 0;
    *size = (uint64_t)1 << 47;
}

void *plat_alloc(size_t n)
{
    if (in_irq)
        host_fail("plat_alloc in interrupt context");
    struct blk *b = calloc(1, sizeof *b + n);
    if (!b)
        return 0;
    b->n = n;
    b->next = blocks;
    if (blocks)
        blocks->prev = b;
    blocks = b;
    nblocks++;
    return b + 1;
}

static void blk_free(struct blk *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        blocks = b->next;
    if (b->next)
        b->next->prev = b->prev;
    if (b->freed)
        ASAN_UNPOISON_MEMORY_REGION(b + 1, b->n);
    else
        nblocks--;
    free(b);
}

void plat_free(void *p)
{
    if (in_irq)
        host_fail("plat_free in interrupt context");
    if (!p)
        return;
    struct blk *b = (struct blk *)p - 1;
    if (b->freed)
        host_fail("plat_free of a block freed already");
    if (!b->snap) {
        blk_free(b);
        return;
    }
    /* host_restore brings it back at this address, which other blocks may point to; until
     * then a use is an ASan report, as after a real free. */
    b->freed = 1;
    nblocks--;
    ASAN_POISON_MEMORY_REGION(p, b->n);
}

int plat_net_lock(void)
{
    return ++lock_depth;
}

void plat_net_unlock(int token)
{
    if (token != lock_depth)
        host_fail("network lock released out of order (%d, depth %d)", token, lock_depth);
    lock_depth--;
}

static struct pipe *pipe_of(int from, int to)
{
    if (!sim.live || from < 0 || to < 0 || from >= sim.nodes || to >= sim.nodes || from == to)
        host_fail("no pipe from node %d to node %d", from, to);
    return &sim.pipe[from][to];
}

long plat_net_send(void *transport, const void *data, size_t len)
{
    if (!lock_depth)
        host_fail("plat_net_send without the network lock");
    struct pipe *p = transport;
    if (p->broken)
        return -1;
    size_t cap = sim.cfg.cap, n = cap - p->len < len ? cap - p->len : len;
    size_t at = (p->head + p->len) % cap, first = cap - at < n ? cap - at : n;
    memcpy(p->buf + at, data, first); /* up to the ring's end, then from its start */
    memcpy(p->buf, (const uint8_t *)data + first, n - first);
    p->len += n;
    if (n < len)
        p->want_room = 1;
    return (long)n;
}

void plat_fatal(const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    struct mpe_node *n = plat_node();
    snprintf(host_fatal_msg, sizeof host_fatal_msg, "node %d: %s", n ? mpe_node_id(n) : -1, why);
    if (!catch_env)
        host_fail("unexpected plat_fatal: %s", host_fatal_msg);
    longjmp(*catch_env, 1);
}

/* ---- the simulated nodes ---- */

int host_node_of(int world)
{
    int base = sim.size / sim.nodes, extra = sim.size % sim.nodes, big = extra * (base + 1);
    return world < big ? world / (base + 1) : extra + (world - big) / base;
}

struct mpe_node *host_node(int id)
{
    if (!sim.live || id < 0 || id >= sim.nodes)
        host_fail("no node %d", id);
    return sim.node[id];
}

struct mpe_conn *host_conn(int node, int peer)
{
    pipe_of(node, peer);
    if (!sim.node[node])
        host_fail("node %d runs no engine", node);
    return mpe_node_conn(sim.node[node], peer);
}

/* ---- snapshots: one world, reset for each fuzz input ---- */

#define SNAP_PAGE 4096 /* restored page by page: all-zero pages by memset */

struct snap_blk {
    struct blk *b;
    uint8_t *copy; /* its bytes at the snapshot */
    uint8_t *zero; /* per SNAP_PAGE of them: all zero */
};

static struct {
    int live;
    size_t n;
    struct snap_blk *blk;
    __typeof__(sim) sim;
    struct task tasks[HOST_MAX_RANKS];
    int cur_rank;
    uint8_t *pipe[HOST_MAX_NODES * (HOST_MAX_NODES + HOST_MAX_HOSTS)]; /* pipe_at(k)'s bytes */
} snap;

/* Test's thread: is p[0..n) all zero? */
static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Test's thread: forget the snapshot (its blocks stay as they are). */
static void snap_drop(void)
{
    for (size_t i = 0; i < snap.n; i++) {
        snap.blk[i].b->snap = 0;
        free(snap.blk[i].copy);
        free(snap.blk[i].zero);
    }
    free(snap.blk);
    for (int k = 0; pipe_at(k); k++)
        free(snap.pipe[k]);
    memset(&snap, 0, sizeof snap);
}

/* Test's thread, no interrupt or lock in progress: see mpe_host_plat.h. */
int host_snapshot(void)
{
    if (in_irq || lock_depth)
        host_fail("host_snapshot in interrupt context or under the network lock");
    snap_drop();
    snap.blk = calloc(nblocks ? nblocks : 1, sizeof *snap.blk);
    if (!snap.blk)
        return -1;
    for (struct blk *b = blocks; b; b = b->next, snap.n++) {
        struct snap_blk *s = &snap.blk[snap.n];
        size_t pages = (b->n + SNAP_PAGE - 1) / SNAP_PAGE;
        s->b = b;
        s->copy = malloc(b->n ? b->n : 1);
        s->zero = malloc(pages ? pages : 1);
        if (!s->copy || !s->zero) {
            snap.n++;
            snap_drop();
            return -1;
        }
        b->snap = 1;
        memcpy(s->copy, b + 1, b->n);
        for (size_t p = 0; p < pages; p++) {
            size_t at = p * SNAP_PAGE, len = b->n - at < SNAP_PAGE ? b->n - at : SNAP_PAGE;
            s->zero[p] = (uint8_t)all_zero(s->copy + at, len);
        }
    }
    for (int k = 0; pipe_at(k); k++)
        if (pipe_at(k)->buf) {
            if (!(snap.pipe[k] = malloc(sim.cfg.cap))) {
                snap_drop();
                return -1;
            }
            memcpy(snap.pipe[k], pipe_at(k)->buf, sim.cfg.cap);
        }
    snap.sim = sim;
    memcpy(snap.tasks, tasks, sizeof tasks);
    snap.cur_rank = cur_rank;
    snap.live = 1;
    return 0;
}

/* Test's thread: see mpe_host_plat.h. */
void host_restore(void)
{
    if (!snap.live)
        host_fail("host_restore without a snapshot");
    for (struct blk *b = blocks, *next; b; b = next) {
        next = b->next;
        if (!b->snap) /* allocated since */
            blk_free(b);
    }
    for (size_t i = 0; i < snap.n; i++) {
        struct snap_blk *s = &snap.blk[i];
        struct blk *b = s->b;
        uint8_t *p = (uint8_t *)(b + 1);
        if (b->freed) {
            ASAN_UNPOISON_MEMORY_REGION(p, b->n);
            b->freed = 0;
            nblocks++;
        }
        /* Runs of pages of one kind in one call: the calls' own cost (ASan checks each
         * range) is per call. */
        size_t pages = (b->n + SNAP_PAGE - 1) / SNAP_PAGE;
        for (size_t pg = 0, end; pg < pages; pg = end) {
            for (end = pg + 1; end < pages && s->zero[end] == s->zero[pg]; end++)
                ;
            size_t at = pg * SNAP_PAGE, len = (end == pages ? b->n : end * SNAP_PAGE) - at;
            if (s->zero[pg])
                memset(p + at, 0, len);
            else
                memcpy(p + at, s->copy + at, len);
        }
    }
    sim = snap.sim;
    for (int k = 0; pipe_at(k); k++)
        if (snap.pipe[k])
            memcpy(pipe_at(k)->buf, snap.pipe[k], sim.cfg.cap);
    memcpy(tasks, snap.tasks, sizeof tasks);
    cur_rank = snap.cur_rank;
    in_irq = lock_depth = 0;
    unhold(0);
    unhold(1);
}

void host_world_destroy(void)
{
    snap_drop();
    while (blocks)
        blk_free(blocks);
    held_free();
    for (int k = 0; pipe_at(k); k++)
        free(pipe_at(k)->buf);
    memset(&sim, 0, sizeof sim);
    memset(tasks, 0, sizeof tasks);
    cur_rank = in_irq = lock_depth = 0;
}

/* Node i's engine, for ranks first..first+count-1, its connections attached to the pipes
 * (connected from the start: their HELLOs go out now, or on the first pump). */
static int node_start(int i, int first, int count)
{
    struct mpe_node *n = sim.node[i] = mpe_node_create(i, sim.nodes, sim.size, first, count);
    if (!n)
        return -1;
    sim.cur_node = i;
    for (int p = 0; p < sim.nodes; p++) {
        if (p == i)
            continue;
        int t = plat_net_lock();
        mpe_conn_attach(mpe_node_conn(n, p), &sim.pipe[i][p]);
        plat_net_unlock(t);
    }
    return 0;
}

int host_world_create(int nodes, int size, const struct host_cfg *cfg)
{
    host_world_destroy();
    if (nodes < 1 || nodes > HOST_MAX_NODES || size < nodes || size > HOST_MAX_RANKS)
        return -1;
    sim.nodes = nodes;
    sim.size = size;
    if (cfg)
        sim.cfg = *cfg;
    if (!sim.cfg.cap)
        sim.cfg.cap = 64 << 10;
    sim.rnd = sim.cfg.seed ? sim.cfg.seed : 1;
    sim.live = 1;
    for (int i = 0, first = 0; i < nodes; i++) {
        int count = size / nodes + (i < size % nodes);
        for (int p = 0; p < nodes; p++) {
            sim.pipe[i][p].from = i;
            sim.pipe[i][p].to = p;
            if (p != i && !(sim.pipe[i][p].buf = malloc(sim.cfg.cap)))
                return -1;
        }
        if ((!sim.cfg.solo || sim.cfg.solo == i + 1) && node_start(i, first, count))
            return -1;
        first += count;
    }
    return 0;
}

void host_as_rank(int world)
{
    int r = world - sim.base; /* the job's own numbering (block placement) */
    if (!sim.live || r < 0 || r >= sim.size || world >= HOST_MAX_RANKS ||
        !sim.node[host_node_of(r)])
        host_fail("no rank %d here", world);
    cur_rank = world;
    sim.cur_node = host_node_of(r);
}

void host_init_all(void)
{
    for (int r = 0; r < sim.size; r++) {
        if (!sim.node[host_node_of(r)])
            continue;
        host_as_rank(sim.base + r);
        if (mpe_ops.init())
            host_fail("rank %d: init failed", r);
    }
}

/* The network "interrupt" of node `node`: runs under the network lock on that node, as
 * the platform's callbacks would. Returns the node it interrupted. */
static int irq_enter(int node)
{
    int saved = sim.cur_node;
    in_irq++;
    lock_depth++;
    sim.cur_node = node;
    return saved;
}

/* The interrupt's tail runs CAD progress with the network lock released, as the
 * platform's does (mpe_cad.c). */
static void irq_leave(int saved)
{
    lock_depth--;
    mpe_cad_flush(1);
    in_irq--;
    sim.cur_node = saved;
}

void host_inject(int node, int peer, const void *data, size_t len)
{
    struct mpe_conn *c = host_conn(node, peer);
    /* An exact-size copy: ASan sees any read past the bytes the parser was given. */
    uint8_t *copy = hold(1, len);
    memcpy(copy, data, len);
    int saved = irq_enter(node);
    mpe_net_rx(c, copy, len);
    irq_leave(saved);
    unhold(1);
}

size_t host_pipe_len(int from, int to)
{
    return pipe_of(from, to)->len;
}

/* Test's thread: up to max bytes out of p. */
static size_t ring_take(struct pipe *p, void *buf, size_t max)
{
    size_t n = p->len < max ? p->len : max;
    size_t first = sim.cfg.cap - p->head < n ? sim.cfg.cap - p->head : n;
    memcpy(buf, p->buf + p->head, first); /* up to the ring's end, then from its start */
    memcpy((uint8_t *)buf + first, p->buf, n - first);
    p->head = (p->head + n) % sim.cfg.cap;
    p->len -= n;
    return n;
}

size_t host_pipe_take(int from, int to, void *buf, size_t max)
{
    return ring_take(pipe_of(from, to), buf, max);
}

void host_pipe_break(int from, int to)
{
    pipe_of(from, to)->broken = 1;
}

/* After bytes left pipe p: TCP's SENT event, if the sender was short of room. */
static void room_appeared(struct pipe *p)
{
    if (p->want_room) {
        p->want_room = 0;
        int saved = irq_enter(p->from);
        if (p->ilink)
            mpe_impi_sent(p->ilink);
        else
            mpe_net_sent(mpe_node_conn(sim.node[p->from], p->to));
        irq_leave(saved);
    }
}

size_t host_pipe_drop(int from, int to)
{
    struct pipe *p = pipe_of(from, to);
    size_t n = p->len;
    p->head = p->len = 0;
    room_appeared(p);
    return n;
}

size_t host_pump(void)
{
    size_t moved = 0;
    for (int i = 0; i < sim.nodes; i++)
        for (int j = 0; j < sim.nodes; j++) {
            struct pipe *p = &sim.pipe[i][j];
            if (i == j || !p->len || !sim.node[j])
                continue; /* (the test reads what goes to a node it plays) */
            size_t n = p->len, lim = sim.cfg.chunk;
            if (lim && sim.cfg.random)
                lim = 1 + host_rand(&sim.rnd) % lim;
            if (lim && n > lim)
                n = lim;
            uint8_t *chunk = hold(0, n);
            host_pipe_take(i, j, chunk, n);
            host_inject(j, i, chunk, n);
            unhold(0);
            moved += n;
            room_appeared(p);
        }
    return moved;
}

size_t host_pump_all(void)
{
    size_t all = 0, n;
    while ((n = host_pump()))
        all += n;
    return all;
}

/* ---- IMPI links (mpe_impi.h) ---- */

/* Test's thread: node's pipe to remote host `host`, which must have a link. */
static struct pipe *ipipe_of(int node, int host)
{
    if (!sim.live || node < 0 || node >= sim.nodes || host < 0 || host >= HOST_MAX_HOSTS ||
        !sim.ipipe[node][host].ilink)
        host_fail("node %d has no IMPI link to host %d", node, host);
    return &sim.ipipe[node][host];
}

/* Task context (job start): see mpe_host_plat.h. */
int host_impi_layout(int nclients, const int32_t *client_first, int client,
                     const struct mpe_impi_cfg *cfg)
{
    if (!sim.live || cfg->nhosts > HOST_MAX_HOSTS || client_first[nclients] > HOST_MAX_RANKS)
        return -1;
    sim.base = client_first[client];
    for (int i = 0; i < sim.nodes; i++) {
        struct mpe_node *n = sim.node[i];
        struct mpe_impi_cfg c = *cfg;
        const char *why;
        c.self_host = cfg->self_host + i; /* one host per node, in node order */
        if (!n)
            continue;
        sim.cur_node = i;
        if (mpe_node_set_clients(n, nclients, client_first, client) || mpe_impi_setup(n, &c, &why))
            return -1;
        for (int h = 0; h < cfg->nhosts; h++) {
            struct pipe *p = &sim.ipipe[i][h];
            if (!(p->ilink = mpe_impi_link(n, h)))
                continue;
            p->from = i;
            p->to = h;
            if (!(p->buf = malloc(sim.cfg.cap)))
                return -1;
            int t = plat_net_lock();
            mpe_impi_attach(p->ilink, p);
            plat_net_unlock(t);
        }
    }
    return 0;
}

struct mpe_ilink *host_impi_link(int node, int host)
{
    return ipipe_of(node, host)->ilink;
}

void host_impi_inject(int node, int host, const void *data, size_t len)
{
    struct mpe_ilink *l = ipipe_of(node, host)->ilink;
    uint8_t *copy = hold(1, len); /* exact size, as in host_inject */
    memcpy(copy, data, len);
    int saved = irq_enter(node);
    mpe_impi_rx(l, copy, len);
    irq_leave(saved);
    unhold(1);
}

size_t host_impi_len(int node, int host)
{
    return ipipe_of(node, host)->len;
}

size_t host_impi_take(int node, int host, void *buf, size_t max)
{
    struct pipe *p = ipipe_of(node, host);
    size_t n = ring_take(p, buf, max);
    if (n)
        room_appeared(p);
    return n;
}

int host_catch(void (*fn)(void *), void *arg)
{
    jmp_buf env;
    jmp_buf *outer = catch_env;
    host_fatal_msg[0] = 0;
    catch_env = &env;
    if (setjmp(env)) {
        /* plat_fatal may come from inside an "interrupt" or a locked section. */
        catch_env = outer;
        in_irq = lock_depth = 0;
        unhold(0);
        unhold(1);
        return 1;
    }
    fn(arg);
    catch_env = outer;
    return 0;
}

unsigned host_wakes(int world)
{
    return world >= 0 && world < HOST_MAX_RANKS ? tasks[world].wakes : 0;
}

size_t host_allocs(void)
{
    return nblocks;
}
