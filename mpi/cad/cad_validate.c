/*
 * cad_validate.c: the check every graph passes before it runs (docs/architecture.md
 * §3.9). It trusts nothing in the bytes, because a kernel module will run it on a copy handed
 * over by user space: the header and layout first, then each node's contents, then the
 * successor lists, then the order (acyclic, every node reachable from START and reaching
 * END). The first problem found is reported, naming the node.
 *
 * No recursion and no memory beyond the graph: the traversals keep their stacks, counters
 * and marks in the nodes' scratch fields (state, link, pending, mark), which the run state
 * reuses and cad_issue resets anyway. Cost O(nodes + edges).
 */
#include "cad_internal.h"

#define FROM_START 1 /* state bits while validating */
#define TO_END     2

static int fail_msg(struct cad_error *err, int code, int node, int type, const char *msg)
{
    cad_fail(err, code, node, type);
    cad_msg_str(err, msg);
    return -code;
}

/* Any context. The header and the layout; nothing past the header is read before this
 * passes. */
int cad_check_header(const struct cad_graph *g, size_t bytes, struct cad_error *err)
{
    if (bytes < CAD_HDR_SIZE)
        return fail_msg(err, CAD_EFORMAT, -1, 0, "block smaller than the header");
    if (g->magic != CAD_MAGIC || g->version != CAD_VERSION || g->node_size != CAD_NODE_SIZE ||
        g->hdr_size != CAD_HDR_SIZE)
        return fail_msg(err, CAD_EFORMAT, -1, 0, "not a CAD graph of this version");
    size_t need = cad_bytes(g->node_cap, g->edge_cap);
    if (!need || need > bytes || need > g->bytes) {
        cad_fail(err, CAD_EFORMAT, -1, 0);
        cad_msg_str(err, "capacities need ");
        cad_msg_udec(err, need);
        cad_msg_str(err, " bytes, the block has ");
        cad_msg_udec(err, bytes < g->bytes ? bytes : g->bytes);
        return -CAD_EFORMAT;
    }
    if (g->nnodes < 2 || g->nnodes > g->node_cap || g->nedges > g->edge_cap)
        return fail_msg(err, CAD_EFORMAT, -1, 0, "node or edge count beyond the capacity");
    const struct cad_owner *o = &g->own;
    if (o->comm_size < 1 || o->rank < 0 || o->rank >= o->comm_size) {
        cad_fail(err, CAD_EFORMAT, -1, 0);
        cad_msg_str(err, "owner rank ");
        cad_msg_dec(err, o->rank);
        cad_msg_str(err, " not in a communicator of size ");
        cad_msg_dec(err, o->comm_size);
        return -CAD_EFORMAT;
    }
    if (!o->part_size || o->part_size > UINT64_MAX - o->part_base)
        return fail_msg(err, CAD_EFORMAT, -1, 0, "partition empty or wrapping around");
    if (o->nuser >= CAD_NIL) /* CAD_NIL stands for "no valid index" in user_op */
        return fail_msg(err, CAD_EFORMAT, -1, 0, "user-op table too large");
    return 0;
}

/* [addr, addr + len) inside the owner's partition, without computing addr + len (which
 * may wrap around: that is one of the cases to reject). */
static int inside(const struct cad_owner *o, uint64_t addr, uint64_t len)
{
    return len == 0 || (addr >= o->part_base && len <= o->part_size &&
                        addr - o->part_base <= o->part_size - len);
}

static int bad_buf(const struct cad_graph *g, struct cad_error *err, int i, int type,
                   const char *what, uint64_t addr, uint64_t len)
{
    cad_fail(err, CAD_EBUF, i, type);
    cad_msg_str(err, what);
    cad_msg_hex(err, addr);
    cad_msg_str(err, "+");
    cad_msg_udec(err, len);
    cad_msg_str(err, " outside partition ");
    cad_msg_hex(err, g->own.part_base);
    cad_msg_str(err, "-");
    cad_msg_hex(err, g->own.part_base + g->own.part_size);
    return -CAD_EBUF;
}

