/*
 * cad_alg_lambasic.c: the collectives LAM/MPI 7.1.4 does not do the IMPI way, across IMPI
 * clients as CAD graphs: LAM runs them through its lam_basic module
 * (share/ssi/coll/lam_basic/src/ssi_coll_lam_basic_*.c) on the communicator's "flipped"
 * collective cid (lam_mkcoll: -1 - cid, so -1 for MPI_COMM_WORLD, the one communicator
 * that spans clients) with LAM-internal tags (share/include/blktype.h), and so must we,
 * because LAM receives what we send (impi-protocol.md §11.2, §12.3 "Everything else").
 *
 * Messages between clients carry CAD_LAM_CTX and LAM's tag; messages between two ranks of
 * one client are ours (the collective's own context and tags, cad_alg.h), since nobody
 * outside sees them. Who sends what to whom is lam_basic's:
 *
 *   gather(v)       every non-root sends its block to the root (46; gatherv 47); the root
 *                   receives them in rank order, one after the other (LAM's blocking loop)
 *   scatter(v)      the root sends every other rank its block (93; scatterv 94)
 *   alltoall(v)     every ordered pair exchanges one message, all at once (9; alltoallv 10)
 *   allgather       gather to rank 0 (46), then the IMPI bcast of the whole result from
 *                   rank 0 (lam_basic calls the communicator's bcast: tag 120 on the IMPI
 *                   collective context, cad_alg_impi.c)
 *   allgatherv      a gatherv to every rank in turn (47): each rank sends its block to
 *                   every other and receives every other's
 *   scan, exscan    a chain in rank order: rank r receives the prefix of 0 .. r - 1 from
 *                   r - 1 and sends the prefix of 0 .. r to r + 1 (92; exscan 178)
 *   reduce_scatter  the IMPI reduce of the whole vector to rank 0 (cad_alg_impi_reduce.c),
 *                   then the scatterv of the blocks from rank 0 (94); the _block variant
 *                   (not in LAM) alike with equal blocks
 *
 * Where lam_basic loops over blocking calls (the scatter root's sends, allgatherv's
 * gathervs, reduce_scatter's scatterv) our ranks post them all at once: each message names
 * its source and each pair exchanges one message per tag, so they match the same. The
 * gather root keeps LAM's order of receives (its last receive then stands for "all
 * gathered", which the allgather's bcast waits for); scan and exscan are a chain by their
 * data.
 *
 * Hazard: LAM 7.1.4 leaves the communicator on cid -1 after such a collective unless it is
 * built with the lam_mkpt fix (mk/deps.d/30-lam.sh); its next point-to-point messages and
 * IMPI collectives then arrive on CAD_LAM_CTX, where nothing of ours matches them.
 */
#include "cad_alg_int.h"

/* LAM's tags (share/include/blktype.h), written here once. */
#define TAG_GATHER    46
#define TAG_GATHERV   47
#define TAG_SCATTER   93
#define TAG_SCATTERV  94
#define TAG_ALLTOALL  9
#define TAG_ALLTOALLV 10
#define TAG_SCAN      92
#define TAG_EXSCAN    178
/* Our tag offsets for messages inside one client: at least 448, clear of cad_alg_impi's
 * local ones (the allgather and reduce_scatter run them in the same graph). */
#define K_LOCAL       448

/* Builder or planning context (so are the static functions below): a message of the
 * fall-back, LAM's way to another client, ours inside this rank's client. */
static int msg(struct cad_builder *b, const struct cad_impi *l, int type, struct cad_loc at,
               uint64_t len, int peer, int32_t tag)
{
    if (cad_impi_client(l, peer) != cad_impi_client(l, b->c->rank))
        return cad_builder_wire(b, type, at, len, peer, CAD_LAM_CTX, tag);
    return type == CAD_SEND ? cad_builder_send(b, at, len, peer, K_LOCAL)
                            : cad_builder_recv(b, at, len, peer, K_LOCAL);
}

/* This rank's own block in a gather/allgather: rbuf's slot when in place. */
static struct cad_loc own_block(const struct cad_coll *c)
{
    return c->in_place ? cad_loc(CAD_B_RBUF, cad_alg_dsp(c, c->rank)) : cad_loc(CAD_B_SBUF, 0);
}

/* lam_basic_gather(v) to `root`, this rank's block at `own`; the root's receives are
 * chained in rank order. Returns the node after which this rank's part is done. */
