/*
 * cad_exec_test.c: the ready-set logic (mpi/cad/cad_exec.c) on the graphs of real
 * collectives, run one graph per rank by the simulator (cad_sim.h) with operations
 * completing in FIFO, LIFO and random orders, eager and rendezvous, CALC inline (as the
 * interrupt runs them) or later, user ops deferred to the rank's context; every rank's
 * result is checked against the expected data. Then random DAGs, cancel, re-issue, the
 * order nodes become ready in, misuse, and a graph of the maximum size.
 */
#include "ut.h"
#include "cad_sim.h"
#include <stdlib.h>
#include <string.h>

static const enum sim_order orders[] = {SIM_FIFO, SIM_LIFO, SIM_RANDOM, SIM_RANDOM, SIM_RANDOM};
#define NORDERS ((int)(sizeof orders / sizeof orders[0]))

static uint8_t pattern(int root, size_t i)
{
    return (uint8_t)(i * 31 + (size_t)root * 7 + 1);
}

/* Every rank holds the root's bytes afterwards (the builders of cad_alg.h; the full
 * matrix of collectives is cad_alg_test.c). */
static void run_bcast(int n, int root, int chain, uint64_t bytes, uint64_t chunk, int o,
                      enum sim_proto proto, uint64_t seed)
{
    static struct sim s;
    char *buf[SIM_RANKS];
    struct cad_plan plan;
    sim_init(&s, n, 2, 1, seed);
    s.order = orders[o];
    s.proto = proto;
    for (int r = 0; r < n; r++) {
        buf[r] = sim_alloc(&s, r, bytes);
        for (size_t i = 0; r == root && i < bytes; i++)
            buf[r][i] = (char)pattern(root, i);
        struct cad_coll c = {.kind = CAD_K_BCAST,
                             .alg = chain ? CAD_A_CHAIN : CAD_A_BINOMIAL,
                             .rank = r,
                             .size = n,
                             .root = root,
                             .ctx = 7,
                             .tag = 10,
                             .rbuf = buf[r],
                             .bytes = bytes,
                             .chunk = chunk};
        UT_EQ(sim_coll(&s, r, &c, &plan), 0); /* no scratch */
    }
    sim_run(&s);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < bytes; i++)
            if ((uint8_t)buf[r][i] != pattern(root, i))
                ut_fail(__FILE__, __LINE__, "n=%d root=%d order=%d: rank %d byte %zu wrong", n,
                        root, o, r, i);
    sim_free(&s);
}

UT_TEST(cad_bcast_binomial_every_root)
{
    for (int n = 1; n <= 8; n++)
        for (int root = 0; root < n; root++)
            for (int o = 0; o < NORDERS; o++) {
                run_bcast(n, root, 0, 1000, 0, o, SIM_EAGER, (uint64_t)(n * 100 + root * 10 + o));
                run_bcast(n, root, 0, 1000, 0, o, SIM_RENDEZVOUS, (uint64_t)(n * 77 + root + o));
            }
}

UT_TEST(cad_bcast_chain_chunks)
{
    static const uint64_t chunks[] = {100, 256, 999, 1000, 4096};
    for (int n = 1; n <= 8; n++)
        for (int root = 0; root < n; root++)
            for (int c = 0; c < 5; c++)
                for (int o = 0; o < NORDERS; o++)
                    run_bcast(n, root, 1, 1000, chunks[c], o, o & 1 ? SIM_EAGER : SIM_RENDEZVOUS,
                              (uint64_t)(n * 1000 + root * 100 + c * 10 + o));
}

/* --- allreduce ----------------------------------------------------------------------- */

#define COUNT 37

