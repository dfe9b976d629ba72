/*
 * cad_alg_plan_test.c: cad_alg_plan and cad_alg_build without running anything: every
 * rejection with its reason, the AUTO choices documented in cad_alg.c, the names of
 * kinds and algorithms, and how graphs grow with the communicator (O(log n) nodes for the
 * tree and doubling algorithms, O(n) for the linear and ring ones). The collectives
 * themselves run in cad_alg_test.c.
 */
#include "ut.h"
#include "cad_sim.h"
#include <string.h>

static struct cad_coll base_coll(int kind, int alg, int n)
{
    return (struct cad_coll){.kind = kind,
                             .alg = alg,
                             .rank = 0,
                             .size = n,
                             .tag = 0,
                             .bytes = 64,
                             .op = CAD_OP_SUM,
                             .dtype = CAD_T_INT32,
                             .count = 16};
}

static void expect_reject(struct cad_coll c, int code, const char *why_part)
{
    struct cad_plan p;
    const char *why = 0;
    int rc = cad_alg_plan(&c, &p, &why);
    if (rc != -code || !why || !strstr(why, why_part))
        ut_fail(__FILE__, __LINE__, "%s/%s: rc %d, why \"%s\"; want %d, \"%s\"",
                cad_kind_name(c.kind), cad_alg_name(c.alg), rc, why ? why : "(none)", -code,
                why_part);
}

