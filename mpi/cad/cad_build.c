/*
 * cad_build.c: building a graph in the owning rank's memory (the paper's InitCAD,
 * MakeSendNode, MakeRecvNode, MakeCalcNode, ConnectNode) and sealing it (cad_finalize).
 *
 * The build calls store what they are given and judge almost nothing: the validator is the
 * one place that decides whether a graph may run, and it must check every field anyway for
 * graphs that arrive as bytes. Values a field cannot hold are stored as a value the
 * validator rejects (op 0, index CAD_NIL); running out of capacity is recorded in the header
 * so that cad_finalize fails even when the builder never looked at a return value.
 */
#include "cad_internal.h"
#include <string.h>

/* Any context. */
size_t cad_bytes(uint32_t node_cap, uint32_t edge_cap)
{
    if (node_cap < 2 || node_cap > CAD_MAX_NODES || edge_cap > CAD_MAX_EDGES)
        return 0;
    uint64_t n = CAD_HDR_SIZE + (uint64_t)node_cap * CAD_NODE_SIZE +
                 (uint64_t)edge_cap * (sizeof(struct cad_edge) + sizeof(uint16_t));
    return (size_t)((n + 7) & ~(uint64_t)7);
}

/* Task context (builder). */
int cad_build_fail(struct cad_graph *g, int code, int node)
{
    if (!g->build_err) {
        g->build_err = code;
        g->build_node = node;
    }
    return -code;
}

/* Task context. InitCAD. */
struct cad_graph *cad_init(void *mem, size_t bytes, uint32_t node_cap, uint32_t edge_cap,
                           const struct cad_owner *own)
{
    size_t need = cad_bytes(node_cap, edge_cap);
    if (!mem || !own || !need || bytes < need || ((uintptr_t)mem & 7))
        return 0;
    memset(mem, 0, need); /* the bytes may be copied whole: no stale data in them */
    struct cad_graph *g = mem;
    g->magic = CAD_MAGIC;
    g->version = CAD_VERSION;
    g->node_size = CAD_NODE_SIZE;
    g->hdr_size = CAD_HDR_SIZE;
    g->bytes = need;
    g->node_cap = node_cap;
    g->edge_cap = edge_cap;
    g->own = *own;
    g->own.reserved = 0;
    g->build_node = -1;
    g->run = CAD_Q_IDLE;
    g->ready_head = g->ready_tail = CAD_NIL;
    g->defer_head = g->defer_tail = CAD_NIL;
    struct cad_node *n = cad_nodes(g);
    n[CAD_NODE_START].type = CAD_START;
    n[CAD_NODE_END].type = CAD_END;
    n[CAD_NODE_START].link = n[CAD_NODE_END].link = CAD_NIL;
    g->nnodes = 2;
    return g;
}

/* A graph may change only while it does not run; any change voids the earlier checks. */
static int may_change(struct cad_graph *g)
{
    if (!g || g->magic != CAD_MAGIC)
        return -CAD_EINVAL;
    if (g->run == CAD_Q_RUNNING || g->run == CAD_Q_CANCELLING)
        return -CAD_ESTATE;
    g->flags &= ~(CAD_F_FINAL | CAD_F_VALID);
    return 0;
}

static int new_node(struct cad_graph *g, int type)
{
    int rc = may_change(g);
    if (rc)
        return rc;
    if (g->nnodes >= g->node_cap)
        return cad_build_fail(g, CAD_ENOSPC, -1);
    int i = (int)g->nnodes++;
    struct cad_node *n = &cad_nodes(g)[i];
    memset(n, 0, sizeof *n);
    n->type = (uint8_t)type;
    n->link = CAD_NIL;
    return i;
}

static int xfer(struct cad_graph *g, int type, const void *buf, uint64_t bytes, int peer, int tag,
                uint32_t ctx)
{
    int i = new_node(g, type);
    if (i < 0)
        return i;
    struct cad_xfer *x = &cad_nodes(g)[i].u.x;
    x->peer = peer;
    x->tag = tag;
    x->ctx = ctx;
    x->addr = (uint64_t)(uintptr_t)buf;
    x->bytes = bytes;
    return i;
}

/* Task context. MakeSendNode. */
int cad_send(struct cad_graph *g, const void *buf, uint64_t bytes, int peer, int tag, uint32_t ctx)
{
    return xfer(g, CAD_SEND, buf, bytes, peer, tag, ctx);
}

/* Task context. MakeRecvNode. */
int cad_recv(struct cad_graph *g, void *buf, uint64_t bytes, int peer, int tag, uint32_t ctx)
{
    return xfer(g, CAD_RECV, buf, bytes, peer, tag, ctx);
}

