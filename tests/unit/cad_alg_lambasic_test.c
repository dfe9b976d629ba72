/*
 * cad_alg_lambasic_test.c: the collectives LAM runs through lam_basic, across IMPI clients
 * (mpi/cad/cad_alg_lambasic.c), on the simulator (cad_sim.h): gather(v), scatter(v),
 * alltoall(v), allgather(v), scan, exscan, reduce_scatter(_block), on layouts of 2 to 5
 * clients, every root, in place or not, commutative and non-commutative ops, the
 * simulator's completion orders and protocols.
 *
 * Results: every byte of every receive buffer against a plain reference (gaps between
 * v-blocks untouched, nothing written past a buffer). Wire: the messages between clients
 * (SENDs, and RECVs as the messages they wait for) are exactly the ones lam_basic's code
 * makes, transcribed here from share/ssi/coll/lam_basic/src/ssi_coll_lam_basic_*.c with
 * source, destination, context, tag and length: LAM's flipped cid -1 (CAD_LAM_CTX) and
 * its blktype.h tags; allgather's bcast and reduce_scatter's reduce are the IMPI ones.
 */
#include "ut.h"
#include "cad_sim.h"
#include "mpe_impi.h"
#include <stdlib.h>
#include <string.h>

#define CTX      5 /* the collective context of the simulated communicator */
#define PT2PT    4 /* ... and its point-to-point one */
#define TAG_BASE 4096
#define LAMCTX   0xffffffffu /* cid -1, LAM's flipped collective cid of MPI_COMM_WORLD */
/* LAM's tags (share/include/blktype.h, share/include/impi.h), written here again. */
enum {
    T_ALLTOALL = 9,
    T_ALLTOALLV = 10,
    T_GATHER = 46,
    T_GATHERV = 47,
    T_SCAN = 92,
    T_SCATTER = 93,
    T_SCATTERV = 94,
    T_EXSCAN = 178,
    T_BCAST = 120,
    T_REDUCE = 190
};
#define MAXMS 1024

struct layout {
    int n;
    uint8_t client[SIM_RANKS];
};

static const struct layout layouts[] = {
    {2, {0, 1}},
    {4, {0, 0, 1, 1}},
    {4, {0, 1, 1, 1}},
    {6, {0, 0, 0, 1, 2, 2}},
    {8, {0, 0, 1, 2, 2, 2, 3, 4}}, /* 5 masters: allgather's bcast is a tree */
    {7, {2, 0, 0, 2, 1, 0, 1}},    /* interleaved */
};
#define NLAYOUTS ((int)(sizeof layouts / sizeof layouts[0]))

/* --- non-commutative op: 2x2 matrix products of uint32 -------------------------------- */

#define USER_MAT 1
static void user_mat(const void *in, void *inout, uint64_t count, int dtype)
{
    (void)dtype;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t x[4], y[4], z[4];
        memcpy(x, (const char *)in + 16 * i, 16);
        memcpy(y, (char *)inout + 16 * i, 16);
        z[0] = x[0] * y[0] + x[1] * y[2];
        z[1] = x[0] * y[1] + x[1] * y[3];
        z[2] = x[2] * y[0] + x[3] * y[2];
        z[3] = x[2] * y[1] + x[3] * y[3];
        memcpy((char *)inout + 16 * i, z, 16);
    }
}

static void ref_sum(const uint8_t *lower, uint8_t *inout, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 4) {
        uint32_t x, y;
        memcpy(&x, lower + i, 4);
        memcpy(&y, inout + i, 4);
        y += x;
        memcpy(inout + i, &y, 4);
    }
}

/* --- one case -------------------------------------------------------------------------- */

enum { V_REG, V_V }; /* regular blocks, or the v-variant */

struct tcase {
    const struct layout *ly;
    int kind, v, root, in_place, mat, order, proto;
    uint64_t blk; /* block bytes (v-variant: the base of each rank's own) */
    uint64_t seed;
};

struct msg {
    int src, dst, tag;
    uint32_t ctx;
    uint64_t len;
};
struct msgs {
    int n;
    struct msg m[MAXMS];
};

