/*
 * cad_sim.c: the simulator of cad_sim.h. It plays the executor the way the engine will:
 * take ready nodes, post SEND/RECV, run CALC nodes (inline, as the interrupt would, or as
 * a later step), defer user ops to a later "rank context" step, and call cad_complete when
 * an operation completes. Operations complete one at a time in FIFO, LIFO or random order
 * across all ranks; messages match with MPI's rules (source, tag, context; in order).
 */
#include "cad_sim.h"
#include "ut.h"
#include <stdlib.h>
#include <string.h>

enum ev_kind { EV_SEND, EV_RECV, EV_XFER, EV_CALC, EV_USER };

struct event {
    int kind, rank, node;
    int rank2, node2; /* EV_XFER: the receive */
};

struct msg { /* a send that arrived before its receive was posted */
    int dst, src, node, tag;
    uint32_t ctx;
    char *copy; /* EAGER: the data; RENDEZVOUS: NULL, read from the sender's node */
};

struct posted {
    int rank, node;
};

#define MAXQ 16384
static struct event ev[MAXQ];
static struct msg unexp[MAXQ];
static struct posted posted[MAXQ];
static int nev, nunexp, nposted;

uint64_t sim_rand(uint64_t *rng)
{
    uint64_t x = *rng; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

struct cad_owner sim_owner(int rank, int size, uint64_t base, uint64_t part_size, uint32_t nuser)
{
    return (struct cad_owner){
        .rank = rank, .comm_size = size, .part_base = base, .part_size = part_size, .nuser = nuser};
}

static void add_event(struct event e)
{
    UT_ASSERT(nev < MAXQ);
    ev[nev++] = e;
}

static struct event take_event(struct sim *s)
{
    int k = s->order == SIM_FIFO   ? 0
            : s->order == SIM_LIFO ? nev - 1
                                   : (int)(sim_rand(&s->rng) % (uint64_t)nev);
    struct event e = ev[k];
    memmove(&ev[k], &ev[k + 1], (size_t)(nev - k - 1) * sizeof ev[0]);
    nev--;
    return e;
}

void sim_check_states(struct cad_graph *g)
{
    struct cad_node *n = cad_nodes(g);
    struct cad_edge *e = cad_edges(g);
    static uint32_t notdone[CAD_MAX_NODES + 1];
    uint32_t done = 0, active = 0, ready = 0, queued = 0;
    memset(notdone, 0, g->nnodes * sizeof notdone[0]);
    for (uint32_t k = 0; k < g->nedges; k++)
        if (n[e[k].from].state != CAD_NS_DONE)
            notdone[e[k].to]++;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        switch (n[i].state) {
        case CAD_NS_IDLE:
            UT_ASSERT(notdone[i] > 0); /* else it should be ready by now */
            UT_EQ(n[i].pending, notdone[i]);
            break;
        case CAD_NS_READY:
            ready++;
            UT_EQ(notdone[i], 0);
            break;
        case CAD_NS_ACTIVE:
        case CAD_NS_DEFERRED:
            active++;
            UT_EQ(notdone[i], 0);
            break;
        case CAD_NS_DONE:
            done++;
            UT_EQ(notdone[i], 0);
            break;
        default:
            UT_ASSERT(!"unexpected node state");
        }
    }
    for (uint32_t i = g->ready_head; i != CAD_NIL; i = n[i].link) {
        UT_EQ(n[i].state, CAD_NS_READY);
        queued++;
    }
    UT_EQ(queued, ready);
    UT_EQ(done, g->ndone);
    UT_EQ(active, g->nactive);
}

static void check_finished(struct cad_graph *g)
{
    struct cad_node *n = cad_nodes(g);
    UT_EQ(cad_query(g), CAD_Q_DONE);
    UT_EQ(g->ndone, g->nnodes); /* END is last: nothing can be left when it completes */
    UT_EQ(g->nactive, 0);
    for (uint32_t i = 0; i < g->nnodes; i++)
        UT_EQ(n[i].state, CAD_NS_DONE);
    UT_EQ(cad_next_ready(g), -1);
}