static int check_xfer(const struct cad_graph *g, const struct cad_node *n, int i,
                      struct cad_error *err)
{
    const struct cad_xfer *x = &n->u.x;
    if (x->peer < 0 || x->peer >= g->own.comm_size) {
        cad_fail(err, CAD_EPEER, i, n->type);
        cad_msg_str(err, "peer ");
        cad_msg_dec(err, x->peer);
        cad_msg_str(err, " not in the communicator of size ");
        cad_msg_dec(err, g->own.comm_size);
        return -CAD_EPEER;
    }
    if (x->tag < 0) {
        cad_fail(err, CAD_ETAG, i, n->type);
        cad_msg_str(err, "negative tag ");
        cad_msg_dec(err, x->tag);
        return -CAD_ETAG;
    }
    if (!inside(&g->own, x->addr, x->bytes))
        return bad_buf(g, err, i, n->type, "buffer ", x->addr, x->bytes);
    return 0;
}

static int check_calc(const struct cad_graph *g, const struct cad_node *n, int i,
                      struct cad_error *err)
{
    const struct cad_calcop *c = &n->u.c;
    if (c->op <= 0 || c->op >= CAD_OP_COUNT) {
        cad_fail(err, CAD_EOP, i, n->type);
        cad_msg_str(err, "unknown op ");
        cad_msg_dec(err, c->op);
        return -CAD_EOP;
    }
    if (c->dtype <= 0 || c->dtype >= CAD_T_COUNT) {
        cad_fail(err, CAD_ETYPE, i, n->type);
        cad_msg_str(err, "unknown type ");
        cad_msg_dec(err, c->dtype);
        return -CAD_ETYPE;
    }
    if (c->op == CAD_OP_USER && c->user_op >= g->own.nuser) {
        cad_fail(err, CAD_EOP, i, n->type);
        cad_msg_str(err, "user op ");
        cad_msg_udec(err, c->user_op);
        cad_msg_str(err, " not in the table of ");
        cad_msg_udec(err, g->own.nuser);
        return -CAD_EOP;
    }
    if (!cad_op_defined(c->op, c->dtype)) {
        cad_fail(err, CAD_EOPTYPE, i, n->type);
        cad_msg_str(err, cad_op_name(c->op));
        cad_msg_str(err, " is not defined on ");
        cad_msg_str(err, cad_dtype_name(c->dtype));
        return -CAD_EOPTYPE;
    }
    uint64_t size = cad_type_size(c->dtype), bytes;
    if (size) { /* CAD_T_DERIVED: the user-op table knows the size; c->bytes is the span */
        if (__builtin_mul_overflow(c->count, size, &bytes)) {
            cad_fail(err, CAD_ECOUNT, i, n->type);
            cad_msg_str(err, "count ");
            cad_msg_udec(err, c->count);
            cad_msg_str(err, " of ");
            cad_msg_str(err, cad_dtype_name(c->dtype));
            cad_msg_str(err, " overflows");
            return -CAD_ECOUNT;
        }
        if (bytes != c->bytes) {
            cad_fail(err, CAD_ECOUNT, i, n->type);
            cad_msg_str(err, "span ");
            cad_msg_udec(err, c->bytes);
            cad_msg_str(err, " bytes is not count ");
            cad_msg_udec(err, c->count);
            cad_msg_str(err, " * ");
            cad_msg_udec(err, size);
            return -CAD_ECOUNT;
        }
    }
    if (!inside(&g->own, c->in, c->bytes))
        return bad_buf(g, err, i, n->type, "in ", c->in, c->bytes);
    if (!inside(&g->own, c->inout, c->bytes))
        return bad_buf(g, err, i, n->type, "inout ", c->inout, c->bytes);
    return 0;
}

