/*
 * mpe_node.c: the node's engine, its ranks, and intra-node messages (PVAS by address).
 *
 * Intra-node send (docs/architecture.md §4.1): the sender takes a descriptor from its own
 * free list, and under the receiver's engine lock matches it against the receiver's posted
 * queue. Matched: one memcpy from the send buffer into the receive buffer, both complete.
 * Not matched: the descriptor waits in the receiver's unexpected queue pointing at the
 * send buffer; a small message is copied into a buffer first so that the send completes
 * now (eager), a large or synchronous one stays by address until the receive is posted
 * and the receiver copies it once (rendezvous by address). No kernel entry, no interrupt.
 */
#include "mpe_internal.h"
#include "mpe_impi.h"
#include "mpe_transport.h"
#include <string.h>

static void deliver(struct match_rank *mr, struct match_entry *recv, struct match_entry *msg);

/* Task context (job start); see mpe_transport.h. */
struct mpe_node *mpe_node_create(int id, int nodes, int size, int first, int count)
{
    if (nodes < 1 || nodes > MPE_MAX_NODES || id < 0 || id >= nodes || count < 1 || first < 0 ||
        first + count > size)
        return 0;
    struct mpe_node *n = plat_alloc(sizeof *n);
    if (!n)
        return 0;
    n->id = id;
    n->nodes = nodes;
    n->size = size;
    n->first = first;
    n->count = count;
    n->ranks = plat_alloc((size_t)count * sizeof *n->ranks);
    if (!n->ranks)
        return 0;
    for (int i = 0; i < count; i++) {
        struct mpe_rank *r = &n->ranks[i];
        match_rank_init(&r->mr, deliver, r);
        r->world = first + i;
        r->node = n;
    }
    for (int p = 0; p < nodes; p++)
        if (p != id && !mpe_conn_create(n, p))
            return 0;
    n->nclients = 1;
    n->client_first[1] = size;
    return n;
}

/* Task context (job start, before any rank runs); see mpe_transport.h. */
int mpe_node_set_clients(struct mpe_node *n, int nclients, const int32_t *first, int client)
{
    if (nclients < 1 || nclients > MPE_MAX_CLIENTS || client < 0 || client >= nclients ||
        first[0] != 0)
        return -1;
    for (int i = 0; i < nclients; i++)
        if (first[i + 1] < first[i] || (i == client && first[i + 1] - first[i] != n->size))
            return -1;
    n->nclients = nclients;
    n->client = client;
    n->base = first[client];
    for (int i = 0; i <= nclients; i++)
        n->client_first[i] = first[i];
    n->first += n->base;
    for (int i = 0; i < n->count; i++)
        n->ranks[i].world += n->base;
    return 0;
}

/* Task context of a rank; see mpe.h (mpe_ops.clients). */
int mpe_clients(int32_t *first, int max)
{
    const struct mpe_node *n = plat_node();
    for (int i = 0; i < n->nclients && i < max; i++)
        first[i] = n->client_first[i];
    return n->nclients;
}

/* Any context. */
int mpe_node_id(const struct mpe_node *n)
{
    return n->id;
}

/* Any context. */
struct mpe_conn *mpe_node_conn(struct mpe_node *n, int peer)
{
    return peer >= 0 && peer < n->nodes ? n->conn[peer] : 0;
}

/* Task context (job end); see mpe_transport.h. */
void mpe_node_finish(struct mpe_node *n)
{
    n->finalizing = 1;
    for (int p = 0; p < n->nodes; p++)
        if (p != n->id)
            mpe_net_control(n->conn[p], MPE_W_BYE, 0, 0);
}

/* Any context: block placement as job.c does it (the first size%nodes nodes get one more). */
int mpe_node_of(const struct mpe_node *n, int world)
{
    world -= n->base; /* the placement is within our client */
    int base = n->size / n->nodes, extra = n->size % n->nodes;
    int big = extra * (base + 1);
    return world < big ? world / (base + 1) : extra + (world - big) / base;
}

struct mpe_rank *mpe_local(struct mpe_node *n, int world)
{
    if (world < n->first || world >= n->first + n->count)
        return 0;
    return &n->ranks[world - n->first];
}

/* Any context; see mpe_internal.h. Inlined into this file's per-message path (complete). */
static inline __attribute__((always_inline)) void wake(struct mpe_rank *r)
{
    if (lf_nap_wake_needed(&r->nap))
        plat_wake(r->task); /* NULL before the rank's first engine call: it cannot sleep */
}

void mpe_wake(struct mpe_rank *r)
{
    wake(r);
}

/* Task context; see mpe_internal.h. */
void mpe_block(struct mpe_rank *self)
{
    if (!lf_nap_ready(&self->nap))
        return;
    plat_block();
    lf_nap_woke(&self->nap);
}

/* Any context. The request may be freed by its owner as soon as done is set: read the
 * owner first. Inlined into deliver, which completes two requests per local message. */
static inline __attribute__((always_inline)) void complete(struct mpe_req *r, int err)
{
    if (r->cad) { /* a graph's operation: the graph decides what follows */
        mpe_cad_node_done(r, err);
        return;
    }
    struct mpe_rank *owner = r->owner;
    if (err && !r->err)
        r->err = err;
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    if (owner)
        wake(owner);
}

