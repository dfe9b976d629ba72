/*
 * cad_alg_bcast.c: broadcast as a CAD graph, two ways.
 *
 * BINOMIAL: ranks are numbered from the root (v = rank - root mod size); v receives from
 * v minus its lowest set bit and sends to v + m for every power of two m below that bit,
 * largest subtree first. log2(size) steps, each a whole-message hop: the choice for small
 * messages. It is also the second half of the composite allreduce, hence `after` and the
 * tag parameter.
 *
 * CHAIN (the KACC paper's figure 1): ranks in rank order from the root, each receiving
 * segment c from the previous rank and forwarding it to the next as soon as it is in, so
 * the segments flow down the chain like a pipeline: about (size - 2 + segments) segment
 * times instead of log2(size) message times, the choice for large messages. Every
 * segment has its own tag (they are independent and complete in any order), which bounds
 * them to CAD_ALG_TAGS: cad_alg_chain_chunk raises the segment size to fit.
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
void cad_alg_bcast_tree(struct cad_builder *b, int root, struct cad_loc buf, uint64_t len, int k,
                        int after)
{
    int n = b->c->size, r = b->c->rank;
    long long v = cad_alg_mod((long long)r - root, n), m = cad_alg_lowbit(v, n);
    int have = after, sent = 0; /* have: the node after which buf holds the message */
    if (v) {
        have = cad_builder_recv(b, buf, len, cad_alg_mod(v - m + root, n), k);
        cad_builder_dep(b, after, have);
    }
    for (m >>= 1; m > 0 && cad_builder_ok(b); m >>= 1) {
        if (v + m >= n)
            continue;
        int s = cad_builder_send(b, buf, len, cad_alg_mod(v + m + root, n), k);
        cad_builder_dep(b, have, s);
        cad_builder_end(b, s);
        sent = 1;
    }
    if (!sent)
        cad_builder_end(b, have);
}

/* Task context (builder), any context while planning. The message is in rbuf. */
void cad_alg_bcast_chain(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    int v = cad_alg_mod((long long)r - c->root, n);
    int prev = cad_alg_mod((long long)r - 1, n), next = cad_alg_mod((long long)r + 1, n);
    uint64_t ch = cad_alg_chain_chunk(c);
    if (n == 1)
        return;
    for (uint64_t off = 0, seg = 0; off < c->bytes && cad_builder_ok(b); off += ch, seg++) {
        uint64_t len = c->bytes - off < ch ? c->bytes - off : ch;
        struct cad_loc at = cad_loc(CAD_B_RBUF, off);
        int have = CAD_NODE_START;
        if (v > 0) {
            have = cad_builder_recv(b, at, len, prev, (long)seg);
            cad_builder_dep(b, CAD_NODE_START, have);
        }
        if (v < n - 1) { /* forward segment seg as soon as it is in, whatever the others do */
            int s = cad_builder_send(b, at, len, next, (long)seg);
            cad_builder_dep(b, have, s);
            have = s;
        }
        cad_builder_end(b, have);
    }
}