UT_TEST(cad_alg_plan_rejects)
{
    struct cad_coll c = base_coll(CAD_K_ALLREDUCE, CAD_A_AUTO, 4);
    struct cad_plan p;
    const char *why = 0;
    UT_EQ(cad_alg_plan(0, &p, &why), -CAD_EINVAL);
    UT_EQ(cad_alg_plan(&c, 0, 0), -CAD_EINVAL);
    c.kind = 0;
    expect_reject(c, CAD_EINVAL, "unknown collective kind");
    c.kind = CAD_K_COUNT;
    expect_reject(c, CAD_EINVAL, "unknown collective kind");
    c = base_coll(CAD_K_ALLREDUCE, CAD_A_AUTO, 0);
    expect_reject(c, CAD_EINVAL, "size below 1");
    c = base_coll(CAD_K_ALLREDUCE, CAD_A_AUTO, 4);
    c.rank = 4;
    expect_reject(c, CAD_EINVAL, "rank not in");
    c.rank = -1;
    expect_reject(c, CAD_EINVAL, "rank not in");
    c = base_coll(CAD_K_BCAST, CAD_A_AUTO, 4);
    c.root = 4;
    expect_reject(c, CAD_EINVAL, "root not in");
    c.root = -1;
    expect_reject(c, CAD_EINVAL, "root not in");
    c = base_coll(CAD_K_BARRIER, CAD_A_AUTO, 4);
    c.tag = -1;
    expect_reject(c, CAD_EINVAL, "tag range");
    c.tag = INT32_MAX - CAD_ALG_TAGS + 1;
    expect_reject(c, CAD_EINVAL, "tag range");
    c.tag = INT32_MAX - CAD_ALG_TAGS; /* the last range that fits */
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    c = base_coll(CAD_K_BARRIER, CAD_A_COUNT, 4);
    expect_reject(c, CAD_EINVAL, "unknown algorithm");
    /* algorithms that do not apply */
    expect_reject(base_coll(CAD_K_GATHER, CAD_A_CHAIN, 4), CAD_EINVAL, "gather takes");
    expect_reject(base_coll(CAD_K_BCAST, CAD_A_DISSEM, 4), CAD_EINVAL, "bcast takes");
    expect_reject(base_coll(CAD_K_REDUCE, CAD_A_RING, 4), CAD_EINVAL, "reduce takes");
    expect_reject(base_coll(CAD_K_BARRIER, CAD_A_LINEAR, 4), CAD_EINVAL, "barrier takes");
    expect_reject(base_coll(CAD_K_ALLTOALL, CAD_A_RING, 4), CAD_EINVAL, "alltoall takes");
    expect_reject(base_coll(CAD_K_SCAN, CAD_A_BINOMIAL, 4), CAD_EINVAL, "scan takes");
    expect_reject(base_coll(CAD_K_ALLGATHER, CAD_A_RECDBL, 6), CAD_EINVAL, "power of two");
    c = base_coll(CAD_K_GATHER, CAD_A_BINOMIAL, 4);
    uint64_t arr[4] = {1, 2, 3, 4};
    c.counts = c.displs = arr;
    expect_reject(c, CAD_EINVAL, "regular blocks");
    c = base_coll(CAD_K_ALLGATHER, CAD_A_RECDBL, 4);
    c.counts = c.displs = arr;
    expect_reject(c, CAD_EINVAL, "regular blocks");
    c = base_coll(CAD_K_ALLTOALL, CAD_A_LINEAR, 4);
    c.counts = c.displs = c.rcounts = arr;
    expect_reject(c, CAD_EINVAL, "all or none");
    c = base_coll(CAD_K_ALLGATHER, CAD_A_RING, 4);
    c.counts = arr;
    expect_reject(c, CAD_EINVAL, "both or none");
    /* in place where MPI has none */
    c = base_coll(CAD_K_BCAST, CAD_A_AUTO, 4);
    c.in_place = 1;
    expect_reject(c, CAD_EINVAL, "in_place does not apply to bcast");
    c = base_coll(CAD_K_ALLTOALL, CAD_A_AUTO, 4);
    c.in_place = 1;
    expect_reject(c, CAD_EINVAL, "in_place does not apply to alltoall");
    /* reductions */
    c = base_coll(CAD_K_ALLREDUCE, CAD_A_RING, 4);
    c.op = CAD_OP_USER;
    c.commutative = 0;
    expect_reject(c, CAD_EINVAL, "ring needs a commutative op");
    c = base_coll(CAD_K_REDUCE_SCATTER, CAD_A_RING, 4);
    c.op = CAD_OP_USER;
    expect_reject(c, CAD_EINVAL, "ring needs a commutative op");
    c.commutative = 1;
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    c = base_coll(CAD_K_ALLREDUCE, CAD_A_RING, 2050);
    c.count = 4096;
    c.bytes = 4 * 4096;
    expect_reject(c, CAD_EINVAL, "tags");
    c = base_coll(CAD_K_ALLREDUCE, CAD_A_AUTO, 4);
    c.op = 0;
    expect_reject(c, CAD_EINVAL, "unknown op");
    c.op = CAD_OP_COUNT;
    expect_reject(c, CAD_EINVAL, "unknown op");
    c = base_coll(CAD_K_SCAN, CAD_A_AUTO, 4);
    c.dtype = CAD_T_COUNT;
    expect_reject(c, CAD_EINVAL, "unknown element type");
    c = base_coll(CAD_K_REDUCE, CAD_A_AUTO, 4);
    c.op = CAD_OP_MINLOC;
    expect_reject(c, CAD_EINVAL, "not defined");
    c = base_coll(CAD_K_REDUCE, CAD_A_AUTO, 4);
    c.dtype = CAD_T_DERIVED; /* predefined ops never take a derived type */
    expect_reject(c, CAD_EINVAL, "not defined");
    c = base_coll(CAD_K_EXSCAN, CAD_A_AUTO, 4);
    c.bytes = 63;
    expect_reject(c, CAD_EINVAL, "count elements");
    c = base_coll(CAD_K_ALLREDUCE, CAD_A_AUTO, 4);
    c.op = CAD_OP_USER;
    c.dtype = CAD_T_DERIVED;
    c.count = 5;
    expect_reject(c, CAD_EINVAL, "multiple of count");
    c.count = 0;
    expect_reject(c, CAD_EINVAL, "multiple of count");
    c.bytes = 0;
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    c = base_coll(CAD_K_REDUCE_SCATTER, CAD_A_AUTO, 4);
    uint64_t rs[4] = {16, 16, 16, 12};
    c.counts = rs;
    expect_reject(c, CAD_EINVAL, "add up");
    rs[3] = 18;
    c.bytes = 66;
    c.count = 0;
    c.op = CAD_OP_USER;
    c.dtype = CAD_T_DERIVED;
    c.count = 33; /* 2-byte elements: 16, 16, 16, 18 are whole */
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    rs[3] = 17;
    rs[2] = 17;
    expect_reject(c, CAD_EINVAL, "whole elements");
    c = base_coll(CAD_K_REDUCE_SCATTER, CAD_A_AUTO, 3); /* block: 64 bytes in 3 */
    expect_reject(c, CAD_EINVAL, "block");
    /* too big for one graph: every rank talks to every other one */
    c = base_coll(CAD_K_ALLTOALL, CAD_A_LINEAR, 40000);
    why = 0;
    UT_EQ(cad_alg_plan(&c, &p, &why), -CAD_ENOSPC);
    UT_ASSERT(why && strstr(why, "CAD_MAX_NODES"));
    UT_EQ(p.node_cap, 0);
    c = base_coll(CAD_K_ALLTOALL, CAD_A_LINEAR, 20000); /* but this fits */
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    UT_EQ(p.node_cap, 2 + 2 * 19999);
}

