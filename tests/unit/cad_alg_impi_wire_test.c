/*
 * cad_alg_impi_wire_test.c: what the IMPI collectives (mpi/cad/cad_alg_impi*.c) put between
 * clients, compared with what LAM/MPI 7.1.4 puts there: the messages LAM's code sends,
 * transcribed below from share/ssi/coll/impi/src/ssi_coll_impi_{barrier,bcast,reduce}.c
 * in master numbers, must be exactly the cross-client SEND nodes of the graphs (as a
 * multiset of source, destination, context and tag), on every layout of 2 to 7 clients and
 * every root. Also: a barrier's END depends on every rank's START; the planner refuses
 * algorithms other than LAM's across clients, with a reason that says so; and counts the brief
 * names (2(M-1) barrier messages, a non-master root sending straight to the masters).
 */
#include "ut.h"
#include "cad_sim.h"
#include <stdlib.h>
#include <string.h>

#define CTX   7 /* collective context; LAM's reduce goes on CTX - 1 */
#define MAXN  16
#define MAXM  8
#define MAXMS 512

enum { TAG_BARRIER = 110, TAG_BCAST = 120, TAG_REDUCE = 190 };

struct layout {
    int n;
    uint8_t client[MAXN];
};

static const struct layout layouts[] = {
    {2, {0, 1}},
    {4, {0, 0, 1, 1}},
    {5, {0, 1, 1, 1, 2}},
    {7, {0, 1, 1, 2, 3, 3, 3}},
    {8, {0, 0, 1, 2, 2, 2, 3, 4}},
    {10, {0, 1, 1, 2, 2, 2, 3, 4, 4, 5}},
    {13, {0, 0, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5, 6}},
    {16, {0, 1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4, 3, 2, 1, 0}}, /* 8 clients, interleaved */
};
#define NLAYOUTS ((int)(sizeof layouts / sizeof layouts[0]))

struct msg {
    int src, dst, tag;
    uint32_t ctx;
};

struct msgs {
    int n;
    struct msg m[MAXMS];
};

static void add(struct msgs *s, int src, int dst, uint32_t ctx, int tag)
{
    UT_ASSERT(s->n < MAXMS);
    s->m[s->n++] = (struct msg){src, dst, tag, ctx};
}

/* --- LAM's side, written from its source ---------------------------------------------- */

/* IMPI_Master_rank / IMPI_Master_num: masters are the lowest rank of each client. */
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

static int num_of(const struct layout *ly, const int *mr, int m, int r)
{
    for (int i = 0; i < m; i++)
        if (ly->client[mr[i]] == ly->client[r])
            return i;
    return -1;
}

static int cubedim(int n)
{
    int d = 0;
    while ((1 << d) < n)
        d++;
    return d;
}

static int hibit(int v, int dim)
{
    int i = dim - 1;
    if (v < 1 || dim < 1)
        return -1;
    while (i >= 0 && !(v & 1 << i))
        i--;
    return i;
}

static void lam_barrier(const struct layout *ly, struct msgs *s)
{
    int mr[MAXM], m = masters(ly, mr), dim = cubedim(m);
    for (int i = 1; i < m; i++) {
        int parent = m <= 4 ? 0 : i & ~(1 << hibit(i, dim));
        add(s, mr[i], mr[parent], CTX, TAG_BARRIER);
        add(s, mr[parent], mr[i], CTX, TAG_BARRIER);
    }
}

static void lam_bcast(const struct layout *ly, int root, struct msgs *s)
{
    int mr[MAXM], m = masters(ly, mr), rootnum = num_of(ly, mr, m, root), dim = cubedim(m);
    for (int v = 1; v < m; v++) { /* each non-root master's receive */
        int dst = mr[(v + rootnum) % m], src = root;
        if (m > 4) {
            int p = v & ~(1 << hibit(v, dim));
            src = p ? mr[(p + rootnum) % m] : root; /* "local to the root": the root */
        }
        add(s, src, dst, CTX, TAG_BCAST);
    }
}

static void lam_reduce(const struct layout *ly, int root, int commutative, struct msgs *s)
{
    int mr[MAXM], m = masters(ly, mr), rootnum = num_of(ly, mr, m, root);
    if (!commutative) { /* everyone straight to the root; keep the cross-client ones */
        for (int r = 0; r < ly->n; r++)
            if (ly->client[r] != ly->client[root])
                add(s, r, root, CTX - 1, TAG_REDUCE);
        return;
    }
    for (int v = 1; v < m; v++) {
        int p = m <= 4 ? 0 : v & (v - 1); /* tree: the parent clears the lowest bit */
        add(s, mr[(v + rootnum) % m], p ? mr[(p + rootnum) % m] : root, CTX - 1, TAG_REDUCE);
    }
}

/* --- ours: the cross-client SENDs of every rank's graph ------------------------------- */

