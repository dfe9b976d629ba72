/*
 * coll_run.c: a collective as a request: the CAD graph built from a description
 * (mpi/cad/cad_alg.h), handed to the node's engine (mpi/core/mpe_cad.c), and finished in
 * the rank's own context (user ops, unpacking, freeing). Blocking and non-blocking
 * collectives both start here (coll_api.c, coll_nb.c).
 *
 * One malloc holds everything a collective needs while it runs, so nothing leaks whatever
 * way it ends: the coll_req, the graph, the engine's run, the algorithm's scratch, and
 * the temporaries of non-contiguous buffers (coll_nb.c):
 *
 *   struct coll_req | move list | graph (8-aligned) | run (64) | scratch (64) | temps
 *
 * Everything that depends on the buffers' contents happens when the collective starts
 * (coll_go): packing, then the graph's local copies (cad_alg_copies), then the engine.
 * So a persistent collective (MPI_Bcast_init and friends, coll_persist.c) is this same
 * block, built once and started again and again.
 *
 * A communicator that spans IMPI clients (comm->clients, world.c) gets LAM's algorithms,
 * blocking or not, run one at a time ("One at a time" below): the IMPI ones (CAD_A_IMPI)
 * for barrier, bcast, reduce and allreduce, its lam_basic fall-backs (CAD_A_LAMBASIC) for
 * every other collective.
 *
 * Progress does not need this file: the engine advances the graph from interrupts and
 * IPIs (mpix.h). The rank's own calls only run what must run here: user-defined ops
 * (application code never runs in interrupt context) and, with UKMPI_CAD_PROGRESS=poll,
 * everything.
 */
#include "coll_impl.h"
#include "mpix.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)MPIX_CAD_ISSUED == (int)MPE_CS_ISSUED &&
                   (int)MPIX_CAD_DEFERRED == (int)MPE_CS_DEFERRED &&
                   (int)MPIX_CAD_NSTATS == (int)MPE_CS_COUNT,
               "mpix.h's counters are the engine's");

static uint32_t policy;         /* UKMPI_CAD_PROGRESS */
static int alg_of[CAD_K_COUNT]; /* UKMPI_COLL_<KIND>; 0 = AUTO */
static uint64_t chunk;          /* UKMPI_COLL_CHUNK; 0 = the algorithm's default */
static char last_why[sizeof((struct mpe_cad *)0)->why]; /* MPIX_Cad_error */

static const char *const policy_names[] = {"auto", "ipi", "local", "poll"};

/* Task context, from MPI_Init: the environment's choices. A bad value is reported and
 * ignored, so a typo in a benchmark script shows instead of silently measuring AUTO. */
void coll_init_env(void)
{
    const char *p = getenv("UKMPI_CAD_PROGRESS");
    if (p) {
        uint32_t i = 0;
        while (i < 4 && strcmp(p, policy_names[i]))
            i++;
        if (i < 4)
            policy = i;
        else
            fprintf(stderr, "mpi: UKMPI_CAD_PROGRESS=%s unknown (auto|ipi|local|poll)\n", p);
    }
    for (int k = 1; k < CAD_K_COUNT; k++) {
        char name[40] = "UKMPI_COLL_";
        const char *kn = cad_kind_name(k);
        size_t n = strlen(name);
        for (size_t i = 0; kn[i] && n + 1 < sizeof name; i++)
            name[n++] = (char)(kn[i] >= 'a' && kn[i] <= 'z' ? kn[i] - 32 : kn[i]);
        name[n] = 0;
        const char *v = getenv(name);
        if (!v)
            continue;
        int a = cad_alg_by_name(v);
        if (a >= 0)
            alg_of[k] = a;
        else
            fprintf(stderr, "mpi: %s=%s: unknown algorithm\n", name, v);
    }
    const char *c = getenv("UKMPI_COLL_CHUNK");
    if (c)
        chunk = strtoull(c, 0, 10);
}

static size_t up64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Task context. Allocate the request and its block for the description `d` (kind, rank,
 * size, sizes filled; alg from the environment unless set), with `temp_bytes` of room for
 * the caller's temporaries and `nmoves` pack/unpack entries. The graph is not built yet. */
