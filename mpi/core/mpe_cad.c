/*
 * mpe_cad.c: the CAD executor (docs/architecture.md §3.9): runs one rank's CAD
 * graph (mpi/cad/cad.h) on the node's engine, progressed where completions happen: inside
 * the NIC interrupt, in an IPI on the rank's home CPU, or in any rank's engine call.
 *
 * Completion -> progress. An operation of a node (a SEND or RECV posted to the engine)
 * completes through mpe_complete(), in any context and often under an engine lock, where
 * nothing may wait for another lock. So the hook (mpe_cad_node_done) only pushes the node
 * onto the run's lock-free done stack and "kicks" the run: puts it on a CPU's kick list.
 * The graph itself advances in progress(), under the run's try-lock, at a safe point:
 *
 *   - the end of an engine call of a task (mpe_leave), with no engine lock held;
 *   - the tail of the NIC interrupt, after lwIP's lock is released, and the CAD IPI:
 *     both only if the task they interrupted is not inside the engine (it might hold an
 *     engine lock we would then wait for forever); if it is, its mpe_leave flushes.
 *
 * Safe points may wait for a rank's engine lock (posting a RECV), because every holder of
 * one is then on another CPU and holds it for a bounded time (see match_rank.h, mpe_net.c
 * for the lock order: engine lock, then network lock).
 *
 * Who progresses a kicked run (the policy, mpe_cad.policy; mpix.h documents the names):
 *   LOCAL  the CPU where the completion happened;
 *   IPI    the rank's home CPU, by IPI when the completion happened elsewhere (KACC);
 *   AUTO   this CPU if it is the home CPU or was idle (the interrupt stole nobody's time),
 *          else the home CPU by IPI: KACC's balancing without its IPIs to idle CPUs;
 *   POLL   nobody: the owner progresses in its own MPI calls (cad_test), as a library
 *          without asynchronous progress would.
 * The counters (MPE_CS_*, mpix.h's MPIX_CAD_*) say which happened how often.
 *
 * What runs is the engine's own copy of the graph and of its rank map (c->copy,
 * c->copy_world), taken and checked when it is issued (mpe_cad_admit.c): the rank's graph
 * is never read again.
 *
 * Lifetime. The library frees the run once req.done reads 1. `refs` counts contexts that
 * may still touch the run: a section of progress, a hook between push and kick, a place
 * on a kick list. Whoever drops the last reference of a finished graph sets req.done.
 *
 * The run lock and the done stack are one lf_box (lockfree.h): a completion pushes its node
 * into the box's inbox, and kicks the run only if the box was free after the push; a
 * holder looks at the inbox again when it releases (lf_box_unlock, the full-barrier
 * handshake), so a completion that saw the box held is never lost.
 */
#include "mpe_internal.h"
#include "mpe_impi.h"
#include "cad.h"
#include <string.h>

struct lf_stack mpe_kicks[MPE_MAX_CPUS]; /* runs kicked to each CPU (mpe_cad.kick) */
volatile uint32_t mpe_in_engine[MPE_MAX_CPUS];

#define RUN_HDR (((sizeof(struct mpe_cad) + 63) / 64) * 64)

static struct mpe_cad_node *node_state(struct mpe_cad *c, uint32_t i)
{
    return (struct mpe_cad_node *)((char *)c + RUN_HDR) + i;
}

size_t mpe_cad_bytes(uint32_t nnodes)
{
    return RUN_HDR + (size_t)nnodes * sizeof(struct mpe_cad_node);
}

/* --- references and the run lock ------------------------------------------------------- */

static void run_get(struct mpe_cad *c)
{
    __atomic_add_fetch(&c->refs, 1, __ATOMIC_SEQ_CST);
}

/* Any context. Possibly the last touch of c: nothing may follow it. */
static void run_put(struct mpe_cad *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_SEQ_CST))
        return;
    /* 1 -> 2 once: a finished graph nobody refers to any more is handed back. */
    uint32_t one = 1;
    if (__atomic_compare_exchange_n(&c->finished, &one, 2, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        mpe_cad_release(c); /* before done: the owner's next graph may reuse the block */
        mpe_complete(&c->req, 0);
    }
}

/* --- latency samples and counters --------------------------------------------------------- */

static void lat_sample(struct mpe_rank *r, uint64_t cycles)
{
    if (!r->cad_lat)
        return;
    uint32_t i = __atomic_fetch_add(&r->cad_lat_n, 1, __ATOMIC_RELAXED);
    r->cad_lat[i % MPE_CAD_LAT] = cycles;
}

static void count(struct mpe_rank *r, int what)
{
    __atomic_add_fetch(&r->cad[what], 1, __ATOMIC_RELAXED);
}