static struct cad_graph *build(const struct layout *ly, int kind, int r, int root, int comm,
                               void **mem)
{
    struct cad_coll c = {.kind = kind,
                         .rank = r,
                         .size = ly->n,
                         .root = root,
                         .ctx = CTX,
                         .tag = 0,
                         .bytes = kind == CAD_K_BARRIER ? 0 : 16,
                         .client = ly->client};
    if (kind == CAD_K_REDUCE || kind == CAD_K_ALLREDUCE) {
        c.op = comm ? CAD_OP_SUM : CAD_OP_USER;
        c.dtype = comm ? CAD_T_INT32 : CAD_T_DERIVED;
        c.count = comm ? 4 : 1;
        c.commutative = comm;
    }
    struct cad_plan p;
    const char *why = "";
    if (cad_alg_plan(&c, &p, &why))
        ut_fail(__FILE__, __LINE__, "%s rank %d: plan: %s", cad_kind_name(kind), r, why);
    UT_EQ(c.alg, CAD_A_IMPI);
    size_t bytes = cad_bytes(p.node_cap, p.edge_cap);
    *mem = calloc(1, bytes + p.tmp_bytes + 64 + 8);
    char *buf = (char *)*mem + bytes; /* 32 bytes of sbuf, rbuf, then scratch */
    c.sbuf = buf;
    c.rbuf = buf + 32;
    struct cad_owner own = {.rank = r, .comm_size = ly->n, .part_size = ~0ull >> 1, .nuser = 2};
    struct cad_graph *g = cad_init(*mem, bytes, p.node_cap, p.edge_cap, &own);
    UT_ASSERT(g);
    UT_EQ(cad_alg_build(g, &c, buf + 64), 0);
    UT_EQ(cad_finalize(g, 0), 0);
    return g;
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
    return x->tag - y->tag;
}

/* Our cross-client SENDs, and our cross-client RECVs (as the messages they wait for), must
 * each be exactly `want`. */
static void compare(const struct layout *ly, int kind, int root, int comm, struct msgs *want)
{
    static struct msgs got, rcv;
    int recvs = 0;
    got.n = rcv.n = 0;
    for (int r = 0; r < ly->n; r++) {
        void *mem;
        struct cad_graph *g = build(ly, kind, r, root, comm, &mem);
        for (uint32_t i = 2; i < g->nnodes; i++) {
            const struct cad_node *nd = &cad_nodes(g)[i];
            if ((nd->type != CAD_SEND && nd->type != CAD_RECV) ||
                ly->client[nd->u.x.peer] == ly->client[r])
                continue;
            if (nd->type == CAD_RECV)
                add(&rcv, (int)nd->u.x.peer, r, nd->u.x.ctx, nd->u.x.tag);
            else
                add(&got, r, (int)nd->u.x.peer, nd->u.x.ctx, nd->u.x.tag);
        }
        free(mem);
    }
    qsort(got.m, (size_t)got.n, sizeof got.m[0], cmp_msg);
    qsort(rcv.m, (size_t)rcv.n, sizeof rcv.m[0], cmp_msg);
    qsort(want->m, (size_t)want->n, sizeof want->m[0], cmp_msg);
    int same = got.n == want->n && rcv.n == got.n;
    for (int i = 0; same && i < got.n; i++)
        same = !cmp_msg(&got.m[i], &want->m[i]) && !cmp_msg(&rcv.m[i], &want->m[i]);
    recvs = rcv.n;
    if (same)
        return;
    fprintf(stderr, "    %s n=%d root=%d comm=%d: ours (%d sends, %d receives) vs LAM's (%d):\n",
            cad_kind_name(kind), ly->n, root, comm, got.n, recvs, want->n);
    for (int i = 0; i < got.n || i < want->n; i++) {
        if (i < got.n)
            fprintf(stderr, "      ours %d->%d ctx %u tag %d", got.m[i].src, got.m[i].dst,
                    got.m[i].ctx, got.m[i].tag);
        else
            fprintf(stderr, "      %26s", "");
        if (i < want->n)
            fprintf(stderr, "   LAM %d->%d ctx %u tag %d", want->m[i].src, want->m[i].dst,
                    want->m[i].ctx, want->m[i].tag);
        fprintf(stderr, "\n");
    }
    ut_fail(__FILE__, __LINE__, "cross-client messages differ from LAM's");
}

UT_TEST(cad_alg_impi_wire_like_lam)
{
    static struct msgs want;
    for (int li = 0; li < NLAYOUTS; li++) {
        const struct layout *ly = &layouts[li];
        want.n = 0;
        lam_barrier(ly, &want);
        compare(ly, CAD_K_BARRIER, 0, 1, &want);
        for (int root = 0; root < ly->n; root++) {
            want.n = 0;
            lam_bcast(ly, root, &want);
            compare(ly, CAD_K_BCAST, root, 1, &want);
            for (int comm = 0; comm < 2; comm++) {
                want.n = 0;
                lam_reduce(ly, root, comm, &want);
                compare(ly, CAD_K_REDUCE, root, comm, &want);
            }
        }
        for (int comm = 0; comm < 2; comm++) { /* lam_basic: reduce to 0, bcast from 0 */
            want.n = 0;
            lam_reduce(ly, 0, comm, &want);
            lam_bcast(ly, 0, &want);
            compare(ly, CAD_K_ALLREDUCE, 0, comm, &want);
        }
    }
}

