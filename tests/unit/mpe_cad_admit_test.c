/*
 * mpe_cad_admit_test.c: the engine runs its own checked copy of a rank's CAD graph and
 * rank map (mpi/core/mpe_cad_admit.c, issue 15 defects 3 and 4), on simulated nodes. A
 * graph rewritten after the issue runs as issued; a map read only as far as the
 * library's communicator size says, which the graph's header must match; a run still in
 * use is refused untouched; the copies are reused, not allocated per issue.
 *
 * The scene: ranks 0 and 1 on two nodes. Rank 0 runs START -> RECV a -> RECV b -> END
 * (from rank 1, tags 1 and 2); rank 1 sends with plain engine sends once told to.
 */
#include "cad.h"
#include "mpe_test_util.h"

#define NODES 8
#define EDGES 8
#define VAL_A 0x1111111111111111ull
#define VAL_B 0x2222222222222222ull

struct scene {
    _Alignas(64) uint8_t gmem[2048];
    _Alignas(64) uint8_t runmem[16384];
    uint64_t a, b, canary;
    int32_t *world; /* malloc'd exactly: ASan sees a read past it */
    struct cad_graph *g;
    struct mpe_cad *run;
    int r2; /* RECV b */
};

/* Rank 0's graph, for a communicator of `comm_size` ranks, and its run record naming a map
 * of `map_len` entries (identity). */
static void build(struct scene *s, int comm_size, uint32_t map_len)
{
    memset(s->gmem, 0, sizeof s->gmem);
    memset(s->runmem, 0, sizeof s->runmem);
    s->a = s->b = 0;
    s->canary = 0xcafe;
    struct cad_owner own = {.rank = 0, .comm_size = comm_size, .part_size = ~0ull >> 1};
    s->g = cad_init(s->gmem, sizeof s->gmem, NODES, EDGES, &own);
    int r1 = cad_recv(s->g, &s->a, sizeof s->a, 1, 1, MT_CTX);
    s->r2 = cad_recv(s->g, &s->b, sizeof s->b, 1, 2, MT_CTX);
    cad_connect(s->g, CAD_NODE_START, r1);
    cad_connect(s->g, r1, s->r2);
    cad_connect(s->g, s->r2, CAD_NODE_END);
    UT_EQ(cad_finalize(s->g, 0), 0);
    free(s->world); /* the previous build's */
    s->world = malloc(map_len * sizeof *s->world);
    for (uint32_t i = 0; i < map_len; i++)
        s->world[i] = (int32_t)i;
    UT_ASSERT(mpe_ops.cad_bytes(NODES) <= sizeof s->runmem);
    s->run = (struct mpe_cad *)(void *)s->runmem;
    s->run->g = s->g;
    s->run->gbytes = sizeof s->gmem;
    s->run->world = s->world;
    s->run->world_size = map_len;
    s->run->run_nodes = NODES;
}

/* Rank 0 issues its run: cad_issue's return. */
static int issue(struct scene *s)
{
    host_as_rank(0);
    return mpe_ops.cad_issue(s->run);
}

/* Rank 1 sends a and b; everything moves until rank 0's run is done. */
static void feed(struct scene *s)
{
    static uint64_t va = VAL_A, vb = VAL_B;
    struct mpe_req q[2];
    memset(q, 0, sizeof q);
    mt_isend(1, &q[0], &va, sizeof va, 0, 1, 0);
    mt_isend(1, &q[1], &vb, sizeof vb, 0, 2, 0);
    for (int spins = 0; !mt_done(&s->run->req); spins++) {
        UT_ASSERT(spins < 1000);
        host_pump();
    }
    mt_wait(1, &q[0]);
    mt_wait(1, &q[1]);
    UT_EQ(s->run->req.err, 0);
}

/* The end of a test: the map and the world freed. */
static void done(struct scene *s)
{
    free(s->world);
    s->world = 0;
    host_world_destroy();
}

