/*
 * cad_alg_gather.c: GATHER and SCATTER (and their v-variants) as CAD graphs.
 *
 * LINEAR: the root posts one receive (gather) or send (scatter) per rank, all at once;
 * the others post one. Any block sizes; the root handles size - 1 messages.
 *
 * BINOMIAL (regular blocks only): the tree of the binomial bcast (ranks numbered from the
 * root, v = rank - root mod size), each subtree covering the consecutive numbers
 * v .. v + lowbit(v) - 1. A gather collects a subtree's blocks, in that order, in scratch
 * at the subtree's root and sends them up as one message; a scatter sends them down the
 * same way. log2(size) steps for the root instead of size - 1, at the price of forwarding
 * blocks several times: the choice for small blocks.
 *
 * At the root, number v is rank (v + root) mod size, so a child's range of numbers maps
 * onto at most two runs of the root's buffer: the one up to rank size - 1 and the one
 * from rank 0 (the wrap at number w = size - root). Such a range travels as two messages
 * (tags 0 and 1, or 1 and 2), so that both ends put it straight where it belongs and
 * nobody copies after the graph. For the same reason a scatter sends each rank its own
 * block as a message of its own (tag 0) into rbuf, and the rest of its subtree (tags 1, 2)
 * into scratch it forwards from.
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
void cad_alg_gather_linear(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, root = c->root;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    if (r != root) {
        int s = cad_builder_send(b, sbuf, c->bytes, root, 0);
        cad_builder_dep(b, CAD_NODE_START, s);
        cad_builder_end(b, s);
        return;
    }
    if (!c->in_place)
        cad_builder_copy(b, cad_loc_add(rbuf, cad_alg_dsp(c, root)), sbuf, cad_alg_cnt(c, root));
    for (int k = 1; k < n && cad_builder_ok(b); k++) {
        int i = cad_alg_mod((long long)root + k, n);
        int v = cad_builder_recv(b, cad_loc_add(rbuf, cad_alg_dsp(c, i)), cad_alg_cnt(c, i), i, 0);
        cad_builder_dep(b, CAD_NODE_START, v);
        cad_builder_end(b, v);
    }
}

/* Task context (builder), any context while planning. */
void cad_alg_scatter_linear(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, root = c->root;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    if (r != root) {
        int v = cad_builder_recv(b, rbuf, c->bytes, root, 0);
        cad_builder_dep(b, CAD_NODE_START, v);
        cad_builder_end(b, v);
        return;
    }
    if (!c->in_place)
        cad_builder_copy(b, rbuf, cad_loc_add(sbuf, cad_alg_dsp(c, root)), cad_alg_cnt(c, root));
    for (int k = 1; k < n && cad_builder_ok(b); k++) {
        int i = cad_alg_mod((long long)root + k, n);
        int s = cad_builder_send(b, cad_loc_add(sbuf, cad_alg_dsp(c, i)), cad_alg_cnt(c, i), i, 0);
        cad_builder_dep(b, CAD_NODE_START, s);
        cad_builder_end(b, s);
    }
}

/* The tree around this rank: its number v, lowest set bit (the root: a power of two
 * >= size), subtree size, the wrap number w and the real rank of a number. */
struct tree {
    long long v, lim, size, w;
    int n, root;
};

static struct tree tree_of(const struct cad_coll *c)
{
    struct tree t = {.n = c->size, .root = c->root};
    t.v = cad_alg_mod((long long)c->rank - c->root, c->size);
    t.lim = cad_alg_lowbit(t.v, c->size);
    t.size = t.v ? (t.lim < t.n - t.v ? t.lim : t.n - t.v) : t.n;
    t.w = t.n - t.root;
    return t;
}

static int real(const struct tree *t, long long v)
{
    return cad_alg_mod(v + t->root, t->n);
}

/* Numbers [a, e) as a message, or two when the range crosses the wrap and one end of it is
 * the root (at whose buffer the wrap is). Returns the number where the second piece
 * starts, or e when there is one piece. */
static long long split(const struct tree *t, long long a, long long e, int at_root)
{
    return at_root && a < t->w && e > t->w ? t->w : e;
}

