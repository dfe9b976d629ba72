/*
 * cad_alg_test.c: the collective builders (mpi/cad/cad_alg*.c) run by the simulator
 * (cad_sim.h): every kind with every algorithm that applies to it (and AUTO), on 1 to 8,
 * 13 and 16 ranks, every root up to 8 ranks, empty to 100000-byte messages, in place or
 * not, regular and v-variants with uneven and empty blocks, in FIFO, LIFO and random
 * completion orders, eager and rendezvous, CALC inline or later. Each rank's graph is
 * built the way the library will (sim_coll: plan, exact capacities, scratch full of
 * garbage, local copies) and every byte of every receive buffer is compared with a
 * reference computed here the plain way; send buffers must be unchanged, nothing may
 * write past a buffer or its scratch, and no two messages of one direction between two
 * ranks may share a tag. Non-commutative reductions use 2x2 matrix products (a user op on
 * a derived type), which catch any reordering. cad_alg_plan_test.c tests the planning.
 *
 * The full product of parameters would take minutes, so each combination of kind,
 * algorithm, size, root, size class, in-place and variant runs once, with the order,
 * protocol, CALC mode and reduction case drawn from a fixed pseudo-random sequence (the
 * same on every run; a failure names every parameter, seed included).
 */
#include "ut.h"
#include "cad_sim.h"
#include <stdlib.h>
#include <string.h>

/* --- reductions: the cases and a reference written independently of cad_calc.c ------- */

enum { RC_SUM_I32, RC_BXOR_U8, RC_USUM_I32, RC_MAT, NRC };

static const struct {
    int op, dtype, commutative;
    size_t esize;
} rcase[NRC] = {
    [RC_SUM_I32] = {CAD_OP_SUM, CAD_T_INT32, 1, 4},
    [RC_BXOR_U8] = {CAD_OP_BXOR, CAD_T_UINT8, 1, 1},
    [RC_USUM_I32] = {CAD_OP_USER, CAD_T_INT32, 1, 4},
    [RC_MAT] = {CAD_OP_USER, CAD_T_DERIVED, 0, 16},
};

#define USER_MAT 1 /* user-op table entries */
#define USER_SUM 2

struct mat {
    uint32_t a, b, c, d; /* [a b; c d] */
};

/* lower * higher: 2x2 products mod 2^32 do not commute. */
static struct mat mat_mul(struct mat x, struct mat y)
{
    return (struct mat){x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                        x.c * y.b + x.d * y.d};
}

static void user_mat(const void *in, void *inout, uint64_t count, int dtype)
{
    UT_EQ(dtype, CAD_T_DERIVED);
    for (uint64_t i = 0; i < count; i++) {
        struct mat x, y;
        memcpy(&x, (const char *)in + i * sizeof x, sizeof x);
        memcpy(&y, (char *)inout + i * sizeof y, sizeof y);
        y = mat_mul(x, y);
        memcpy((char *)inout + i * sizeof y, &y, sizeof y);
    }
}

static void user_sum(const void *in, void *inout, uint64_t count, int dtype)
{
    UT_EQ(dtype, CAD_T_INT32);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t x, y;
        memcpy(&x, (const char *)in + 4 * i, 4);
        memcpy(&y, (char *)inout + 4 * i, 4);
        y += x;
        memcpy((char *)inout + 4 * i, &y, 4);
    }
}

/* inout = lower op inout, the reference way. */
static void ref_op(int rc, const uint8_t *lower, uint8_t *inout, size_t bytes)
{
    if (rc == RC_MAT) {
        user_mat(lower, inout, bytes / 16, CAD_T_DERIVED);
        return;
    }
    if (rc == RC_BXOR_U8) {
        for (size_t i = 0; i < bytes; i++)
            inout[i] ^= lower[i];
        return;
    }
    user_sum(lower, inout, bytes / 4, CAD_T_INT32);
}

/* --- test cases ---------------------------------------------------------------------- */

