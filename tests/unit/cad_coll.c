/*
 * cad_coll.c: collective algorithms written as CAD graphs, one rank's part each, the way
 * the non-blocking collectives will build them (see cad_sim.h).
 */
#include "cad_sim.h"

/* Sticky build errors mean the calls need not be checked one by one: cad_finalize reports
 * the first. The return values are still used as node indices. */
int coll_bcast_binomial(struct cad_graph *g, void *buf, uint64_t bytes, int root, int rank, int n,
                        int tag, uint32_t ctx)
{
    int vr = (rank - root + n) % n, mask = 1, prev = CAD_NODE_START, sends = 0;
    while (mask < n) {
        if (vr & mask) {
            prev = cad_recv(g, buf, bytes, (vr - mask + root) % n, tag, ctx);
            cad_connect(g, CAD_NODE_START, prev);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask >= n)
            continue;
        int s = cad_send(g, buf, bytes, (vr + mask + root) % n, tag, ctx);
        cad_connect(g, prev, s);
        cad_connect(g, s, CAD_NODE_END);
        sends++;
    }
    if (!sends)
        cad_connect(g, prev, CAD_NODE_END);
    return g->build_err ? -g->build_err : 0;
}

/* The paper's figure 1: each chunk is received from the previous rank and forwarded to the
 * next; chunks are independent of each other and get their own tags. */
int coll_bcast_chain(struct cad_graph *g, char *buf, uint64_t bytes, uint64_t chunk, int root,
                     int rank, int n, int tag, uint32_t ctx)
{
    int vr = (rank - root + n) % n, prev_rank = (rank - 1 + n) % n, next_rank = (rank + 1) % n;
    int any = 0;
    for (uint64_t off = 0, c = 0; off < bytes; off += chunk, c++) {
        uint64_t len = bytes - off < chunk ? bytes - off : chunk;
        int prev = CAD_NODE_START;
        if (vr > 0) {
            prev = cad_recv(g, buf + off, len, prev_rank, tag + (int)c, ctx);
            cad_connect(g, CAD_NODE_START, prev);
        }
        if (vr < n - 1) {
            int s = cad_send(g, buf + off, len, next_rank, tag + (int)c, ctx);
            cad_connect(g, prev, s);
            prev = s;
        }
        if (prev != CAD_NODE_START) {
            cad_connect(g, prev, CAD_NODE_END);
            any = 1;
        }
    }
    if (!any)
        cad_connect(g, CAD_NODE_START, CAD_NODE_END);
    return g->build_err ? -g->build_err : 0;
}

static int reduce_node(struct cad_graph *g, const void *in, void *inout, uint64_t count, int op,
                       int dtype, int user_op)
{
    if (user_op >= 0)
        return cad_calc_user(g, user_op, dtype, in, inout, count, count * cad_type_size(dtype));
    return cad_calc(g, op, dtype, in, inout, count);
}

/* Every CALC waits for the SEND of the same round as well as the RECV: the SEND reads buf,
 * which the CALC overwrites (a rendezvous send may read it late). Every RECV into tmp
 * waits for the CALC that read tmp in the round before. */
int coll_allreduce_rd(struct cad_graph *g, void *buf, void *tmp, uint64_t count, int op, int dtype,
                      int user_op, int rank, int n, int tag, uint32_t ctx)
{
    uint64_t bytes = count * cad_type_size(dtype);
    int pof2 = 1, prev = CAD_NODE_START;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2;
    if (rank >= pof2) { /* folded: hand the data in, get the result back */
        int s = cad_send(g, buf, bytes, rank - pof2, tag, ctx);
        int r = cad_recv(g, buf, bytes, rank - pof2, tag + 99, ctx);
        cad_connect(g, CAD_NODE_START, s);
        cad_connect(g, s, r);
        cad_connect(g, r, CAD_NODE_END);
        return g->build_err ? -g->build_err : 0;
    }
    if (rank < rem) {
        int r = cad_recv(g, tmp, bytes, rank + pof2, tag, ctx);
        int c = reduce_node(g, tmp, buf, count, op, dtype, user_op);
        cad_connect(g, prev, r);
        cad_connect(g, r, c);
        prev = c;
    }
    for (int mask = 1, round = 1; mask < pof2; mask <<= 1, round++) {
        int partner = rank ^ mask;
        int s = cad_send(g, buf, bytes, partner, tag + round, ctx);
        int r = cad_recv(g, tmp, bytes, partner, tag + round, ctx);
        int c = reduce_node(g, tmp, buf, count, op, dtype, user_op);
        cad_connect(g, prev, s);
        cad_connect(g, prev, r);
        cad_connect(g, s, c);
        cad_connect(g, r, c);
        prev = c;
    }
    if (rank < rem) {
        int s = cad_send(g, buf, bytes, rank + pof2, tag + 99, ctx);
        cad_connect(g, prev, s);
        prev = s;
    }
    cad_connect(g, prev, CAD_NODE_END);
    return g->build_err ? -g->build_err : 0;
}
