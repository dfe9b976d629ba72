/*
 * cad_alg_alltoall.c: ALLTOALL (and ALLTOALLV) as CAD graphs. Every ordered pair of ranks
 * exchanges exactly one message (tag 0), whatever the algorithm; the two algorithms only
 * differ in when the messages are posted, so they even interoperate.
 *
 * LINEAR: every receive, then every send, all at once (receives first, so that eager
 * data finds them posted). Least latency; for large blocks it floods the network and the
 * unexpected queues.
 *
 * PAIRWISE: size - 1 steps; in step k rank r sends to r + k and receives from r - k, and
 * step k starts only when both operations of step k - 1 completed (a chain, not all
 * posted at once), so a rank has one message in flight each way: the choice for large
 * blocks. The same partners as "rank ^ k" on powers of two, but for any size.
 */
#include "cad_alg_int.h"

/* Task context (builder), any context while planning. */
void cad_alg_alltoall(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, pairwise = c->alg == CAD_A_PAIRWISE;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    cad_builder_copy(b, cad_loc_add(rbuf, cad_alg_rdsp(c, r)), cad_loc_add(sbuf, cad_alg_dsp(c, r)),
                     cad_alg_cnt(c, r));
    if (!pairwise) {
        for (int k = 1; k < n && cad_builder_ok(b); k++) {
            int from = cad_alg_mod((long long)r - k, n);
            int v = cad_builder_recv(b, cad_loc_add(rbuf, cad_alg_rdsp(c, from)),
                                     cad_alg_rcnt(c, from), from, 0);
            cad_builder_dep(b, CAD_NODE_START, v);
            cad_builder_end(b, v);
        }
        for (int k = 1; k < n && cad_builder_ok(b); k++) {
            int to = cad_alg_mod((long long)r + k, n);
            int s = cad_builder_send(b, cad_loc_add(sbuf, cad_alg_dsp(c, to)), cad_alg_cnt(c, to),
                                     to, 0);
            cad_builder_dep(b, CAD_NODE_START, s);
            cad_builder_end(b, s);
        }
        return;
    }
    int pv = CAD_NODE_START, ps = -1;
    for (int k = 1; k < n && cad_builder_ok(b); k++) {
        int from = cad_alg_mod((long long)r - k, n), to = cad_alg_mod((long long)r + k, n);
        int v = cad_builder_recv(b, cad_loc_add(rbuf, cad_alg_rdsp(c, from)), cad_alg_rcnt(c, from),
                                 from, 0);
        int s =
            cad_builder_send(b, cad_loc_add(sbuf, cad_alg_dsp(c, to)), cad_alg_cnt(c, to), to, 0);
        cad_builder_dep(b, pv, v);
        cad_builder_dep(b, ps, v);
        cad_builder_dep(b, pv, s);
        cad_builder_dep(b, ps, s);
        pv = v;
        ps = s;
    }
    cad_builder_end(b, pv);
    cad_builder_end(b, ps);
}