struct tcase {
    int kind, alg, n, root, in_place, v, rc;
    uint64_t bytes, chunk;
    int order, proto, inl, quick;
    uint64_t seed;
};

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Rank r's input byte i. */
static uint8_t inb(const struct tcase *t, int r, size_t i)
{
    return (uint8_t)mix(t->seed * 1000003u + (uint64_t)r * 7919u + i);
}

/* A v-variant block: empty about one time in four, else around t->bytes. */
static uint64_t vblock(const struct tcase *t, int i, int j)
{
    uint64_t h = mix(t->seed ^ ((uint64_t)i << 20) ^ ((uint64_t)j << 40) ^ 0x5555);
    if (!t->bytes || h % 4 == 0)
        return 0;
    return t->bytes / 2 + (h >> 8) % (t->bytes + 1);
}

/* Each rank's buffers, arrays, input and expected result. */
struct rank_data {
    struct cad_coll c;
    struct cad_plan p;
    uint64_t cnt[SIM_RANKS], dsp[SIM_RANKS], rcnt[SIM_RANKS], rdsp[SIM_RANKS];
    size_t slen, rlen; /* buffer sizes (0: no buffer) */
    uint8_t *sbuf, *rbuf, *tmp;
    uint8_t *in;    /* the input as generated: sbuf's, or rbuf's in place */
    size_t inlen;   /* ... its length */
    uint8_t *want;  /* rbuf afterwards */
    uint8_t *sinit; /* sbuf before */
};

static struct rank_data rd[SIM_RANKS];

static int has_v(int kind)
{
    return kind == CAD_K_GATHER || kind == CAD_K_SCATTER || kind == CAD_K_ALLGATHER ||
           kind == CAD_K_ALLTOALL || kind == CAD_K_REDUCE_SCATTER;
}

static int is_red(int kind)
{
    return kind == CAD_K_REDUCE || kind == CAD_K_ALLREDUCE || kind == CAD_K_REDUCE_SCATTER ||
           kind == CAD_K_SCAN || kind == CAD_K_EXSCAN;
}

/* Blocks laid out in reverse rank order with gaps: displacements need not increase. */
static size_t layout(int n, const uint64_t *cnt, uint64_t *dsp)
{
    size_t at = 0;
    for (int i = n - 1; i >= 0; i--) {
        dsp[i] = at;
        at += cnt[i] + (size_t)(i % 3) * 3;
    }
    return at;
}

