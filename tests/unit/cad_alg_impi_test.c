/*
 * cad_alg_impi_test.c: the collectives across IMPI clients (mpi/cad/cad_alg_impi*.c) run by
 * the simulator (cad_sim.h) on layouts of 1 to 6 clients of 1 to 3 ranks (so both LAM's
 * linear algorithms, up to 4 masters, and its trees), every root, commutative and
 * non-commutative ops, in place or not, in FIFO, LIFO and random completion orders, eager
 * and rendezvous.
 *
 * Two kinds of check. Results: every byte of every receive buffer against a plain
 * reference (a non-commutative op is a 2x2 matrix product, so any reordering shows).
 * Wire: every message between ranks of different clients is what LAM expects (collective
 * context and tag 110, zero bytes, for barrier; 120 for bcast; 190 on the point-to-point
 * context for reduce), and the set of such messages is exactly the one LAM's code makes,
 * transcribed here from share/ssi/coll/impi/src/ssi_coll_impi_{barrier,bcast,reduce}.c
 * in master numbers: no message more, none less, none between other ranks. Messages inside
 * a client must stay on our own tags. A barrier must also make every rank's END depend on
 * every rank's START (data cannot show that).
 */
#include "ut.h"
#include "cad_sim.h"
#include <stdlib.h>
#include <string.h>

#define CTX         5    /* the collective context of the simulated communicator */
#define PT2PT       4    /* ... and its point-to-point one */
#define TAG_BASE    4096 /* the library's tag bases are multiples of CAD_ALG_TAGS */
/* LAM's (share/include/impi.h), written here again: the test must not trust the code's. */
#define TAG_BARRIER 110
#define TAG_BCAST   120
#define TAG_REDUCE  190

/* Layouts: clients of each rank in rank order (the last one interleaves clients). */
struct layout {
    int n;
    uint8_t client[SIM_RANKS];
};

static const struct layout layouts[] = {
    {4, {0, 0, 0, 0}},                             /* one client */
    {2, {0, 1}},                                   /* 2 masters, one rank each */
    {4, {0, 0, 1, 1}},                             /* LAM's verified case: 2 x 2 */
    {4, {0, 1, 1, 1}},                             /* uneven */
    {6, {0, 0, 0, 1, 2, 2}},                       /* 3 masters */
    {7, {0, 1, 1, 2, 3, 3, 3}},                    /* 4 masters: still linear */
    {8, {0, 0, 1, 2, 2, 2, 3, 4}},                 /* 5 masters: trees */
    {10, {0, 1, 1, 2, 2, 2, 3, 4, 4, 5}},          /* 6 masters */
    {13, {0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5, 6}}, /* 7 masters */
    {7, {2, 0, 0, 2, 1, 0, 1}},                    /* interleaved: masters 0, 1, 4 */
};
#define NLAYOUTS ((int)(sizeof layouts / sizeof layouts[0]))

/* --- reductions ------------------------------------------------------------------------ */

enum { RC_SUM, RC_USUM, RC_MAT, NRC };
#define USER_MAT 1
#define USER_SUM 2

struct mat {
    uint32_t a, b, c, d;
};

static void user_mat(const void *in, void *inout, uint64_t count, int dtype)
{
    (void)dtype;
    for (uint64_t i = 0; i < count; i++) {
        struct mat x, y, z;
        memcpy(&x, (const char *)in + i * sizeof x, sizeof x);
        memcpy(&y, (char *)inout + i * sizeof y, sizeof y);
        z = (struct mat){x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                         x.c * y.b + x.d * y.d};
        memcpy((char *)inout + i * sizeof z, &z, sizeof z);
    }
}

static void user_sum(const void *in, void *inout, uint64_t count, int dtype)
{
    (void)dtype;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t x, y;
        memcpy(&x, (const char *)in + 4 * i, 4);
        memcpy(&y, (char *)inout + 4 * i, 4);
        y += x;
        memcpy((char *)inout + 4 * i, &y, 4);
    }
}

/* inout = lower op inout, the plain way (SUM and USUM alike). */
static void ref_op(int rc, const uint8_t *lower, uint8_t *inout, size_t bytes)
{
    if (rc == RC_MAT)
        user_mat(lower, inout, bytes / 16, CAD_T_DERIVED);
    else
        user_sum(lower, inout, bytes / 4, CAD_T_INT32);
}

/* --- one collective on the simulator ------------------------------------------------- */

struct tcase {
    const struct layout *ly;
    int kind, root, rc, in_place, order, proto, inl;
    uint64_t bytes;
    uint64_t seed;
};

struct rank_data {
    struct cad_coll c;
    struct cad_plan p;
    uint8_t *sbuf, *rbuf, *in, *want;
    size_t slen, rlen;
};
static struct rank_data rd[SIM_RANKS];

static int is_red(int kind)
{
    return kind == CAD_K_REDUCE || kind == CAD_K_ALLREDUCE;
}