struct coll_req *coll_alloc(MPI_Comm comm, struct cad_coll *d, size_t temp_bytes, int nmoves,
                            int *err)
{
    struct cad_plan plan;
    const char *why = 0;
    d->client = comm->clients;
    /* The other clients expect LAM's algorithms, whatever we like: AUTO is how the planner
     * picks them, IMPI or LAMBASIC by kind (and one at a time: see "One at a time" below). */
    if (comm->clients)
        d->alg = CAD_A_AUTO;
    else if (!d->alg)
        d->alg = alg_of[d->kind];
    if (!d->chunk)
        d->chunk = chunk;
    d->ctx = comm->ctx + 1;
    d->tag = (int32_t)coll_tag_block(comm);
    d->rank = comm->rank;
    d->size = comm->size;
    if (cad_alg_plan(d, &plan, &why) < 0) {
        fprintf(stderr, "mpi: %s: %s\n", cad_kind_name(d->kind), why ? why : "bad arguments");
        *err = MPI_ERR_ARG;
        return 0;
    }
    size_t gbytes = cad_bytes(plan.node_cap, plan.edge_cap);
    size_t rbytes = mpi_engine->cad_bytes(plan.node_cap);
    size_t off_mv = up64(sizeof(struct coll_req));
    size_t off_g = off_mv + up64((size_t)nmoves * sizeof(struct coll_move));
    size_t off_run = off_g + up64(gbytes);
    size_t off_tmp = off_run + up64(rbytes);
    size_t off_user = off_tmp + up64(plan.tmp_bytes);
    char *mem = gbytes ? malloc(off_user + temp_bytes) : 0; /* 16-aligned: enough */
    if (!mem) {
        *err = MPI_ERR_NO_MEM;
        return 0;
    }
    struct coll_req *q = (struct coll_req *)mem;
    memset(q, 0, sizeof *q);
    q->raw = mem;
    q->mv = (struct coll_move *)(mem + off_mv);
    q->nmv_cap = nmoves;
    q->gmem = mem + off_g;
    q->gbytes = gbytes;
    q->run = (struct mpe_cad *)(mem + off_run);
    q->tmp = plan.tmp_bytes ? mem + off_tmp : 0;
    q->temps = mem + off_user;
    q->temps_cap = temp_bytes;
    q->plan = plan;
    q->comm = comm;
    return q;
}

/* Task context: the block's memory from q->temps on, `bytes` at a time (64-aligned). */
void *coll_temp(struct coll_req *q, size_t bytes)
{
    char *p = q->temps + q->temps_used;
    q->temps_used += up64(bytes);
    if (q->temps_used > q->temps_cap) { /* the caller's sizing is wrong: a library bug */
        fprintf(stderr, "mpi: collective temporaries overflow (%zu > %zu)\n", q->temps_used,
                q->temps_cap);
        mpi_abort_hook(1);
    }
    return p;
}

/* Task context, while q is built: the next entry of its move list, holding a reference on
 * dt (the program may free the type while the collective can still start or finish). */
static struct coll_move *move(struct coll_req *q, MPI_Datatype dt)
{
    if (q->nmv >= q->nmv_cap) { /* the caller's sizing is wrong: a library bug */
        fprintf(stderr, "mpi: collective move list overflow (%d)\n", q->nmv_cap);
        mpi_abort_hook(1);
    }
    struct coll_move *m = &q->mv[q->nmv++];
    dt_retain(dt);
    *m = (struct coll_move){.dt = dt};
    return m;
}

/* Task context: at each start, count elements of dt at `user` are packed to `packed`. */
void coll_pack_at_start(struct coll_req *q, const void *user, int count, MPI_Datatype dt,
                        void *packed)
{
    struct coll_move *m = move(q, dt);
    m->packed = packed;
    m->user = (void *)user; /* only read: an `in` move */
    m->count = count;
    m->in = 1;
}

/* Task context: at each start, `bytes` at `from` are copied to `to` (an `in` move without
 * a type). */
void coll_copy_at_start(struct coll_req *q, const void *from, size_t bytes, void *to)
{
    struct coll_move *m = move(q, 0);
    m->packed = to;
    m->user = (void *)from; /* only read */
    m->bytes = bytes;
    m->in = 1;
}

/* Task context: after completion, `bytes` packed at `packed` go to count elements of dt
 * at `user`. */
void coll_unpack_later(struct coll_req *q, const void *packed, size_t bytes, void *user, int count,
                       MPI_Datatype dt)
{
    struct coll_move *m = move(q, dt);
    m->packed = (void *)packed; /* only read: an `out` move */
    m->bytes = bytes;
    m->user = user;
    m->count = count;
    m->in = 0;
}