/* Sizes, arrays and the description of every rank's part (no buffers yet). */
static void describe(const struct tcase *t)
{
    int n = t->n;
    uint64_t esize = rcase[t->rc].esize, vec = t->bytes / esize * esize;
    uint64_t rs_cnt[SIM_RANKS], rs_total = 0;
    for (int i = 0; i < n; i++) { /* reduce_scatter blocks */
        rs_cnt[i] = t->v ? vblock(t, i, 0) / esize * esize : t->bytes / esize / (uint64_t)n * esize;
        rs_total += rs_cnt[i];
    }
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        memset(d, 0, sizeof *d);
        struct cad_coll *c = &d->c;
        *c = (struct cad_coll){.kind = t->kind,
                               .alg = t->alg,
                               .rank = r,
                               .size = n,
                               .root = t->root,
                               .ctx = 5,
                               .tag = 1000,
                               .bytes = t->bytes,
                               .in_place = t->in_place,
                               .chunk = t->chunk};
        if (is_red(t->kind)) {
            c->op = rcase[t->rc].op;
            c->dtype = rcase[t->rc].dtype;
            c->commutative = rcase[t->rc].commutative;
            c->user_op = t->rc == RC_MAT ? USER_MAT : USER_SUM;
            c->bytes = t->kind == CAD_K_REDUCE_SCATTER ? rs_total : vec;
            c->count = c->bytes / esize;
        }
        int root = r == t->root;
        for (int i = 0; i < n; i++) {
            d->cnt[i] = t->v ? vblock(t, i, t->kind == CAD_K_ALLTOALL ? r : 0) : t->bytes;
            d->rcnt[i] = t->v ? vblock(t, r, i) : t->bytes; /* alltoall: what i sends r */
        }
        size_t ext = layout(n, d->cnt, d->dsp), rext = layout(n, d->rcnt, d->rdsp);
        if (!t->v) {
            for (int i = 0; i < n; i++)
                d->dsp[i] = d->rdsp[i] = (uint64_t)i * t->bytes;
            ext = rext = (size_t)n * t->bytes;
        }
        if (t->v && t->kind != CAD_K_REDUCE_SCATTER) {
            c->counts = d->cnt;
            c->displs = d->dsp;
            if (t->kind == CAD_K_ALLTOALL) {
                c->rcounts = d->rcnt;
                c->rdispls = d->rdsp;
            }
        }
        if (t->v && t->kind == CAD_K_REDUCE_SCATTER) {
            memcpy(d->cnt, rs_cnt, sizeof rs_cnt);
            c->counts = d->cnt;
        }
        uint64_t own = t->v ? d->cnt[r] : t->bytes; /* gather/scatter/allgather: my block */
        if (t->v && (t->kind == CAD_K_GATHER || t->kind == CAD_K_SCATTER))
            c->bytes = own;
        switch (t->kind) {
        case CAD_K_BCAST:
            d->rlen = t->bytes;
            break;
        case CAD_K_REDUCE:
            d->slen = root && t->in_place ? 0 : c->bytes;
            d->rlen = root ? c->bytes : 0;
            break;
        case CAD_K_ALLREDUCE:
        case CAD_K_SCAN:
        case CAD_K_EXSCAN:
            d->slen = t->in_place ? 0 : c->bytes;
            d->rlen = c->bytes;
            break;
        case CAD_K_REDUCE_SCATTER:
            d->slen = t->in_place ? 0 : c->bytes;
            d->rlen = t->in_place ? c->bytes : t->v ? rs_cnt[r] : c->bytes / (uint64_t)n;
            break;
        case CAD_K_GATHER:
            d->slen = root && t->in_place ? 0 : own;
            d->rlen = root ? ext : 0;
            break;
        case CAD_K_SCATTER:
            d->slen = root ? ext : 0;
            d->rlen = root && t->in_place ? 0 : own;
            break;
        case CAD_K_ALLGATHER:
            d->slen = t->in_place ? 0 : own;
            d->rlen = ext;
            break;
        case CAD_K_ALLTOALL:
            d->slen = ext;
            d->rlen = rext;
            break;
        }
    }
}

/* Left fold of ranks lo..hi's inputs, bytes [off, off + len), into out. */
static void fold(const struct tcase *t, int lo, int hi, size_t off, size_t len, uint8_t *out)
{
    uint8_t *x = malloc(len + 1);
    memcpy(out, rd[lo].in + off, len);
    for (int k = lo + 1; k <= hi; k++) {
        memcpy(x, rd[k].in + off, len);
        ref_op(t->rc, out, x, len);
        memcpy(out, x, len);
    }
    free(x);
}

static uint8_t *guarded(struct sim *s, int r, size_t len)
{
    uint8_t *p = sim_alloc(s, r, len + 2 * SIM_GUARD);
    memset(p, 0xcd, SIM_GUARD);
    memset(p + SIM_GUARD + len, 0xcd, SIM_GUARD);
    memset(p + SIM_GUARD, 0xee, len); /* what rbuf holds where nothing is written */
    return p + SIM_GUARD;
}

/* Inputs into the buffers (sbuf, or rbuf where MPI's in-place takes them from there),
 * and the expected receive buffers. */