void mpe_complete(struct mpe_req *r, int err)
{
    complete(r, err);
}

void mpe_recv_status(struct mpe_req *r, const struct mpe_msg *m)
{
    r->src = m->m.key.src;
    r->tag = m->m.key.tag;
    r->count = m->len < r->len ? m->len : r->len;
    if (m->len > r->len)
        r->err = MPE_ETRUNCATE;
}

/* Task context (the descriptor's sender): a descriptor from our free list (receivers push
 * to it concurrently; only we pop: lf_pop_owner), or a new one. */
static struct mpe_msg *msg_get(struct mpe_rank *self)
{
    struct lf_link *l = lf_pop_owner(&self->free);
    struct mpe_msg *m = l ? container_of(l, struct mpe_msg, free) : 0;
    if (!m) {
        if (self->nmsgs >= MPE_LOCAL_MSGS * 2)
            return 0;
        m = plat_alloc(sizeof *m);
        if (!m)
            return 0;
        self->nmsgs++;
    }
    memset(m, 0, offsetof(struct mpe_msg, inl));
    m->from = self;
    m->slot = -1;
    return m;
}

/* Task context (whoever consumed it). A CAD send's descriptor (no `from`) belongs to its
 * graph and has no buffered data. */
static void msg_put(struct mpe_msg *m)
{
    struct mpe_rank *owner = m->from;
    if (!owner)
        return;
    if (m->data && m->data != m->inl)
        plat_free(m->data);
    lf_push(&owner->free, &m->free);
}

/* Under the receiver's lock, any context: a posted receive met an arrived message. A
 * local message with buffered data (plat_free in msg_put) only ever matches in task
 * context: it was sent by a task on a point-to-point context, and receives in interrupt
 * context (CAD RECVs) are posted only on collective contexts, where only graphs send,
 * by address. The descriptor is put back before the send completes: a CAD send's lives
 * in its graph's run, which may be freed as soon as the send completes. */
static void deliver(struct match_rank *mr, struct match_entry *recv, struct match_entry *msg)
{
    struct mpe_req *r = container_of(recv, struct mpe_req, m);
    struct mpe_msg *m = container_of(msg, struct mpe_msg, m);
    if (r->remote && !mpe_rmatch_claim(mr, recv, msg))
        return; /* the transport's matcher had taken r: msg went on without it */
    if (m->type == MSG_IMPI) {
        mpe_impi_bind(m, r);
        return;
    }
    if (m->type != MSG_LOCAL) {
        mpe_net_bind(m, r);
        return;
    }
    mpe_recv_status(r, m);
    struct mpe_req *s = m->sreq;
    mpe_copy(r->buf, s ? s->buf : m->data, r->count);
    msg_put(m);
    if (s)
        complete(s, 0);
    complete(r, 0);
}

/* Any context; see mpe_internal.h. */
void mpe_local_send_desc(struct mpe_rank *self, struct mpe_rank *dst, struct mpe_req *r,
                         struct mpe_msg *m)
{
    memset(m, 0, offsetof(struct mpe_msg, inl));
    m->type = MSG_LOCAL;
    m->slot = -1;
    m->m.key = r->m.key;
    m->len = r->len;
    m->sreq = r;
    m->src_world = self->world;
    __atomic_add_fetch(&self->local_sends, 1, __ATOMIC_RELAXED);
    match_rank_arrive(&dst->mr, &m->m);
}

/* A safe point of mpe_cad.c (no engine lock held by anyone on this CPU). */
void mpe_post(struct mpe_rank *self, struct mpe_req *r)
{
    match_rank_post(&self->mr, &r->m);
}

/* Task context of the sender. */
static int local_send(struct mpe_rank *self, struct mpe_rank *dst, struct mpe_req *r)
{
    struct mpe_msg *m = msg_get(self);
    if (!m)
        return -MPE_ENOMEM;
    m->type = MSG_LOCAL;
    m->m.key = r->m.key;
    m->len = r->len;
    m->sreq = r;
    m->src_world = self->world;
    self->local_sends++;
    match_rank_lock(&dst->mr);
    struct match_entry *recv = match_rank_arrive_held(&dst->mr, &m->m);
    if (!recv && !(r->flags & MPE_SYNC) && r->len <= MPE_LOCAL_EAGER &&
        self->nmsgs <= MPE_LOCAL_MSGS) {
        /* Still unexpected: buffer it so the send completes now. The receiver cannot
         * look at m before we unlock. */
        void *d = r->len <= sizeof m->inl ? m->inl : plat_alloc(r->len);
        if (d) {
            mpe_copy(d, r->buf, r->len);
            m->data = d;
            m->sreq = 0;
            self->buffered++;
            mpe_complete(r, 0);
        }
    }
    match_rank_unlock(&dst->mr);
    if (!recv)
        mpe_wake(dst); /* it may be probing or waiting for this */
    return 0;
}

/* Task context: the calling task's rank, inlined into the per-message calls below (two
 * calls a message otherwise; mpi_impl.h's MPI_HOT says why). */