/* A RECV's buffer rewritten after the issue (before the node starts): the data still goes
 * where the validated graph said, and the other buffer is left alone. */
UT_TEST(mpe_cad_rewrite_after_issue)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 2, 2);
    UT_EQ(issue(&s), 0);
    cad_nodes(s.g)[s.r2].u.x.addr = (uint64_t)(uintptr_t)&s.canary;
    feed(&s);
    UT_EQ(s.a, VAL_A);
    UT_EQ(s.b, VAL_B);
    UT_EQ(s.canary, 0xcafe);
    done(&s);
}

/* The whole graph overwritten after the issue: nothing of it is read any more. */
UT_TEST(mpe_cad_overwrite_after_issue)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 2, 2);
    UT_EQ(issue(&s), 0);
    memset(s.gmem, 0xa5, sizeof s.gmem);
    feed(&s);
    UT_EQ(s.a, VAL_A);
    UT_EQ(s.b, VAL_B);
    done(&s);
}

/* The header says 3 ranks, the library's map has 2: refused, and the map is not read
 * past its end (ASan would report it). */
UT_TEST(mpe_cad_comm_size_lie)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 3, 2);
    UT_EQ(issue(&s), -MPE_EINVAL);
    UT_ASSERT(strstr(s.run->why, "made for a communicator of 3 ranks, the rank map has 2"));
    build(&s, 1 << 20, 2);
    UT_EQ(issue(&s), -MPE_EINVAL);
    UT_ASSERT(strstr(s.run->why, "communicator of 1048576 ranks"));
    done(&s);
}

/* A map longer than the job, and none: refused before anything is read. */
UT_TEST(mpe_cad_map_length)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 3, 3);
    UT_EQ(issue(&s), -MPE_EINVAL);
    UT_ASSERT(strstr(s.run->why, "a rank map of 3 entries, the job has 2 ranks"));
    build(&s, 2, 2);
    s.run->world_size = 0;
    UT_EQ(issue(&s), -MPE_EINVAL);
    UT_ASSERT(strstr(s.run->why, "a rank map of 0 entries"));
    done(&s);
}

/* A run record with room for fewer node states than the graph has nodes. */
UT_TEST(mpe_cad_run_too_small)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 2, 2);
    s.run->run_nodes = 3;
    UT_EQ(issue(&s), -MPE_EINVAL);
    UT_ASSERT(strstr(s.run->why, "graph: 4 nodes, its run has room for 3"));
    done(&s);
}

/* Issued again while it runs: refused without touching the run, which then completes;
 * issued again once done: runs again (a persistent collective's way). */
UT_TEST(mpe_cad_issue_while_running)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 2, 2);
    UT_EQ(issue(&s), 0);
    struct mpe_cad before = *s.run;
    UT_EQ(issue(&s), -MPE_EINVAL);
    UT_ASSERT(strstr(s.run->why, "graph: already running"));
    UT_EQ(s.run->refs, before.refs);
    UT_ASSERT(s.run->copy == before.copy && s.run->self == before.self);
    feed(&s);
    UT_EQ(s.b, VAL_B);
    s.a = s.b = 0;
    UT_EQ(issue(&s), 0);
    feed(&s);
    UT_EQ(s.a, VAL_A);
    UT_EQ(s.b, VAL_B);
    done(&s);
}

/* One graph after another: the first issue allocates the engine's copy (and the latency
 * ring), the later ones reuse it. */
UT_TEST(mpe_cad_copy_reused)
{
    static struct scene s;
    mt_world(2, 2, 0);
    build(&s, 2, 2);
    UT_EQ(issue(&s), 0);
    feed(&s);
    size_t allocs = host_allocs();
    for (int i = 0; i < 20; i++) {
        build(&s, 2, 2);
        UT_EQ(issue(&s), 0);
        feed(&s);
        UT_EQ(s.b, VAL_B);
    }
    UT_EQ(host_allocs(), allocs);
    done(&s);
}