static void fill(const struct tcase *t)
{
    int n = t->n, k = t->kind;
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        int root = r == t->root;
        uint8_t *dst = d->sbuf;
        size_t len = d->slen;
        if (k == CAD_K_BCAST) {
            dst = d->rbuf;
            len = root ? d->rlen : 0;
        } else if (t->in_place && !d->slen && (k == CAD_K_GATHER || k == CAD_K_ALLGATHER)) {
            dst = d->rbuf + d->dsp[r]; /* own block already at its place */
            len = d->cnt[r];
        } else if (t->in_place && !d->slen && is_red(k)) {
            dst = d->rbuf;
            len = d->c.bytes;
        }
        d->inlen = len;
        d->in = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            d->in[i] = inb(t, r, i);
        memcpy(dst, d->in, len);
        d->sinit = malloc(d->slen + 1);
        memcpy(d->sinit, d->sbuf, d->slen);
    }
    for (int r = 0; r < n; r++) { /* expected */
        struct rank_data *d = &rd[r];
        d->want = malloc(d->rlen + 1);
        memcpy(d->want, d->rbuf, d->rlen);
        uint8_t *w = d->want;
        switch (k) {
        case CAD_K_BCAST:
            memcpy(w, rd[t->root].in, d->rlen);
            break;
        case CAD_K_REDUCE:
            if (r == t->root)
                fold(t, 0, n - 1, 0, d->rlen, w);
            break;
        case CAD_K_ALLREDUCE:
            fold(t, 0, n - 1, 0, d->rlen, w);
            break;
        case CAD_K_SCAN:
            fold(t, 0, r, 0, d->rlen, w);
            break;
        case CAD_K_EXSCAN:
            if (r)
                fold(t, 0, r - 1, 0, d->rlen, w);
            break;
        case CAD_K_REDUCE_SCATTER: {
            size_t off = 0, len = t->v ? d->cnt[r] : d->c.bytes / (uint64_t)n;
            for (int i = 0; i < r; i++)
                off += t->v ? d->cnt[i] : len;
            fold(t, 0, n - 1, off, len, w);
            break;
        }
        case CAD_K_GATHER:
            for (int i = 0; r == t->root && i < n; i++)
                memcpy(w + d->dsp[i], rd[i].in, d->cnt[i]);
            break;
        case CAD_K_ALLGATHER:
            for (int i = 0; i < n; i++)
                memcpy(w + d->dsp[i], rd[i].in, d->cnt[i]);
            break;
        case CAD_K_SCATTER:
            if (d->rlen)
                memcpy(w, rd[t->root].in + rd[t->root].dsp[r], d->rlen);
            break;
        case CAD_K_ALLTOALL:
            for (int i = 0; i < n; i++)
                memcpy(w + d->rdsp[i], rd[i].in + rd[i].dsp[r], d->rcnt[i]);
            break;
        }
    }
}

static const char *tname(const struct tcase *t)
{
    static char buf[200];
    snprintf(buf, sizeof buf,
             "%s/%s n=%d root=%d bytes=%llu in_place=%d v=%d rc=%d chunk=%llu order=%d "
             "proto=%d inline=%d seed=%llu",
             cad_kind_name(t->kind), cad_alg_name(t->alg), t->n, t->root,
             (unsigned long long)t->bytes, t->in_place, t->v, t->rc, (unsigned long long)t->chunk,
             t->order, t->proto, t->inl, (unsigned long long)t->seed);
    return buf;
}

static void check_rank(const struct tcase *t, int r)
{
    struct rank_data *d = &rd[r];
    for (size_t i = 0; i < d->rlen; i++)
        if (d->rbuf[i] != d->want[i])
            ut_fail(__FILE__, __LINE__, "%s (alg %s): rank %d rbuf byte %zu of %zu: %#x, want %#x",
                    tname(t), cad_alg_name(d->c.alg), r, i, d->rlen, d->rbuf[i], d->want[i]);
    if (memcmp(d->sbuf, d->sinit, d->slen))
        ut_fail(__FILE__, __LINE__, "%s: rank %d: sbuf changed", tname(t), r);
    if (!sim_guard_ok(d->sbuf + d->slen) || !sim_guard_ok(d->sbuf - SIM_GUARD) ||
        !sim_guard_ok(d->rbuf + d->rlen) || !sim_guard_ok(d->rbuf - SIM_GUARD))
        ut_fail(__FILE__, __LINE__, "%s: rank %d: write outside a buffer", tname(t), r);
    if (d->tmp && !sim_guard_ok(d->tmp + d->p.tmp_bytes))
        ut_fail(__FILE__, __LINE__, "%s: rank %d: write past the scratch", tname(t), r);
}