/* Each node's type (START at 0, END at 1, nowhere else) and contents. */
static int check_nodes(struct cad_graph *g, struct cad_error *err)
{
    struct cad_node *n = cad_nodes(g);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        int want = i == CAD_NODE_START ? CAD_START : i == CAD_NODE_END ? CAD_END : 0;
        int t = n[i].type, rc = 0;
        if (want && t != want)
            return fail_msg(err, CAD_ENODE, (int)i, t,
                            want == CAD_START ? "must be START" : "must be END");
        if (t == CAD_SEND || t == CAD_RECV)
            rc = check_xfer(g, &n[i], (int)i, err);
        else if (t == CAD_CALC)
            rc = check_calc(g, &n[i], (int)i, err);
        else if (!want)
            return fail_msg(err, CAD_ENODE, (int)i, t,
                            t == CAD_START || t == CAD_END ? "a second START or END"
                                                           : "unknown node type");
        if (rc)
            return rc;
    }
    return 0;
}

static int bad_succ(struct cad_error *err, int code, int i, int type, const char *what, uint32_t v)
{
    cad_fail(err, code, i, type);
    cad_msg_str(err, what);
    cad_msg_udec(err, v);
    return -code;
}

/*
 * The successor lists as the executor will follow them: inside the edge array, naming
 * existing nodes, no edge to itself, into START, out of END or twice to the same node,
 * and the predecessor counts equal to the edges that lead in. Leaves the in-degrees in
 * `pending` for check_order.
 */
static int check_lists(struct cad_graph *g, struct cad_error *err)
{
    struct cad_node *n = cad_nodes(g);
    const uint16_t *succ = cad_succ(g);
    for (uint32_t i = 0; i < g->nnodes; i++)
        n[i].mark = n[i].pending = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        struct cad_node *u = &n[i];
        int t = u->type;
        if (u->first_succ > g->nedges || u->nsucc > g->nedges - u->first_succ) {
            cad_fail(err, CAD_EINDEX, (int)i, t);
            cad_msg_str(err, "successor list ");
            cad_msg_udec(err, u->first_succ);
            cad_msg_str(err, "+");
            cad_msg_udec(err, u->nsucc);
            cad_msg_str(err, " outside the ");
            cad_msg_udec(err, g->nedges);
            cad_msg_str(err, " edges");
            return -CAD_EINDEX;
        }
        if (i == CAD_NODE_END && u->nsucc)
            return bad_succ(err, CAD_EEDGE, (int)i, t, "edge out of END to node ",
                            succ[u->first_succ]);
        for (uint32_t k = 0; k < u->nsucc; k++) {
            uint32_t v = succ[u->first_succ + k];
            if (v >= g->nnodes)
                return bad_succ(err, CAD_EINDEX, (int)i, t,
                                "edge to a node that does not exist: ", v);
            if (v == i)
                return fail_msg(err, CAD_EEDGE, (int)i, t, "edge to itself");
            if (v == CAD_NODE_START)
                return fail_msg(err, CAD_EEDGE, (int)i, t, "edge into START");
            if (n[v].mark == i + 1)
                return bad_succ(err, CAD_EEDGE, (int)i, t, "duplicate edge to node ", v);
            n[v].mark = i + 1; /* "has an edge from i": marks of other sources differ */
            n[v].pending++;
        }
    }
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (n[i].pending != n[i].npred) {
            cad_fail(err, CAD_EEDGE, (int)i, n[i].type);
            cad_msg_str(err, "predecessor count ");
            cad_msg_udec(err, n[i].npred);
            cad_msg_str(err, " but ");
            cad_msg_udec(err, n[i].pending);
            cad_msg_str(err, " edges lead in");
            return -CAD_EEDGE;
        }
    return 0;
}

/* Kahn found no order for the nodes left with pending > 0. Each of them has a predecessor
 * among them (the one that never completed), so following "some predecessor left" from
 * any of them, as many steps as there are such nodes, must end on a cycle. */