UT_TEST(cad_alg_build_rejects)
{
    static uint64_t mem[4096];
    static char part[4096];
    struct cad_owner own = sim_owner(0, 4, (uintptr_t)part, sizeof part, 0);
    struct cad_coll c = base_coll(CAD_K_BARRIER, CAD_A_AUTO, 4);
    struct cad_plan p;
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    struct cad_graph *g = cad_init(mem, sizeof mem, p.node_cap, p.edge_cap, &own);
    UT_EQ(cad_alg_build(0, &c, 0), -CAD_EINVAL);
    UT_EQ(cad_alg_build(g, 0, 0), -CAD_EINVAL);
    struct cad_coll bad = c;
    bad.rank = 9;
    UT_EQ(cad_alg_build(g, &bad, 0), -CAD_EINVAL);
    bad = c;
    bad.rank = 1; /* valid, but the graph is rank 0's */
    UT_EQ(cad_alg_build(g, &bad, 0), -CAD_EINVAL);
    bad = c;
    bad.size = 5;
    UT_EQ(cad_alg_build(g, &bad, 0), -CAD_EINVAL);
    UT_EQ(cad_alg_build(g, &c, 0), 0);
    UT_EQ(cad_alg_build(g, &c, 0), -CAD_EINVAL); /* not empty any more */
    UT_EQ(cad_finalize(g, 0), 0);
    /* Too small a graph: the build stops, finalize would refuse it too. */
    g = cad_init(mem, sizeof mem, p.node_cap - 1, p.edge_cap, &own);
    UT_EQ(cad_alg_build(g, &c, 0), -CAD_ENOSPC);
    UT_EQ(cad_finalize(g, 0), -CAD_ENOSPC);
}