static void add(struct msgs *s, int src, int dst, uint32_t ctx, int tag, uint64_t len)
{
    UT_ASSERT(s->n < MAXMS);
    s->m[s->n++] = (struct msg){src, dst, tag, ctx, len};
}

static const char *tname(const struct tcase *t)
{
    static char buf[200];
    int k = snprintf(buf, sizeof buf, "%s%s layout", cad_kind_name(t->kind), t->v ? "(v)" : "");
    for (int r = 0; r < t->ly->n; r++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%c%d", r ? ',' : '=', t->ly->client[r]);
    snprintf(buf + k, sizeof buf - (size_t)k, " root=%d in_place=%d mat=%d blk=%llu order=%d",
             t->root, t->in_place, t->mat, (unsigned long long)t->blk, t->order);
    return buf;
}

/* Block sizes: what rank i contributes (gather, allgather, scatter), or sends to j
 * (alltoall), or gets (reduce_scatter). Whole elements (4 or 16 bytes) everywhere. */
static uint64_t cnt(const struct tcase *t, int i, int j)
{
    uint64_t e = t->mat ? 16 : 4;
    if (!t->v)
        return t->blk;
    return t->blk + e * (uint64_t)((i + 2 * j) % 3);
}

static uint8_t val(const struct tcase *t, int r, size_t i)
{
    uint64_t x = t->seed * 1000003u + (uint64_t)r * 7919u + i;
    x = (x ^ (x >> 31)) * 0x94d049bb133111ebull;
    return (uint8_t)(x >> 29);
}

static int is_red(int kind)
{
    return kind == CAD_K_SCAN || kind == CAD_K_EXSCAN || kind == CAD_K_REDUCE_SCATTER;
}

struct rank_data {
    struct cad_coll c;
    struct cad_plan p;
    uint64_t counts[SIM_RANKS], displs[SIM_RANKS], rcounts[SIM_RANKS], rdispls[SIM_RANKS];
    uint8_t *sbuf, *rbuf, *want;
    size_t slen, rlen;
};
static struct rank_data rd[SIM_RANKS];

/* Layouts with a gap of 8 bytes after each block, so that writes outside show. */
static uint64_t layout_of(uint64_t *dsp, const uint64_t *cn, int n)
{
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        dsp[i] = off;
        off += cn[i] + 8;
    }
    return off;
}

static void describe(const struct tcase *t, int r)
{
    struct rank_data *d = &rd[r];
    int n = t->ly->n, k = t->kind, root = r == t->root;
    memset(d, 0, sizeof *d);
    struct cad_coll *c = &d->c;
    *c = (struct cad_coll){.kind = k,
                           .rank = r,
                           .size = n,
                           .root = t->root,
                           .ctx = CTX,
                           .tag = TAG_BASE,
                           .client = t->ly->client};
    for (int i = 0; i < n; i++) {
        d->counts[i] = k == CAD_K_ALLTOALL ? cnt(t, r, i) : cnt(t, i, 0);
        d->rcounts[i] = cnt(t, i, r);
    }
    uint64_t span = layout_of(d->displs, d->counts, n);
    uint64_t rspan = layout_of(d->rdispls, d->rcounts, n);
    if (!t->v && k != CAD_K_REDUCE_SCATTER) /* regular: blocks at i * blk */
        for (int i = 0; i < n; i++)
            d->displs[i] = d->rdispls[i] = (uint64_t)i * t->blk, span = rspan = n * t->blk;
    uint64_t own = cnt(t, r, 0);
    if (t->v)
        c->counts = d->counts, c->displs = d->displs;
    switch (k) {
    case CAD_K_GATHER:
        c->bytes = own;
        c->in_place = t->in_place && root;
        d->slen = c->in_place ? 0 : own;
        d->rlen = root ? span : 0;
        break;
    case CAD_K_SCATTER:
        c->bytes = own;
        c->in_place = t->in_place && root;
        d->slen = root ? span : 0;
        d->rlen = c->in_place ? 0 : own;
        break;
    case CAD_K_ALLGATHER:
        c->bytes = own;
        c->in_place = t->in_place;
        d->slen = c->in_place ? 0 : own;
        d->rlen = span;
        break;
    case CAD_K_ALLTOALL:
        c->bytes = t->blk;
        if (t->v)
            c->rcounts = d->rcounts, c->rdispls = d->rdispls;
        d->slen = span;
        d->rlen = rspan;
        break;
    default: { /* reductions */
        uint64_t all = 0;
        for (int i = 0; i < n; i++)
            all += d->counts[i];
        c->counts = t->v ? d->counts : 0;
        c->bytes = k == CAD_K_REDUCE_SCATTER ? all : t->blk;
        c->op = t->mat ? CAD_OP_USER : CAD_OP_SUM;
        c->dtype = t->mat ? CAD_T_DERIVED : CAD_T_INT32;
        c->user_op = USER_MAT;
        c->commutative = !t->mat;
        c->count = c->bytes / (t->mat ? 16 : 4);
        c->in_place = t->in_place;
        d->slen = c->in_place ? 0 : c->bytes;
        d->rlen = c->in_place || k != CAD_K_REDUCE_SCATTER ? c->bytes : d->counts[r];
    }
    }
}

