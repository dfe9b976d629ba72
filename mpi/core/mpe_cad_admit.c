/*
 * mpe_cad_admit.c: what the engine takes from a rank that starts a CAD graph.
 * The graph and its rank map are the rank's memory, which the rank may write at any time,
 * also after the start (by mistake, or a program that calls the kernel's ABI itself). So
 * the engine reads each of them once, into a block of its own, checks the copies, and runs
 * only those: whatever the rank writes afterwards changes nothing the kernel does.
 *
 * Whose word counts: the rank map's length (mpe_cad.world_size) is the library's
 * communicator size, range-checked against the job; the graph's own.comm_size must agree
 * with it and is never used to read the map. Both blocks must lie inside the rank's
 * partition, where the engine reads them.
 *
 * Cost, per issue: one read of the header, the nodes (64 bytes each), the edges and the
 * successor lists (6 bytes an edge) and the map (4 bytes a rank), in the order of the
 * validation that follows on the copy, which visits every node several times: a few KiB
 * for the library's collectives on tens of ranks. Blocks are kept per rank and reused, so
 * a rank allocates (task context, plat_alloc) only when more of its graphs are out at once
 * than before, or a graph outgrows its blocks; it keeps MPE_CAD_SPARE idle ones at most,
 * none bigger than KEEP_BYTES.
 *
 * Lifetime: a block is busy from mpe_cad_admit until the run's last reference is dropped
 * (mpe_cad_release, any context, its last touch). Only the owner's task reuses or frees
 * blocks (plat_free is task context), in its later calls here.
 */
#include "mpe_internal.h"
#include "cad.h"
#include <string.h>

#define MIN_GRAPH  4096u      /* smallest graph room of a block: the library's usual graphs */
#define KEEP_BYTES (1u << 20) /* idle blocks with more graph room are freed, not kept */

struct mpe_cad_copy {
    struct mpe_cad_copy *next; /* the rank's blocks (mpe_rank.cad_copies): its task's */
    struct mpe_cad *run;       /* the run it serves (while busy) */
    volatile uint32_t busy;    /* from admit to release */
    uint32_t world_cap;        /* entries of world: the job's size */
    size_t graph_cap;          /* bytes of g */
    int32_t *world;
    struct cad_graph *g;
};

/* Any context: n rounded up to a cache line. */
static size_t up64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* --- the reason of a refusal, with numbers (the core has no printf) ---------------------- */

/* Any context: s appended to m[at..cap) (cut to fit, terminated); the new length. */
static size_t put_str(char *m, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        m[at++] = *s++;
    m[at] = 0;
    return at;
}

/* Any context: v in decimal appended like put_str. */
static size_t put_dec(char *m, size_t at, size_t cap, int64_t v)
{
    char buf[24], *p = buf + sizeof buf;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    *--p = 0;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    return put_str(m, at, cap, p);
}

/* c->why = a x b y d; -MPE_EINVAL. */
static int refuse_nums(struct mpe_cad *c, const char *a, int64_t x, const char *b, int64_t y,
                       const char *d)
{
    char m[sizeof c->why];
    size_t at = put_str(m, 0, sizeof m, a);
    at = put_dec(m, at, sizeof m, x);
    at = put_str(m, at, sizeof m, b);
    at = put_dec(m, at, sizeof m, y);
    put_str(m, at, sizeof m, d);
    return mpe_cad_refuse(c, m);
}

/* --- the rank's blocks (its task only) ---------------------------------------------------- */

/* The owner's task: is b in use by a run (acquire: pairs with mpe_cad_release)? */
static int busy(const struct mpe_cad_copy *b)
{
    return (int)__atomic_load_n(&b->busy, __ATOMIC_ACQUIRE);
}

/* Is c running? Its block is busy until its last reference is gone. */
static int running(const struct mpe_rank *self, const struct mpe_cad *c)
{
    for (const struct mpe_cad_copy *b = self->cad_copies; b; b = b->next)
        if (b->run == c && busy(b))
            return 1;
    return 0;
}

/* The owner's task: a block for a map of the job's size and a graph of `bytes` at least
 * (rounded up to a power of two), zeroed; NULL if out of memory. */
static struct mpe_cad_copy *block_new(uint32_t job, size_t bytes)
{
    size_t cap = MIN_GRAPH, hdr = up64(sizeof(struct mpe_cad_copy));
    size_t wbytes = up64((size_t)job * sizeof(int32_t));
    while (cap < bytes) /* powers of two: a block fits later graphs of about the same size */
        cap <<= 1;
    struct mpe_cad_copy *b = plat_alloc(hdr + wbytes + cap);
    if (!b)
        return 0;
    b->world_cap = job;
    b->graph_cap = cap;
    b->world = (int32_t *)(void *)((char *)b + hdr);
    b->g = (struct cad_graph *)(void *)((char *)b + hdr + wbytes); /* 16-aligned at least */
    return b;
}

/* An idle block with room for a graph of `bytes`, now busy; idle blocks beyond the spares
 * are freed on the way. NULL if out of memory. */
static struct mpe_cad_copy *take(struct mpe_rank *self, size_t bytes)
{
    struct mpe_cad_copy **at = &self->cad_copies, *b, *fit = 0;
    unsigned spare = 0;
    while ((b = *at)) {
        int keep = busy(b);
        if (!keep && !fit && b->graph_cap >= bytes)
            keep = 1, fit = b;
        else if (!keep && b->graph_cap <= KEEP_BYTES && spare < MPE_CAD_SPARE)
            keep = 1, spare++;
        if (keep) {
            at = &b->next;
            continue;
        }
        *at = b->next;
        plat_free(b);
    }
    if (!fit) {
        fit = block_new((uint32_t)mpe_world_size(self->node), bytes);
        if (!fit)
            return 0;
        fit->next = self->cad_copies;
        self->cad_copies = fit;
    }
    fit->run = 0;
    fit->busy = 1;
    return fit;
}