/* The brief's counts, on their own: 2(M-1) zero-byte barrier messages; a bcast root that is
 * not its client's master, in a client other than the first, sends to every other master
 * itself (2 x 3 ranks, root 3: to 0 and 4; LAM was seen doing this on the wire). */
UT_TEST(cad_alg_impi_wire_counts)
{
    static struct msgs want;
    for (int m = 2; m <= MAXM; m++) {
        struct layout ly = {m, {0}};
        for (int i = 0; i < m; i++)
            ly.client[i] = (uint8_t)i;
        want.n = 0;
        lam_barrier(&ly, &want);
        UT_EQ(want.n, 2 * (m - 1));
        compare(&ly, CAD_K_BARRIER, 0, 1, &want);
    }
    struct layout ly = {6, {0, 0, 1, 1, 2, 2}};
    want.n = 0;
    add(&want, 3, 0, CTX, TAG_BCAST);
    add(&want, 3, 4, CTX, TAG_BCAST);
    compare(&ly, CAD_K_BCAST, 3, 1, &want);
}

/* Rank q's START reaches rank r's END through graph edges and messages (same pair, tag and
 * context), for every q and r. */
UT_TEST(cad_alg_impi_barrier_waits_for_all)
{
    for (int li = 0; li < NLAYOUTS; li++) {
        const struct layout *ly = &layouts[li];
        int n = ly->n;
        struct cad_graph *g[MAXN];
        void *mem[MAXN];
        static uint32_t know[MAXN][256];
        memset(know, 0, sizeof know);
        for (int r = 0; r < n; r++) {
            g[r] = build(ly, CAD_K_BARRIER, r, 0, 1, &mem[r]);
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
                    for (uint32_t j = 0; j < nd[i].nsucc; j++) {
                        uint32_t *t = &know[r][succ[nd[i].first_succ + j]];
                        changed |= (*t | k) != *t;
                        *t |= k;
                    }
                    if (nd[i].type != CAD_SEND)
                        continue;
                    int q = nd[i].u.x.peer;
                    struct cad_node *qn = cad_nodes(g[q]);
                    for (uint32_t j = 0; j < g[q]->nnodes; j++)
                        if (qn[j].type == CAD_RECV && qn[j].u.x.peer == r &&
                            qn[j].u.x.tag == nd[i].u.x.tag && qn[j].u.x.ctx == nd[i].u.x.ctx) {
                            changed |= (know[q][j] | k) != know[q][j];
                            know[q][j] |= k;
                        }
                }
            }
        }
        for (int r = 0; r < n; r++) {
            if (know[r][CAD_NODE_END] != (1u << n) - 1)
                ut_fail(__FILE__, __LINE__, "layout %d: rank %d may leave knowing only %#x", li, r,
                        know[r][CAD_NODE_END]);
            free(mem[r]);
        }
    }
}

/* Across clients the planner picks LAM's way for every kind (IMPI or its lam_basic
 * fall-backs) and refuses any other algorithm, with a reason that says so; inside one
 * client nothing changes. */
UT_TEST(cad_alg_impi_plan_refusals)
{
    static const uint8_t two[4] = {0, 0, 1, 1}, one[4] = {3, 3, 3, 3};
    static const int kinds[] = {CAD_K_GATHER, CAD_K_SCATTER, CAD_K_ALLGATHER, CAD_K_ALLTOALL};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        struct cad_coll c = {.kind = kinds[i], .rank = 1, .size = 4, .ctx = CTX, .client = two};
        struct cad_plan p;
        const char *why = 0;
        UT_EQ(cad_alg_plan(&c, &p, &why), 0);
        UT_EQ(c.alg, CAD_A_LAMBASIC);
        c.alg = CAD_A_LINEAR;
        UT_EQ(cad_alg_plan(&c, &p, &why), -CAD_EINVAL);
        UT_ASSERT(why && strstr(why, "lambasic"));
    }
    struct cad_coll c = {.kind = CAD_K_BCAST, .alg = CAD_A_BINOMIAL, .size = 4, .client = two};
    struct cad_plan p;
    const char *why = 0;
    UT_EQ(cad_alg_plan(&c, &p, &why), -CAD_EINVAL); /* LAM would not understand it */
    UT_ASSERT(why && strstr(why, "impi"));
    c = (struct cad_coll){.kind = CAD_K_REDUCE,
                          .size = 4,
                          .ctx = 0,
                          .client = two,
                          .op = CAD_OP_SUM,
                          .dtype = CAD_T_INT32};
    UT_EQ(cad_alg_plan(&c, &p, &why), -CAD_EINVAL); /* no point-to-point context below */
    c = (struct cad_coll){.kind = CAD_K_GATHER, .size = 4, .bytes = 4, .client = one};
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    c = (struct cad_coll){.kind = CAD_K_BARRIER, .size = 4, .client = one};
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    UT_EQ(c.alg, CAD_A_DISSEM); /* one client: our own algorithms */
    c = (struct cad_coll){.kind = CAD_K_BARRIER, .size = 4, .client = two};
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    UT_EQ(c.alg, CAD_A_IMPI);
}