static uint8_t *guarded(struct sim *s, int r, size_t len)
{
    uint8_t *p = sim_alloc(s, r, len + 2 * SIM_GUARD);
    memset(p, 0xcd, SIM_GUARD);
    memset(p + SIM_GUARD + len, 0xcd, SIM_GUARD);
    memset(p + SIM_GUARD, 0xee, len);
    return p + SIM_GUARD;
}

/* Inputs: rank r's block(s) as val(r, ...), written where the call reads them. */
static void fill(const struct tcase *t, int r)
{
    struct rank_data *d = &rd[r];
    const struct cad_coll *c = &d->c;
    int k = t->kind;
    uint8_t *in = c->in_place && k != CAD_K_SCATTER ? d->rbuf : d->sbuf;
    if (k == CAD_K_GATHER || k == CAD_K_ALLGATHER) {
        if (c->in_place)
            in = d->rbuf + d->displs[r];
        for (size_t i = 0; i < c->bytes; i++)
            in[i] = val(t, r, i);
    } else if (k == CAD_K_SCATTER || k == CAD_K_ALLTOALL) {
        for (size_t i = 0; i < d->slen; i++)
            d->sbuf[i] = val(t, r, i);
    } else {
        for (size_t i = 0; i < c->bytes; i++)
            in[i] = val(t, r, i);
    }
}

/* x_lo op ... op x_hi over len bytes at offset off of every rank's vector. */
static void fold(const struct tcase *t, int lo, int hi, uint64_t off, uint64_t len, uint8_t *out)
{
    uint8_t *x = malloc(len + 16);
    for (size_t i = 0; i < len; i++)
        out[i] = val(t, lo, off + i);
    for (int r = lo + 1; r <= hi; r++) {
        for (size_t i = 0; i < len; i++)
            x[i] = val(t, r, off + i);
        if (t->mat)
            user_mat(out, x, len / 16, CAD_T_DERIVED);
        else
            ref_sum(out, x, len);
        memcpy(out, x, len);
    }
    free(x);
}

/* What rbuf holds afterwards (0xee where nothing may be written). */
static void expect(const struct tcase *t, int r)
{
    struct rank_data *d = &rd[r];
    int n = t->ly->n, k = t->kind;
    d->want = malloc(d->rlen + 1);
    memset(d->want, 0xee, d->rlen);
    if (k == CAD_K_GATHER || k == CAD_K_ALLGATHER) {
        if (k == CAD_K_GATHER && r != t->root)
            return;
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < rd[i].c.bytes; j++)
                d->want[d->displs[i] + j] = val(t, i, j);
    } else if (k == CAD_K_SCATTER) {
        for (size_t j = 0; j < d->rlen; j++)
            d->want[j] = val(t, t->root, rd[t->root].displs[r] + j);
    } else if (k == CAD_K_ALLTOALL) {
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < d->rcounts[i]; j++)
                d->want[d->rdispls[i] + j] = val(t, i, rd[i].displs[r] + j);
    } else if (k == CAD_K_SCAN) {
        fold(t, 0, r, 0, d->rlen, d->want);
    } else if (k == CAD_K_EXSCAN) {
        if (r)
            fold(t, 0, r - 1, 0, d->rlen, d->want);
        else if (d->c.in_place)
            for (size_t j = 0; j < d->rlen; j++)
                d->want[j] = val(t, 0, j); /* untouched input */
    } else {
        uint64_t off = 0, each = d->c.counts ? 0 : d->c.bytes / (uint64_t)n;
        for (int i = 0; i < r; i++)
            off += d->c.counts ? d->counts[i] : each;
        uint64_t mine = d->c.counts ? d->counts[r] : each;
        fold(t, 0, n - 1, off, mine, d->want);
        if (d->c.in_place) /* the rest of the vector: undefined by MPI, not checked */
            memcpy(d->want + mine, d->rbuf + mine, d->rlen - mine);
    }
}