UT_TEST(cad_alg_auto_choices)
{
    static const struct {
        int kind, n;
        uint64_t bytes;
        int v, op_user, want;
    } cases[] = {
        {CAD_K_BARRIER, 7, 0, 0, 0, CAD_A_DISSEM},
        {CAD_K_BCAST, 8, 1024, 0, 0, CAD_A_BINOMIAL},
        {CAD_K_BCAST, 8, 128 << 10, 0, 0, CAD_A_CHAIN},
        {CAD_K_BCAST, 2, 1 << 20, 0, 0, CAD_A_BINOMIAL},
        {CAD_K_REDUCE, 8, 1 << 20, 0, 0, CAD_A_BINOMIAL},
        {CAD_K_ALLREDUCE, 8, 16 << 10, 0, 0, CAD_A_RECDBL},
        {CAD_K_ALLREDUCE, 8, 64 << 10, 0, 0, CAD_A_RING},
        {CAD_K_ALLREDUCE, 8, 64 << 10, 0, 1, CAD_A_RECDBL},    /* non-commutative user op */
        {CAD_K_ALLREDUCE, 4096, 64 << 10, 0, 0, CAD_A_RECDBL}, /* the ring's tags */
        {CAD_K_GATHER, 8, 2048, 0, 0, CAD_A_BINOMIAL},
        {CAD_K_GATHER, 8, 2049, 0, 0, CAD_A_LINEAR},
        {CAD_K_GATHER, 8, 16, 1, 0, CAD_A_LINEAR},
        {CAD_K_SCATTER, 2, 16, 0, 0, CAD_A_LINEAR},
        {CAD_K_SCATTER, 3, 16, 0, 0, CAD_A_BINOMIAL},
        {CAD_K_ALLGATHER, 8, 1024, 0, 0, CAD_A_RECDBL},
        {CAD_K_ALLGATHER, 6, 1024, 0, 0, CAD_A_RING},
        {CAD_K_ALLGATHER, 8, 1024, 1, 0, CAD_A_RING},
        {CAD_K_ALLGATHER, 8, 1 << 20, 0, 0, CAD_A_RING},
        {CAD_K_ALLGATHER, 8192, 1 << 20, 0, 0, CAD_A_RECDBL},
        {CAD_K_ALLTOALL, 8, 1024, 0, 0, CAD_A_LINEAR},
        {CAD_K_ALLTOALL, 8, 64 << 10, 0, 0, CAD_A_PAIRWISE},
        {CAD_K_ALLTOALL, 4, 1 << 20, 0, 0, CAD_A_LINEAR},
        {CAD_K_REDUCE_SCATTER, 8, 64 << 10, 0, 0, CAD_A_RING},
        {CAD_K_REDUCE_SCATTER, 8, 64 << 10, 0, 1, CAD_A_COMPOSITE},
        {CAD_K_REDUCE_SCATTER, 8, 1024, 0, 0, CAD_A_COMPOSITE},
        {CAD_K_SCAN, 2, 64, 0, 0, CAD_A_LINEAR},
        {CAD_K_SCAN, 3, 64, 0, 0, CAD_A_RECDBL},
        {CAD_K_EXSCAN, 9, 64, 0, 1, CAD_A_RECDBL},
    };
    static uint64_t arr[8192];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cad_coll c = base_coll(cases[i].kind, CAD_A_AUTO, cases[i].n);
        c.bytes = cases[i].bytes;
        c.count = c.bytes / 4;
        if (cases[i].op_user)
            c.op = CAD_OP_USER;
        if (cases[i].v) {
            for (int k = 0; k < cases[i].n; k++)
                arr[k] = 4;
            c.counts = c.displs = arr;
        }
        if (cases[i].kind == CAD_K_REDUCE_SCATTER) /* block variant */
            c.bytes = c.bytes / (uint64_t)cases[i].n * (uint64_t)cases[i].n;
        c.count = c.bytes / 4;
        struct cad_plan p;
        const char *why = "";
        int rc = cad_alg_plan(&c, &p, &why);
        if (rc || p.alg != cases[i].want || c.alg != p.alg)
            ut_fail(__FILE__, __LINE__, "case %zu (%s, n=%d): rc %d (%s), chose %s, want %s", i,
                    cad_kind_name(cases[i].kind), cases[i].n, rc, rc ? why : "",
                    cad_alg_name(p.alg), cad_alg_name(cases[i].want));
    }
}