/* Any context; see mpe_internal.h. Release order: our reads of the copy come before the
 * owner's reuse of the block (busy() acquires). */
void mpe_cad_release(struct mpe_cad *c)
{
    __atomic_store_n(&c->block->busy, 0, __ATOMIC_RELEASE);
}

/* --- the copies ---------------------------------------------------------------------------- */

/* [p, p + len) inside [base, base + size), without computing a sum that may wrap. */
static int inside(uint64_t base, uint64_t size, const void *p, uint64_t len)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    return a >= base && len <= size && a - base <= size - len;
}

/* The graph g laid out by its header h (checked: its counts fit its capacities, which fit
 * its block) into b, compactly: capacities = counts. Each byte of g is read once. */
static struct cad_graph *copy_graph(struct mpe_cad_copy *b, const struct cad_graph *g,
                                    const struct cad_graph *h, size_t bytes)
{
    const char *nodes = (const char *)g + CAD_HDR_SIZE;
    const char *edges = nodes + (size_t)h->node_cap * CAD_NODE_SIZE;
    const char *succ = edges + (size_t)h->edge_cap * sizeof(struct cad_edge);
    struct cad_graph *k = b->g;
    *k = *h;
    k->node_cap = h->nnodes;
    k->edge_cap = h->nedges;
    k->bytes = bytes;
    k->run = CAD_Q_IDLE; /* the copy runs nowhere yet, whatever g's run state said */
    memcpy(cad_nodes(k), nodes, (size_t)h->nnodes * CAD_NODE_SIZE);
    memcpy(cad_edges(k), edges, (size_t)h->nedges * sizeof(struct cad_edge));
    memcpy(cad_succ(k), succ, (size_t)h->nedges * sizeof(uint16_t));
    return k;
}

/* The map's entries, each read once, into b; 0 if all are ranks of the job. */
static int copy_world(struct mpe_cad_copy *b, const int32_t *world, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int32_t w = world[i];
        if (w < 0 || (uint32_t)w >= b->world_cap)
            return -1;
        b->world[i] = w;
    }
    return 0;
}

/* Refuse with `why` and give the block back (nothing refers to it yet). */
static int drop(struct mpe_cad *c, struct mpe_cad_copy *b, const char *why)
{
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
    return mpe_cad_refuse(c, why);
}

/* Task context of the owner; see mpe_internal.h. */
int mpe_cad_admit(struct mpe_cad *c, struct mpe_rank *self)
{
    const struct cad_graph *g = c->g;
    uint32_t job = (uint32_t)mpe_world_size(self->node), nw = c->world_size;
    uint64_t base, size;
    struct cad_graph h;
    struct cad_error err;
    if (c->policy > MPE_CAD_POLL)
        return mpe_cad_refuse(c, "graph: unknown progress policy");
    if (running(self, c)) /* before anything of the run is touched: it is in use */
        return mpe_cad_refuse(c, "graph: already running");
    plat_partition(&base, &size);
    if (!g || c->gbytes < CAD_HDR_SIZE || ((uintptr_t)g & 7))
        return mpe_cad_refuse(c, "graph: no graph, or a block too small or misaligned");
    if (!inside(base, size, g, c->gbytes))
        return mpe_cad_refuse(c, "graph: its block is not inside the rank's partition");
    if (!c->world || !nw || nw > job)
        return refuse_nums(c, "graph: a rank map of ", nw, " entries, the job has ", job, " ranks");
    if (!inside(base, size, c->world, (uint64_t)nw * sizeof *c->world))
        return mpe_cad_refuse(c, "graph: its rank map is not inside the rank's partition");
    memcpy(&h, g, sizeof h); /* read once: the layout of what is copied comes from here */
    if (h.own.comm_size != (int32_t)nw)
        return refuse_nums(c, "graph: made for a communicator of ", h.own.comm_size,
                           " ranks, the rank map has ", nw, "");
    if (h.nnodes > c->run_nodes) /* the engine's node states follow the run record */
        return refuse_nums(c, "graph: ", h.nnodes, " nodes, its run has room for ", c->run_nodes,
                           "");
    size_t from = cad_bytes(h.node_cap, h.edge_cap), bytes = cad_bytes(h.nnodes, h.nedges);
    if (!from || from > c->gbytes || !bytes || h.nnodes > h.node_cap || h.nedges > h.edge_cap)
        return mpe_cad_refuse(c, "graph: node or edge counts beyond its block");
    struct mpe_cad_copy *b = take(self, bytes);
    if (!b)
        return mpe_cad_refuse(c, "graph: no kernel memory for the engine's copy");
    struct cad_graph *k = copy_graph(b, g, &h, bytes);
    k->own.part_base = base; /* the engine's word, not the library's */
    k->own.part_size = size;
    if (cad_validate(k, bytes, &err) < 0)
        return drop(c, b, err.msg);
    if (copy_world(b, c->world, nw))
        return drop(c, b, "graph: a communicator rank maps to no rank of the job");
    if (b->world[k->own.rank] != self->world)
        return drop(c, b, "graph: its owner is not the calling rank");
    b->run = c;
    c->block = b;
    c->copy = k;
    c->copy_world = b->world;
    return 0;
}
