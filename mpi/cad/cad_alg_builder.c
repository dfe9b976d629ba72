/*
 * cad_alg_builder.c: the build context of the collective builders (cad_alg_int.h): the same
 * calls either count (planning) or make nodes and edges (building), so that the plan's
 * capacities and scratch size are exactly what the build uses.
 *
 * The first failure sticks (b->err) and turns every later call into a no-op returning -1:
 * a builder need not check each call, and its loops over ranks stop early (cad_builder_ok) once
 * a graph has grown past what a graph can hold, so planning a linear algorithm for an
 * absurd communicator size costs no more than the limit.
 */
#include "cad_alg_int.h"

/* Any context. The first error wins; returns -1 for the node calls to pass on. */
int cad_builder_fail(struct cad_builder *b, int code, const char *why)
{
    if (!b->err) {
        b->err = code;
        b->why = why;
    }
    return -1;
}

static uint64_t addr(const struct cad_builder *b, struct cad_loc l)
{
    return l.buf > CAD_B_NONE && l.buf <= CAD_B_TMP ? b->base[l.buf] + l.off : 0;
}

/* The next node's index: what cad_init's graph will hand out for it. */
static int next_index(struct cad_builder *b)
{
    if (b->err)
        return -1;
    if (b->nodes + 2 >= CAD_MAX_NODES)
        return cad_builder_fail(b, CAD_ENOSPC,
                                "this rank's graph would exceed CAD_MAX_NODES nodes");
    return (int)(2 + b->nodes++);
}

/* Build mode: the graph must have handed out the index the count predicted. */
static int check_index(struct cad_builder *b, int want, int got)
{
    if (got != want)
        return cad_builder_fail(b, got < 0 ? -got : CAD_EINVAL, "graph not as planned");
    return want;
}

/* Task context (builder), any context while planning. */
int cad_builder_wire(struct cad_builder *b, int type, struct cad_loc at, uint64_t len, int peer,
                     uint32_t ctx, int32_t tag)
{
    int i = next_index(b);
    if (i < 0 || !b->g)
        return i;
    void *p = (void *)(uintptr_t)addr(b, at);
    int got = type == CAD_SEND ? cad_send(b->g, p, len, peer, tag, ctx)
                               : cad_recv(b->g, p, len, peer, tag, ctx);
    return check_index(b, i, got);
}

static int xfer(struct cad_builder *b, int type, struct cad_loc at, uint64_t len, int peer, long k)
{
    if (k < 0 || k >= CAD_ALG_TAGS)
        return cad_builder_fail(b, CAD_EINVAL, "algorithm needs more than CAD_ALG_TAGS tags here");
    /* no overflow: the plan checked tag + CAD_ALG_TAGS */
    return cad_builder_wire(b, type, at, len, peer, b->c->ctx, b->c->tag + (int32_t)k);
}

/* Task context (builder), any context while planning: the node calls. */
int cad_builder_send(struct cad_builder *b, struct cad_loc at, uint64_t len, int peer, long k)
{
    return xfer(b, CAD_SEND, at, len, peer, k);
}

int cad_builder_recv(struct cad_builder *b, struct cad_loc at, uint64_t len, int peer, long k)
{
    return xfer(b, CAD_RECV, at, len, peer, k);
}

int cad_builder_calc(struct cad_builder *b, struct cad_loc in, struct cad_loc inout, uint64_t len)
{
    const struct cad_coll *c = b->c;
    uint64_t count = b->esize ? len / b->esize : 0;
    int i = next_index(b);
    if (i < 0 || !b->g)
        return i;
    const void *pi = (const void *)(uintptr_t)addr(b, in);
    void *po = (void *)(uintptr_t)addr(b, inout);
    int got = c->op == CAD_OP_USER ? cad_calc_user(b->g, c->user_op, c->dtype, pi, po, count, len)
                                   : cad_calc(b->g, c->op, c->dtype, pi, po, count);
    return check_index(b, i, got);
}

void cad_builder_dep(struct cad_builder *b, int from, int to)
{
    if (b->err || from < 0 || to < 0)
        return;
    if (b->edges >= CAD_MAX_EDGES) {
        cad_builder_fail(b, CAD_ENOSPC, "this rank's graph would exceed CAD_MAX_EDGES edges");
        return;
    }
    b->edges++;
    if (to == CAD_NODE_END)
        b->end_in++;
    if (b->g) {
        int rc = cad_connect(b->g, from, to);
        if (rc)
            cad_builder_fail(b, -rc, "graph not as planned");
    }
}

void cad_builder_end(struct cad_builder *b, int node)
{
    if (node != CAD_NODE_START)
        cad_builder_dep(b, node, CAD_NODE_END);
}

/* A rank with nothing to do (size 1, an empty message) still needs START -> END; a rank
 * with work never gets that edge, which would let END wait on nothing but START. */
void cad_builder_finish(struct cad_builder *b)
{
    if (!b->end_in)
        cad_builder_dep(b, CAD_NODE_START, CAD_NODE_END);
}

struct cad_loc cad_builder_tmp(struct cad_builder *b, uint64_t len)
{
    struct cad_loc l = cad_loc(CAD_B_TMP, b->tmp);
    uint64_t a = (len + 7) & ~(uint64_t)7;
    if (a < len || b->tmp + a < b->tmp)
        cad_builder_fail(b, CAD_EINVAL, "scratch size overflows");
    else
        b->tmp += a;
    return l;
}

/* Copies are only recorded while planning: the build assumes the library made them. */
void cad_builder_copy(struct cad_builder *b, struct cad_loc dst, struct cad_loc src, uint64_t len)
{
    if (b->err || !len || (dst.buf == src.buf && dst.off == src.off) || !b->p)
        return;
    struct cad_plan *p = b->p;
    if (p->ncopies >= CAD_ALG_MAXCOPY) {
        cad_builder_fail(b, CAD_EINVAL, "more local copies than CAD_ALG_MAXCOPY");
        return;
    }
    struct cad_alg_copy *cp = &p->copy[p->ncopies++];
    *cp = (struct cad_alg_copy){.dst = (uint8_t)dst.buf,
                                .src = (uint8_t)src.buf,
                                .dst_off = dst.off,
                                .src_off = src.off,
                                .bytes = len};
}

/* --- geometry ------------------------------------------------------------------------ */

uint64_t cad_alg_cnt(const struct cad_coll *c, int i)
{
    return c->counts ? c->counts[i] : c->bytes;
}

uint64_t cad_alg_dsp(const struct cad_coll *c, int i)
{
    return c->counts ? c->displs[i] : (uint64_t)i * c->bytes;
}

uint64_t cad_alg_rcnt(const struct cad_coll *c, int i)
{
    return c->counts ? c->rcounts[i] : c->bytes;
}

uint64_t cad_alg_rdsp(const struct cad_coll *c, int i)
{
    return c->counts ? c->rdispls[i] : (uint64_t)i * c->bytes;
}

uint64_t cad_alg_rs_cnt(const struct cad_coll *c, int i)
{
    return c->counts ? c->counts[i] : c->bytes / (uint64_t)c->size;
}

struct cad_loc cad_builder_input(const struct cad_builder *b)
{
    return cad_loc(b->c->in_place ? CAD_B_RBUF : CAD_B_SBUF, 0);
}

uint64_t cad_alg_chain_chunk(const struct cad_coll *c)
{
    uint64_t ch = c->chunk ? c->chunk : CAD_ALG_CHUNK;
    if (c->bytes && (c->bytes - 1) / ch >= CAD_ALG_TAGS)
        ch = (c->bytes - 1) / CAD_ALG_TAGS + 1;
    return ch;
}