static int gather(struct cad_builder *b, const struct cad_impi *l, int root, struct cad_loc own,
                  int32_t tag)
{
    const struct cad_coll *c = b->c;
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    if (c->rank != root) {
        int s = msg(b, l, CAD_SEND, own, c->bytes, root, tag); /* counts: the root's */
        cad_builder_dep(b, CAD_NODE_START, s);
        return s;
    }
    cad_builder_copy(b, cad_loc_add(rbuf, cad_alg_dsp(c, root)), own, cad_alg_cnt(c, root));
    int at = CAD_NODE_START;
    for (int i = 0; i < c->size && cad_builder_ok(b); i++) {
        if (i == root)
            continue;
        int v =
            msg(b, l, CAD_RECV, cad_loc_add(rbuf, cad_alg_dsp(c, i)), cad_alg_cnt(c, i), i, tag);
        cad_builder_dep(b, at, v);
        at = v;
    }
    return at;
}

static void do_gather(struct cad_builder *b, const struct cad_impi *l)
{
    const struct cad_coll *c = b->c;
    struct cad_loc own = c->rank == c->root ? own_block(c) : cad_loc(CAD_B_SBUF, 0);
    cad_builder_end(b, gather(b, l, c->root, own, c->counts ? TAG_GATHERV : TAG_GATHER));
}

/* lam_basic_scatter(v): the root sends every other rank its block, all at once. */
static void do_scatter(struct cad_builder *b, const struct cad_impi *l)
{
    const struct cad_coll *c = b->c;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    int32_t tag = c->counts ? TAG_SCATTERV : TAG_SCATTER;
    if (c->rank != c->root) {
        int v = msg(b, l, CAD_RECV, rbuf, c->bytes, c->root, tag);
        cad_builder_dep(b, CAD_NODE_START, v);
        cad_builder_end(b, v);
        return;
    }
    if (!c->in_place)
        cad_builder_copy(b, rbuf, cad_loc_add(sbuf, cad_alg_dsp(c, c->root)),
                         cad_alg_cnt(c, c->root));
    for (int i = 0; i < c->size && cad_builder_ok(b); i++) {
        if (i == c->root)
            continue;
        int s =
            msg(b, l, CAD_SEND, cad_loc_add(sbuf, cad_alg_dsp(c, i)), cad_alg_cnt(c, i), i, tag);
        cad_builder_dep(b, CAD_NODE_START, s);
        cad_builder_end(b, s);
    }
}

static void do_alltoall(struct cad_builder *b, const struct cad_impi *l)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    int32_t tag = c->counts ? TAG_ALLTOALLV : TAG_ALLTOALL;
    struct cad_loc sbuf = cad_loc(CAD_B_SBUF, 0), rbuf = cad_loc(CAD_B_RBUF, 0);
    cad_builder_copy(b, cad_loc_add(rbuf, cad_alg_rdsp(c, r)), cad_loc_add(sbuf, cad_alg_dsp(c, r)),
                     cad_alg_cnt(c, r));
    for (int k = 1; k < n && cad_builder_ok(b); k++) { /* LAM's order: from r + 1 on */
        int p = cad_alg_mod((long long)r + k, n);
        int v =
            msg(b, l, CAD_RECV, cad_loc_add(rbuf, cad_alg_rdsp(c, p)), cad_alg_rcnt(c, p), p, tag);
        int s =
            msg(b, l, CAD_SEND, cad_loc_add(sbuf, cad_alg_dsp(c, p)), cad_alg_cnt(c, p), p, tag);
        cad_builder_dep(b, CAD_NODE_START, v);
        cad_builder_dep(b, CAD_NODE_START, s);
        cad_builder_end(b, v);
        cad_builder_end(b, s);
    }
}

static void do_allgather(struct cad_builder *b, const struct cad_impi *l)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank;
    struct cad_loc own = own_block(c), rbuf = cad_loc(CAD_B_RBUF, 0);
    if (c->counts) { /* a gatherv to each rank in turn */
        cad_builder_copy(b, cad_loc_add(rbuf, cad_alg_dsp(c, r)), own, cad_alg_cnt(c, r));
        for (int i = 0; i < n && cad_builder_ok(b); i++) {
            if (i == r)
                continue;
            int s = msg(b, l, CAD_SEND, own, cad_alg_cnt(c, r), i, TAG_GATHERV);
            int v = msg(b, l, CAD_RECV, cad_loc_add(rbuf, cad_alg_dsp(c, i)), cad_alg_cnt(c, i), i,
                        TAG_GATHERV);
            cad_builder_dep(b, CAD_NODE_START, s);
            cad_builder_dep(b, CAD_NODE_START, v);
            cad_builder_end(b, s);
            cad_builder_end(b, v);
        }
        return;
    }
    /* Gather to 0, then bcast all n blocks from 0: the bcast writes rbuf only after this
     * rank's block left (in place it is read from there). */
    int done = gather(b, l, 0, own, TAG_GATHER);
    struct cad_coll whole = *c;
    whole.bytes = (uint64_t)n * c->bytes;
    b->c = &whole;
    uint32_t before = b->nodes;
    cad_impi_bcast(b, l, 0, done);
    b->c = c;
    if (b->nodes == before)
        cad_builder_end(b, done);
}

