/*
 * cad_alg_allgather.c: ALLGATHER (and ALLGATHERV) as CAD graphs.
 *
 * RING: in step s rank r sends block r - s to its right and receives block r - s - 1 from
 * its left, straight into its place in rbuf; the block sent in step s + 1 is the one just
 * received, so each send waits for the receive before it, and nothing else: all receives
 * go to different places and are posted at once. size - 1 steps, any block sizes, one
 * tag per step (size - 1 <= CAD_ALG_TAGS).
 *
 * RECDBL (regular blocks, size a power of two): in round i rank r swaps the 2^i blocks of
 * its aligned group with those of r ^ 2^i; both groups are contiguous in rbuf, so a round
 * is one message each way. log2(size) steps for the same volume. A round's send carries
 * everything received in the rounds before, so it waits for all of those receives.
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
void cad_alg_allgather_ring(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, prev = CAD_NODE_START;
    int left = cad_alg_mod((long long)r - 1, n), right = cad_alg_mod((long long)r + 1, n);
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    if (!c->in_place)
        cad_builder_copy(b, cad_loc_add(rbuf, cad_alg_dsp(c, r)), cad_loc(CAD_B_SBUF, 0),
                         cad_alg_cnt(c, r));
    for (int s = 0; s < n - 1 && cad_builder_ok(b); s++) {
        int sb = cad_alg_mod((long long)r - s, n), rb = cad_alg_mod((long long)r - s - 1, n);
        int v =
            cad_builder_recv(b, cad_loc_add(rbuf, cad_alg_dsp(c, rb)), cad_alg_cnt(c, rb), left, s);
        int snd = cad_builder_send(b, cad_loc_add(rbuf, cad_alg_dsp(c, sb)), cad_alg_cnt(c, sb),
                                   right, s);
        cad_builder_dep(b, CAD_NODE_START, v);
        cad_builder_dep(b, prev, snd);
        cad_builder_end(b, snd);
        prev = v;
    }
    cad_builder_end(b, prev);
}

/* Task context (builder), any context while planning. The receives are made first, one
 * after another, so that round j's is node rv0 + j. */
void cad_alg_allgather_recdbl(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, rv0 = -1, rounds = 0;
    uint64_t blk = c->bytes;
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    if (!c->in_place)
        cad_builder_copy(b, cad_loc_add(rbuf, (uint64_t)r * blk), cad_loc(CAD_B_SBUF, 0), blk);
    for (long long m = 1; m < n; m <<= 1, rounds++) {
        long long peer = r ^ m, base = peer & ~(m - 1);
        int v = cad_builder_recv(b, cad_loc_add(rbuf, (uint64_t)base * blk), (uint64_t)m * blk,
                                 (int)peer, rounds);
        cad_builder_dep(b, CAD_NODE_START, v);
        if (!rounds)
            rv0 = v;
    }
    for (long long m = 1, i = 0; m < n; m <<= 1, i++) {
        long long base = r & ~(m - 1);
        int s = cad_builder_send(b, cad_loc_add(rbuf, (uint64_t)base * blk), (uint64_t)m * blk,
                                 (int)(r ^ m), i);
        if (!i)
            cad_builder_dep(b, CAD_NODE_START, s);
        for (int j = 0; j < i; j++)
            cad_builder_dep(b, rv0 + j, s);
        cad_builder_end(b, s);
    }
    if (rounds)
        cad_builder_end(b, rv0 + rounds - 1);
}