void sim_regraph(struct sim *s, int r, uint32_t node_cap, uint32_t edge_cap)
{
    struct sim_rank *sr = &s->r[r];
    size_t bytes = cad_bytes(node_cap, edge_cap);
    UT_ASSERT(bytes > 0);
    free(sr->g);
    free(sr->started);
    void *mem = malloc(bytes);
    UT_ASSERT(mem);
    struct cad_owner own = sim_owner(r, s->n, (uintptr_t)sr->part, s->part_size, s->nuser);
    sr->g = cad_init(mem, bytes, node_cap, edge_cap, &own);
    UT_ASSERT(sr->g);
    sr->started = calloc(node_cap, sizeof(int));
    UT_ASSERT(sr->started);
}

void sim_init_part(struct sim *s, int n, uint32_t node_cap, uint32_t edge_cap, uint64_t seed,
                   size_t part_bytes)
{
    memset(s, 0, sizeof *s);
    UT_ASSERT(n > 0 && n <= SIM_RANKS);
    s->n = n;
    s->part_size = (part_bytes + 63) & ~(size_t)63;
    s->rng = seed * 2654435761u + 1;
    s->nuser = 4;
    for (int r = 0; r < n; r++) {
        struct sim_rank *sr = &s->r[r];
        sr->part = aligned_alloc(64, s->part_size);
        UT_ASSERT(sr->part);
        memset(sr->part, 0, s->part_size);
        sim_regraph(s, r, node_cap, edge_cap);
    }
    nev = nunexp = nposted = 0;
}

void sim_init(struct sim *s, int n, uint32_t node_cap, uint32_t edge_cap, uint64_t seed)
{
    sim_init_part(s, n, node_cap, edge_cap, seed, SIM_PART);
}

void *sim_coll(struct sim *s, int r, struct cad_coll *c, struct cad_plan *p)
{
    const char *why = "";
    int rc = cad_alg_plan(c, p, &why);
    if (rc)
        ut_fail(__FILE__, __LINE__, "rank %d: %s %s: plan failed: %s", r, cad_kind_name(c->kind),
                cad_alg_name(c->alg), why);
    UT_ASSERT(p->alg == c->alg && p->alg != CAD_A_AUTO);
    sim_regraph(s, r, p->node_cap, p->edge_cap);
    char *tmp = 0;
    if (p->tmp_bytes) {
        tmp = sim_alloc(s, r, p->tmp_bytes + SIM_GUARD);
        memset(tmp, 0xa5, p->tmp_bytes); /* nothing may read scratch it did not write */
        memset(tmp + p->tmp_bytes, 0xcd, SIM_GUARD);
    }
    struct cad_graph *g = s->r[r].g;
    rc = cad_alg_build(g, c, tmp);
    if (rc)
        ut_fail(__FILE__, __LINE__, "rank %d: %s %s: build failed: %d (graph error %d)", r,
                cad_kind_name(c->kind), cad_alg_name(c->alg), rc, g->build_err);
    UT_EQ(g->nnodes, p->node_cap); /* the plan is exact, not just enough */
    UT_EQ(g->nedges, p->edge_cap);
    cad_alg_copies(c, p, tmp);
    return tmp;
}

int sim_guard_ok(const void *end)
{
    const unsigned char *g = end;
    for (int i = 0; i < SIM_GUARD; i++)
        if (g[i] != 0xcd)
            return 0;
    return 1;
}

void sim_free(struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        free(s->r[r].g);
        free(s->r[r].part);
        free(s->r[r].started);
    }
    for (int i = 0; i < nunexp; i++)
        free(unexp[i].copy);
    nev = nunexp = nposted = 0;
}

void *sim_alloc(struct sim *s, int r, size_t bytes)
{
    struct sim_rank *sr = &s->r[r];
    size_t at = (sr->used + 7) & ~(size_t)7;
    UT_ASSERT(at + bytes <= s->part_size);
    sr->used = at + bytes;
    return sr->part + at;
}

static struct cad_node *node_of(struct sim *s, int r, int i)
{
    return &cad_nodes(s->r[r].g)[i];
}

