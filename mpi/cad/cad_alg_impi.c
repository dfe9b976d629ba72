/*
 * cad_alg_impi.c: barrier and bcast across IMPI clients as CAD graphs, the way LAM/MPI
 * 7.1.4 does them (share/ssi/coll/impi/src/ssi_coll_impi_{barrier,bcast}.c; the IMPI
 * spec's sections 12.1-12.3 in shared/specs/impi-protocol.md), so that our ranks and LAM's
 * procs in one MPI_COMM_WORLD run one collective together. The client layout and the
 * helpers both files use are here too; reduce and allreduce are in cad_alg_impi_reduce.c.
 *
 * Masters: the lowest rank of each client, numbered in rank order. What crosses clients is
 * exactly LAM's, because LAM receives it: zero-byte messages with tag 110 (barrier) and
 * the message with tag 120 (bcast) on the collective context (cad_coll.ctx), linear among
 * the masters when there are at most CAD_IMPI_MAX_LINEAR of them, binomial trees over
 * master numbers above. What stays inside a client is ours (LAM runs its local phases on a
 * private shadow communicator, nobody outside sees ours): dissemination barriers and a
 * binomial bcast over the client's ranks, on the collective's own tags (cad_alg_int.h).
 *
 *   barrier  local barrier; masters: linear (master 0 hears from all, then releases all)
 *            or tree (hear from children, tell parent, hear from parent, release
 *            children); local barrier again, so nobody leaves before every client entered
 *   bcast    the root stands in for its client's master: linear, it sends to every other
 *            master; tree over (num - rootnum) mod M, a parent in the root's client being
 *            the root itself; then every client bcasts from its master (the root's client
 *            from the root)
 *
 * Not copied from LAM: its tree barrier releases the children `myrank | mask` (its
 * communicator rank) instead of `mynum | mask` (its master number), which is right only
 * where the two agree (master 0, or only one-rank clients before it). We release the
 * tree's children; where a LAM master gets them wrong, the job hangs whatever we do.
 */
#include "cad_alg_int.h"

/* Any context. */
void cad_impi_layout(const struct cad_coll *c, struct cad_impi *l)
{
    uint64_t seen[CAD_IMPI_MAX_CLIENTS / 64] = {0};
    l->client = c->client;
    l->n = c->size;
    l->nm = 0;
    for (int r = 0; r < c->size; r++) {
        int cl = cad_impi_client(l, r);
        if (seen[cl / 64] >> (cl % 64) & 1)
            continue;
        seen[cl / 64] |= 1ull << (cl % 64);
        l->num[cl] = l->nm;
        l->master[l->nm++] = r;
    }
}

/* Any context. */
int cad_impi_spans(const struct cad_coll *c)
{
    for (int r = 1; c->client && r < c->size; r++)
        if (c->client[r] != c->client[0])
            return 1;
    return 0;
}

/* Any context: linear scans; a build calls them O(log size) times. */
int cad_impi_lsize(const struct cad_impi *l, int cl)
{
    int k = 0;
    for (int r = 0; r < l->n; r++)
        k += cad_impi_client(l, r) == cl;
    return k;
}

/* Any context. */
int cad_impi_lrank(const struct cad_impi *l, int cl, int i)
{
    for (int r = 0; r < l->n; r++)
        if (cad_impi_client(l, r) == cl && i-- == 0)
            return r;
    return -1;
}

/* Any context. */
int cad_impi_lindex(const struct cad_impi *l, int cl, int r)
{
    int k = 0;
    for (int q = 0; q < r; q++)
        k += cad_impi_client(l, q) == cl;
    return k;
}

/* Dissemination barrier among this rank's client (cad_alg_barrier.c's, on the client's
 * ranks), after `after`; tags k0 + round. Returns the node after which it is done. */