/* scan and exscan (see the top). in: this rank's input; rbuf ends with the result. */
static void do_scan(struct cad_builder *b, const struct cad_impi *l)
{
    const struct cad_coll *c = b->c;
    int n = c->size, r = c->rank, ex = c->kind == CAD_K_EXSCAN;
    int32_t tag = ex ? TAG_EXSCAN : TAG_SCAN;
    uint64_t len = c->bytes;
    struct cad_loc in = cad_builder_input(b), rbuf = cad_loc(CAD_B_RBUF, 0);
    struct cad_loc out = rbuf; /* what goes to r + 1: the prefix of 0 .. r */
    int have = CAD_NODE_START;
    if (r == 0) {
        if (ex)
            out = in; /* exscan: rank 0's rbuf stays untouched */
        else
            cad_builder_copy(b, rbuf, in, len);
    } else if (ex) { /* rbuf = prefix of 0 .. r - 1; out = that op input */
        int v = msg(b, l, CAD_RECV, rbuf, len, r - 1, tag);
        cad_builder_dep(b, CAD_NODE_START, v);
        have = v;
        if (r < n - 1) {
            out = cad_builder_tmp(b, len);
            cad_builder_copy(b, out, in, len);
            have = cad_builder_calc(b, rbuf, out, len);
            cad_builder_dep(b, v, have);
        }
    } else { /* rbuf = input (copied in), then prefix of 0 .. r - 1 op rbuf */
        struct cad_loc prev = cad_builder_tmp(b, len);
        cad_builder_copy(b, rbuf, in, len);
        int v = msg(b, l, CAD_RECV, prev, len, r - 1, tag);
        cad_builder_dep(b, CAD_NODE_START, v);
        have = cad_builder_calc(b, prev, rbuf, len);
        cad_builder_dep(b, v, have);
    }
    if (r < n - 1) {
        int s = msg(b, l, CAD_SEND, out, len, r + 1, tag);
        cad_builder_dep(b, have, s);
        have = s;
    }
    cad_builder_end(b, have);
}

/* IMPI reduce of the whole vector to rank 0 (into scratch there), then lam_basic's
 * scatterv of the blocks from rank 0. Rank 0 hands its own block to itself as a message:
 * the result exists only once the graph ran, and a graph makes no local copies. */
static void do_reduce_scatter(struct cad_builder *b, const struct cad_impi *l)
{
    const struct cad_coll *c = b->c;
    int r = c->rank;
    struct cad_loc acc = r ? cad_loc(CAD_B_NONE, 0) : cad_builder_tmp(b, c->bytes);
    int done = cad_impi_reduce(b, l, 0, cad_builder_input(b), acc);
    struct cad_loc rbuf = cad_loc(CAD_B_RBUF, 0);
    if (r) { /* the reduce may read rbuf (in place): the block lands after */
        int v = msg(b, l, CAD_RECV, rbuf, cad_alg_rs_cnt(c, r), 0, TAG_SCATTERV);
        cad_builder_dep(b, done, v);
        cad_builder_end(b, v);
        return;
    }
    uint64_t off = 0;
    for (int i = 0; i < c->size && cad_builder_ok(b); i++) {
        uint64_t len = cad_alg_rs_cnt(c, i);
        int s = msg(b, l, CAD_SEND, cad_loc_add(acc, off), len, i, TAG_SCATTERV);
        cad_builder_dep(b, done, s);
        cad_builder_end(b, s);
        if (i == 0) {
            int v = cad_builder_recv(b, rbuf, len, 0, K_LOCAL);
            cad_builder_dep(b, done, v);
            cad_builder_end(b, v);
        }
        off += len;
    }
}

/* Task context (builder), any context while planning. */
void cad_alg_lambasic(struct cad_builder *b)
{
    struct cad_impi l;
    cad_impi_layout(b->c, &l);
    switch (b->c->kind) {
    case CAD_K_GATHER:
        do_gather(b, &l);
        break;
    case CAD_K_SCATTER:
        do_scatter(b, &l);
        break;
    case CAD_K_ALLTOALL:
        do_alltoall(b, &l);
        break;
    case CAD_K_ALLGATHER:
        do_allgather(b, &l);
        break;
    case CAD_K_REDUCE_SCATTER:
        do_reduce_scatter(b, &l);
        break;
    default: /* SCAN, EXSCAN */
        do_scan(b, &l);
    }
}