/* --- LAM's cross-client messages, from lam_basic's code --------------------------------- */

static int masters(const struct layout *ly, int *mr)
{
    int m = 0;
    for (int r = 0; r < ly->n; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            first &= ly->client[q] != ly->client[r];
        if (first)
            mr[m++] = r;
    }
    return m;
}

static int hibit(int v, int dim)
{
    int i = dim - 1;
    while (i >= 0 && !(v & 1 << i))
        i--;
    return i;
}

static void lam_msgs(const struct tcase *t, struct msgs *s)
{
    const struct layout *ly = t->ly;
    int n = ly->n, k = t->kind, root = t->root;
    const uint8_t *cl = ly->client;
#define X(a, b) (cl[a] != cl[b])
    switch (k) {
    case CAD_K_GATHER: /* every non-root: MPI_Send(sbuf, root, BLKMPIGATHER(V)) */
        for (int r = 0; r < n; r++)
            if (X(r, root))
                add(s, r, root, LAMCTX, t->v ? T_GATHERV : T_GATHER, rd[r].c.bytes);
        break;
    case CAD_K_SCATTER:
        for (int r = 0; r < n; r++)
            if (X(r, root))
                add(s, root, r, LAMCTX, t->v ? T_SCATTERV : T_SCATTER, rd[r].c.bytes);
        break;
    case CAD_K_ALLTOALL:
        for (int r = 0; r < n; r++)
            for (int j = 0; j < n; j++)
                if (X(r, j))
                    add(s, r, j, LAMCTX, t->v ? T_ALLTOALLV : T_ALLTOALL, rd[r].counts[j]);
        break;
    case CAD_K_ALLGATHER:
        if (t->v) { /* MPI_Gatherv to each root in turn */
            for (int i = 0; i < n; i++)
                for (int r = 0; r < n; r++)
                    if (X(r, i))
                        add(s, r, i, LAMCTX, T_GATHERV, rd[r].c.bytes);
            break;
        }
        for (int r = 1; r < n; r++) /* gather to 0, then the IMPI bcast from 0 */
            if (X(r, 0))
                add(s, r, 0, LAMCTX, T_GATHER, t->blk);
        {
            int mr[SIM_RANKS], m = masters(ly, mr), dim = 0;
            while ((1 << dim) < m)
                dim++;
            for (int v = 1; v < m; v++) {
                int src = 0;
                if (m > 4) {
                    int p = v & ~(1 << hibit(v, dim));
                    src = mr[p];
                }
                add(s, src, mr[v], CTX, T_BCAST, (uint64_t)n * t->blk);
            }
        }
        break;
    case CAD_K_SCAN:
    case CAD_K_EXSCAN:
        for (int r = 0; r + 1 < n; r++)
            if (X(r, r + 1))
                add(s, r, r + 1, LAMCTX, k == CAD_K_SCAN ? T_SCAN : T_EXSCAN, t->blk);
        break;
    default: { /* MPI_Reduce to 0 (IMPI: tag 190 on pt2pt), MPI_Scatterv from 0 */
        int mr[SIM_RANKS], m = masters(ly, mr);
        uint64_t all = rd[0].c.bytes;
        if (t->mat) {
            for (int r = 0; r < n; r++)
                if (X(r, 0))
                    add(s, r, 0, PT2PT, T_REDUCE, all);
        } else {
            for (int v = 1; v < m; v++) {
                int p = m <= 4 ? 0 : v & (v - 1);
                add(s, mr[v], mr[p], PT2PT, T_REDUCE, all);
            }
        }
        for (int r = 0; r < n; r++)
            if (X(r, 0))
                add(s, 0, r, LAMCTX, T_SCATTERV, t->v ? rd[0].counts[r] : all / (uint64_t)n);
    }
    }
#undef X
}