static const enum sim_order orders[] = {SIM_FIFO, SIM_LIFO, SIM_RANDOM};

static int cmp_xfer(const void *a, const void *b)
{
    const struct cad_node *x = a, *y = b;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->u.x.peer != y->u.x.peer)
        return x->u.x.peer < y->u.x.peer ? -1 : 1;
    return x->u.x.tag < y->u.x.tag ? -1 : x->u.x.tag > y->u.x.tag;
}

/* Every message on the collective's context, with a tag of its range, and no two
 * messages of one direction between the same two ranks with the same tag. */
static void check_tags(const struct tcase *t, int r, struct cad_graph *g)
{
    static struct cad_node x[CAD_MAX_NODES];
    int m = 0;
    for (uint32_t i = 2; i < g->nnodes; i++) {
        const struct cad_node *nd = &cad_nodes(g)[i];
        if (nd->type != CAD_SEND && nd->type != CAD_RECV)
            continue;
        UT_EQ(nd->u.x.ctx, 5);
        UT_ASSERT(nd->u.x.tag >= 1000 && nd->u.x.tag < 1000 + CAD_ALG_TAGS);
        x[m++] = *nd;
    }
    qsort(x, (size_t)m, sizeof x[0], cmp_xfer);
    for (int i = 1; i < m; i++)
        if (!cmp_xfer(&x[i - 1], &x[i]))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: two %s with peer %d share tag %d", tname(t),
                    r, x[i].type == CAD_SEND ? "sends" : "receives", x[i].u.x.peer, x[i].u.x.tag);
}

/* One collective on t->n simulated ranks, checked. Returns the algorithm rank 0 used. */
static int run(const struct tcase *t)
{
    static struct sim s;
    int n = t->n;
    describe(t);
    size_t part = 0;
    for (int r = 0; r < n; r++) { /* plan first: the partition must hold the scratch */
        struct cad_coll c = rd[r].c;
        struct cad_plan p;
        const char *why = "";
        if (cad_alg_plan(&c, &p, &why))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: plan: %s", tname(t), r, why);
        size_t need = rd[r].slen + rd[r].rlen + p.tmp_bytes + 8 * SIM_GUARD + 64;
        part = need > part ? need : part;
    }
    sim_init_part(&s, n, 2, 1, t->seed, part);
    s.order = orders[t->order];
    s.proto = t->proto ? SIM_RENDEZVOUS : SIM_EAGER;
    s.calc_inline = t->inl;
    s.quick = t->quick;
    s.user[USER_MAT] = user_mat;
    s.user[USER_SUM] = user_sum;
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        d->sbuf = guarded(&s, r, d->slen);
        d->rbuf = guarded(&s, r, d->rlen);
        if (d->slen)
            d->c.sbuf = d->sbuf;
        if (d->rlen)
            d->c.rbuf = d->rbuf;
    }
    fill(t);
    for (int r = 0; r < n; r++) {
        rd[r].tmp = sim_coll(&s, r, &rd[r].c, &rd[r].p);
        check_tags(t, r, s.r[r].g);
    }
    for (int r = 1; r < n; r++) /* AUTO chose alike everywhere */
        if (t->kind != CAD_K_ALLTOALL)
            UT_EQ(rd[r].c.alg, rd[0].c.alg);
    sim_run(&s);
    for (int r = 0; r < n; r++)
        check_rank(t, r);
    int alg = rd[0].c.alg;
    for (int r = 0; r < n; r++) {
        free(rd[r].in);
        free(rd[r].want);
        free(rd[r].sinit);
    }
    sim_free(&s);
    return alg;
}

/* --- the sweep ----------------------------------------------------------------------- */

static const uint64_t sizes[] = {0, 1, 7, 64, 4096 + 3, 100000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
static const int comm_sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 13, 16};
#define NCOMM ((int)(sizeof comm_sizes / sizeof comm_sizes[0]))