/* --- starting nodes (under the run lock, at a safe point) --------------------------------- */

static void xfer_init(struct mpe_cad *c, uint32_t i, int kind, const struct cad_node *cn)
{
    struct mpe_req *r = &node_state(c, i)->req;
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->buf = (void *)(uintptr_t)cn->u.x.addr;
    r->len = (size_t)cn->u.x.bytes;
    r->m.key.comm = cn->u.x.ctx;
    r->m.key.tag = cn->u.x.tag;
    r->m.key.src = kind == MPE_REQ_SEND ? c->copy->own.rank : cn->u.x.peer;
    r->src = r->m.key.src;
    r->tag = r->m.key.tag;
    r->cad = c;
    r->cad_node = i;
}

/* `trig`: entry TSC of the NIC interrupt whose RECV completion made this node ready. */
static void start_send(struct mpe_cad *c, uint32_t i, const struct cad_node *cn, uint64_t trig)
{
    struct mpe_cad_node *ns = node_state(c, i);
    struct mpe_rank *self = c->self;
    xfer_init(c, i, MPE_REQ_SEND, cn);
    ns->req.dst_world = c->copy_world[cn->u.x.peer]; /* peer < comm_size = the map's */
    ns->req.src_world = self->world;
    struct mpe_rank *dst = mpe_local(self->node, ns->req.dst_world);
    if (dst) {
        mpe_local_send_desc(self, dst, &ns->req, &ns->msg);
        return;
    }
    int rc = mpe_in_client(self->node, (uint32_t)ns->req.dst_world)
                 ? mpe_net_isend(self->node, self, &ns->req)
                 : mpe_impi_isend(self->node, self, &ns->req); /* another IMPI client's */
    if (rc < 0) {
        mpe_complete(&ns->req, -rc);
        return;
    }
    if (trig)
        lat_sample(self, plat_tsc() - trig);
}

/* Returns CAD_FINISHED if the node completed at once and that finished the graph. */
static int start(struct mpe_cad *c, uint32_t i, uint64_t trig)
{
    struct cad_graph *g = c->copy;
    const struct cad_node *cn = &cad_nodes(g)[i];
    count(c->self, MPE_CS_NODES);
    switch (cn->type) {
    case CAD_SEND:
        start_send(c, i, cn, trig);
        return 0;
    case CAD_RECV:
        xfer_init(c, i, MPE_REQ_RECV, cn);
        mpe_post(c->self, &node_state(c, i)->req);
        return 0;
    case CAD_CALC: {
        int rc = cad_calc_run(cn);
        if (rc == CAD_CALC_DEFERRED) { /* application code: the owner runs it (cad_test) */
            cad_defer(g, (int)i);
            count(c->self, MPE_CS_DEFERRED);
            mpe_wake(c->req.owner);
            return 0;
        }
        if (rc < 0 && !c->req.err)
            c->req.err = MPE_EINVAL;
        return cad_complete(g, (int)i) == CAD_FINISHED ? CAD_FINISHED : 0;
    }
    }
    return 0; /* START and END never become ready (cad_exec.c) */
}

static void finish(struct mpe_cad *c)
{
    __atomic_store_n(&c->finished, 1, __ATOMIC_SEQ_CST);
}

/* Under the run lock: tell the graph what completed, start what became ready, until
 * neither is left. */
static void step(struct mpe_cad *c)
{
    struct cad_graph *g = c->copy;
    for (;;) {
        uint64_t trig = 0;
        for (struct lf_link *l = lf_take_all(&c->box.inbox); l; l = l->next) {
            struct mpe_cad_node *ns = container_of(l, struct mpe_cad_node, done);
            uint32_t i = (uint32_t)(ns - node_state(c, 0));
            if (ns->irq_tsc && ns->req.kind == MPE_REQ_RECV)
                trig = ns->irq_tsc;
            if (cad_complete(g, (int)i) == CAD_FINISHED)
                finish(c);
        }
        int i, any = 0;
        while ((i = cad_next_ready(g)) >= 0) {
            any = 1;
            if (start(c, (uint32_t)i, trig) == CAD_FINISHED)
                finish(c);
        }
        if (!any && lf_empty(&c->box.inbox))
            return;
    }
}

/* Under the run lock: release it, stepping again for whatever completed meanwhile. */
static void release(struct mpe_cad *c)
{
    while (lf_box_unlock(&c->box))
        step(c);
}

/* Task context of the owner: a holder elsewhere finishes its bounded section soon. */
static void acquire(struct mpe_cad *c)
{
    lf_box_lock(&c->box);
}