static void complete(struct sim *s, int r, int i)
{
    struct cad_graph *g = s->r[r].g;
    int rc = cad_complete(g, i);
    UT_ASSERT(rc == 0 || rc == CAD_FINISHED);
    UT_EQ(cad_complete(g, i), -CAD_ESTATE); /* a second completion changes nothing */
    if (!s->quick)
        sim_check_states(g);
    s->steps++;
    if (rc == CAD_FINISHED) {
        check_finished(g);
        s->r[r].finished = 1;
    }
}

static int xfer_matches(const struct cad_xfer *recv, int src, int tag, uint32_t ctx)
{
    return recv->peer == src && recv->tag == tag && recv->ctx == ctx;
}

static void deliver(struct sim *s, const char *data, uint64_t len, int r, int i)
{
    struct cad_xfer *x = &node_of(s, r, i)->u.x;
    UT_EQ(len, x->bytes); /* the collectives here always receive exactly what is sent */
    /* An empty message may name no buffer (memcpy wants one even for 0 bytes). */
    if (len)
        memcpy((void *)(uintptr_t)x->addr, data, len);
}

static void post_send(struct sim *s, int r, int i)
{
    struct cad_xfer *x = &node_of(s, r, i)->u.x;
    const char *data = (const char *)(uintptr_t)x->addr;
    char *copy = 0;
    if (s->proto == SIM_EAGER) {
        copy = malloc(x->bytes + 1);
        if (x->bytes)
            memcpy(copy, data, x->bytes);
        add_event((struct event){EV_SEND, r, i, 0, 0});
    }
    for (int k = 0; k < nposted; k++) {
        struct posted p = posted[k];
        if (p.rank != x->peer || !xfer_matches(&node_of(s, p.rank, p.node)->u.x, r, x->tag, x->ctx))
            continue;
        memmove(&posted[k], &posted[k + 1], (size_t)(nposted - k - 1) * sizeof posted[0]);
        nposted--;
        if (copy) {
            deliver(s, copy, x->bytes, p.rank, p.node);
            free(copy);
            add_event((struct event){EV_RECV, p.rank, p.node, 0, 0});
        } else {
            add_event((struct event){EV_XFER, r, i, p.rank, p.node});
        }
        return;
    }
    UT_ASSERT(nunexp < MAXQ);
    unexp[nunexp++] = (struct msg){x->peer, r, i, x->tag, x->ctx, copy};
}

static void post_recv(struct sim *s, int r, int i)
{
    struct cad_xfer *x = &node_of(s, r, i)->u.x;
    for (int k = 0; k < nunexp; k++) {
        struct msg m = unexp[k];
        if (m.dst != r || !xfer_matches(x, m.src, m.tag, m.ctx))
            continue;
        memmove(&unexp[k], &unexp[k + 1], (size_t)(nunexp - k - 1) * sizeof unexp[0]);
        nunexp--;
        if (m.copy) {
            deliver(s, m.copy, node_of(s, m.src, m.node)->u.x.bytes, r, i);
            free(m.copy);
            add_event((struct event){EV_RECV, r, i, 0, 0});
        } else {
            add_event((struct event){EV_XFER, m.src, m.node, r, i});
        }
        return;
    }
    UT_ASSERT(nposted < MAXQ);
    posted[nposted++] = (struct posted){r, i};
}

static void run_calc(struct sim *s, int r, int i)
{
    int rc = cad_calc_run(node_of(s, r, i));
    if (rc == CAD_CALC_DEFERRED) {
        UT_EQ(cad_defer(s->r[r].g, i), 0);
        if (!s->quick)
            sim_check_states(s->r[r].g);
        add_event((struct event){EV_USER, r, -1, 0, 0});
        return;
    }
    UT_EQ(rc, 0);
    complete(s, r, i);
}

/* The executor's loop for one rank: start every ready node. Inline CALCs complete at once
 * and may make more nodes ready: the loop picks them up, no recursion. */