static int local_barrier(struct cad_builder *b, const struct cad_impi *l, long k0, int after)
{
    int r = b->c->rank, cl = cad_impi_client(l, r), heard = after;
    int n = cad_impi_lsize(l, cl), me = cad_impi_lindex(l, cl, r);
    struct cad_loc none = cad_loc(CAD_B_NONE, 0);
    for (long long d = 1, k = 0; d < n && cad_builder_ok(b); d <<= 1, k++) {
        int from = cad_impi_lrank(l, cl, cad_alg_mod(me - d, n));
        int v = cad_builder_recv(b, none, 0, from, k0 + k);
        int s = cad_builder_send(b, none, 0, cad_impi_lrank(l, cl, cad_alg_mod(me + d, n)), k0 + k);
        cad_builder_dep(b, heard, v);
        cad_builder_dep(b, heard, s);
        cad_builder_end(b, s);
        heard = v;
    }
    return heard;
}

/* Builder or planning context (so are the static functions below): a zero-byte barrier
 * message between masters. */
static int bar_msg(struct cad_builder *b, int type, int peer)
{
    return cad_builder_wire(b, type, cad_loc(CAD_B_NONE, 0), 0, peer, b->c->ctx,
                            CAD_IMPI_TAG_BARRIER);
}

/* This master's part of the barrier among masters, after `in`; returns the node after
 * which every master has entered. Receives are chained: LAM posts them one by one, and a
 * chain is what lets one node stand for "heard from all". */
static int master_barrier(struct cad_builder *b, const struct cad_impi *l, int in)
{
    int me = l->num[cad_impi_client(l, b->c->rank)], m = l->nm, heard = in;
    if (m <= CAD_IMPI_MAX_LINEAR) {
        if (me) {
            int s = bar_msg(b, CAD_SEND, l->master[0]), v = bar_msg(b, CAD_RECV, l->master[0]);
            cad_builder_dep(b, in, s);
            cad_builder_dep(b, s, v);
            return v;
        }
        for (int i = 1; i < m; i++) {
            int v = bar_msg(b, CAD_RECV, l->master[i]);
            cad_builder_dep(b, heard, v);
            heard = v;
        }
        for (int i = 1; i < m; i++) {
            int s = bar_msg(b, CAD_SEND, l->master[i]);
            cad_builder_dep(b, heard, s);
            cad_builder_end(b, s);
        }
        return heard;
    }
    int dim = cad_impi_cubedim(m), hi = cad_impi_hibit(me, dim);
    for (int i = dim - 1; i > hi; i--) { /* children, the largest subtree first (LAM's order) */
        if ((me | 1 << i) >= m)
            continue;
        int v = bar_msg(b, CAD_RECV, l->master[me | 1 << i]);
        cad_builder_dep(b, heard, v);
        heard = v;
    }
    if (me) {
        int parent = l->master[me & ~(1 << hi)];
        int s = bar_msg(b, CAD_SEND, parent), v = bar_msg(b, CAD_RECV, parent);
        cad_builder_dep(b, heard, s);
        cad_builder_dep(b, s, v);
        heard = v;
    }
    for (int i = hi + 1; i < dim; i++) {
        if ((me | 1 << i) >= m)
            continue;
        int s = bar_msg(b, CAD_SEND, l->master[me | 1 << i]);
        cad_builder_dep(b, heard, s);
        cad_builder_end(b, s);
    }
    return heard;
}

/* Task context (builder), any context while planning. */
void cad_alg_impi_barrier(struct cad_builder *b)
{
    struct cad_impi l;
    cad_impi_layout(b->c, &l);
    int r = b->c->rank;
    int at = local_barrier(b, &l, CAD_IMPI_K_BARRIER_IN, CAD_NODE_START);
    if (l.master[l.num[cad_impi_client(&l, r)]] == r)
        at = master_barrier(b, &l, at);
    cad_builder_end(b, local_barrier(b, &l, CAD_IMPI_K_BARRIER_OUT, at));
}