/* A safe point; the caller holds a reference. If another context holds the run, it sees
 * our completions when it releases. */
static void progress(struct mpe_cad *c)
{
    if (!lf_box_trylock(&c->box))
        return;
    step(c);
    release(c);
}

/* --- kicks ------------------------------------------------------------------------------- */

static int pick_cpu(const struct mpe_cad *c, int me)
{
    switch (c->policy) {
    case MPE_CAD_LOCAL:
        return me;
    case MPE_CAD_IPI:
        return c->home_cpu;
    default:
        return me == c->home_cpu || plat_cpu_idle() ? me : c->home_cpu;
    }
}

/* Any context, no lock: make sure someone progresses c soon. Caller holds a reference. */
static void kick(struct mpe_cad *c)
{
    if (c->policy == MPE_CAD_POLL) {
        mpe_wake(c->req.owner); /* it may sleep in a wait that polls */
        return;
    }
    if (__atomic_exchange_n(&c->queued, 1, __ATOMIC_SEQ_CST))
        return; /* on a kick list already: that flush sees our node */
    int me = plat_cpu(), cpu = pick_cpu(c, me);
    count(c->self, cpu != c->home_cpu ? MPE_CS_LOCAL : cpu == me ? MPE_CS_HOME : MPE_CS_IPI);
    run_get(c); /* the list's reference, dropped by the flush */
    /* An IPI only when the list was empty: a non-empty list has one pending already. */
    if (lf_push(&mpe_kicks[cpu], &c->kick) && cpu != me)
        plat_cad_ipi(cpu);
}

/* Any context, no lock taken (see the file comment). */
void mpe_cad_node_done(struct mpe_req *r, int err)
{
    struct mpe_cad *c = r->cad;
    uint32_t i = r->cad_node;
    struct mpe_cad_node *ns = node_state(c, i);
    run_get(c);
    if (err && !c->req.err)
        c->req.err = err;
    ns->irq_tsc = plat_irq_tsc();
    /* A holder of the run sees the push when it releases (lf_box_push). */
    if (lf_box_push(&c->box, &ns->done) || c->policy == MPE_CAD_POLL)
        kick(c);
    run_put(c);
}

/* Safe point on this CPU (file comment): progress the runs kicked to it. */
void mpe_cad_flush_cpu(int me, int from_irq)
{
    int budget = MPE_CAD_BUDGET;
    if (from_irq && __atomic_load_n(&mpe_in_engine[me], __ATOMIC_SEQ_CST))
        return; /* the interrupted task is in the engine: its mpe_leave flushes */
    struct lf_link *l;
    /* The load first: most engine calls find nothing kicked, and the exchange would cost a
     * locked instruction each time. A push that this load misses is one that
     * lf_take_all would have missed too (it came after): mpe_leave looks again after its
     * decrement, an interrupt's kicker IPIs again. */
    while (!lf_empty(&mpe_kicks[me]) && (l = lf_take_all(&mpe_kicks[me]))) {
        while (l) {
            struct mpe_cad *c = container_of(l, struct mpe_cad, kick);
            l = l->next; /* before c can be kicked (and relinked) again */
            /* Later kicks queue again. Sequentially consistent: ordered before progress()
             * reads the inbox, so a kicker that still saw queued == 1 pushed its node
             * before this store and progress() sees the node. */
            __atomic_store_n(&c->queued, 0, __ATOMIC_SEQ_CST);
            progress(c);
            run_put(c);
            budget--;
        }
        if (from_irq && budget <= 0 && !lf_empty(&mpe_kicks[me])) {
            plat_cad_ipi(me); /* the rest after whatever else is pending here */
            return;
        }
    }
}

/* Any context; see mpe_transport.h. */
int mpe_cad_due(void)
{
    return !lf_empty(&mpe_kicks[plat_cpu()]);
}

/* Safe point on this CPU: see mpe_transport.h. */
void mpe_cad_flush(int from_irq)
{
    mpe_cad_flush_cpu(plat_cpu(), from_irq);
}

/* --- the owner's calls (task context, inside mpe_enter/mpe_leave) -------------------------- */

/* Task context of the owner (mpe_internal.h). */
int mpe_cad_refuse(struct mpe_cad *c, const char *why)
{
    size_t n = strlen(why);
    if (n >= sizeof c->why)
        n = sizeof c->why - 1;
    memcpy(c->why, why, n);
    c->why[n] = 0;
    return -MPE_EINVAL;
}

/* --- graphs the platform runs (mpe_cadoff) -------------------------------------------------- */

void mpe_node_set_cadoff(struct mpe_node *n, const struct mpe_cadoff *co)
{
    n->cadoff = co;
}