static void user_sum_i32(const void *in, void *inout, uint64_t count, int dtype)
{
    UT_EQ(dtype, CAD_T_INT32);
    const int32_t *a = in;
    int32_t *b = inout;
    for (uint64_t i = 0; i < count; i++)
        b[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
}

struct pair2 {
    int32_t v, i;
};

/* Rank r's contribution, element i, and the expected result, per (op, type) case. */
enum { C_SUM_I32, C_MAX_DBL, C_BXOR_U64, C_MINLOC_2INT, C_MAXLOC_2INT, C_USER_I32, NCASES };

static void fill(int c, int r, void *buf)
{
    for (int i = 0; i < COUNT; i++) {
        switch (c) {
        case C_SUM_I32:
        case C_USER_I32:
            ((int32_t *)buf)[i] = r * 1000 + i - 500;
            break;
        case C_MAX_DBL:
            ((double *)buf)[i] = (double)((r * 37 + i * 11) % 23) - 11.0;
            break;
        case C_BXOR_U64:
            ((uint64_t *)buf)[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1) ^ (uint64_t)i;
            break;
        default: /* few distinct values: ties between ranks are common */
            ((struct pair2 *)buf)[i] = (struct pair2){(r * 7 + i) % 3, r};
        }
    }
}

static void check_result(int c, int n, const void *buf)
{
    for (int i = 0; i < COUNT; i++) {
        switch (c) {
        case C_SUM_I32:
        case C_USER_I32: {
            int32_t want = 0;
            for (int r = 0; r < n; r++)
                want += r * 1000 + i - 500;
            UT_EQ(((const int32_t *)buf)[i], want);
            break;
        }
        case C_MAX_DBL: {
            double want = -1e9;
            for (int r = 0; r < n; r++) {
                double v = (double)((r * 37 + i * 11) % 23) - 11.0;
                want = v > want ? v : want;
            }
            UT_ASSERT(((const double *)buf)[i] == want);
            break;
        }
        case C_BXOR_U64: {
            uint64_t want = 0;
            for (int r = 0; r < n; r++)
                want ^= 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1) ^ (uint64_t)i;
            UT_ASSERT(((const uint64_t *)buf)[i] == want);
            break;
        }
        default: {
            struct pair2 want = {c == C_MINLOC_2INT ? 99 : -1, 0};
            for (int r = 0; r < n; r++) { /* ranks in increasing order: first wins a tie */
                int v = (r * 7 + i) % 3;
                if (c == C_MINLOC_2INT ? v < want.v : v > want.v)
                    want = (struct pair2){v, r};
            }
            const struct pair2 *got = &((const struct pair2 *)buf)[i];
            UT_EQ(got->v, want.v);
            UT_EQ(got->i, want.i);
        }
        }
    }
}

static void run_allreduce(int n, int c, int o, enum sim_proto proto, int inline_calc, uint64_t seed)
{
    static const int op[] = {CAD_OP_SUM, CAD_OP_MAX, CAD_OP_BXOR, CAD_OP_MINLOC, CAD_OP_MAXLOC, 0};
    static const int dt[] = {CAD_T_INT32, CAD_T_DOUBLE, CAD_T_UINT64,
                             CAD_T_2INT,  CAD_T_2INT,   CAD_T_INT32};
    static struct sim s;
    void *buf[SIM_RANKS];
    struct cad_plan plan;
    sim_init(&s, n, 2, 1, seed);
    s.order = orders[o];
    s.proto = proto;
    s.calc_inline = inline_calc;
    s.user[2] = user_sum_i32;
    size_t bytes = COUNT * cad_type_size(dt[c]);
    for (int r = 0; r < n; r++) {
        buf[r] = sim_alloc(&s, r, bytes);
        fill(c, r, buf[r]);
        struct cad_coll d = {.kind = CAD_K_ALLREDUCE,
                             .alg = CAD_A_RECDBL,
                             .rank = r,
                             .size = n,
                             .ctx = 9,
                             .tag = 20,
                             .rbuf = buf[r],
                             .bytes = bytes,
                             .in_place = 1,
                             .op = c == C_USER_I32 ? CAD_OP_USER : op[c],
                             .dtype = dt[c],
                             .count = COUNT,
                             .user_op = 2,
                             .commutative = 1};
        sim_coll(&s, r, &d, &plan);
    }
    sim_run(&s);
    for (int r = 0; r < n; r++)
        check_result(c, n, buf[r]);
    sim_free(&s);
}

UT_TEST(cad_allreduce_recursive_doubling)
{
    for (int n = 1; n <= 8; n++)
        for (int c = 0; c < NCASES; c++)
            for (int o = 0; o < NORDERS; o++)
                for (int v = 0; v < 4; v++)
                    run_allreduce(n, c, o, v & 1 ? SIM_RENDEZVOUS : SIM_EAGER, v >> 1,
                                  (uint64_t)(n * 1000 + c * 100 + o * 10 + v));
}