static const char *tname(const struct tcase *t)
{
    static char buf[200];
    int k = snprintf(buf, sizeof buf, "%s layout", cad_kind_name(t->kind));
    for (int r = 0; r < t->ly->n; r++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%c%d", r ? ',' : '=', t->ly->client[r]);
    snprintf(buf + k, sizeof buf - (size_t)k,
             " root=%d rc=%d in_place=%d bytes=%llu order=%d proto=%d inline=%d", t->root, t->rc,
             t->in_place, (unsigned long long)t->bytes, t->order, t->proto, t->inl);
    return buf;
}

static uint8_t inb(const struct tcase *t, int r, size_t i)
{
    uint64_t x = t->seed * 1000003u + (uint64_t)r * 7919u + i;
    x = (x ^ (x >> 31)) * 0x94d049bb133111ebull;
    return (uint8_t)(x >> 29);
}

static struct cad_coll describe(const struct tcase *t, int r)
{
    static const int ops[NRC] = {CAD_OP_SUM, CAD_OP_USER, CAD_OP_USER};
    static const int types[NRC] = {CAD_T_INT32, CAD_T_INT32, CAD_T_DERIVED};
    struct cad_coll c = {.kind = t->kind,
                         .rank = r,
                         .size = t->ly->n,
                         .root = t->root,
                         .ctx = CTX,
                         .tag = TAG_BASE,
                         .bytes = t->bytes,
                         .client = t->ly->client};
    if (t->ly->client[t->ly->n - 1] == t->ly->client[0])
        c.alg = CAD_A_IMPI; /* one client: AUTO would choose ours; ask for LAM's anyway */
    if (is_red(t->kind)) {
        c.op = ops[t->rc];
        c.dtype = types[t->rc];
        c.user_op = t->rc == RC_MAT ? USER_MAT : USER_SUM;
        c.commutative = t->rc != RC_MAT;
        c.count = t->bytes / (t->rc == RC_MAT ? 16 : 4);
        c.in_place = t->in_place && (t->kind == CAD_K_ALLREDUCE || r == t->root);
    }
    return c;
}

static uint8_t *guarded(struct sim *s, int r, size_t len)
{
    uint8_t *p = sim_alloc(s, r, len + 2 * SIM_GUARD);
    memset(p, 0xcd, SIM_GUARD);
    memset(p + SIM_GUARD + len, 0xcd, SIM_GUARD);
    memset(p + SIM_GUARD, 0xee, len);
    return p + SIM_GUARD;
}

/* Wire facts of one cross-client message, by kind: context and tag. */
static int wire_ok(int kind, uint32_t ctx, int tag, uint64_t len, uint64_t bytes)
{
    if (kind == CAD_K_BARRIER)
        return ctx == CTX && tag == TAG_BARRIER && len == 0;
    if (len != bytes)
        return 0;
    if (kind == CAD_K_BCAST || (kind == CAD_K_ALLREDUCE && ctx == CTX))
        return ctx == CTX && tag == TAG_BCAST;
    return ctx == PT2PT && tag == TAG_REDUCE;
}

/* Every message of rank r's graph: across clients, LAM's context and tag; inside a client,
 * our own range (or, non-commutative reduce only, LAM's: everyone sends to the root). */
static void check_wire(const struct tcase *t, int r, struct cad_graph *g)
{
    const uint8_t *cl = t->ly->client;
    int ordered = is_red(t->kind) && t->rc == RC_MAT;
    for (uint32_t i = 2; i < g->nnodes; i++) {
        const struct cad_node *nd = &cad_nodes(g)[i];
        if (nd->type != CAD_SEND && nd->type != CAD_RECV)
            continue;
        const struct cad_xfer *x = &nd->u.x;
        if (cl[x->peer] != cl[r]) {
            if (!wire_ok(t->kind, x->ctx, x->tag, x->bytes, t->bytes))
                ut_fail(__FILE__, __LINE__,
                        "%s: rank %d %s %d across clients: ctx %u tag %d %llu B", tname(t), r,
                        nd->type == CAD_SEND ? "to" : "from", (int)x->peer, x->ctx, x->tag,
                        (unsigned long long)x->bytes);
        } else if (!(ordered && x->ctx == PT2PT && x->tag == TAG_REDUCE) &&
                   (x->ctx != CTX || x->tag < TAG_BASE + 256 ||
                    x->tag >= TAG_BASE + CAD_ALG_TAGS)) {
            ut_fail(__FILE__, __LINE__, "%s: rank %d: local message to/from %d: ctx %u tag %d",
                    tname(t), r, (int)x->peer, x->ctx, x->tag);
        }
    }
}

/* One collective, results and wire checked. */
static void run(const struct tcase *t)
{
    static struct sim s;
    int n = t->ly->n;
    size_t part = 0;
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        memset(d, 0, sizeof *d);
        d->c = describe(t, r);
        struct cad_coll c = d->c;
        const char *why = "";
        if (cad_alg_plan(&c, &d->p, &why))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: plan: %s", tname(t), r, why);
        if (c.alg != CAD_A_IMPI && r == 0 && t->ly->client[n - 1] != t->ly->client[0])
            ut_fail(__FILE__, __LINE__, "%s: AUTO chose %s", tname(t), cad_alg_name(c.alg));
        int root = r == t->root;
        d->rlen = t->kind == CAD_K_BARRIER || (t->kind == CAD_K_REDUCE && !root) ? 0 : t->bytes;
        d->slen = is_red(t->kind) && !d->c.in_place ? t->bytes : 0;
        size_t need = d->slen + d->rlen + d->p.tmp_bytes + 8 * SIM_GUARD + 64;
        part = need > part ? need : part;
    }
    sim_init_part(&s, n, 2, 1, t->seed, part);
    s.order = (enum sim_order)t->order;
    s.proto = t->proto ? SIM_RENDEZVOUS : SIM_EAGER;
    s.calc_inline = t->inl;
    s.user[USER_MAT] = user_mat;
    s.user[USER_SUM] = user_sum;
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        d->sbuf = guarded(&s, r, d->slen);
        d->rbuf = guarded(&s, r, d->rlen);
        d->c.sbuf = d->slen ? d->sbuf : 0;
        d->c.rbuf = d->rlen ? d->rbuf : 0;
        d->in = malloc(t->bytes + 1);
        for (size_t i = 0; i < t->bytes; i++)
            d->in[i] = inb(t, r, i);
        if (t->kind == CAD_K_BCAST && r == t->root)
            memcpy(d->rbuf, d->in, t->bytes);
        else if (is_red(t->kind))
            memcpy(d->c.in_place ? d->rbuf : d->sbuf, d->in, t->bytes);
    }
    uint8_t *fold = malloc(t->bytes + 1), *x = malloc(t->bytes + 1);
    memcpy(fold, rd[0].in, t->bytes); /* x_0 op x_1 op ... op x_{n-1} */
    for (int r = 1; r < n; r++) {
        memcpy(x, rd[r].in, t->bytes);
        ref_op(t->rc, fold, x, t->bytes);
        memcpy(fold, x, t->bytes);
    }
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        d->want = malloc(d->rlen + 1);
        memcpy(d->want, t->kind == CAD_K_BCAST ? rd[t->root].in : fold, d->rlen);
        sim_coll(&s, r, &d->c, &d->p);
        check_wire(t, r, s.r[r].g);
    }
    sim_run(&s);
    for (int r = 0; r < n; r++) {
        struct rank_data *d = &rd[r];
        for (size_t i = 0; i < d->rlen; i++)
            if (d->rbuf[i] != d->want[i])
                ut_fail(__FILE__, __LINE__, "%s: rank %d rbuf byte %zu of %zu: %#x, want %#x",
                        tname(t), r, i, d->rlen, d->rbuf[i], d->want[i]);
        if (d->slen && memcmp(d->sbuf, d->in, d->slen))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: sbuf changed", tname(t), r);
        if (!sim_guard_ok(d->sbuf + d->slen) || !sim_guard_ok(d->rbuf + d->rlen))
            ut_fail(__FILE__, __LINE__, "%s: rank %d: write past a buffer", tname(t), r);
        free(d->in);
        free(d->want);
    }
    free(fold);
    free(x);
    sim_free(&s);
}

