/*
 * mpe_cad_test.c: the engine's CAD executor (mpi/core/mpe_cad.c) on the host platform:
 * graphs built by the collective builders, issued through mpe_ops as each rank of a job
 * of simulated nodes, progressed by the "interrupt" tails of the byte pipes and by the
 * ranks' own calls, checked on the data. Also: a user-op CALC waits for its owner's
 * cad_test, the poll policy progresses only there, and a graph the engine must refuse
 * starts nothing.
 */
#include "cad_alg.h"
#include "mpe_test_util.h"

#define NR 6 /* ranks of the job: 3 nodes x 2 */

struct rank_run {
    void *mem;
    struct mpe_cad *run;
    uint8_t *buf;
    int32_t world[NR];
};

/* Rank r's part of `kind` on the world (bytes of data), issued as rank r. */
static void issue(struct rank_run *x, int r, int kind, uint64_t bytes, int policy, int user)
{
    struct cad_coll c = {.kind = kind, .rank = r, .size = NR, .ctx = 9, .root = 1};
    x->buf = mt_buf(bytes, r == 1 ? 5 : 77);
    c.rbuf = x->buf;
    c.sbuf = x->buf;
    c.bytes = bytes;
    if (kind == CAD_K_ALLREDUCE) {
        c.sbuf = 0;
        c.in_place = 1;
        c.op = user ? CAD_OP_USER : CAD_OP_BXOR;
        c.dtype = user ? CAD_T_DERIVED : CAD_T_UINT8;
        c.count = bytes;
        c.commutative = 1;
        c.alg = CAD_A_RECDBL;
    }
    struct cad_plan p;
    UT_EQ(cad_alg_plan(&c, &p, 0), 0);
    size_t gb = cad_bytes(p.node_cap, p.edge_cap);
    host_as_rank(r);
    size_t rb = mpe_ops.cad_bytes(p.node_cap);
    x->mem = calloc(1, gb + rb + p.tmp_bytes + 64);
    struct cad_owner own = {
        .rank = r, .comm_size = NR, .part_size = ~0ull >> 1, .nuser = user ? 1 : 0};
    struct cad_graph *g = cad_init(x->mem, gb, p.node_cap, p.edge_cap, &own);
    char *tmp = (char *)x->mem + gb + rb;
    UT_EQ(cad_alg_build(g, &c, tmp), 0);
    UT_EQ(cad_finalize(g, 0), 0);
    cad_alg_copies(&c, &p, tmp);
    for (int i = 0; i < NR; i++)
        x->world[i] = i;
    x->run = (struct mpe_cad *)((char *)x->mem + gb);
    memset(x->run, 0, sizeof *x->run);
    x->run->g = g;
    x->run->gbytes = gb;
    x->run->world = x->world;
    x->run->world_size = NR;
    x->run->policy = (uint32_t)policy;
    x->run->run_nodes = p.node_cap;
    UT_EQ(mpe_ops.cad_issue(x->run), 0);
}

/* The owners' side of the wait: each rank runs what was parked for it (user ops: XOR by
 * hand) and moves bytes, until every run is done. Returns how many user ops ran. */
static int wait_all(struct rank_run *x)
{
    int users = 0;
    for (int spins = 0;; spins++) {
        int all = 1;
        for (int r = 0; r < NR; r++) {
            if (mt_done(&x[r].run->req))
                continue;
            all = 0;
            host_as_rank(r);
            int node;
            while ((node = mpe_ops.cad_test(x[r].run)) >= 0) {
                const struct cad_node *n = &cad_nodes(x[r].run->copy)[node];
                const uint8_t *in = (const uint8_t *)(uintptr_t)n->u.c.in;
                uint8_t *io = (uint8_t *)(uintptr_t)n->u.c.inout;
                for (uint64_t i = 0; i < n->u.c.count; i++)
                    io[i] ^= in[i];
                mpe_ops.cad_done(x[r].run, node);
                users++;
            }
        }
        if (all)
            return users;
        UT_ASSERT(spins < 100000);
        host_pump();
    }
}

static void finish(struct rank_run *x)
{
    for (int r = 0; r < NR; r++) {
        UT_EQ(x[r].run->req.err, 0);
        free(x[r].mem);
        free(x[r].buf);
    }
}

static void bcast_case(int policy, uint64_t bytes)
{
    struct rank_run x[NR];
    mt_world(3, NR, 0);
    for (int r = NR - 1; r >= 0; r--) /* the root last: receives wait posted */
        issue(&x[r], r, CAD_K_BCAST, bytes, policy, 0);
    wait_all(x);
    for (int r = 0; r < NR; r++)
        UT_EQ(mt_diff(x[r].buf, bytes, 5), -1);
    finish(x);
    host_world_destroy();
}

UT_TEST(mpe_cad_bcast_auto)
{
    bcast_case(MPE_CAD_AUTO, 1000);
    bcast_case(MPE_CAD_AUTO, 200000); /* chain, rendezvous between nodes */
}

UT_TEST(mpe_cad_bcast_poll)
{
    bcast_case(MPE_CAD_POLL, 70000);
}

/* XOR of every rank's pattern, byte by byte. */
static void allreduce_case(int user)
{
    const uint64_t bytes = 3000;
    struct rank_run x[NR];
    mt_world(3, NR, 0);
    for (int r = 0; r < NR; r++)
        issue(&x[r], r, CAD_K_ALLREDUCE, bytes, MPE_CAD_AUTO, user);
    int users = wait_all(x);
    UT_ASSERT(user ? users > 0 : users == 0);
    for (int r = 0; r < NR; r++)
        for (uint64_t i = 0; i < bytes; i++) {
            uint8_t want = 0;
            for (int q = 0; q < NR; q++)
                want ^= mt_pat(i, q == 1 ? 5 : 77);
            UT_EQ(x[r].buf[i], want);
        }
    finish(x);
    host_world_destroy();
}

UT_TEST(mpe_cad_allreduce_calc)
{
    allreduce_case(0);
}

UT_TEST(mpe_cad_allreduce_user_op_deferred)
{
    allreduce_case(1);
}

/* A graph whose owner is another rank, and one with a buffer outside the partition the
 * platform reports: refused, with the reason, and nothing posted. */
UT_TEST(mpe_cad_refused)
{
    static _Alignas(8) uint8_t mem[4096], runmem[8192];
    static int32_t world[2] = {0, 1};
    mt_world(1, 2, 0);
    struct cad_owner own = {.rank = 1, .comm_size = 2, .part_size = ~0ull >> 1};
    struct cad_graph *g = cad_init(mem, sizeof mem, 8, 8, &own);
    int s = cad_send(g, mem, 0, 0, 1, 9);
    cad_connect(g, CAD_NODE_START, s);
    cad_connect(g, s, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    struct mpe_cad *run = (struct mpe_cad *)runmem;
    run->g = g;
    run->gbytes = sizeof mem;
    run->world = world;
    run->world_size = 2;
    run->run_nodes = 8;
    host_as_rank(0);
    UT_EQ(mpe_ops.cad_issue(run), -MPE_EINVAL);
    UT_ASSERT(strstr(run->why, "owner is not the calling rank"));
    host_world_destroy();
}
