/*
 * cad_alg_allreduce.c: allreduce by recursive doubling and by a ring, and the ring
 * reduce-scatter, as CAD graphs.
 *
 * RECDBL: log2(p) rounds over p = the largest power of two <= size; in round i rank v
 * exchanges its partial with v ^ 2^i and both combine, lower part as `in`. The size - p
 * extra ranks fold in first, in adjacent pairs (2j hands its vector to 2j + 1 and gets
 * the result back at the end), so that every remaining rank stands for a contiguous range
 * of ranks and rank order survives: any op, commutative or not. Keeping the lower operand
 * as `in` means the result lands in the partner's copy whenever the partner is higher, so
 * the partial lives alternately in rbuf and one scratch vector; a rank starts in whichever
 * makes it end in rbuf (it knows how many times it will swap). Each round waits for the
 * previous one to finish: the send reads the buffer the next CALC or RECV writes.
 *
 * RING (commutative ops): a reduce-scatter of size blocks round the ring (in step s rank
 * r sends block r - s to its right and adds block r - s - 1 from its left, so after
 * size - 1 steps it holds block r + 1 complete), then an allgather of the complete blocks
 * the same way round. Each rank sends 2 (size - 1) / size of the vector instead of
 * log2(size) whole vectors: the choice for large vectors. Blocks are count / size
 * elements, the first count % size one more; empty blocks still travel, as empty messages,
 * so that every rank builds the same steps.
 */
#include "cad_alg_int.h"

#define TAG_BACK 63 /* recdbl: the result back to a folded rank (rounds use 0 .. 32) */

/* Task context (builder), any context while planning. */
void cad_alg_allreduce_recdbl(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    uint64_t len = c->bytes;
    struct cad_loc in = cad_builder_input(b), rbuf = cad_loc(CAD_B_RBUF, 0);
    long long p = 1;
    while (p * 2 <= n)
        p *= 2;
    long long rem = n - p;
    if (r < 2 * rem && !(r & 1)) { /* folded: hand the input over, get the result back */
        int s = cad_builder_send(b, in, len, r + 1, 0);
        int v = cad_builder_recv(b, rbuf, len, r + 1, TAG_BACK);
        cad_builder_dep(b, CAD_NODE_START, s);
        cad_builder_dep(b, s, v); /* in place, s reads rbuf */
        cad_builder_end(b, v);
        return;
    }
    long long v = r < 2 * rem ? r / 2 : r - rem;
    int swaps = 0;
    for (long long m = 1; m < p; m <<= 1)
        swaps += !(v & m);
    struct cad_loc tmp = n > 1 ? cad_builder_tmp(b, len) : rbuf;
    struct cad_loc cur = swaps & 1 ? tmp : rbuf, other = swaps & 1 ? rbuf : tmp;
    cad_builder_copy(b, cur, in, len);
    int prev = CAD_NODE_START;
    if (r < 2 * rem) { /* odd: take in the folded rank below */
        int rv = cad_builder_recv(b, other, len, r - 1, 0);
        int x = cad_builder_calc(b, other, cur, len);
        cad_builder_dep(b, CAD_NODE_START, rv);
        cad_builder_dep(b, rv, x);
        prev = x;
    }
    for (long long m = 1, i = 1; m < p && cad_builder_ok(b); m <<= 1, i++) {
        long long pv = v ^ m;
        int peer = (int)(pv < rem ? 2 * pv + 1 : pv + rem);
        int s = cad_builder_send(b, cur, len, peer, i);
        int rv = cad_builder_recv(b, other, len, peer, i);
        int x;
        if (v & m) { /* partner lower: its partial is `in` */
            x = cad_builder_calc(b, other, cur, len);
        } else {
            x = cad_builder_calc(b, cur, other, len);
            struct cad_loc t = cur;
            cur = other;
            other = t;
        }
        cad_builder_dep(b, prev, s);
        cad_builder_dep(b, prev, rv);
        cad_builder_dep(b, s, x); /* x may write what s reads, and the next RECV will */
        cad_builder_dep(b, rv, x);
        prev = x;
    }
    if (r < 2 * rem) {
        int s = cad_builder_send(b, cur, len, r - 1, TAG_BACK); /* cur is rbuf by now */
        cad_builder_dep(b, prev, s);
        prev = s;
    }
    cad_builder_end(b, prev);
}

/* Block j of the ring allreduce: elements count / n, the first count % n one more. */
static void ring_block(const struct cad_builder *b, int j, uint64_t *off, uint64_t *len)
{
    uint64_t n = (uint64_t)b->c->size, q = b->c->count / n, extra = b->c->count % n;
    uint64_t uj = (uint64_t)j;
    *off = (uj * q + (uj < extra ? uj : extra)) * b->esize;
    *len = (q + (uj < extra)) * b->esize;
}

/*
 * Task context (builder), any context while planning. rbuf holds the vector throughout
 * (the library copies the input in); scratch mirrors its layout, so every reduce-scatter
 * receive has its own place and all of them are posted at once. The allgather receives
 * are made first, so that receive s is node ag0 + s: the reduce-scatter step s connects to
 * it, because the block it overwrites is the one that step sends.
 */