static inline __attribute__((always_inline)) struct mpe_rank *self_rank(void)
{
    struct mpe_node *n = plat_node();
    struct mpe_rank *r = n ? mpe_local(n, plat_rank()) : 0;
    if (!r)
        plat_fatal("MPI engine called by a task that is not a rank of this node's job");
    if (!r->task)
        r->task = plat_task();
    return r;
}

struct mpe_rank *mpe_self(void)
{
    return self_rank();
}

/* The entry points of mpe_ops (mpe_ops.c wraps them), task context of the calling rank. */

/* Wait until every other node has said HELLO (the platform connects them at job start;
 * a node that cannot be reached ends the job from mpe_net_failed()). */
int mpe_init(void)
{
    struct mpe_rank *self = mpe_self();
    struct mpe_node *n = self->node;
    for (int p = 0; p < n->nodes; p++)
        while (p != n->id && !mpe_net_hello_seen(n->conn[p]))
            mpe_block(self);
    return 0;
}

static void req_init(struct mpe_req *r, int kind, void *buf, size_t len, uint32_t ctx, int src,
                     int tag)
{
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->buf = buf;
    r->len = len;
    r->m.key.comm = ctx;
    r->m.key.src = src;
    r->m.key.tag = tag;
    r->src = src;
    r->tag = tag;
}

int mpe_isend(struct mpe_req *r, const void *buf, size_t len, int dst_world, uint32_t ctx, int src,
              int tag, int flags)
{
    struct mpe_rank *self = self_rank();
    struct mpe_node *n = self->node;
    if (dst_world < 0 || dst_world >= mpe_world_size(n))
        return -MPE_ERANK;
    req_init(r, MPE_REQ_SEND, (void *)buf, len, ctx, src, tag);
    r->flags = (uint8_t)flags;
    r->dst_world = dst_world;
    r->owner = self;
    if (!mpe_in_client(n, (uint32_t)dst_world))
        return mpe_impi_isend(n, self, r);
    struct mpe_rank *dst = mpe_local(n, dst_world);
    return dst ? local_send(self, dst, r) : mpe_net_isend(n, self, r);
}

int mpe_irecv(struct mpe_req *r, void *buf, size_t len, uint32_t ctx, int src, int tag)
{
    struct mpe_rank *self = self_rank();
    req_init(r, MPE_REQ_RECV, buf, len, ctx, src, tag);
    r->owner = self;
    const struct mpe_rmatch *rm = self->node->rmatch;
    /* Not matched here: on a context the transport takes, it may match r with a remote
     * message (mpe_rmatch.c). Hazard: r->remote only for such a context, asked before r
     * is posted. On the others the transport feeds its messages to the engine from its
     * own thread, which may meet r the moment it is posted; had r->remote been set, that
     * arrival would ask the transport to let go of an r it never had, read the "no" as
     * "it took a message for r", and strand both (a hang; tests/unit/mpe_rmatch_test.c).
     * Between the post and the store below only local messages can meet r, and on a
     * node of one rank (the seam's rule) they come from this task. */
    int remote = rm && rm->takes(ctx);
    if (!match_rank_post(&self->mr, &r->m) && remote) {
        r->remote = 1;
        rm->post(r);
    }
    return 0;
}

int mpe_iprobe(uint32_t ctx, int src, int tag, struct mpe_status *st)
{
    struct mpe_rank *self = mpe_self();
    struct match_key k = {.comm = ctx, .src = src, .tag = tag};
    /* Only this rank takes messages out of its unexpected queue, so m stays valid. */
    struct match_entry *e = match_rank_probe(&self->mr, &k);
    if (!e)
        return self->node->rmatch ? self->node->rmatch->probe(ctx, src, tag, st) : 0;
    struct mpe_msg *m = container_of(e, struct mpe_msg, m);
    st->src = m->m.key.src;
    st->tag = m->m.key.tag;
    st->len = m->len;
    return 1;
}

int mpe_cancel(struct mpe_req *r)
{
    struct mpe_rank *self = mpe_self();
    if (r->kind != MPE_REQ_RECV || (r->remote && !self->node->rmatch->cancel(r)))
        return 0;
    if (!match_rank_cancel(&self->mr, &r->m))
        return 0;
    r->remote = 0;
    r->cancelled = 1;
    mpe_complete(r, 0);
    return 1;
}

/* Task context. */
void mpe_stats(uint64_t out[MPE_ST_COUNT])
{
    struct mpe_rank *self = mpe_self();
    uint64_t st[MPE_ST_COUNT] = {
        [MPE_ST_LOCAL_SENDS] = self->local_sends,
        [MPE_ST_BUFFERED] = self->buffered,
        [MPE_ST_NET_SENDS] = self->net_sends,
        [MPE_ST_RENDEZVOUS] = self->rendezvous,
        [MPE_ST_DIRECT] = self->mr.direct,
        [MPE_ST_DEFERRED] = self->mr.deferred,
        [MPE_ST_DESCS] = self->nmsgs,
    };
    for (int i = 0; i < MPE_ST_COUNT; i++)
        out[i] = st[i];
}