/* Binomial bcast of rbuf inside this rank's client from its rank `lroot`, whose message
 * is in after `have`; other ranks start after `after` (have == after for them). Leaves
 * `after` for the caller to end. */
static void local_bcast(struct cad_builder *b, const struct cad_impi *l, int lroot, int have,
                        int after)
{
    const struct cad_coll *c = b->c;
    int cl = cad_impi_client(l, c->rank), n = cad_impi_lsize(l, cl), sent = 0;
    int lr = cad_impi_lindex(l, cl, lroot);
    long long v = cad_alg_mod((long long)cad_impi_lindex(l, cl, c->rank) - lr, n);
    long long m = cad_alg_lowbit(v, n);
    struct cad_loc buf = cad_loc(CAD_B_RBUF, 0);
    if (v) {
        int x = cad_builder_recv(
            b, buf, c->bytes, cad_impi_lrank(l, cl, cad_alg_mod(v - m + lr, n)), CAD_IMPI_K_BCAST);
        cad_builder_dep(b, have, x);
        have = x;
    }
    for (m >>= 1; m > 0 && cad_builder_ok(b); m >>= 1) {
        if (v + m >= n)
            continue;
        int s = cad_builder_send(
            b, buf, c->bytes, cad_impi_lrank(l, cl, cad_alg_mod(v + m + lr, n)), CAD_IMPI_K_BCAST);
        cad_builder_dep(b, have, s);
        cad_builder_end(b, s);
        sent = 1;
    }
    if (!sent && have != after)
        cad_builder_end(b, have);
}

/* A bcast message between clients. */
static int bcast_msg(struct cad_builder *b, int type, int peer)
{
    return cad_builder_wire(b, type, cad_loc(CAD_B_RBUF, 0), b->c->bytes, peer, b->c->ctx,
                            CAD_IMPI_TAG_BCAST);
}

/* Task context (builder), any context while planning. */
void cad_impi_bcast(struct cad_builder *b, const struct cad_impi *l, int root, int after)
{
    int r = b->c->rank, m = l->nm, cl = cad_impi_client(l, r), rcl = cad_impi_client(l, root);
    int me = l->num[cl], rootnum = l->num[rcl], have = after;
    int is_master = l->master[me] == r;
    if (r == root && m <= CAD_IMPI_MAX_LINEAR) {
        for (int i = 0; i < m; i++) {
            if (i == rootnum)
                continue;
            int s = bcast_msg(b, CAD_SEND, l->master[i]);
            cad_builder_dep(b, after, s);
            cad_builder_end(b, s);
        }
    } else if (is_master && cl != rcl && m <= CAD_IMPI_MAX_LINEAR) {
        have = bcast_msg(b, CAD_RECV, root);
        cad_builder_dep(b, after, have);
    } else if (r == root || (is_master && cl != rcl)) { /* tree */
        int v = cad_alg_mod((long long)me - rootnum, m), dim = cad_impi_cubedim(m);
        int hi = cad_impi_hibit(v, dim);
        if (v) {
            int peer = l->master[((v & ~(1 << hi)) + rootnum) % m];
            have = bcast_msg(b, CAD_RECV, cad_impi_client(l, peer) == rcl ? root : peer);
            cad_builder_dep(b, after, have);
        }
        for (int i = hi + 1; i < dim; i++) {
            if ((v | 1 << i) >= m)
                continue;
            int s = bcast_msg(b, CAD_SEND, l->master[((v | 1 << i) + rootnum) % m]);
            cad_builder_dep(b, have, s);
            cad_builder_end(b, s);
        }
    }
    local_bcast(b, l, cl == rcl ? root : l->master[me], have, after);
}

/* Task context (builder), any context while planning. */
void cad_alg_impi_bcast(struct cad_builder *b)
{
    struct cad_impi l;
    cad_impi_layout(b->c, &l);
    cad_impi_bcast(b, &l, b->c->root, CAD_NODE_START);
}
