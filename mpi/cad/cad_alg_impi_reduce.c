/*
 * cad_alg_impi_reduce.c: reduce and allreduce across IMPI clients as CAD graphs, the way
 * LAM/MPI 7.1.4 does them (share/ssi/coll/impi/src/ssi_coll_impi_reduce.c, and lam_basic's
 * allreduce: reduce to rank 0, then bcast from rank 0; impi-protocol.md 12.3). See
 * cad_alg_impi.c for masters and the split between LAM's messages and ours.
 *
 * Messages between clients: tag 190 on the POINT-TO-POINT context (cad_coll.ctx - 1; LAM's
 * reduce never switches to the collective one), each a whole vector in native byte order.
 *
 *   commutative op      each client reduces to the root if it holds it, else to its
 *                       master (ours: binomial, inside the client, our tags); then linear
 *                       (M <= CAD_IMPI_MAX_LINEAR: every other master sends its partial to
 *                       the root) or a binomial tree over master numbers rooted at the
 *                       root's (a parent in the root's client being the root itself)
 *   non-commutative op  every rank sends its vector straight to the root (tag 190, also
 *                       inside the root's client), which folds them from the highest rank
 *                       down: x_{n-2} op x_{n-1}, then x_{n-3} op that, ..., i.e.
 *                       x_0 op (x_1 op (... op x_{n-1})), MPI's operand order
 *
 * Not copied from LAM: its linear root combines only the LAST partial it received (the op
 * call sits after the receive loop), so with 3 or 4 clients a LAM root loses partials. We
 * combine every one; a LAM root still gets its own wrong.
 *
 * Memory: the root accumulates in rbuf, a master of another client and an inner rank of a
 * local tree in scratch (the library copies the input in first, cad_alg.h "Local
 * copies"); each partial from a child lands in a scratch slot of its own (log2 of the
 * client size, plus log2 M or M - 1 at a master). The non-commutative root receives into
 * two slots in turn, like cad_alg_reduce.c, since it may hear from thousands of ranks.
 */
#include "cad_alg_int.h"

/* Builder or planning context (so are the static functions below): a vector between
 * clients, or to a non-commutative reduce's root. */
static int reduce_msg(struct cad_builder *b, int type, struct cad_loc at, int peer)
{
    return cad_builder_wire(b, type, at, b->c->bytes, peer, b->c->ctx - 1, CAD_IMPI_TAG_REDUCE);
}

/* acc = partial op acc for a partial arriving at `got`, after `prev` (the accumulator's
 * last writer); returns the CALC. */
static int combine(struct cad_builder *b, int got, struct cad_loc partial, struct cad_loc acc,
                   int prev)
{
    int x = cad_builder_calc(b, partial, acc, b->c->bytes);
    cad_builder_dep(b, got, x);
    cad_builder_dep(b, prev, x);
    return x;
}

/* Binomial reduce of the client's vectors (commutative op) to its rank `target`, which
 * accumulates in `acc`. Returns the node after which this rank's part is done. */
static int local_reduce(struct cad_builder *b, const struct cad_impi *l, int target,
                        struct cad_loc in, struct cad_loc acc)
{
    const struct cad_coll *c = b->c;
    int cl = cad_impi_client(l, c->rank), n = cad_impi_lsize(l, cl);
    int lt = cad_impi_lindex(l, cl, target), last = CAD_NODE_START;
    long long v = cad_alg_mod((long long)cad_impi_lindex(l, cl, c->rank) - lt, n);
    long long low = cad_alg_lowbit(v, n), mask;
    int parent = v ? cad_impi_lrank(l, cl, cad_alg_mod(v - low + lt, n)) : -1;
    if (v && (low == 1 || v + 1 >= n)) { /* a leaf: its input is its partial */
        int s = cad_builder_send(b, in, c->bytes, parent, CAD_IMPI_K_REDUCE);
        cad_builder_dep(b, CAD_NODE_START, s);
        return s;
    }
    if (v)
        acc = cad_builder_tmp(b, c->bytes);
    cad_builder_copy(b, acc, in, c->bytes);
    for (mask = 1; mask < low && v + mask < n && cad_builder_ok(b); mask <<= 1) {
        struct cad_loc slot = cad_builder_tmp(b, c->bytes);
        int child = cad_impi_lrank(l, cl, cad_alg_mod(v + mask + lt, n));
        int got = cad_builder_recv(b, slot, c->bytes, child, CAD_IMPI_K_REDUCE);
        cad_builder_dep(b, CAD_NODE_START, got);
        last = combine(b, got, slot, acc, last);
    }
    if (!v)
        return last;
    int s = cad_builder_send(b, acc, c->bytes, parent, CAD_IMPI_K_REDUCE);
    cad_builder_dep(b, last, s);
    return s;
}