static int applies(const struct tcase *t)
{
    int k = t->kind, a = t->alg;
    if (t->in_place && (k == CAD_K_BCAST || k == CAD_K_ALLTOALL || k == CAD_K_BARRIER))
        return 0;
    if (t->v && (a == CAD_A_BINOMIAL || (k == CAD_K_ALLGATHER && a == CAD_A_RECDBL)))
        return 0;
    if (k == CAD_K_ALLGATHER && a == CAD_A_RECDBL && (t->n & (t->n - 1)))
        return 0;
    if (a == CAD_A_RING && is_red(k) && !rcase[t->rc].commutative)
        return 0;
    return 1;
}

/* Every size, root, size class, in-place and variant once for this kind and algorithm. */
static void sweep(int kind, int alg)
{
    static uint64_t rot;
    int rooted = kind == CAD_K_BCAST || kind == CAD_K_REDUCE || kind == CAD_K_GATHER ||
                 kind == CAD_K_SCATTER;
    for (int ni = 0; ni < NCOMM; ni++) {
        int n = comm_sizes[ni];
        for (int root = 0; root < (rooted ? n : 1); root++) {
            if (n > 8 && root != 0 && root != 1 && root != n / 2 && root != n - 1)
                continue;
            for (int si = 0; si < NSIZES; si++) {
                if (kind == CAD_K_BARRIER && si)
                    break;
                if (n > 8 && sizes[si] == 100000 && root > 1 && kind != CAD_K_ALLTOALL)
                    continue; /* the big ones on the largest jobs: fewer roots */
                for (int ip = 0; ip < 2; ip++)
                    for (int v = 0; v < (has_v(kind) ? 2 : 1); v++) {
                        uint64_t h = mix(++rot); /* the sampled parameters */
                        struct tcase t = {.kind = kind,
                                          .alg = alg,
                                          .n = n,
                                          .root = root,
                                          .in_place = ip,
                                          .v = v,
                                          .bytes = sizes[si],
                                          .order = (int)(h % 3),
                                          .proto = (int)(h >> 8 & 1),
                                          .inl = (int)(h >> 9 & 1),
                                          .rc = (int)((h >> 12) % NRC),
                                          .seed = rot};
                        if (alg == CAD_A_RING && !rcase[t.rc].commutative)
                            t.rc = RC_USUM_I32;
                        if (kind == CAD_K_BCAST && alg == CAD_A_CHAIN && sizes[si] < 10000)
                            t.chunk = (uint64_t[]){0, 100, 1000}[(h >> 16) % 3];
                        t.quick = n * sizes[si] > 200000;
                        if (!applies(&t))
                            continue;
                        run(&t);
                    }
            }
        }
    }
}

UT_TEST(cad_alg_barrier)
{
    sweep(CAD_K_BARRIER, CAD_A_DISSEM);
    sweep(CAD_K_BARRIER, CAD_A_AUTO);
}

UT_TEST(cad_alg_bcast)
{
    sweep(CAD_K_BCAST, CAD_A_BINOMIAL);
    sweep(CAD_K_BCAST, CAD_A_CHAIN);
    sweep(CAD_K_BCAST, CAD_A_AUTO);
}

UT_TEST(cad_alg_reduce)
{
    sweep(CAD_K_REDUCE, CAD_A_BINOMIAL);
    sweep(CAD_K_REDUCE, CAD_A_AUTO);
}

UT_TEST(cad_alg_allreduce)
{
    sweep(CAD_K_ALLREDUCE, CAD_A_RECDBL);
    sweep(CAD_K_ALLREDUCE, CAD_A_RING);
    sweep(CAD_K_ALLREDUCE, CAD_A_COMPOSITE);
    sweep(CAD_K_ALLREDUCE, CAD_A_AUTO);
}

UT_TEST(cad_alg_gather)
{
    sweep(CAD_K_GATHER, CAD_A_LINEAR);
    sweep(CAD_K_GATHER, CAD_A_BINOMIAL);
    sweep(CAD_K_GATHER, CAD_A_AUTO);
}