static int cmp_msg(const void *a, const void *b)
{
    const struct msg *x = a, *y = b;
    if (x->src != y->src)
        return x->src - y->src;
    if (x->dst != y->dst)
        return x->dst - y->dst;
    if (x->ctx != y->ctx)
        return x->ctx < y->ctx ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag - y->tag;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Ours across clients must be exactly LAM's; inside a client, our own context and tags. */
static void check_wire(const struct tcase *t, struct sim *s)
{
    static struct msgs want, got, rcv;
    want.n = got.n = rcv.n = 0;
    lam_msgs(t, &want);
    const uint8_t *cl = t->ly->client;
    for (int r = 0; r < t->ly->n; r++) {
        struct cad_graph *g = s->r[r].g;
        for (uint32_t i = 2; i < g->nnodes; i++) {
            const struct cad_node *nd = &cad_nodes(g)[i];
            if (nd->type != CAD_SEND && nd->type != CAD_RECV)
                continue;
            const struct cad_xfer *x = &nd->u.x;
            int p = (int)x->peer;
            if (cl[p] == cl[r]) {
                int lam_local = t->mat && x->ctx == PT2PT && x->tag == T_REDUCE; /* reduce */
                if (!lam_local &&
                    (x->ctx != CTX || x->tag < TAG_BASE + 256 || x->tag >= TAG_BASE + CAD_ALG_TAGS))
                    ut_fail(__FILE__, __LINE__, "%s: rank %d: local message with %d: ctx %u tag %d",
                            tname(t), r, p, x->ctx, x->tag);
                continue;
            }
            if (nd->type == CAD_SEND)
                add(&got, r, p, x->ctx, x->tag, x->bytes);
            else
                add(&rcv, p, r, x->ctx, x->tag, x->bytes);
        }
    }
    qsort(got.m, (size_t)got.n, sizeof got.m[0], cmp_msg);
    qsort(rcv.m, (size_t)rcv.n, sizeof rcv.m[0], cmp_msg);
    qsort(want.m, (size_t)want.n, sizeof want.m[0], cmp_msg);
    int same = got.n == want.n && rcv.n == want.n;
    for (int i = 0; same && i < got.n; i++)
        same = !cmp_msg(&got.m[i], &want.m[i]) && !cmp_msg(&rcv.m[i], &want.m[i]);
    if (same)
        return;
    fprintf(stderr, "    %s: ours (%d sends, %d receives) vs LAM's (%d):\n", tname(t), got.n, rcv.n,
            want.n);
    for (int i = 0; i < got.n || i < want.n; i++) {
        if (i < got.n)
            fprintf(stderr, "      ours %d->%d ctx %#x tag %d len %llu", got.m[i].src, got.m[i].dst,
                    got.m[i].ctx, got.m[i].tag, (unsigned long long)got.m[i].len);
        if (i < want.n)
            fprintf(stderr, "   LAM %d->%d ctx %#x tag %d len %llu", want.m[i].src, want.m[i].dst,
                    want.m[i].ctx, want.m[i].tag, (unsigned long long)want.m[i].len);
        fprintf(stderr, "\n");
    }
    ut_fail(__FILE__, __LINE__, "cross-client messages differ from LAM's");
}

static void run(const struct tcase *t)
{
    static struct sim s;
    int n = t->ly->n;
    size_t part = 0;
    for (int r = 0; r < n; r++) {
        describe(t, r);
        struct cad_coll c = rd[r].c;
        const char *why = "";
        if (cad_alg_plan(&c, &rd[r].p, &why))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: plan: %s", tname(t), r, why);
        if (c.alg != CAD_A_LAMBASIC)
            ut_fail(__FILE__, __LINE__, "%s: AUTO chose %s", tname(t), cad_alg_name(c.alg));
        size_t need = rd[r].slen + rd[r].rlen + rd[r].p.tmp_bytes + 8 * SIM_GUARD + 64;
        part = need > part ? need : part;
    }
    sim_init_part(&s, n, 2, 1, t->seed, part);
    s.order = (enum sim_order)t->order;
    s.proto = t->proto ? SIM_RENDEZVOUS : SIM_EAGER;
    s.user[USER_MAT] = user_mat;
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        d->sbuf = guarded(&s, r, d->slen);
        d->rbuf = guarded(&s, r, d->rlen);
        d->c.sbuf = d->slen ? d->sbuf : 0;
        d->c.rbuf = d->rlen ? d->rbuf : 0;
        fill(t, r);
    }
    for (int r = 0; r < n; r++)
        expect(t, r);
    for (int r = 0; r < n; r++)
        sim_coll(&s, r, &rd[r].c, &rd[r].p);
    check_wire(t, &s);
    sim_run(&s);
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        for (size_t i = 0; i < d->rlen; i++)
            if (d->rbuf[i] != d->want[i])
                ut_fail(__FILE__, __LINE__, "%s: rank %d rbuf byte %zu of %zu: %#x, want %#x",
                        tname(t), r, i, d->rlen, d->rbuf[i], d->want[i]);
        if (!sim_guard_ok(d->sbuf + d->slen) || !sim_guard_ok(d->rbuf + d->rlen))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: write past a buffer", tname(t), r);
        free(d->want);
    }
    sim_free(&s);
}