static int calc(struct cad_graph *g, int op, int dtype, int user_op, const void *in, void *inout,
                uint64_t count, uint64_t bytes)
{
    int i = new_node(g, CAD_CALC);
    if (i < 0)
        return i;
    struct cad_calcop *c = &cad_nodes(g)[i].u.c;
    c->op = op > 0 && op < 256 ? (uint8_t)op : 0;
    c->dtype = dtype > 0 && dtype < 256 ? (uint8_t)dtype : 0;
    c->user_op = user_op >= 0 && user_op < (int)CAD_NIL ? (uint16_t)user_op : CAD_NIL;
    c->count = count;
    c->in = (uint64_t)(uintptr_t)in;
    c->inout = (uint64_t)(uintptr_t)inout;
    c->bytes = bytes;
    return i;
}

/* Task context. MakeCalcNode with a predefined op. An overflowing count * size is stored
 * as UINT64_MAX bytes, which the validator rejects with the count. */
int cad_calc(struct cad_graph *g, int op, int dtype, const void *in, void *inout, uint64_t count)
{
    uint64_t size = cad_type_size(dtype), bytes = 0;
    if (size && __builtin_mul_overflow(count, size, &bytes))
        bytes = UINT64_MAX;
    return calc(g, op, dtype, 0, in, inout, count, bytes);
}

/* Task context. MakeCalcNode with a user op. */
int cad_calc_user(struct cad_graph *g, int user_op, int dtype, const void *in, void *inout,
                  uint64_t count, uint64_t bytes)
{
    return calc(g, CAD_OP_USER, dtype, user_op, in, inout, count, bytes);
}

/* Task context. ConnectNode. Indices are checked by cad_finalize (which names the edge);
 * here only whether they fit the record. */
int cad_connect(struct cad_graph *g, int a, int b)
{
    int rc = may_change(g);
    if (rc)
        return rc;
    if (g->nedges >= g->edge_cap)
        return cad_build_fail(g, CAD_ENOSPC, a);
    struct cad_edge *e = &cad_edges(g)[g->nedges++];
    e->from = a >= 0 && a < (int)CAD_NIL ? (uint16_t)a : CAD_NIL;
    e->to = b >= 0 && b < (int)CAD_NIL ? (uint16_t)b : CAD_NIL;
    return 0;
}

static int bad_edge(struct cad_graph *g, struct cad_error *err, const struct cad_edge *e)
{
    int from_ok = e->from < g->nnodes;
    int node = from_ok ? e->from : e->to < g->nnodes ? e->to : -1;
    cad_fail(err, CAD_EINDEX, node, node >= 0 ? cad_nodes(g)[node].type : 0);
    cad_msg_str(err, "edge ");
    cad_msg_udec(err, e->from);
    cad_msg_str(err, " -> ");
    cad_msg_udec(err, e->to);
    cad_msg_str(err, " names a node that does not exist (");
    cad_msg_udec(err, g->nnodes);
    cad_msg_str(err, " nodes)");
    return -CAD_EINDEX;
}

/* Task context. Counting sort of the edges by source into succ[]: O(nodes + edges), stable,
 * so each node's successors stay in connect order (the order they will become ready in). */
int cad_seal(struct cad_graph *g, struct cad_error *err)
{
    int rc = may_change(g);
    if (rc) {
        cad_fail(err, -rc, -1, 0);
        cad_msg_str(err, rc == -CAD_ESTATE ? "running: cannot be changed" : "not a graph");
        return rc;
    }
    rc = cad_check_header(g, g->bytes, err);
    if (rc)
        return rc;
    struct cad_node *n = cad_nodes(g);
    struct cad_edge *e = cad_edges(g);
    uint16_t *succ = cad_succ(g);
    if (g->build_err) {
        int node = g->build_node < (int)g->nnodes ? g->build_node : -1;
        cad_fail(err, g->build_err, node, node >= 0 ? n[node].type : 0);
        cad_msg_str(err, g->build_err == CAD_ENOSPC ? "graph capacity exhausted while building"
                                                    : "a build call failed");
        return -g->build_err;
    }
    for (uint32_t i = 0; i < g->nedges; i++)
        if (e[i].from >= g->nnodes || e[i].to >= g->nnodes)
            return bad_edge(g, err, &e[i]);
    for (uint32_t i = 0; i < g->nnodes; i++)
        n[i].npred = n[i].nsucc = n[i].pending = 0;
    for (uint32_t i = 0; i < g->nedges; i++) {
        n[e[i].from].nsucc++;
        n[e[i].to].npred++;
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        n[i].first_succ = at;
        at += n[i].nsucc;
    }
    for (uint32_t i = 0; i < g->nedges; i++) { /* pending: the fill cursor of each list */
        struct cad_node *u = &n[e[i].from];
        succ[u->first_succ + u->pending++] = e[i].to;
    }
    for (uint32_t i = 0; i < g->nnodes; i++)
        n[i].pending = 0;
    g->flags |= CAD_F_FINAL;
    return 0;
}

/* Task context. */
int cad_finalize(struct cad_graph *g, struct cad_error *err)
{
    int rc = cad_seal(g, err);
    return rc ? rc : cad_validate(g, g->bytes, err);
}

/* Task context. */
int cad_free(struct cad_graph *g)
{
    int rc = may_change(g);
    if (rc)
        return rc;
    g->magic = 0; /* a stale handle now fails every call instead of running old bytes */
    return 0;
}