UT_TEST(cad_alg_scatter)
{
    sweep(CAD_K_SCATTER, CAD_A_LINEAR);
    sweep(CAD_K_SCATTER, CAD_A_BINOMIAL);
    sweep(CAD_K_SCATTER, CAD_A_AUTO);
}

UT_TEST(cad_alg_allgather)
{
    sweep(CAD_K_ALLGATHER, CAD_A_RING);
    sweep(CAD_K_ALLGATHER, CAD_A_RECDBL);
    sweep(CAD_K_ALLGATHER, CAD_A_AUTO);
}

UT_TEST(cad_alg_alltoall)
{
    sweep(CAD_K_ALLTOALL, CAD_A_LINEAR);
    sweep(CAD_K_ALLTOALL, CAD_A_PAIRWISE);
    sweep(CAD_K_ALLTOALL, CAD_A_AUTO);
}

UT_TEST(cad_alg_reduce_scatter)
{
    sweep(CAD_K_REDUCE_SCATTER, CAD_A_COMPOSITE);
    sweep(CAD_K_REDUCE_SCATTER, CAD_A_RING);
    sweep(CAD_K_REDUCE_SCATTER, CAD_A_AUTO);
}

UT_TEST(cad_alg_scan)
{
    sweep(CAD_K_SCAN, CAD_A_LINEAR);
    sweep(CAD_K_SCAN, CAD_A_RECDBL);
    sweep(CAD_K_SCAN, CAD_A_AUTO);
    sweep(CAD_K_EXSCAN, CAD_A_LINEAR);
    sweep(CAD_K_EXSCAN, CAD_A_RECDBL);
    sweep(CAD_K_EXSCAN, CAD_A_AUTO);
}

/* Non-commutative reductions on every size from 1 to 16 and every root: the rotation
 * above gives each combination only some of the cases. */
