/*
 * cad_alg_reduce.c: reductions along a binomial tree, as CAD graphs: REDUCE, and the
 * COMPOSITE allreduce (tree + bcast) and reduce-scatter (tree + scatter) built on it.
 *
 * The tree numbers ranks downwards from its root t: v = t - rank (mod size). The subtree
 * of v covers v .. v + lowbit(v) - 1, i.e. the ranks just below v's own, and v's children
 * v + 1, v + 2, v + 4, ... cover ever larger ranges further down. With t = size - 1 no
 * range wraps, so combining the children nearest-first as acc = child op acc
 * (CALC in = child's partial, inout = acc) keeps every partial a product over a
 * contiguous range of ranks in rank order: right for non-commutative ops. For commutative
 * ops the root can be any rank, which saves REDUCE the final hop to its root.
 *
 * Memory: a rank with children accumulates in `acc` (rbuf at the tree's root when that is
 * where the result belongs, scratch elsewhere; the library copies the input in first) and
 * receives children's partials into two scratch slots in turn: the receive from child j
 * waits for the CALC that read the slot for child j - 2. Children's partials come in
 * roughly nearest-first (their subtrees double in size), so two slots post receives early
 * enough without a slot per child (log2(size) vectors of scratch).
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
int cad_alg_reduce_tree(struct cad_builder *b, int troot, struct cad_loc in,
                        const struct cad_seg *acc, int nacc, int k, int after)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    uint64_t len = c->bytes;
    long long v = cad_alg_mod((long long)troot - r, n), lim = cad_alg_lowbit(v, n);
    int nch = 0;
    for (long long m = 1; m < lim && v + m < n; m <<= 1)
        nch++;
    int parent = v ? cad_alg_mod((long long)troot - (v - lim), n) : -1;
    if (v && !nch) { /* a leaf: its input is its partial */
        int s = cad_builder_send(b, in, len, parent, k);
        cad_builder_dep(b, after, s);
        return s;
    }
    struct cad_seg own;
    if (v) { /* inner node: accumulate in scratch */
        own = (struct cad_seg){cad_builder_tmp(b, len), len};
        acc = &own;
        nacc = 1;
    }
    uint64_t o = 0;
    for (int i = 0; i < nacc; i++) {
        cad_builder_copy(b, acc[i].at, cad_loc_add(in, o), acc[i].len);
        o += acc[i].len;
    }
    struct cad_loc slot[2];
    for (int j = 0; j < nch && j < 2; j++)
        slot[j] = cad_builder_tmp(b, len);
    int calc = -1, slot_free[2] = {after, after}; /* the last reader of each slot */
    for (int j = 0; j < nch && cad_builder_ok(b); j++) {
        long long child = v + (1ll << j);
        int rv = cad_builder_recv(b, slot[j & 1], len, cad_alg_mod(troot - child, n), k);
        cad_builder_dep(b, slot_free[j & 1], rv);
        o = 0;
        for (int i = 0; i < nacc; i++) { /* one CALC per piece of acc, in a chain */
            int x = cad_builder_calc(b, cad_loc_add(slot[j & 1], o), acc[i].at, acc[i].len);
            cad_builder_dep(b, i ? -1 : rv, x);
            cad_builder_dep(b, calc, x);
            calc = x;
            o += acc[i].len;
        }
        slot_free[j & 1] = calc;
    }
    if (!v)
        return calc >= 0 ? calc : after;
    int s = cad_builder_send(b, acc[0].at, len, parent, k);
    cad_builder_dep(b, calc, s);
    return s;
}

static int commutative_root(const struct cad_builder *b, int want)
{
    return b->comm ? want : b->c->size - 1;
}

/* Task context (builder), any context while planning. REDUCE: to the root directly when
 * the op commutes; otherwise to the last rank, which sends the result on (tag 1). */
void cad_alg_reduce_binomial(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int r = c->rank, root = c->root, t = commutative_root(b, root);
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    struct cad_loc in = r == root && c->in_place ? rbuf : cad_loc(CAD_B_SBUF, 0);
    struct cad_seg acc = {rbuf, c->bytes};
    if (r == t && t != root)
        acc.at = cad_builder_tmp(b, c->bytes);
    int last = cad_alg_reduce_tree(b, t, in, &acc, 1, 0, CAD_NODE_START);
    if (t != root && r == t) {
        int s = cad_builder_send(b, acc.at, c->bytes, root, 1);
        cad_builder_dep(b, last, s);
        last = s;
    } else if (t != root && r == root) {
        /* After our own partial went: in place, it was sent from rbuf. */
        int v = cad_builder_recv(b, rbuf, c->bytes, t, 1);
        cad_builder_dep(b, last, v);
        last = v;
    }
    cad_builder_end(b, last);
}

/* Task context (builder), any context while planning. ALLREDUCE as a reduce to the last
 * rank (rank order, so any op) and a binomial bcast from there (tag 1). A rank's bcast
 * receive into rbuf waits for its own tree part, which may have sent from rbuf. */
void cad_alg_allreduce_composite(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int t = c->size - 1;
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    struct cad_seg acc = {rbuf, c->bytes};
    int last = cad_alg_reduce_tree(b, t, cad_builder_input(b), &acc, 1, 0, CAD_NODE_START);
    cad_alg_bcast_tree(b, t, rbuf, c->bytes, 1, last);
}

/*
 * Task context (builder), any context while planning. REDUCE_SCATTER as a reduce to the
 * last rank t and a linear scatter of the blocks from there (tag 1). t's accumulator is
 * split so that its own block is reduced straight into rbuf and the others in scratch
 * (laid out like the vector), from which they are sent: no copy after the reduction.
 */
void cad_alg_reduce_scatter_composite(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, t = n - 1;
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0), acc_tmp = cad_loc(CAD_B_TMP, 0);
    uint64_t own = cad_alg_rs_cnt(c, t), before = c->bytes - own; /* t's block is the last */
    struct cad_seg acc[2] = {{{CAD_B_NONE, 0}, 0}, {{CAD_B_NONE, 0}, 0}};
    int nacc = 0;
    if (r == t) {
        acc_tmp = cad_builder_tmp(b, before);
        if (before)
            acc[nacc++] = (struct cad_seg){acc_tmp, before};
        if (own || !nacc)
            acc[nacc++] = (struct cad_seg){rbuf, own};
    }
    int last = cad_alg_reduce_tree(b, t, cad_builder_input(b), acc, nacc, 0, CAD_NODE_START);
    if (r != t) {
        int v = cad_builder_recv(b, rbuf, cad_alg_rs_cnt(c, r), t, 1);
        cad_builder_dep(b, last, v);
        cad_builder_end(b, v);
        return;
    }
    uint64_t off = 0;
    for (int i = 0; i < t && cad_builder_ok(b); i++) {
        int s = cad_builder_send(b, cad_loc_add(acc_tmp, off), cad_alg_rs_cnt(c, i), i, 1);
        cad_builder_dep(b, last, s);
        cad_builder_end(b, s);
        off += cad_alg_rs_cnt(c, i);
    }
    if (!t)
        cad_builder_end(b, last);
}