/* Task context: q's block and what it holds (any time after coll_alloc). */
void coll_free(struct coll_req *q)
{
    if (q) {
        for (int i = 0; i < q->nmv; i++)
            dt_release(q->mv[i].dt);
        free(q->owned);
        free(q->raw);
    }
}

/* Task context: build the graph for d (completed by coll_alloc), validate and start it (or,
 * under coll_persistent, keep it for MPI_Start); on success *req is the collective's
 * request. On failure q is freed. */
int coll_issue(struct coll_req *q, struct cad_coll *d, MPI_Request *req)
{
    struct cad_owner own = {.rank = q->comm->rank,
                            .comm_size = q->comm->size,
                            .part_base = 0,
                            .part_size = ~(uint64_t)0 >> 1, /* the engine checks the real one */
                            .nuser = q->op ? 1 : 0};
    struct cad_error e;
    struct cad_graph *g = cad_init(q->gmem, q->gbytes, q->plan.node_cap, q->plan.edge_cap, &own);
    int rc = g ? cad_alg_build(g, d, q->tmp) : -CAD_EINVAL;
    if (rc >= 0) /* validated by the kernel's issue (a refusal is reported below) */
        rc = cad_seal(g, &e);
    else
        snprintf(e.msg, sizeof e.msg, "the builder failed (%d)", rc);
    if (rc < 0) { /* our own builder made a graph the validator refuses: a bug, say so */
        fprintf(stderr, "mpi: %s (%s): invalid graph: %s\n", cad_kind_name(d->kind),
                cad_alg_name(d->alg), e.msg);
        coll_free(q);
        return MPI_ERR_INTERN;
    }
    q->d = *d; /* for cad_alg_copies at each start: sbuf, rbuf */
    q->lam = (d->alg == CAD_A_IMPI || d->alg == CAD_A_LAMBASIC) && d->client;
    rc = coll_issue_graph(q, g, req);
    if (rc == MPI_ERR_ARG) /* the kernel refused a graph of ours: a bug, say so */
        fprintf(stderr, "mpi: %s (%s): graph refused: %s\n", cad_kind_name(d->kind),
                cad_alg_name(d->alg), last_why);
    return rc;
}

/*
 * One at a time. The IMPI collectives of a communicator (q->impi) run in the order they
 * were started, each after the one before completed: their messages between clients carry
 * LAM's fixed tags, so two graphs running at once would be told apart only by the order
 * their receives get posted in, which a receive that waits for a local phase does not
 * keep (LAM has no non-blocking collectives to worry about). One started while another
 * runs is built, its local copies made, and queued; it goes to the engine at a later MPI
 * call of this rank once all before it completed (every wait and test polls; the engine
 * wakes a waiting rank when a collective of it completes). So a non-blocking IMPI
 * collective behind another progresses only inside MPI calls, and a blocking one waits
 * there only behind non-blocking ones the program left running.
 */

/* Task context: q to the engine; -1 (last_why set) if it refuses the graph. */
static int engine_issue(struct coll_req *q)
{
    if (mpi_engine->cad_issue(q->run) < 0) {
        memcpy(last_why, q->run->why, sizeof last_why);
        return -1;
    }
    return 0;
}

/* Task context: run what the engine parked for q (user ops); 1 if q is complete. */
static int poll_run(struct coll_req *q)
{
    struct mpe_cad *run = q->run;
    int node;
    if (q->failed || __atomic_load_n(&run->req.done, __ATOMIC_ACQUIRE))
        return 1;
    /* Nothing for us to do unless we poll or a user op waits (a stale look at the queue
     * only delays it to the next call: the engine wakes us when it parks one). MPI_Test
     * in a compute loop then costs a few loads, not a call into the engine. */
    if (run->policy != MPE_CAD_POLL &&
        __atomic_load_n(&run->copy->defer_head, __ATOMIC_ACQUIRE) == CAD_NIL)
        return 0;
    while ((node = mpi_engine->cad_test(run)) >= 0) {
        const struct cad_node *n = &cad_nodes(run->copy)[node]; /* the engine's: validated */
        int rc = op_apply_packed(q->op, (const void *)(uintptr_t)n->u.c.in,
                                 (void *)(uintptr_t)n->u.c.inout, (int)n->u.c.count, q->dt);
        if (rc != MPI_SUCCESS && !q->err)
            q->err = rc;
        mpi_engine->cad_done(run, node);
    }
    return __atomic_load_n(&run->req.done, __ATOMIC_ACQUIRE) != 0;
}