/* Every layout, root (rooted kinds), variant, in place or not, op (reductions) and size;
 * the completion order and protocol rotate. */
static void sweep(int kind)
{
    static const uint64_t sizes[] = {16, 48};
    int rooted = kind == CAD_K_GATHER || kind == CAD_K_SCATTER;
    int vs = kind == CAD_K_SCAN || kind == CAD_K_EXSCAN ? 1 : 2;
    int ips = kind == CAD_K_ALLTOALL ? 1 : 2;
    unsigned rot = 0;
    for (int li = 0; li < NLAYOUTS; li++)
        for (int root = 0; root < (rooted ? layouts[li].n : 1); root++)
            for (int v = 0; v < vs; v++)
                for (int ip = 0; ip < ips; ip++)
                    for (int mat = 0; mat < (is_red(kind) ? 2 : 1); mat++)
                        for (int si = 0; si < 2; si++, rot++) {
                            struct tcase t = {.ly = &layouts[li],
                                              .kind = kind,
                                              .v = v,
                                              .root = root,
                                              .in_place = ip,
                                              .mat = mat,
                                              .blk = sizes[si],
                                              .order = (int)(rot % 3),
                                              .proto = (int)(rot / 3 & 1),
                                              .seed = rot + 5};
                            run(&t);
                        }
}

UT_TEST(cad_alg_lambasic_gather)
{
    sweep(CAD_K_GATHER);
}

UT_TEST(cad_alg_lambasic_scatter)
{
    sweep(CAD_K_SCATTER);
}

UT_TEST(cad_alg_lambasic_alltoall)
{
    sweep(CAD_K_ALLTOALL);
}

UT_TEST(cad_alg_lambasic_allgather)
{
    sweep(CAD_K_ALLGATHER);
}

UT_TEST(cad_alg_lambasic_scan)
{
    sweep(CAD_K_SCAN);
    sweep(CAD_K_EXSCAN);
}

UT_TEST(cad_alg_lambasic_reduce_scatter)
{
    sweep(CAD_K_REDUCE_SCATTER);
}

/* The engine maps LAM's wire cid -1 to the context the builders use. */
UT_TEST(cad_alg_lambasic_ctx_is_engines)
{
    UT_EQ(CAD_LAM_CTX, MPE_IMPI_LAM_CTX);
    UT_EQ(LAMCTX, CAD_LAM_CTX);
    UT_ASSERT(MPE_IMPI_LAM_CID == ~0ull);
}