UT_TEST(cad_alg_names)
{
    for (int a = 0; a < CAD_A_COUNT; a++) {
        UT_ASSERT(strcmp(cad_alg_name(a), "?"));
        UT_EQ(cad_alg_by_name(cad_alg_name(a)), a);
    }
    UT_ASSERT(!strcmp(cad_alg_name(CAD_A_COUNT), "?"));
    UT_ASSERT(!strcmp(cad_alg_name(-1), "?"));
    UT_EQ(cad_alg_by_name("auto"), CAD_A_AUTO);
    UT_EQ(cad_alg_by_name("Ring"), CAD_A_RING);
    UT_EQ(cad_alg_by_name("CHAIN"), CAD_A_CHAIN);
    UT_EQ(cad_alg_by_name("recursive_doubling"), CAD_A_RECDBL);
    UT_EQ(cad_alg_by_name("dissemination"), CAD_A_DISSEM);
    UT_EQ(cad_alg_by_name("rin"), -1);
    UT_EQ(cad_alg_by_name("rings"), -1);
    UT_EQ(cad_alg_by_name(""), -1);
    UT_EQ(cad_alg_by_name(0), -1);
    UT_ASSERT(!strcmp(cad_kind_name(CAD_K_BCAST), "bcast"));
    UT_ASSERT(!strcmp(cad_kind_name(CAD_K_REDUCE_SCATTER), "reduce_scatter"));
    UT_ASSERT(!strcmp(cad_kind_name(CAD_K_EXSCAN), "exscan"));
    UT_ASSERT(!strcmp(cad_kind_name(0), "?"));
    UT_ASSERT(!strcmp(cad_kind_name(CAD_K_COUNT), "?"));
    for (int k = 1; k < CAD_K_COUNT; k++)
        UT_ASSERT(strcmp(cad_kind_name(k), "?"));
}

/* Graphs stay small: O(log n) nodes for the tree and doubling algorithms, O(n) for the
 * linear and ring ones, whatever the rank; checked on 1000 and 1024 ranks. */
UT_TEST(cad_alg_graph_growth)
{
    static const struct {
        int kind, alg, log; /* log: O(log n), else O(n) */
    } algs[] = {
        {CAD_K_BARRIER, CAD_A_DISSEM, 1},      {CAD_K_BCAST, CAD_A_BINOMIAL, 1},
        {CAD_K_REDUCE, CAD_A_BINOMIAL, 1},     {CAD_K_ALLREDUCE, CAD_A_RECDBL, 1},
        {CAD_K_ALLREDUCE, CAD_A_COMPOSITE, 1}, {CAD_K_ALLREDUCE, CAD_A_RING, 0},
        {CAD_K_GATHER, CAD_A_BINOMIAL, 1},     {CAD_K_GATHER, CAD_A_LINEAR, 0},
        {CAD_K_SCATTER, CAD_A_BINOMIAL, 1},    {CAD_K_SCATTER, CAD_A_LINEAR, 0},
        {CAD_K_ALLGATHER, CAD_A_RING, 0},      {CAD_K_ALLGATHER, CAD_A_RECDBL, 1},
        {CAD_K_ALLTOALL, CAD_A_LINEAR, 0},     {CAD_K_ALLTOALL, CAD_A_PAIRWISE, 0},
        {CAD_K_REDUCE_SCATTER, CAD_A_RING, 0}, {CAD_K_REDUCE_SCATTER, CAD_A_COMPOSITE, 0},
        {CAD_K_SCAN, CAD_A_LINEAR, 1},         {CAD_K_SCAN, CAD_A_RECDBL, 1},
        {CAD_K_EXSCAN, CAD_A_RECDBL, 1},
    };
    static const int ns[] = {1000, 1024};
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++)
        for (int ni = 0; ni < 2; ni++) {
            int n = ns[ni];
            if (algs[a].kind == CAD_K_ALLGATHER && algs[a].alg == CAD_A_RECDBL && n != 1024)
                continue;
            for (int r = 0; r < n; r += 37) {
                struct cad_coll c = base_coll(algs[a].kind, algs[a].alg, n);
                c.rank = r;
                c.root = 5;
                c.bytes = 4 * (uint64_t)n;
                c.count = (uint64_t)n;
                struct cad_plan p;
                UT_EQ(cad_alg_plan(&c, &p, 0), 0);
                uint32_t bound = algs[a].log ? 6 * 10 + 10 : 5 * (uint32_t)n + 10;
                if (p.node_cap > bound || p.edge_cap > 3 * bound)
                    ut_fail(__FILE__, __LINE__, "%s/%s n=%d rank %d: %u nodes, %u edges",
                            cad_kind_name(c.kind), cad_alg_name(c.alg), n, r, p.node_cap,
                            p.edge_cap);
                UT_ASSERT(p.ncopies <= 2);
            }
        }
}