void cad_alg_allreduce_ring(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    int left = cad_alg_mod((long long)r - 1, n), right = cad_alg_mod((long long)r + 1, n);
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    cad_builder_copy(b, rbuf, cad_builder_input(b), c->bytes);
    if (n == 1)
        return;
    struct cad_loc tmp = cad_builder_tmp(b, c->bytes);
    uint64_t off, len;
    int ag0 = -1, prev = CAD_NODE_START;
    for (int s = 0; s < n - 1 && cad_builder_ok(b); s++) {
        ring_block(b, cad_alg_mod((long long)r - s, n), &off, &len);
        int v = cad_builder_recv(b, cad_loc_add(rbuf, off), len, left, n - 1 + s);
        if (!s)
            ag0 = v;
    }
    for (int s = 0; s < n - 1 && cad_builder_ok(b); s++) { /* reduce-scatter */
        ring_block(b, cad_alg_mod((long long)r - s, n), &off, &len);
        int snd = cad_builder_send(b, cad_loc_add(rbuf, off), len, right, s);
        ring_block(b, cad_alg_mod((long long)r - s - 1, n), &off, &len);
        int rv = cad_builder_recv(b, cad_loc_add(tmp, off), len, left, s);
        int x = cad_builder_calc(b, cad_loc_add(tmp, off), cad_loc_add(rbuf, off), len);
        cad_builder_dep(b, CAD_NODE_START, rv);
        cad_builder_dep(b, prev, snd); /* the block summed in the step before */
        cad_builder_dep(b, rv, x);
        cad_builder_dep(b, snd, ag0 + s);
        prev = x;
    }
    for (int s = 0; s < n - 1 && cad_builder_ok(b); s++) { /* allgather */
        ring_block(b, cad_alg_mod((long long)r + 1 - s, n), &off, &len);
        int snd = cad_builder_send(b, cad_loc_add(rbuf, off), len, right, n - 1 + s);
        cad_builder_dep(b, s ? ag0 + s - 1 : prev, snd);
        cad_builder_end(b, snd);
    }
    cad_builder_end(b, ag0 + n - 2);
}

/*
 * Task context (builder), any context while planning. REDUCE_SCATTER round a ring
 * (commutative ops): step s sends block r - s - 1 and adds block r - s - 2 from the left,
 * so rank r ends with its own block r. Blocks are counts[i] long and follow each other;
 * the accumulator is scratch laid out like the vector, except block r, which is
 * accumulated in rbuf where it belongs; received blocks go to a second such scratch.
 */
void cad_alg_reduce_scatter_ring(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    int left = cad_alg_mod((long long)r - 1, n), right = cad_alg_mod((long long)r + 1, n);
    struct cad_loc in = cad_builder_input(b), rbuf = cad_loc(CAD_B_RBUF, 0);
    uint64_t own_off = 0;
    for (int i = 0; i < r; i++)
        own_off += cad_alg_rs_cnt(c, i);
    struct cad_loc acc = n > 1 ? cad_builder_tmp(b, c->bytes) : rbuf;
    struct cad_loc got = n > 1 ? cad_builder_tmp(b, c->bytes) : rbuf;
    if (n > 1) /* first: in place, the next copy overwrites the start of rbuf */
        cad_builder_copy(b, acc, in, c->bytes);
    cad_builder_copy(b, rbuf, cad_loc_add(in, own_off), cad_alg_rs_cnt(c, r));
    /* Walk the blocks downwards from r - 1 keeping their offsets, instead of summing
     * counts[] for each: O(size) in all. */
    int sb = cad_alg_mod((long long)r - 1, n), prev = CAD_NODE_START;
    uint64_t sb_off =
        sb == n - 1 ? c->bytes - cad_alg_rs_cnt(c, sb) : own_off - cad_alg_rs_cnt(c, sb);
    for (int s = 0; s < n - 1 && cad_builder_ok(b); s++) {
        int rb = sb ? sb - 1 : n - 1;
        uint64_t rb_len = cad_alg_rs_cnt(c, rb);
        uint64_t rb_off = rb == n - 1 ? c->bytes - rb_len : sb_off - rb_len;
        struct cad_loc to = rb == r ? rbuf : cad_loc_add(acc, rb_off);
        int snd = cad_builder_send(b, cad_loc_add(acc, sb_off), cad_alg_rs_cnt(c, sb), right, s);
        int rv = cad_builder_recv(b, cad_loc_add(got, rb_off), rb_len, left, s);
        int x = cad_builder_calc(b, cad_loc_add(got, rb_off), to, rb_len);
        cad_builder_dep(b, CAD_NODE_START, rv);
        cad_builder_dep(b, prev, snd);
        cad_builder_dep(b, rv, x);
        cad_builder_end(b, snd);
        prev = x;
        sb = rb;
        sb_off = rb_off;
    }
    cad_builder_end(b, prev);
}