/* The simulator must be able to see a missing dependency: without SEND -> CALC, a
 * rendezvous send reads a buffer the CALC has already overwritten. */
UT_TEST(cad_sim_catches_missing_dependency)
{
    static struct sim s;
    int wrong = 0;
    for (uint64_t seed = 1; seed <= 20 && !wrong; seed++) {
        sim_init(&s, 2, 16, 16, seed);
        s.order = SIM_RANDOM;
        s.proto = SIM_RENDEZVOUS;
        int32_t *buf[2];
        for (int r = 0; r < 2; r++) {
            struct cad_graph *g = s.r[r].g;
            buf[r] = sim_alloc(&s, r, 4);
            int32_t *tmp = sim_alloc(&s, r, 4);
            *buf[r] = r + 1;
            int sn = cad_send(g, buf[r], 4, 1 - r, 0, 0);
            int rn = cad_recv(g, tmp, 4, 1 - r, 0, 0);
            int cn = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, tmp, buf[r], 1);
            cad_connect(g, CAD_NODE_START, sn);
            cad_connect(g, CAD_NODE_START, rn);
            cad_connect(g, rn, cn); /* sn -> cn missing on purpose */
            cad_connect(g, sn, CAD_NODE_END);
            cad_connect(g, cn, CAD_NODE_END);
        }
        sim_run(&s);
        wrong = *buf[0] != 3 || *buf[1] != 3;
        sim_free(&s);
    }
    UT_ASSERT(wrong);
}

/* --- random DAGs --------------------------------------------------------------------- */

/* A random DAG of m inner nodes: edges only from earlier to later in a random
 * permutation, START before every node without a predecessor, END after every node
 * without a successor. */