/* Every layout and root, the kind's ops and sizes; the order, protocol and CALC mode vary
 * with a counter, so each combination sees several. */
static void sweep(int kind)
{
    static const uint64_t sizes[] = {0, 16, 16 * 37};
    unsigned rot = 0;
    for (int li = 0; li < NLAYOUTS; li++) {
        const struct layout *ly = &layouts[li];
        int rooted = kind == CAD_K_BCAST || kind == CAD_K_REDUCE;
        for (int root = 0; root < (rooted ? ly->n : 1); root++)
            for (int si = 0; si < (kind == CAD_K_BARRIER ? 1 : 3); si++)
                for (int rc = 0; rc < (is_red(kind) ? NRC : 1); rc++)
                    for (int ip = 0; ip < (is_red(kind) ? 2 : 1); ip++, rot++) {
                        struct tcase t = {.ly = ly,
                                          .kind = kind,
                                          .root = root,
                                          .rc = rc,
                                          .in_place = ip,
                                          .bytes = sizes[si],
                                          .order = (int)(rot % 3),
                                          .proto = (int)(rot / 3 & 1),
                                          .inl = (int)(rot / 7 & 1),
                                          .seed = rot + 11};
                        run(&t);
                    }
    }
}

UT_TEST(cad_alg_impi_barrier)
{
    sweep(CAD_K_BARRIER);
}

UT_TEST(cad_alg_impi_bcast)
{
    sweep(CAD_K_BCAST);
}

UT_TEST(cad_alg_impi_reduce)
{
    sweep(CAD_K_REDUCE);
}

UT_TEST(cad_alg_impi_allreduce)
{
    sweep(CAD_K_ALLREDUCE);
}