/* Task context: drop the completed head(s) of c's queue and start the next one. The head
 * is polled here too: its user ops must run even while the program waits for a later one. */
static void impi_advance(MPI_Comm c)
{
    struct coll_req *h;
    while ((h = c->impi_q)) {
        if (h->deferred) {
            h->deferred = 0;
            if (engine_issue(h) == 0)
                return;
            fprintf(stderr, "mpi: a queued IMPI collective: graph refused: %s\n", last_why);
            h->failed = 1;
            h->err = MPI_ERR_INTERN;
        }
        if (!poll_run(h))
            return;
        c->impi_q = h->impi_next;
        h->impi = 0;
    }
}

/* Task context: take q out of its communicator's queue (wherever it is). */
static void impi_unlink(struct coll_req *q)
{
    for (struct coll_req **pp = &q->comm->impi_q; *pp; pp = &(*pp)->impi_next)
        if (*pp == q) {
            *pp = q->impi_next;
            break;
        }
    q->impi = 0;
}

/* Task context: the request's references go and its block is freed (q is never used
 * again). */
static void coll_release(struct coll_req *q)
{
    if (q->op)
        op_release(q->op);
    if (q->dt)
        dt_release(q->dt);
    if (q->impi)
        impi_unlink(q);
    coll_free(q);
}

/* Task context: start q: pack what the graph reads, make the graph's local copies, and
 * hand the graph to the engine (or, an IMPI one, queue it). MPI_ERR_ARG if the engine
 * refuses it (last_why says why). */