static void drain(struct sim *s, int r)
{
    struct cad_graph *g = s->r[r].g;
    int i;
    while ((i = cad_next_ready(g)) >= 0) {
        UT_EQ(++s->r[r].started[i], 1);
        if (!s->quick)
            sim_check_states(g);
        switch (node_of(s, r, i)->type) {
        case CAD_SEND:
            post_send(s, r, i);
            break;
        case CAD_RECV:
            post_recv(s, r, i);
            break;
        case CAD_CALC:
            if (s->calc_inline)
                run_calc(s, r, i);
            else
                add_event((struct event){EV_CALC, r, i, 0, 0});
            break;
        default:
            UT_ASSERT(!"START or END handed to the executor");
        }
    }
}

static void step(struct sim *s, struct event e)
{
    switch (e.kind) {
    case EV_SEND:
    case EV_RECV:
        complete(s, e.rank, e.node);
        break;
    case EV_XFER: { /* rendezvous: the data moves now; either side may learn it first */
        struct cad_xfer *x = &node_of(s, e.rank, e.node)->u.x;
        deliver(s, (const char *)(uintptr_t)x->addr, x->bytes, e.rank2, e.node2);
        int recv_first = (int)(sim_rand(&s->rng) & 1);
        complete(s, recv_first ? e.rank2 : e.rank, recv_first ? e.node2 : e.node);
        drain(s, recv_first ? e.rank2 : e.rank);
        complete(s, recv_first ? e.rank : e.rank2, recv_first ? e.node : e.node2);
        drain(s, recv_first ? e.rank : e.rank2);
        return;
    }
    case EV_CALC:
        run_calc(s, e.rank, e.node);
        break;
    case EV_USER: { /* the owning rank's own context */
        struct cad_graph *g = s->r[e.rank].g;
        int i = cad_next_deferred(g);
        UT_ASSERT(i >= 0);
        struct cad_calcop *c = &node_of(s, e.rank, i)->u.c;
        UT_ASSERT(c->user_op < s->nuser && s->user[c->user_op]);
        s->user[c->user_op]((const void *)(uintptr_t)c->in, (void *)(uintptr_t)c->inout, c->count,
                            c->dtype);
        complete(s, e.rank, i);
        break;
    }
    }
    drain(s, e.rank);
}

void sim_run(struct sim *s)
{
    for (int r = 0; r < s->n; r++) {
        struct cad_error err;
        int rc = cad_finalize(s->r[r].g, &err);
        if (rc)
            ut_fail(__FILE__, __LINE__, "rank %d: %s", r, err.msg);
    }
    for (int r = 0; r < s->n; r++) {
        int rc = cad_issue(s->r[r].g);
        UT_ASSERT(rc == 0 || rc == CAD_FINISHED);
        sim_check_states(s->r[r].g);
        if (rc == CAD_FINISHED) {
            check_finished(s->r[r].g);
            s->r[r].finished = 1;
        }
        drain(s, r);
    }
    while (nev)
        step(s, take_event(s));
    for (int r = 0; r < s->n; r++)
        if (!s->r[r].finished)
            ut_fail(__FILE__, __LINE__, "rank %d never finished (deadlock)", r);
    UT_EQ(nunexp, 0);
    UT_EQ(nposted, 0);
}

void sim_ready_only(struct cad_graph *g, enum sim_order order, uint64_t *rng)
{
    static int active[CAD_MAX_NODES];
    int nactive = 0, i, rc = cad_issue(g);
    UT_ASSERT(rc == 0 || rc == CAD_FINISHED);
    sim_check_states(g);
    while (rc != CAD_FINISHED) {
        while ((i = cad_next_ready(g)) >= 0) {
            active[nactive++] = i;
            sim_check_states(g);
        }
        UT_ASSERT(nactive > 0); /* not finished, so something must be running */
        int k = order == SIM_FIFO   ? 0
                : order == SIM_LIFO ? nactive - 1
                                    : (int)(sim_rand(rng) % (uint64_t)nactive);
        int node = active[k];
        memmove(&active[k], &active[k + 1], (size_t)(nactive - k - 1) * sizeof active[0]);
        nactive--;
        rc = cad_complete(g, node);
        UT_ASSERT(rc == 0 || rc == CAD_FINISHED);
        sim_check_states(g);
    }
    UT_EQ(nactive, 0);
    check_finished(g);
}