static struct cad_graph *random_dag(void *mem, size_t bytes, int m, int degree, uint64_t *rng)
{
    static int perm[4096];
    static uint8_t has_pred[4096], has_succ[4096];
    struct cad_owner own = sim_owner(0, 1, 0x10000, 0x10000, 0);
    struct cad_graph *g =
        cad_init(mem, bytes, (uint32_t)m + 2, (uint32_t)(m * (degree + 2) + 1), &own);
    UT_ASSERT(g);
    for (int i = 0; i < m; i++) {
        int idx = i % 3 == 0   ? cad_send(g, 0, 0, 0, i, 0)
                  : i % 3 == 1 ? cad_recv(g, 0, 0, 0, i, 0)
                               : cad_calc(g, CAD_OP_SUM, CAD_T_INT32, 0, 0, 0);
        UT_EQ(idx, i + 2);
        perm[i] = i + 2;
        has_pred[i + 2] = has_succ[i + 2] = 0;
    }
    for (int i = m - 1; i > 0; i--) {
        int j = (int)(sim_rand(rng) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < m; i++) {
        int last = -1; /* increasing targets: no duplicates */
        for (int d = 0; d < degree && i + 1 < m; d++) {
            int j = i + 1 + (int)(sim_rand(rng) % (uint64_t)(m - i - 1));
            if (j <= last)
                continue;
            last = j;
            UT_EQ(cad_connect(g, perm[i], perm[j]), 0);
            has_succ[perm[i]] = has_pred[perm[j]] = 1;
        }
    }
    for (int i = 2; i < m + 2; i++) {
        if (!has_pred[i])
            cad_connect(g, CAD_NODE_START, i);
        if (!has_succ[i])
            cad_connect(g, i, CAD_NODE_END);
    }
    if (!m)
        cad_connect(g, CAD_NODE_START, CAD_NODE_END);
    struct cad_error err;
    if (cad_finalize(g, &err))
        ut_fail(__FILE__, __LINE__, "%s", err.msg);
    return g;
}

UT_TEST(cad_random_dags_ready_sets)
{
    uint64_t rng = 12345;
    size_t bytes = cad_bytes(402, 402 * 6);
    void *mem = malloc(bytes);
    for (int t = 0; t < 300; t++) {
        int m = (int)(sim_rand(&rng) % 200), degree = 1 + (int)(sim_rand(&rng) % 4);
        struct cad_graph *g = random_dag(mem, bytes, m, degree, &rng);
        for (int o = 0; o < NORDERS; o++)
            sim_ready_only(g, orders[o], &rng); /* also re-issues the same graph */
        UT_EQ(g->issues, NORDERS);
    }
    free(mem);
}

/* --- single-graph behaviour ---------------------------------------------------------- */

static struct cad_graph *small_graph(void *mem, size_t bytes, char *part)
{
    struct cad_owner own = sim_owner(0, 4, (uintptr_t)part, 4096, 1);
    return cad_init(mem, bytes, 16, 32, &own);
}

UT_TEST(cad_ready_in_connect_order)
{
    static char part[4096];
    static uint64_t mem[1024];
    struct cad_graph *g = small_graph(mem, sizeof mem, part);
    int a = cad_recv(g, part, 8, 1, 0, 0), b = cad_recv(g, part + 8, 8, 2, 0, 0);
    int c = cad_recv(g, part + 16, 8, 3, 0, 0);
    cad_connect(g, CAD_NODE_START, c); /* connect order c, a, b: index order is a, b, c */
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, CAD_NODE_START, b);
    cad_connect(g, a, CAD_NODE_END);
    cad_connect(g, b, CAD_NODE_END);
    cad_connect(g, c, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    UT_EQ(cad_issue(g), 0);
    UT_EQ(cad_next_ready(g), c);
    UT_EQ(cad_next_ready(g), a);
    UT_EQ(cad_next_ready(g), b);
    UT_EQ(cad_next_ready(g), -1);
    UT_EQ(cad_complete(g, b), 0);
    UT_EQ(cad_complete(g, c), 0);
    UT_EQ(cad_query(g), CAD_Q_RUNNING);
    UT_EQ(cad_complete(g, a), CAD_FINISHED);
    UT_EQ(cad_query(g), CAD_Q_DONE);
}

UT_TEST(cad_start_to_end_finishes_at_issue)
{
    static char part[4096];
    static uint64_t mem[1024];
    struct cad_graph *g = small_graph(mem, sizeof mem, part);
    cad_connect(g, CAD_NODE_START, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    UT_EQ(cad_issue(g), CAD_FINISHED);
    UT_EQ(cad_query(g), CAD_Q_DONE);
    UT_EQ(g->ndone, 2);
    UT_EQ(cad_next_ready(g), -1);
}

UT_TEST(cad_misuse_changes_nothing)
{
    static char part[4096];
    static uint64_t mem[1024];
    struct cad_graph *g = small_graph(mem, sizeof mem, part);
    int r = cad_recv(g, part, 8, 1, 0, 0), s = cad_send(g, part, 8, 2, 0, 0);
    cad_connect(g, CAD_NODE_START, r);
    cad_connect(g, r, s);
    cad_connect(g, s, CAD_NODE_END);
    UT_EQ(cad_issue(g), -CAD_ESTATE); /* not finalized, hence not validated */
    UT_EQ(cad_query(g), CAD_Q_IDLE);
    UT_EQ(cad_finalize(g, 0), 0);
    UT_EQ(cad_issue(g), 0);
    UT_EQ(cad_issue(g), -CAD_ESTATE);                  /* already running */
    UT_EQ(cad_send(g, part, 1, 0, 0, 0), -CAD_ESTATE); /* no changes while running */
    UT_EQ(cad_connect(g, s, r), -CAD_ESTATE);
    UT_EQ(cad_finalize(g, 0), -CAD_ESTATE);
    UT_EQ(cad_validate(g, sizeof mem, 0), -CAD_ESTATE);
    UT_EQ(cad_free(g), -CAD_ESTATE);
    UT_EQ(cad_complete(g, s), -CAD_ESTATE); /* not started */
    UT_EQ(cad_complete(g, 99), -CAD_EINVAL);
    UT_EQ(cad_complete(g, -1), -CAD_EINVAL);
    UT_EQ(cad_complete(g, CAD_NODE_END), -CAD_ESTATE);
    UT_EQ(cad_defer(g, r), -CAD_ESTATE); /* ready, not taken */
    sim_check_states(g);
    UT_EQ(cad_next_ready(g), r);
    UT_EQ(cad_complete(g, r), 0);
    UT_EQ(cad_complete(g, r), -CAD_ESTATE);
    UT_EQ(cad_next_ready(g), s);
    UT_EQ(cad_complete(g, s), CAD_FINISHED);
    sim_check_states(g);
    /* Changing a finished graph voids its validation until it is finalized again. */
    UT_EQ(cad_issue(g), 0);
    UT_EQ(cad_next_ready(g), r);
    UT_EQ(cad_complete(g, r), 0);
    UT_EQ(cad_next_ready(g), s);
    UT_EQ(cad_complete(g, s), CAD_FINISHED);
    int x = cad_send(g, part, 1, 3, 0, 0);
    UT_ASSERT(x > 0);
    UT_EQ(cad_issue(g), -CAD_ESTATE);
    cad_connect(g, s, x);
    cad_connect(g, x, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    uint64_t rng = 5;
    sim_ready_only(g, SIM_RANDOM, &rng);
    UT_EQ(cad_free(g), 0);
    UT_EQ(cad_issue(g), -CAD_EINVAL);
    UT_EQ(cad_query(g), -CAD_EINVAL);
    UT_EQ(cad_send(g, part, 1, 0, 0, 0), -CAD_EINVAL);
}

UT_TEST(cad_user_ops_are_deferred_in_order)
{
    static char part[4096];
    static uint64_t mem[1024];
    struct cad_graph *g = small_graph(mem, sizeof mem, part);
    int u1 = cad_calc_user(g, 0, CAD_T_INT32, part, part + 64, 4, 16);
    int u2 = cad_calc_user(g, 0, CAD_T_INT32, part, part + 128, 4, 16);
    int p = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, part, part + 192, 4);
    cad_connect(g, CAD_NODE_START, u1);
    cad_connect(g, CAD_NODE_START, u2);
    cad_connect(g, u1, p);
    cad_connect(g, u2, p);
    cad_connect(g, p, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    UT_EQ(cad_issue(g), 0);
    int i;
    while ((i = cad_next_ready(g)) >= 0) { /* "interrupt": defer what it may not run */
        UT_EQ(cad_calc_run(&cad_nodes(g)[i]), CAD_CALC_DEFERRED);
        UT_EQ(cad_defer(g, i), 0);
    }
    sim_check_states(g);
    UT_EQ(g->nactive, 2);
    UT_EQ(cad_nodes(g)[u1].state, CAD_NS_DEFERRED);
    UT_EQ(cad_next_deferred(g), u1); /* "rank context" */
    UT_EQ(cad_complete(g, u1), 0);
    UT_EQ(cad_next_deferred(g), u2);
    UT_EQ(cad_next_deferred(g), -1);
    UT_EQ(cad_complete(g, u2), 0);
    UT_EQ(cad_next_ready(g), p);
    UT_EQ(cad_calc_run(&cad_nodes(g)[p]), 0);
    UT_EQ(cad_complete(g, p), CAD_FINISHED);
}

UT_TEST(cad_cancel_settles_active_nodes)
{
    static char part[4096];
    static uint64_t mem[1024];
    struct cad_graph *g = small_graph(mem, sizeof mem, part);
    int r[3], s[3];
    for (int c = 0; c < 3; c++) { /* the paper's figure 1 for rank 1 of 3 */
        r[c] = cad_recv(g, part + c * 100, 100, 0, c, 0);
        s[c] = cad_send(g, part + c * 100, 100, 2, c, 0);
        cad_connect(g, CAD_NODE_START, r[c]);
        cad_connect(g, r[c], s[c]);
        cad_connect(g, s[c], CAD_NODE_END);
    }
    int u = cad_calc_user(g, 0, CAD_T_BYTE, part, part + 400, 1, 1);
    cad_connect(g, CAD_NODE_START, u);
    cad_connect(g, u, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    UT_EQ(cad_cancel(g), -CAD_ESTATE); /* not running */
    UT_EQ(cad_issue(g), 0);
    UT_EQ(cad_next_ready(g), r[0]);
    UT_EQ(cad_next_ready(g), r[1]);
    UT_EQ(cad_complete(g, r[1]), 0); /* s[1] ready now, r[2] and u still queued */
    UT_EQ(cad_next_ready(g), r[2]);
    UT_EQ(cad_next_ready(g), u);
    UT_EQ(cad_defer(g, u), 0);
    UT_EQ(cad_cancel(g), 2); /* r[0] and r[2] are posted: the executor must settle them */
    UT_EQ(cad_query(g), CAD_Q_CANCELLING);
    UT_EQ(cad_nodes(g)[s[1]].state, CAD_NS_CANCELLED);
    UT_EQ(cad_nodes(g)[u].state, CAD_NS_CANCELLED);
    UT_EQ(cad_next_ready(g), -1);
    UT_EQ(cad_next_deferred(g), -1);
    UT_EQ(cad_issue(g), -CAD_ESTATE);
    UT_EQ(cad_complete(g, r[0]), 0);
    UT_EQ(cad_nodes(g)[s[0]].state, CAD_NS_IDLE); /* nothing fires any more */
    UT_EQ(cad_complete(g, r[2]), CAD_FINISHED);
    UT_EQ(cad_query(g), CAD_Q_CANCELLED);
    uint64_t rng = 9;
    sim_ready_only(g, SIM_RANDOM, &rng); /* a cancelled graph can be issued again */
    UT_EQ(cad_issue(g), 0);
    UT_EQ(cad_cancel(g), 0); /* nothing posted: cancelled at once */
    UT_EQ(cad_query(g), CAD_Q_CANCELLED);
}

static int wait_calls;
static struct cad_graph *wait_graph;
static void fake_block(void *arg)
{
    /* Stands in for sleeping until an interrupt: the "interrupt" completes one node. */
    int i = cad_next_ready(wait_graph);
    UT_ASSERT(i >= 0 && arg == &wait_calls);
    wait_calls++;
    cad_complete(wait_graph, i);
}

UT_TEST(cad_wait_until_done)
{
    static char part[4096];
    static uint64_t mem[1024];
    struct cad_graph *g = small_graph(mem, sizeof mem, part);
    int prev = CAD_NODE_START;
    for (int k = 0; k < 5; k++) {
        int s = cad_send(g, part, 8, 1, k, 0);
        cad_connect(g, prev, s);
        prev = s;
    }
    cad_connect(g, prev, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    UT_EQ(cad_issue(g), 0);
    wait_graph = g;
    UT_EQ(cad_wait(g, fake_block, &wait_calls), CAD_Q_DONE);
    UT_EQ(wait_calls, 5);
}

/* The largest graph: a chain of 65533 nodes. The validator and the executor must not
 * recurse (ASan's stack would overflow) and stay linear. */
UT_TEST(cad_max_size_chain)
{
    uint32_t cap = CAD_MAX_NODES;
    size_t bytes = cad_bytes(cap, cap);
    UT_ASSERT(bytes > 0);
    UT_EQ(cad_bytes(cap + 1, cap), 0);
    void *mem = malloc(bytes);
    struct cad_owner own = sim_owner(0, 2, 0x1000, 0x1000, 0);
    struct cad_graph *g = cad_init(mem, bytes, cap, cap, &own);
    UT_ASSERT(g);
    int prev = CAD_NODE_START;
    for (uint32_t k = 2; k < cap; k++) {
        int s = k & 1 ? cad_send(g, 0, 0, 1, 0, 0) : cad_recv(g, 0, 0, 1, 0, 0);
        UT_EQ(s, (int)k);
        cad_connect(g, prev, s);
        prev = s;
    }
    cad_connect(g, prev, CAD_NODE_END);
    UT_EQ(cad_send(g, 0, 0, 1, 0, 0), -CAD_ENOSPC); /* full: recorded, finalize fails */
    struct cad_error err;
    UT_EQ(cad_finalize(g, &err), -CAD_ENOSPC);
    g->build_err = 0; /* forget it (a test may; a builder starts again) */
    UT_EQ(cad_finalize(g, &err), 0);
    UT_EQ(cad_issue(g), 0);
    int i, steps = 0, rc = 0;
    while ((i = cad_next_ready(g)) >= 0) {
        rc = cad_complete(g, i);
        steps++;
    }
    UT_EQ(rc, CAD_FINISHED);
    UT_EQ(steps, (int)cap - 2);
    UT_EQ(g->ndone, cap);
    free(mem);
}