UT_TEST(cad_alg_noncommutative_every_size)
{
    static const int kinds[] = {CAD_K_REDUCE,         CAD_K_ALLREDUCE, CAD_K_ALLREDUCE,
                                CAD_K_REDUCE_SCATTER, CAD_K_SCAN,      CAD_K_SCAN,
                                CAD_K_EXSCAN,         CAD_K_EXSCAN};
    static const int algs[] = {CAD_A_BINOMIAL, CAD_A_RECDBL, CAD_A_COMPOSITE, CAD_A_COMPOSITE,
                               CAD_A_LINEAR,   CAD_A_RECDBL, CAD_A_LINEAR,    CAD_A_RECDBL};
    unsigned rot = 0;
    for (int k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
        for (int n = 1; n <= SIM_RANKS; n++)
            for (int root = 0; root < (kinds[k] == CAD_K_REDUCE ? n : 1); root++, rot++) {
                struct tcase t = {.kind = kinds[k],
                                  .alg = algs[k],
                                  .n = n,
                                  .root = root,
                                  .in_place = (int)(rot & 1),
                                  .v = (int)(rot / 2 & 1),
                                  .rc = RC_MAT,
                                  .bytes = 16 * 37,
                                  .order = (int)(rot % 3),
                                  .proto = (int)(rot / 3 & 1),
                                  .inl = (int)(rot / 5 & 1),
                                  .seed = rot + 77};
                run(&t);
            }
}

/* Sizes the sweep does not reach: AUTO's large-message choices, and a chain bcast whose
 * segment must grow to fit the tags. */
UT_TEST(cad_alg_large_and_many_segments)
{
    struct tcase t = {.kind = CAD_K_BCAST, .n = 5, .root = 3, .bytes = 150001, .seed = 5};
    UT_EQ(run(&t), CAD_A_CHAIN);
    t = (struct tcase){.kind = CAD_K_BCAST, .n = 2, .root = 2 - 1, .bytes = 150001, .seed = 6};
    UT_EQ(run(&t), CAD_A_BINOMIAL);
    t = (struct tcase){.kind = CAD_K_BCAST,
                       .alg = CAD_A_CHAIN,
                       .n = 3,
                       .root = 1,
                       .bytes = 100000,
                       .chunk = 1,
                       .quick = 1,
                       .proto = 1,
                       .order = 2,
                       .seed = 7};
    run(&t);
    /* 100000 bytes in 4000 segments of 25: the middle rank receives and forwards each,
     * the root only sends, the last rank only receives. */
    UT_EQ(rd[2].p.node_cap, 2 + 2 * 4000);
    UT_EQ(rd[1].p.node_cap, 2 + 4000);
    UT_EQ(rd[0].p.node_cap, 2 + 4000);
}

/* --- barrier semantics: a rank's END must depend on every rank's START ------------------
 * Data cannot show a barrier that lets a rank leave early (it moves none), so this looks
 * at the graphs themselves: a node of rank r "knows" rank q entered if q's START reaches
 * it through edges of one graph and messages (a SEND to the matching RECV: same pair, same
 * tag). Every rank's END must know every rank. */
#define HB_MAX 16

static struct cad_graph *hb_build(int kind, int r, int n, void **mem)
{
    struct cad_coll c = {.kind = kind, .rank = r, .size = n, .ctx = 3, .tag = 0};
    struct cad_plan p;
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    size_t bytes = cad_bytes(p.node_cap, p.edge_cap);
    *mem = calloc(1, bytes + p.tmp_bytes + 8);
    struct cad_owner own = {.rank = r, .comm_size = n, .part_size = ~0ull >> 1};
    struct cad_graph *g = cad_init(*mem, bytes, p.node_cap, p.edge_cap, &own);
    UT_ASSERT(g);
    UT_EQ(cad_alg_build(g, &c, (char *)*mem + bytes), 0);
    UT_EQ(cad_finalize(g, 0), 0);
    return g;
}

/* Bit q of know[r][i]: rank q's START reaches node i of rank r. Fixpoint over the DAGs. */
static void hb_check(int kind, int n)
{
    struct cad_graph *g[HB_MAX];
    void *mem[HB_MAX];
    static uint32_t know[HB_MAX][256];
    memset(know, 0, sizeof know);
    for (int r = 0; r < n; r++) {
        g[r] = hb_build(kind, r, n, &mem[r]);
        UT_ASSERT(g[r]->nnodes <= 256);
        know[r][CAD_NODE_START] = 1u << r;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int r = 0; r < n; r++) {
            struct cad_node *nd = cad_nodes(g[r]);
            const uint16_t *succ = cad_succ(g[r]);
            for (uint32_t i = 0; i < g[r]->nnodes; i++) {
                uint32_t k = know[r][i];
                for (uint32_t j = 0; j < nd[i].nsucc; j++) { /* along the graph */
                    uint32_t *t = &know[r][succ[nd[i].first_succ + j]];
                    changed |= (*t | k) != *t;
                    *t |= k;
                }
                if (nd[i].type != CAD_SEND) /* along the message */
                    continue;
                int q = nd[i].u.x.peer;
                struct cad_node *qn = cad_nodes(g[q]);
                for (uint32_t j = 0; j < g[q]->nnodes; j++)
                    if (qn[j].type == CAD_RECV && qn[j].u.x.peer == r &&
                        qn[j].u.x.tag == nd[i].u.x.tag) {
                        changed |= (know[q][j] | k) != know[q][j];
                        know[q][j] |= k;
                    }
            }
        }
    }
    for (int r = 0; r < n; r++) {
        if (know[r][CAD_NODE_END] != (n == 32 ? ~0u : (1u << n) - 1))
            ut_fail(__FILE__, __LINE__, "%s on %d ranks: rank %d may leave knowing only %#x",
                    cad_kind_name(kind), n, r, know[r][CAD_NODE_END]);
        free(mem[r]);
    }
}

UT_TEST(cad_alg_barrier_waits_for_all)
{
    for (int n = 1; n <= HB_MAX; n++)
        hb_check(CAD_K_BARRIER, n);
}
