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
void cad_alg_alltoall(struct cad_ab *b)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, pairwise = c->alg == CAD_A_PAIRWISE;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    cad_ab_copy(b, cad_loc_add(rbuf, cad_ab_rdsp(c, r)), cad_loc_add(sbuf, cad_ab_dsp(c, r)),
                cad_ab_cnt(c, r));
    if (!pairwise) {
        for (int k = 1; k < n && cad_ab_ok(b); k++) {
            int from = cad_ab_mod((long long)r - k, n);
            int v = cad_ab_recv(b, cad_loc_add(rbuf, cad_ab_rdsp(c, from)), cad_ab_rcnt(c, from),
                                from, 0);
            cad_ab_dep(b, CAD_NODE_START, v);
            cad_ab_end(b, v);
        }
        for (int k = 1; k < n && cad_ab_ok(b); k++) {
            int to = cad_ab_mod((long long)r + k, n);
            int s = cad_ab_send(b, cad_loc_add(sbuf, cad_ab_dsp(c, to)), cad_ab_cnt(c, to), to, 0);
            cad_ab_dep(b, CAD_NODE_START, s);
            cad_ab_end(b, s);
        }
        return;
    }
    int pv = CAD_NODE_START, ps = -1;
    for (int k = 1; k < n && cad_ab_ok(b); k++) {
        int from = cad_ab_mod((long long)r - k, n), to = cad_ab_mod((long long)r + k, n);
        int v =
            cad_ab_recv(b, cad_loc_add(rbuf, cad_ab_rdsp(c, from)), cad_ab_rcnt(c, from), from, 0);
        int s = cad_ab_send(b, cad_loc_add(sbuf, cad_ab_dsp(c, to)), cad_ab_cnt(c, to), to, 0);
        cad_ab_dep(b, pv, v);
        cad_ab_dep(b, ps, v);
        cad_ab_dep(b, pv, s);
        cad_ab_dep(b, ps, s);
        pv = v;
        ps = s;
    }
    cad_ab_end(b, pv);
    cad_ab_end(b, ps);
}