/* Task context of the owner (mpe_cad_issue): offer the admitted copy to the platform. The
 * run's request is made ready first: the platform may end the graph before issue returns.
 * The library's poll policy makes its MPI_Test reach mpe_cad_test, where the platform
 * looks at (or progresses) the graph: its completion needs no engine call otherwise. */
static int offload(struct mpe_cad *c, struct mpe_rank *self, const struct mpe_cadoff *off)
{
    memset(&c->req, 0, sizeof c->req);
    c->req.owner = self;
    c->self = self;
    c->nnodes = c->copy->nnodes;
    c->offloaded = 1;
    if (off->issue(c) != 0) {
        c->offloaded = 0;
        return -1;
    }
    c->policy = MPE_CAD_POLL;
    count(self, MPE_CS_ISSUED);
    return 0;
}

/* Any thread; see mpe_transport.h. */
void mpe_cad_offload_done(struct mpe_cad *c, int err)
{
    mpe_cad_release(c); /* before done: the owner's next graph may reuse the block */
    mpe_complete(&c->req, err);
}

/* The graph is the owner's: the engine runs its own copy, checked against what the engine
 * knows (its partition, the job's ranks, the caller's rank) by mpe_cad_admit. Nothing of
 * the run is reset before that passed: a refused run may be one still in use. */
int mpe_cad_issue(struct mpe_cad *c)
{
    struct mpe_rank *self = mpe_self();
    c->why[0] = 0;
    int rc = mpe_cad_admit(c, self);
    if (rc)
        return rc;
    const struct mpe_cadoff *off = self->node->cadoff;
    c->offloaded = 0;
    if (off && offload(c, self, off) == 0)
        return 0;
    /* The copy is nobody else's yet, so the run lock is not needed for this. */
    rc = cad_issue(c->copy);
    if (rc < 0) { /* a fresh copy that validated: cannot happen */
        mpe_cad_release(c);
        return mpe_cad_refuse(c, "graph: the engine could not issue its copy");
    }
    if (!self->cad_lat)
        self->cad_lat = plat_alloc(MPE_CAD_LAT * sizeof *self->cad_lat);
    memset(&c->req, 0, sizeof c->req);
    c->req.owner = self;
    c->self = self;
    c->home_cpu = plat_task_cpu(self->task);
    c->nnodes = c->copy->nnodes;
    c->box = (struct lf_box){0};
    c->queued = c->finished = 0;
    c->refs = 1; /* this call's */
    c->kick.next = 0;
    memset(node_state(c, 0), 0, (size_t)c->nnodes * sizeof(struct mpe_cad_node));
    count(self, MPE_CS_ISSUED);
    acquire(c);
    if (rc == CAD_FINISHED)
        finish(c);
    step(c);
    release(c);
    run_put(c);
    return 0;
}

int mpe_cad_test(struct mpe_cad *c)
{
    if (__atomic_load_n(&c->req.done, __ATOMIC_ACQUIRE))
        return -1;
    if (c->offloaded) { /* the platform runs it: its user ops come from the platform */
        count(c->self, MPE_CS_POLLED);
        return c->self->node->cadoff->test(c);
    }
    run_get(c);
    if (c->policy == MPE_CAD_POLL) {
        count(c->self, MPE_CS_POLLED);
        progress(c);
    }
    acquire(c);
    int node = cad_next_deferred(c->copy);
    release(c); /* steps whatever completed while we held the run */
    run_put(c);
    return node;
}

void mpe_cad_done(struct mpe_cad *c, int node)
{
    if (c->offloaded) {
        c->self->node->cadoff->done(c, node);
        return;
    }
    run_get(c);
    acquire(c);
    if (cad_complete(c->copy, node) == CAD_FINISHED)
        finish(c);
    step(c);
    release(c);
    run_put(c);
}

void mpe_cad_stats(uint64_t out[MPE_CS_COUNT])
{
    struct mpe_rank *self = mpe_self();
    for (int i = 0; i < MPE_CS_COUNT; i++)
        out[i] = __atomic_load_n(&self->cad[i], __ATOMIC_RELAXED);
}

int mpe_cad_latency(uint64_t *cycles, int max)
{
    struct mpe_rank *self = mpe_self();
    uint32_t end = __atomic_load_n(&self->cad_lat_n, __ATOMIC_ACQUIRE), from = self->cad_lat_read;
    if (end - from > MPE_CAD_LAT)
        from = end - MPE_CAD_LAT;
    int n = 0;
    for (; from != end && n < max && self->cad_lat; from++)
        cycles[n++] = self->cad_lat[from % MPE_CAD_LAT];
    self->cad_lat_read = from;
    return n;
}