static int report_cycle(struct cad_graph *g, struct cad_error *err)
{
    struct cad_node *n = cad_nodes(g);
    const uint16_t *succ = cad_succ(g);
    uint32_t left = 0, first = CAD_NIL;
    for (uint32_t u = 0; u < g->nnodes; u++) {
        if (!n[u].pending)
            continue;
        left++;
        if (first == CAD_NIL)
            first = u;
        for (uint32_t k = 0; k < n[u].nsucc; k++) {
            uint32_t v = succ[n[u].first_succ + k];
            if (n[v].pending)
                n[v].link = (uint16_t)u;
        }
    }
    uint32_t x = first;
    for (uint32_t s = 0; s < left; s++)
        x = n[x].link;
    uint32_t low = x; /* name the lowest index on the cycle: stable messages */
    for (uint32_t y = n[x].link; y != x; y = n[y].link)
        if (y < low)
            low = y;
    cad_fail(err, CAD_ECYCLE, (int)low, n[low].type);
    cad_msg_str(err, "on a dependency cycle, after node ");
    cad_msg_udec(err, n[low].link);
    return -CAD_ECYCLE;
}

/*
 * Kahn's algorithm with a stack threaded through `link`, counting down the in-degrees in
 * `pending`. Reachability from START is carried forward as nodes are taken (all of a
 * node's predecessors are taken before it), and each taken node records the one taken
 * before it in `mark`, so that walking back from the last gives a reverse topological
 * order, in which "reaches END" is decided from the successors.
 */
static int check_order(struct cad_graph *g, struct cad_error *err)
{
    struct cad_node *n = cad_nodes(g);
    const uint16_t *succ = cad_succ(g);
    uint32_t top = CAD_NIL, last = CAD_NIL, taken = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        n[i].state = i == CAD_NODE_START ? FROM_START : 0;
        if (!n[i].pending) {
            n[i].link = (uint16_t)top;
            top = i;
        }
    }
    while (top != CAD_NIL) {
        uint32_t u = top;
        top = n[u].link;
        n[u].mark = last;
        last = u;
        taken++;
        for (uint32_t k = 0; k < n[u].nsucc; k++) {
            uint32_t v = succ[n[u].first_succ + k];
            n[v].state |= n[u].state & FROM_START;
            if (--n[v].pending == 0) {
                n[v].link = (uint16_t)top;
                top = v;
            }
        }
    }
    if (taken < g->nnodes)
        return report_cycle(g, err);
    for (uint32_t u = last; u != CAD_NIL; u = n[u].mark) {
        if (u == CAD_NODE_END)
            n[u].state |= TO_END;
        for (uint32_t k = 0; k < n[u].nsucc && !(n[u].state & TO_END); k++)
            n[u].state |= n[succ[n[u].first_succ + k]].state & TO_END;
    }
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (!(n[i].state & FROM_START))
            return fail_msg(err, CAD_EUNREACH, (int)i, n[i].type, "not reachable from START");
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (!(n[i].state & TO_END))
            return fail_msg(err, CAD_ENOEND, (int)i, n[i].type, "does not reach END");
    return 0;
}

/* Any context (see cad.h). */
int cad_validate(struct cad_graph *g, size_t bytes, struct cad_error *err)
{
    if (!g)
        return fail_msg(err, CAD_EINVAL, -1, 0, "no graph");
    if (bytes >= CAD_HDR_SIZE) {
        if (g->run == CAD_Q_RUNNING || g->run == CAD_Q_CANCELLING)
            return fail_msg(err, CAD_ESTATE, -1, 0, "running: its scratch fields are in use");
        g->flags &= ~CAD_F_VALID; /* whatever fails below, this graph must not be issued */
    }
    int rc = cad_check_header(g, bytes, err);
    if (rc)
        return rc;
    if (!(g->flags & CAD_F_FINAL))
        return fail_msg(err, CAD_ESTATE, -1, 0, "not finalized (no successor lists)");
    rc = check_nodes(g, err);
    if (!rc)
        rc = check_lists(g, err);
    if (!rc)
        rc = check_order(g, err);
    struct cad_node *n = cad_nodes(g);
    for (uint32_t i = 0; i < g->nnodes; i++) { /* leave the scratch as cad_init made it */
        n[i].state = CAD_NS_IDLE;
        n[i].link = CAD_NIL;
        n[i].pending = n[i].mark = 0;
    }
    if (rc)
        return rc;
    g->flags |= CAD_F_VALID;
    if (err) {
        err->node = -1;
        err->code = CAD_OK;
        err->msg[0] = 0;
    }
    return 0;
}
