/*
 * cad_alg_barrier.c: the barrier as a CAD graph, by dissemination: in round k every rank
 * sends an empty message to rank + 2^k and receives one from rank - 2^k (mod size), for
 * ceil(log2 size) rounds. After round k a rank has heard, directly or through others, from
 * the 2^(k+1) - 1 ranks below it, so after the last round from everyone.
 *
 * What makes it a barrier: the send of round k waits for every receive of the rounds
 * before it (a rank passes on only what it has heard). The receives are chained, each
 * posted once the previous one completed, so "the receive of round k - 1 completed"
 * implies all of them did, and one edge per round carries it. Waiting for round k - 1's
 * receive alone would not do: on 7 ranks, rank 0 would then leave without rank 2 having
 * entered (the conformance suite's barrier check caught exactly that). Every round has
 * its own tag, since partners of different rounds can coincide on small communicators.
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
void cad_alg_barrier_dissem(struct cad_builder *b)
{
    int n = b->c->size, r = b->c->rank, heard = CAD_NODE_START;
    struct cad_loc none = cad_loc(CAD_B_NONE, 0);
    for (long long d = 1, k = 0; d < n && cad_builder_ok(b); d <<= 1, k++) {
        int v = cad_builder_recv(b, none, 0, cad_alg_mod(r - d, n), k);
        int s = cad_builder_send(b, none, 0, cad_alg_mod(r + d, n), k);
        cad_builder_dep(b, heard, v);
        cad_builder_dep(b, heard, s);
        cad_builder_end(b, s);
        heard = v;
    }
    cad_builder_end(b, heard);
}