static int coll_go(struct coll_req *q)
{
    for (int i = 0; i < q->nmv; i++) {
        const struct coll_move *m = &q->mv[i];
        if (m->in && m->dt)
            dt_pack(m->user, m->count, m->dt, m->packed);
        else if (m->in)
            memcpy(m->packed, m->user, m->bytes);
    }
    cad_alg_copies(&q->d, &q->plan, q->tmp); /* the moves inside this rank the graph assumes */
    struct mpe_cad *run = q->run;
    memset(run, 0, sizeof *run);
    run->g = q->gmem;
    run->gbytes = q->gbytes;
    run->world = q->comm->group->world;
    run->world_size = (uint32_t)q->comm->size;
    run->policy = policy;
    run->run_nodes = q->plan.node_cap;
    q->err = q->failed = q->deferred = 0;
    q->impi = q->lam;
    if (q->impi) {
        struct coll_req **pp = &q->comm->impi_q;
        impi_advance(q->comm);
        q->deferred = *pp != 0;
        while (*pp)
            pp = &(*pp)->impi_next;
        *pp = q;
    }
    if (!q->deferred && engine_issue(q) < 0) {
        if (q->impi)
            impi_unlink(q);
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* Set by coll_persist.c around an MPI_*_init: the collective is built, not started. */
int coll_persistent;

/* Task context: wrap built graph g (in q->gmem) in a request and start it, or, under
 * coll_persistent, return it inactive for MPI_Start. On failure q is freed. */
int coll_issue_graph(struct coll_req *q, struct cad_graph *g, MPI_Request *req)
{
    MPI_Request r = req_alloc();
    if (!r) {
        coll_free(q);
        return MPI_ERR_NO_MEM;
    }
    q->gmem = g;
    if (coll_persistent) {
        r->persistent = 1;
    } else if (coll_go(q) != MPI_SUCCESS) {
        req_discard(r);
        coll_free(q);
        return MPI_ERR_ARG;
    }
    if (q->op)
        op_retain(q->op);
    if (q->dt)
        dt_retain(q->dt);
    r->kind = REQ_COLL;
    r->comm = q->comm;
    r->coll = q;
    *req = r;
    return MPI_SUCCESS;
}

/* Task context: MPI_Start of an inactive persistent collective r. */
int coll_start(MPI_Request r)
{
    int rc = coll_go(r->coll);
    if (rc == MPI_ERR_ARG)
        fprintf(stderr, "mpi: MPI_Start of a persistent collective: graph refused: %s\n", last_why);
    return rc;
}

/* Task context: run what the engine parked for us (user ops); 1 if the collective is
 * complete. */
int coll_poll(MPI_Request r)
{
    struct coll_req *q = r->coll;
    if (q->impi)
        impi_advance(q->comm);
    return !q->deferred && poll_run(q);
}

/* Task context, once coll_poll said complete: unpack, and free it (a persistent one is
 * kept for the next MPI_Start). MPI error class. */
int coll_finish(MPI_Request r)
{
    struct coll_req *q = r->coll;
    int rc = q->err ? q->err : err_engine_class(q->run->req.err);
    for (int i = 0; i < q->nmv; i++) {
        const struct coll_move *m = &q->mv[i];
        if (!m->in)
            dt_unpack(m->packed, m->bytes, m->user, m->count, m->dt);
    }
    MPI_Comm c = q->comm;
    if (q->impi)
        impi_unlink(q);
    if (!r->persistent) {
        coll_release(q);
        r->coll = 0;
    }
    if (c->impi_q) /* the next one may go now */
        impi_advance(c);
    return rc;
}

/* Task context: MPI_Request_free of an inactive persistent collective. */
void coll_discard(MPI_Request r)
{
    coll_release(r->coll);
    r->coll = 0;
}

/* --- extensions (mpix.h) ----------------------------------------------------------------- */

int MPIX_Cad_start(struct cad_graph *g, size_t bytes, MPI_Comm comm, MPI_Request *req)
{
    if (!mpi_ready("MPIX_Cad_start"))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPIX_Cad_start");
    if (!g || bytes < CAD_HDR_SIZE || !req)
        return err_raise(comm, MPI_ERR_ARG, "MPIX_Cad_start");
    if (g->magic != CAD_MAGIC || g->node_cap > (bytes - CAD_HDR_SIZE) / CAD_NODE_SIZE ||
        g->nnodes > g->node_cap) {
        snprintf(last_why, sizeof last_why, "graph: not a CAD graph of %zu bytes", bytes);
        return err_raise(comm, MPI_ERR_ARG, "MPIX_Cad_start");
    }
    if (g->own.comm_size != comm->size) { /* the engine checks it too: a clearer message */
        snprintf(last_why, sizeof last_why,
                 "graph: made for a communicator of %d ranks, the communicator has %d",
                 (int)g->own.comm_size, comm->size);
        return err_raise(comm, MPI_ERR_ARG, "MPIX_Cad_start");
    }
    /* The program's messages travel on comm's collective context, whatever the nodes say:
     * a graph cannot reach into another communicator's traffic. */
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct cad_node *nd = &cad_nodes(g)[i];
        if (nd->type == CAD_SEND || nd->type == CAD_RECV)
            nd->u.x.ctx = comm->ctx + 1;
    }
    size_t rbytes = mpi_engine->cad_bytes(g->nnodes);
    char *mem = malloc(up64(sizeof(struct coll_req)) + rbytes);
    if (!mem)
        return err_raise(comm, MPI_ERR_NO_MEM, "MPIX_Cad_start");
    struct coll_req *q = (struct coll_req *)mem;
    memset(q, 0, sizeof *q);
    q->raw = mem;
    q->gmem = g;
    q->gbytes = bytes;
    q->run = (struct mpe_cad *)(mem + up64(sizeof *q));
    q->plan.node_cap = g->nnodes; /* what the run has room for */
    q->comm = comm;
    /* Graphs of the program itself travel on the communicator's collective context like
     * ours; the program chooses the tags. */
    return err_raise(comm, coll_issue_graph(q, g, req), "MPIX_Cad_start");
}

_Static_assert((int)MPIX_CAD_NSTATS == (int)MPE_CS_COUNT,
               "mpix.h and the engine count CAD stats alike");

int MPIX_Cad_stats(uint64_t out[MPIX_CAD_NSTATS])
{
    if (!mpi_ready("MPIX_Cad_stats"))
        return MPI_ERR_OTHER;
    mpi_engine->cad_stats(out);
    return MPI_SUCCESS;
}

int MPIX_Cad_latency(uint64_t *cycles, int max)
{
    if (!mpi_ready("MPIX_Cad_latency"))
        return 0;
    return mpi_engine->cad_latency(cycles, max);
}

uint64_t MPIX_Tsc_hz(void)
{
    return mpi_engine->tsc_hz();
}

int MPIX_Cad_error(char *msg, int len)
{
    if (len > 0) {
        snprintf(msg, (size_t)len, "%s", last_why);
    }
    return MPI_SUCCESS;
}

/* Task context, in a collective call: its block of CAD_ALG_TAGS tags on comm's collective
 * context. Every member starts collectives on comm in the same order, so all agree. */
int coll_tag_block(MPI_Comm comm)
{
    return (int)((comm->coll_seq++ % (0x7fffffffu / CAD_ALG_TAGS)) * CAD_ALG_TAGS);
}