/* Task context (builder), any context while planning. */
void cad_alg_gather_binomial(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    struct tree t = tree_of(c);
    uint64_t blk = c->bytes;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    if (!t.v) { /* root: the children's ranges straight into rbuf */
        if (!c->in_place)
            cad_builder_copy(b, cad_loc_add(rbuf, (uint64_t)c->rank * blk), sbuf, blk);
        for (long long m = 1; m < t.n && cad_builder_ok(b); m <<= 1) {
            long long e = m + (m < t.n - m ? m : t.n - m), mid = split(&t, m, e, 1);
            int v = cad_builder_recv(b, cad_loc_add(rbuf, (uint64_t)real(&t, m) * blk),
                                     (uint64_t)(mid - m) * blk, real(&t, m), 0);
            cad_builder_dep(b, CAD_NODE_START, v);
            cad_builder_end(b, v);
            if (mid < e) { /* numbers from w on are ranks from 0 on */
                v = cad_builder_recv(b, rbuf, (uint64_t)(e - mid) * blk, real(&t, m), 1);
                cad_builder_dep(b, CAD_NODE_START, v);
                cad_builder_end(b, v);
            }
        }
        return;
    }
    struct cad_loc src = sbuf;
    int first = -1, nrecv = 0;
    if (t.size > 1) { /* inner: own block, then each child's range at its place */
        src = cad_builder_tmp(b, (uint64_t)t.size * blk);
        cad_builder_copy(b, src, sbuf, blk);
        for (long long m = 1; m < t.lim && t.v + m < t.n && cad_builder_ok(b); m <<= 1) {
            long long cs = m < t.n - t.v - m ? m : t.n - t.v - m;
            int v = cad_builder_recv(b, cad_loc_add(src, (uint64_t)m * blk), (uint64_t)cs * blk,
                                     real(&t, t.v + m), 0);
            cad_builder_dep(b, CAD_NODE_START, v);
            if (first < 0)
                first = v;
            nrecv++;
        }
    }
    /* Up to the parent, after every receive (made one after another: first + j). */
    long long e = t.v + t.size, mid = split(&t, t.v, e, t.v == t.lim);
    int parent = real(&t, t.v - t.lim);
    for (int piece = 0; piece < 2; piece++) {
        long long a = piece ? mid : t.v, z = piece ? e : mid;
        if (piece && mid == e)
            break;
        int s = cad_builder_send(b, cad_loc_add(src, (uint64_t)(a - t.v) * blk),
                                 (uint64_t)(z - a) * blk, parent, piece);
        if (!nrecv)
            cad_builder_dep(b, CAD_NODE_START, s);
        for (int j = 0; j < nrecv; j++)
            cad_builder_dep(b, first + j, s);
        cad_builder_end(b, s);
    }
}

/* Task context (builder), any context while planning. */
void cad_alg_scatter_binomial(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    struct tree t = tree_of(c);
    uint64_t blk = c->bytes;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0), src = sbuf;
    int first = -1, nrecv = 0;
    if (!t.v) {
        if (!c->in_place)
            cad_builder_copy(b, rbuf, cad_loc_add(sbuf, (uint64_t)c->rank * blk), blk);
    } else { /* own block into rbuf; the rest of the subtree into scratch */
        int parent = real(&t, t.v - t.lim);
        int v = cad_builder_recv(b, rbuf, blk, parent, 0);
        cad_builder_dep(b, CAD_NODE_START, v);
        cad_builder_end(b, v);
        if (t.size > 1) {
            long long a = t.v + 1, e = t.v + t.size, mid = split(&t, a, e, t.v == t.lim);
            src = cad_builder_tmp(b, (uint64_t)(t.size - 1) * blk);
            first = cad_builder_recv(b, src, (uint64_t)(mid - a) * blk, parent, 1);
            cad_builder_dep(b, CAD_NODE_START, first);
            nrecv = 1;
            if (mid < e) {
                v = cad_builder_recv(b, cad_loc_add(src, (uint64_t)(mid - a) * blk),
                                     (uint64_t)(e - mid) * blk, parent, 2);
                cad_builder_dep(b, CAD_NODE_START, v);
                nrecv = 2;
            }
        }
    }
    /* Children, largest subtree first. Where number x's block is: the root's sbuf at
     * rank x's place; elsewhere scratch at x - v - 1. */
    for (long long m = t.lim >> 1; m > 0 && cad_builder_ok(b); m >>= 1) {
        if (t.v + m >= t.n)
            continue;
        long long x = t.v + m, cs = m < t.n - x ? m : t.n - x;
        long long a = x + 1, e = x + cs, mid = split(&t, a, e, !t.v);
        int peer = real(&t, x);
        long long lo[3] = {x, a, mid}, hi[3] = {a, mid, e}; /* own block, rest in 1-2 runs */
        for (int piece = 0; piece < 3; piece++) {
            long long from = lo[piece], to = hi[piece];
            if (piece && from == to)
                continue; /* no rest (a leaf), or no second run */
            struct cad_loc at = t.v ? cad_loc_add(src, (uint64_t)(from - t.v - 1) * blk)
                                    : cad_loc_add(sbuf, (uint64_t)real(&t, from) * blk);
            int s = cad_builder_send(b, at, (uint64_t)(to - from) * blk, peer, piece);
            if (!nrecv)
                cad_builder_dep(b, CAD_NODE_START, s);
            for (int j = 0; j < nrecv; j++)
                cad_builder_dep(b, first + j, s);
            cad_builder_end(b, s);
        }
    }
}
