/*
 * cad_alg_scan.c: inclusive and exclusive prefix reductions (SCAN, EXSCAN) as CAD graphs.
 *
 * LINEAR: a chain in rank order. Rank r receives the prefix of ranks 0 .. r - 1 from
 * r - 1, combines it with its own vector (the prefix is the lower part, `in`) and passes
 * the result to r + 1: size - 1 hops, one vector each.
 *
 * RECDBL: log2(size) rounds; in round i rank r and r ^ 2^i (if it exists) swap the
 * partial of their aligned group of 2^i ranks. The lower one folds the higher's partial
 * into its own partial only; the higher one folds the lower's into its partial and into
 * its result. A group cut short by the end of the communicator is the top one, whose
 * partial is only ever sent downwards, so a missing partner loses nothing that is needed.
 * In the last round only the lower rank sends (the higher one's partial would be folded
 * into a partial nobody needs any more). The partial lives in two scratch vectors in turn
 * (lower operand is `in`, so combining with a higher partner lands in the received copy),
 * and each round waits for the previous one: its sends read what the next one writes.
 *
 * EXSCAN has no result on rank 0 (MPI leaves it undefined; rbuf is left untouched there);
 * elsewhere the first contribution received is the result so far, received straight into
 * rbuf, since there is nothing to combine it with.
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
void cad_alg_scan_linear(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, ex = c->kind == CAD_K_EXSCAN;
    uint64_t len = c->bytes;
    struct cad_loc in = cad_builder_input(b), rbuf = cad_loc(CAD_B_RBUF, 0);
    int last = CAD_NODE_START;
    if (!ex) { /* rbuf = prefix(r - 1) op x_r, passed on */
        cad_builder_copy(b, rbuf, in, len);
        if (r > 0) {
            struct cad_loc tmp = cad_builder_tmp(b, len);
            int rv = cad_builder_recv(b, tmp, len, r - 1, 0);
            int x = cad_builder_calc(b, tmp, rbuf, len);
            cad_builder_dep(b, CAD_NODE_START, rv);
            cad_builder_dep(b, rv, x);
            last = x;
        }
        if (r < n - 1) {
            int s = cad_builder_send(b, rbuf, len, r + 1, 0);
            cad_builder_dep(b, last, s);
            last = s;
        }
    } else if (r == 0) { /* its input is rank 1's result */
        if (n > 1) {
            last = cad_builder_send(b, in, len, 1, 0);
            cad_builder_dep(b, CAD_NODE_START, last);
        }
    } else { /* rbuf = prefix(r - 1); passed on: prefix(r - 1) op x_r, in scratch */
        last = cad_builder_recv(b, rbuf, len, r - 1, 0);
        cad_builder_dep(b, CAD_NODE_START, last);
        if (r < n - 1) {
            struct cad_loc tmp = cad_builder_tmp(b, len);
            cad_builder_copy(b, tmp, in, len); /* before the receive: in place, in is rbuf */
            int x = cad_builder_calc(b, rbuf, tmp, len);
            int s = cad_builder_send(b, tmp, len, r + 1, 0);
            cad_builder_dep(b, last, x);
            cad_builder_dep(b, x, s);
            last = s;
        }
    }
    cad_builder_end(b, last);
}

/* The nodes of the last round this rank took part in: the next round's receive waits for
 * all of them (they read or wrote the scratch it is about to overwrite). */
struct round {
    int node[4], n;
};

static void round_add(struct round *rd, int node)
{
    if (node >= 0)
        rd->node[rd->n++] = node;
}

/* Task context (builder), any context while planning. */
void cad_alg_scan_recdbl(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, ex = c->kind == CAD_K_EXSCAN, have_result = !ex;
    uint64_t len = c->bytes;
    struct cad_loc in = cad_builder_input(b), rbuf = cad_loc(CAD_B_RBUF, 0);
    if (n == 1) {
        if (!ex)
            cad_builder_copy(b, rbuf, in, len);
        return;
    }
    struct cad_loc part = cad_builder_tmp(b, len), other = cad_builder_tmp(b, len);
    cad_builder_copy(b, part, in, len);
    if (!ex)
        cad_builder_copy(b, rbuf, in, len);
    int part_by = CAD_NODE_START, i = 0;
    struct round prev = {{CAD_NODE_START}, 1};
    for (long long m = 1; m < n && cad_builder_ok(b); m <<= 1, i++) {
        long long peer = r ^ m;
        int last_round = m * 2 >= n;
        if (peer >= n)
            continue;
        struct round cur = {{0}, 0};
        int s = -1, rv = -1;
        if (peer > r || !last_round) {
            s = cad_builder_send(b, part, len, (int)peer, i);
            cad_builder_dep(b, part_by, s);
            round_add(&cur, s);
        }
        if (peer < r) {
            /* The first contribution of an exscan is its result so far. */
            struct cad_loc to = have_result ? other : rbuf;
            rv = cad_builder_recv(b, to, len, (int)peer, i);
            for (int j = 0; j < prev.n; j++)
                cad_builder_dep(b, prev.node[j], rv);
            round_add(&cur, rv);
            if (have_result) {
                int x = cad_builder_calc(b, to, rbuf, len);
                cad_builder_dep(b, rv, x);
                round_add(&cur, x);
            }
            have_result = 1;
            if (!last_round) {
                int x = cad_builder_calc(b, to, part, len);
                cad_builder_dep(b, rv, x);
                cad_builder_dep(b, s, x); /* x writes what s reads */
                round_add(&cur, x);
                part_by = x;
            }
        } else if (!last_round) {
            rv = cad_builder_recv(b, other, len, (int)peer, i);
            for (int j = 0; j < prev.n; j++)
                cad_builder_dep(b, prev.node[j], rv);
            int x = cad_builder_calc(b, part, other, len); /* ours is the lower part */
            cad_builder_dep(b, rv, x);
            round_add(&cur, rv);
            round_add(&cur, x);
            part_by = x;
            struct cad_loc t = part;
            part = other;
            other = t;
        }
        /* Every node of a round also leads to END: which of them the next rounds will
         * wait for depends on partners yet to come; at most 4 edges a round. */
        for (int j = 0; j < cur.n; j++)
            cad_builder_end(b, cur.node[j]);
        prev = cur;
    }
}