/* A partial from master number `num`'s client into a fresh slot, folded into acc. */
static int from_master(struct cad_builder *b, const struct cad_impi *l, int num, struct cad_loc acc,
                       int prev)
{
    struct cad_loc slot = cad_builder_tmp(b, b->c->bytes);
    int got = reduce_msg(b, CAD_RECV, slot, l->master[num]);
    cad_builder_dep(b, CAD_NODE_START, got);
    return combine(b, got, slot, acc, prev);
}

/* Commutative op: local phase, then the masters' (see the top). */
static int reduce_commutative(struct cad_builder *b, const struct cad_impi *l, int root,
                              struct cad_loc in, struct cad_loc racc)
{
    int r = b->c->rank, m = l->nm, cl = cad_impi_client(l, r), rcl = cad_impi_client(l, root);
    int me = l->num[cl], rootnum = l->num[rcl];
    int target = cl == rcl ? root : l->master[me];
    struct cad_loc acc = racc;
    if (r == target && r != root)
        acc = cad_builder_tmp(b, b->c->bytes);
    int done = local_reduce(b, l, target, in, acc);
    if (r != target)
        return done;
    if (m <= CAD_IMPI_MAX_LINEAR) {
        if (r != root) {
            int s = reduce_msg(b, CAD_SEND, acc, root);
            cad_builder_dep(b, done, s);
            return s;
        }
        for (int i = 0; i < m && cad_builder_ok(b); i++)
            if (i != rootnum)
                done = from_master(b, l, i, acc, done);
        return done;
    }
    int v = cad_alg_mod((long long)me - rootnum, m), dim = cad_impi_cubedim(m);
    for (int i = 0; i < dim && cad_builder_ok(b); i++) {
        int mask = 1 << i;
        if (v & mask) { /* send up and stop */
            int peer = l->master[((v & ~mask) + rootnum) % m];
            int s = reduce_msg(b, CAD_SEND, acc, cad_impi_client(l, peer) == rcl ? root : peer);
            cad_builder_dep(b, done, s);
            return s;
        }
        if ((v | mask) < m)
            done = from_master(b, l, ((v | mask) + rootnum) % m, acc, done);
    }
    return done;
}

/* Non-commutative op: everyone to the root, folded from the highest rank down. */
static int reduce_ordered(struct cad_builder *b, int root, struct cad_loc in, struct cad_loc racc)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, have = CAD_NODE_START, j = 0;
    if (r != root) {
        int s = reduce_msg(b, CAD_SEND, in, root);
        cad_builder_dep(b, CAD_NODE_START, s);
        return s;
    }
    struct cad_loc own = in, slot[2];
    int slot_free[2] = {CAD_NODE_START, CAD_NODE_START}; /* the last reader of each slot */
    if (r == n - 1) {
        cad_builder_copy(b, racc, in, c->bytes);
    } else {
        if (in.buf == racc.buf && in.off == racc.off) { /* in place: x_{n-1} lands there */
            own = cad_builder_tmp(b, c->bytes);
            cad_builder_copy(b, own, in, c->bytes);
        }
        have = reduce_msg(b, CAD_RECV, racc, n - 1);
        cad_builder_dep(b, CAD_NODE_START, have);
    }
    for (int i = n - 2; i >= 0 && cad_builder_ok(b); i--) {
        if (i == r) {
            have = combine(b, -1, own, racc, have);
            continue;
        }
        if (j < 2)
            slot[j] = cad_builder_tmp(b, c->bytes);
        int got = reduce_msg(b, CAD_RECV, slot[j & 1], i);
        cad_builder_dep(b, slot_free[j & 1], got);
        have = combine(b, got, slot[j & 1], racc, have);
        slot_free[j & 1] = have;
        j++;
    }
    return have;
}

/* Task context (builder), any context while planning. */
int cad_impi_reduce(struct cad_builder *b, const struct cad_impi *l, int root, struct cad_loc in,
                    struct cad_loc racc)
{
    return b->comm ? reduce_commutative(b, l, root, in, racc) : reduce_ordered(b, root, in, racc);
}

/* Task context (builder), any context while planning. */
void cad_alg_impi_reduce(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    struct cad_impi l;
    cad_impi_layout(c, &l);
    int in_rbuf = c->rank == c->root && c->in_place;
    cad_builder_end(b,
                    cad_impi_reduce(b, &l, c->root, cad_loc(in_rbuf ? CAD_B_RBUF : CAD_B_SBUF, 0),
                                    cad_loc(CAD_B_RBUF, 0)));
}

/* Task context (builder), any context while planning. The bcast writes rbuf only after
 * this rank's reduce part, which may read it (in place), is done. */
void cad_alg_impi_allreduce(struct cad_builder *b)
{
    struct cad_impi l;
    cad_impi_layout(b->c, &l);
    int done = cad_impi_reduce(b, &l, 0, cad_builder_input(b), cad_loc(CAD_B_RBUF, 0));
    uint32_t before = b->nodes;
    cad_impi_bcast(b, &l, 0, done);
    if (b->nodes == before)
        cad_builder_end(b, done);
}
