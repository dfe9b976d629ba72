/*
 * cad_validate_test.c: every rejection of the validator (mpi/cad/cad_validate.c) returns
 * its code and a message that names the node, and the rejected graph cannot be issued;
 * then the validator against a reference (transitive closure) on random small graphs,
 * cycles and stray nodes included.
 */
#include "ut.h"
#include "cad_sim.h"
#include <stdio.h>
#include <string.h>

#define PART_SIZE 4096
static char part[PART_SIZE] __attribute__((aligned(64)));
static uint64_t mem[2048];

/* A valid graph for rank 1 of 4: RECV a -> CALC c -> SEND s, plus RECV b -> c. Tests
 * break it in one place each. */
static struct cad_graph *g;
static int a, b, c, s;

static void base_graph(void)
{
    struct cad_owner own = sim_owner(1, 4, (uintptr_t)part, PART_SIZE, 2);
    g = cad_init(mem, sizeof mem, 32, 64, &own);
    UT_ASSERT(g);
    a = cad_recv(g, part, 64, 0, 5, 3);
    b = cad_recv(g, part + 64, 64, 2, 5, 3);
    c = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, part, part + 64, 16);
    s = cad_send(g, part + 64, 64, 3, 5, 3);
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, CAD_NODE_START, b);
    cad_connect(g, a, c);
    cad_connect(g, b, c);
    cad_connect(g, c, s);
    cad_connect(g, s, CAD_NODE_END);
}

/* The finalize (or, with `raw`, a validate of the bytes as they are) must fail with `code`,
 * name `node`, contain `needle`, and leave the graph impossible to issue. */
static void expect_at(int line, int raw, int code, int node, const char *needle)
{
    struct cad_error err;
    memset(&err, 0x5a, sizeof err);
    int rc = raw ? cad_validate(g, sizeof mem, &err) : cad_finalize(g, &err);
    char prefix[32] = "graph: ";
    if (node >= 0)
        snprintf(prefix, sizeof prefix, "node %d (", node);
    if (rc != -code || err.code != code || err.node != node || !memchr(err.msg, 0, CAD_MSG_LEN) ||
        strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, needle))
        ut_fail(__FILE__, line, "want -%d at node %d with \"%s\", got %d at node %d: \"%.96s\"",
                code, node, needle, rc, err.node, err.msg);
    UT_ASSERT(cad_issue(g) < 0); /* nothing runs */
    UT_ASSERT(cad_query(g) != CAD_Q_RUNNING);
}
#define EXPECT(code, node, needle)     expect_at(__LINE__, 0, code, node, needle)
#define EXPECT_RAW(code, node, needle) expect_at(__LINE__, 1, code, node, needle)

UT_TEST(cad_valid_base_graph)
{
    base_graph();
    struct cad_error err;
    UT_EQ(cad_finalize(g, &err), 0);
    UT_EQ(err.code, 0);
    UT_EQ(cad_validate(g, sizeof mem, &err), 0); /* again, on the bytes */
    UT_EQ(cad_validate(g, cad_bytes(32, 64), &err), 0);
    UT_EQ(cad_nodes(g)[c].npred, 2);
    UT_EQ(cad_nodes(g)[CAD_NODE_START].nsucc, 2);
    UT_EQ(cad_issue(g), 0);
}

UT_TEST(cad_reject_cycle)
{
    base_graph();
    int x = cad_calc(g, CAD_OP_MAX, CAD_T_INT32, part, part + 64, 16);
    cad_connect(g, s, x); /* c -> s -> x -> c */
    cad_connect(g, x, c);
    EXPECT(CAD_ECYCLE, c, "on a dependency cycle, after node ");
}

UT_TEST(cad_reject_cycle_off_the_main_path)
{
    base_graph();
    int x = cad_send(g, part, 8, 0, 1, 3), y = cad_send(g, part, 8, 0, 2, 3);
    cad_connect(g, x, y); /* a cycle that START never reaches but that reaches END */
    cad_connect(g, y, x);
    cad_connect(g, y, CAD_NODE_END);
    EXPECT(CAD_ECYCLE, x, "cycle");
}

UT_TEST(cad_reject_self_and_duplicate_edges)
{
    base_graph();
    cad_connect(g, c, c);
    EXPECT(CAD_EEDGE, c, "edge to itself");
    base_graph();
    cad_connect(g, a, c);
    char want[40];
    snprintf(want, sizeof want, "duplicate edge to node %d", c);
    EXPECT(CAD_EEDGE, a, want);
    base_graph();
    cad_connect(g, s, CAD_NODE_START);
    EXPECT(CAD_EEDGE, s, "edge into START");
    base_graph();
    cad_connect(g, CAD_NODE_END, s);
    EXPECT(CAD_EEDGE, CAD_NODE_END, "edge out of END");
}

UT_TEST(cad_reject_unreachable_and_dead_end)
{
    base_graph();
    int x = cad_send(g, part, 8, 0, 1, 3);
    cad_connect(g, x, CAD_NODE_END); /* forgot START -> x */
    EXPECT(CAD_EUNREACH, x, "not reachable from START");
    base_graph();
    x = cad_recv(g, part, 8, 0, 1, 3);
    cad_connect(g, a, x); /* forgot x -> something */
    EXPECT(CAD_ENOEND, x, "does not reach END");
    base_graph();
    x = cad_recv(g, part, 8, 0, 1, 3); /* connected to nothing at all */
    EXPECT(CAD_EUNREACH, x, "not reachable from START");
    struct cad_owner own = sim_owner(0, 1, (uintptr_t)part, PART_SIZE, 0);
    g = cad_init(mem, sizeof mem, 8, 8, &own); /* no edges: END is never reached */
    EXPECT(CAD_EUNREACH, CAD_NODE_END, "not reachable from START");
}

UT_TEST(cad_reject_edge_index)
{
    base_graph();
    cad_connect(g, c, 99);
    EXPECT(CAD_EINDEX, c, "edge 4 -> 99 names a node that does not exist (6 nodes)");
    base_graph();
    cad_connect(g, 99, s);
    EXPECT(CAD_EINDEX, s, "edge 99 -> 5");
    base_graph();
    cad_connect(g, -1, 70000);
    EXPECT(CAD_EINDEX, -1, "edge 65535 -> 65535");
}

UT_TEST(cad_reject_corrupt_successor_lists)
{
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    uint16_t *succ = cad_succ(g);
    struct cad_node *n = cad_nodes(g);
    succ[n[c].first_succ] = 77;
    EXPECT_RAW(CAD_EINDEX, c, "edge to a node that does not exist: 77");
    succ[n[c].first_succ] = (uint16_t)s;
    n[c].first_succ = 1000;
    EXPECT_RAW(CAD_EINDEX, c, "successor list 1000+1 outside the 6 edges");
    n[c].first_succ = g->nedges - 1;
    n[c].nsucc = 2;
    EXPECT_RAW(CAD_EINDEX, c, "outside");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    cad_nodes(g)[s].npred = 3;
    EXPECT_RAW(CAD_EEDGE, s, "predecessor count 3 but 1 edges lead in");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    cad_succ(g)[cad_nodes(g)[c].first_succ] = (uint16_t)a; /* now a cycle a -> c -> a */
    cad_nodes(g)[a].npred = 2;
    cad_nodes(g)[s].npred = 0;
    EXPECT_RAW(CAD_ECYCLE, a, "cycle");
}

UT_TEST(cad_reject_node_types)
{
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    cad_nodes(g)[CAD_NODE_START].type = CAD_SEND;
    EXPECT_RAW(CAD_ENODE, CAD_NODE_START, "must be START");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    cad_nodes(g)[CAD_NODE_END].type = CAD_RECV;
    EXPECT_RAW(CAD_ENODE, CAD_NODE_END, "must be END");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    cad_nodes(g)[s].type = CAD_START;
    EXPECT_RAW(CAD_ENODE, s, "a second START or END");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    cad_nodes(g)[s].type = 9;
    EXPECT_RAW(CAD_ENODE, s, "unknown node type");
}

UT_TEST(cad_reject_peer_and_tag)
{
    base_graph();
    cad_nodes(g)[s].u.x.peer = 4;
    EXPECT(CAD_EPEER, s, "peer 4 not in the communicator of size 4");
    base_graph();
    cad_nodes(g)[a].u.x.peer = -1;
    EXPECT(CAD_EPEER, a, "peer -1");
    base_graph();
    int x = cad_send(g, part, 8, 1, 0, 3); /* to itself: allowed */
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    base_graph();
    cad_nodes(g)[b].u.x.tag = -2;
    EXPECT(CAD_ETAG, b, "negative tag -2");
}

UT_TEST(cad_reject_buffers_outside_the_partition)
{
    uint64_t base = (uintptr_t)part, end = base + PART_SIZE;
    char want[96];
    snprintf(want, sizeof want, "buffer 0x%llx+64 outside partition 0x%llx-0x%llx",
             (unsigned long long)(base - 1), (unsigned long long)base, (unsigned long long)end);
    base_graph();
    cad_nodes(g)[a].u.x.addr = base - 1;
    EXPECT(CAD_EBUF, a, want);
    base_graph();
    cad_nodes(g)[s].u.x.addr = end - 63; /* straddles the end by one byte */
    EXPECT(CAD_EBUF, s, "outside partition");
    base_graph();
    cad_nodes(g)[s].u.x.addr = end - 64; /* ends exactly at the end: fine */
    UT_EQ(cad_finalize(g, 0), 0);
    base_graph();
    cad_nodes(g)[s].u.x.addr = UINT64_MAX - 10; /* addr + bytes wraps to a small number */
    EXPECT(CAD_EBUF, s, "0xfffffffffffffff5+64");
    base_graph();
    cad_nodes(g)[a].u.x.bytes = UINT64_MAX; /* wraps from inside the partition */
    EXPECT(CAD_EBUF, a, "outside partition");
    base_graph();
    cad_nodes(g)[a].u.x.bytes = PART_SIZE + 1;
    cad_nodes(g)[a].u.x.addr = base;
    EXPECT(CAD_EBUF, a, "outside partition");
    base_graph();
    cad_nodes(g)[a].u.x.bytes = 0; /* nothing is touched: any address will do */
    cad_nodes(g)[a].u.x.addr = 0;
    UT_EQ(cad_finalize(g, 0), 0);
    base_graph();
    cad_nodes(g)[c].u.c.in = end;
    EXPECT(CAD_EBUF, c, "in 0x");
    base_graph();
    cad_nodes(g)[c].u.c.inout = 8;
    EXPECT(CAD_EBUF, c, "inout 0x8+64");
}

UT_TEST(cad_reject_ops_and_types)
{
    static const struct {
        int op, dtype, code;
        const char *msg;
    } bad[] = {
        {0, CAD_T_INT32, CAD_EOP, "unknown op 0"},
        {CAD_OP_COUNT, CAD_T_INT32, CAD_EOP, "unknown op 14"},
        {255, CAD_T_INT32, CAD_EOP, "unknown op 255"},
        {CAD_OP_SUM, 0, CAD_ETYPE, "unknown type 0"},
        {CAD_OP_SUM, CAD_T_COUNT, CAD_ETYPE, "unknown type 24"},
        {CAD_OP_BAND, CAD_T_DOUBLE, CAD_EOPTYPE, "BAND is not defined on DOUBLE"},
        {CAD_OP_MINLOC, CAD_T_INT32, CAD_EOPTYPE, "MINLOC is not defined on INT32"},
        {CAD_OP_SUM, CAD_T_2INT, CAD_EOPTYPE, "SUM is not defined on 2INT"},
        {CAD_OP_SUM, CAD_T_BOOL, CAD_EOPTYPE, "SUM is not defined on BOOL"},
        {CAD_OP_MAX, CAD_T_C_DOUBLE_COMPLEX, CAD_EOPTYPE, "MAX is not defined on C_DOUBLE_COMPLEX"},
        {CAD_OP_LAND, CAD_T_FLOAT, CAD_EOPTYPE, "LAND is not defined on FLOAT"},
        {CAD_OP_BOR, CAD_T_BOOL, CAD_EOPTYPE, "BOR is not defined on BOOL"},
        {CAD_OP_LOR, CAD_T_BYTE, CAD_EOPTYPE, "LOR is not defined on BYTE"},
        {CAD_OP_MAX, CAD_T_DERIVED, CAD_EOPTYPE, "MAX is not defined on DERIVED"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        base_graph();
        int x = cad_calc(g, bad[k].op, bad[k].dtype, part, part + 128, 2);
        cad_connect(g, CAD_NODE_START, x);
        cad_connect(g, x, CAD_NODE_END);
        EXPECT(bad[k].code, x, bad[k].msg);
    }
}

UT_TEST(cad_user_ops)
{
    base_graph(); /* the owner's table has 2 entries */
    int x = cad_calc_user(g, 1, CAD_T_DERIVED, part, part + 100, 3, 300);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    UT_EQ(cad_finalize(g, 0), 0);
    base_graph();
    x = cad_calc_user(g, 2, CAD_T_INT32, part, part + 100, 3, 12);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    EXPECT(CAD_EOP, x, "user op 2 not in the table of 2");
    base_graph();
    x = cad_calc_user(g, -1, CAD_T_INT32, part, part + 100, 3, 12);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    EXPECT(CAD_EOP, x, "user op 65535");
    base_graph();
    x = cad_calc_user(g, 0, CAD_T_INT32, part, part + 100, 3, 16); /* 3 * 4 != 16 */
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    EXPECT(CAD_ECOUNT, x, "span 16 bytes is not count 3 * 4");
    base_graph();
    x = cad_calc_user(g, 0, CAD_T_DERIVED, part, part + 100, 3, PART_SIZE);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    EXPECT(CAD_EBUF, x, "inout 0x");
}

UT_TEST(cad_reject_counts)
{
    base_graph();
    int x = cad_calc(g, CAD_OP_SUM, CAD_T_DOUBLE, part, part, UINT64_MAX / 4);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    EXPECT(CAD_ECOUNT, x, "count 4611686018427387903 of DOUBLE overflows");
    base_graph();
    cad_nodes(g)[c].u.c.bytes = 60; /* 16 INT32 are 64 bytes */
    EXPECT(CAD_ECOUNT, c, "span 60 bytes is not count 16 * 4");
    base_graph();
    cad_nodes(g)[c].u.c.count = PART_SIZE; /* consistent but too big for the partition */
    cad_nodes(g)[c].u.c.bytes = PART_SIZE * 4;
    EXPECT(CAD_EBUF, c, "outside partition");
}

UT_TEST(cad_reject_header)
{
    base_graph();
    g->own.rank = 4;
    EXPECT(CAD_EFORMAT, -1, "owner rank 4 not in a communicator of size 4");
    base_graph();
    g->own.comm_size = 0;
    EXPECT(CAD_EFORMAT, -1, "owner rank");
    base_graph();
    g->own.part_base = UINT64_MAX - 100;
    EXPECT(CAD_EFORMAT, -1, "partition empty or wrapping around");
    base_graph();
    g->own.part_size = 0;
    EXPECT(CAD_EFORMAT, -1, "partition");
    base_graph();
    g->own.nuser = CAD_NIL;
    EXPECT(CAD_EFORMAT, -1, "user-op table too large");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    struct cad_error err;
    UT_EQ(cad_validate(g, cad_bytes(32, 64) - 8, &err), -CAD_EFORMAT);
    UT_ASSERT(strstr(err.msg, "capacities need"));
    UT_EQ(cad_validate(g, 100, &err), -CAD_EFORMAT);
    UT_ASSERT(strstr(err.msg, "smaller than the header"));
    g->node_cap = 100000;
    EXPECT_RAW(CAD_EFORMAT, -1, "capacities need 0 bytes");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    g->nnodes = 40;
    EXPECT_RAW(CAD_EFORMAT, -1, "beyond the capacity");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    g->version = 2;
    EXPECT_RAW(CAD_EFORMAT, -1, "not a CAD graph of this version");
    base_graph();
    UT_EQ(cad_finalize(g, 0), 0);
    g->flags = 0;
    EXPECT_RAW(CAD_ESTATE, -1, "not finalized");
    UT_EQ(cad_validate(0, 0, &err), -CAD_EINVAL);
    UT_EQ(cad_free(g), 0);
    EXPECT(CAD_EINVAL, -1, "not a graph");
}

UT_TEST(cad_reject_capacity)
{
    struct cad_owner own = sim_owner(0, 2, (uintptr_t)part, PART_SIZE, 0);
    UT_ASSERT(!cad_init(mem, 100, 4, 4, &own));                        /* too small a block */
    UT_ASSERT(!cad_init((char *)mem + 4, sizeof mem - 8, 4, 4, &own)); /* misaligned */
    UT_ASSERT(!cad_init(mem, sizeof mem, 1, 4, &own));
    g = cad_init(mem, sizeof mem, 3, 2, &own);
    UT_ASSERT(g);
    int x = cad_send(g, part, 1, 1, 0, 0);
    UT_EQ(x, 2);
    UT_EQ(cad_send(g, part, 1, 1, 0, 0), -CAD_ENOSPC);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    EXPECT(CAD_ENOSPC, -1, "capacity exhausted");
    g = cad_init(mem, sizeof mem, 3, 2, &own);
    x = cad_send(g, part, 1, 1, 0, 0);
    cad_connect(g, CAD_NODE_START, x);
    cad_connect(g, x, CAD_NODE_END);
    UT_EQ(cad_connect(g, x, CAD_NODE_END), -CAD_ENOSPC);
    EXPECT(CAD_ENOSPC, x, "capacity exhausted");
}

/* Messages never overrun: the longest ones are cut, still terminated. */
UT_TEST(cad_messages_are_bounded)
{
    struct cad_owner own = sim_owner(0, 2, 0x8000000000000000ull, 0x7fffffffffffffffull, 0);
    static uint64_t big[(CAD_HDR_SIZE + CAD_NODE_SIZE * 70000ull) / 8 + 64];
    g = cad_init(big, sizeof big, CAD_MAX_NODES, 4, &own);
    UT_ASSERT(g);
    g->nnodes = CAD_MAX_NODES; /* filled in place, as bytes from elsewhere would be */
    for (uint32_t k = 2; k < g->nnodes; k++) {
        struct cad_node *n = &cad_nodes(g)[k];
        n->type = CAD_RECV;
        n->link = CAD_NIL;
        n->u.x.peer = 1;
    }
    struct cad_node *last = &cad_nodes(g)[65534];
    last->u.x.addr = 0xffffffffffffff00ull;
    last->u.x.bytes = 0xfffffffffffffff0ull;
    struct cad_error err;
    memset(&err, 0x5a, sizeof err);
    g->flags = CAD_F_FINAL;
    UT_EQ(cad_validate(g, sizeof big, &err), -CAD_EBUF);
    UT_EQ(err.node, 65534);
    UT_ASSERT(memchr(err.msg, 0, CAD_MSG_LEN));
    UT_EQ(strlen(err.msg), CAD_MSG_LEN - 1);
    const char *want = "node 65534 (RECV): buffer 0xffffffffffffff00+18446744073709551600 outside";
    UT_ASSERT(!strncmp(err.msg, want, strlen(want)));
}

/* --- the validator against a reference ----------------------------------------------- */

#define RN 10

/* Transitive closure by repeated squaring of the adjacency matrix (Warshall). */
static int reference(int m, uint8_t adj[RN][RN])
{
    static uint8_t reach[RN][RN];
    memcpy(reach, adj, sizeof reach);
    for (int k = 0; k < m; k++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++)
                reach[i][j] |= reach[i][k] && reach[k][j];
    for (int i = 0; i < m; i++)
        if (reach[i][i])
            return CAD_ECYCLE;
    for (int i = 1; i < m; i++)
        if (!reach[CAD_NODE_START][i])
            return CAD_EUNREACH;
    for (int i = 0; i < m; i++)
        if (i != CAD_NODE_END && !reach[i][CAD_NODE_END])
            return CAD_ENOEND;
    return 0;
}

UT_TEST(cad_validator_matches_reference)
{
    uint64_t rng = 77;
    int seen[CAD_ESTATE + 1] = {0};
    struct cad_owner own = sim_owner(0, 2, (uintptr_t)part, PART_SIZE, 0);
    for (int t = 0; t < 20000; t++) {
        int m = 2 + (int)(sim_rand(&rng) % (RN - 1));
        int pct = 5 + (int)(sim_rand(&rng) % 40);
        uint8_t adj[RN][RN] = {{0}};
        g = cad_init(mem, sizeof mem, RN, RN * RN, &own);
        for (int i = 2; i < m; i++)
            cad_send(g, part, 8, 1, i, 0);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                if (i == j || j == CAD_NODE_START || i == CAD_NODE_END ||
                    (int)(sim_rand(&rng) % 100) >= pct)
                    continue;
                adj[i][j] = 1;
                cad_connect(g, i, j);
            }
        int want = reference(m, adj);
        struct cad_error err;
        int rc = cad_finalize(g, &err);
        if (rc != -want)
            ut_fail(__FILE__, __LINE__, "graph %d: want %d, got %d (%s)", t, want, rc, err.msg);
        if (want == CAD_ECYCLE) { /* the named node must really be on a cycle */
            uint8_t r[RN] = {0};
            r[err.node] = 1;
            for (int k = 0; k < m; k++)
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < m && r[i]; j++)
                        r[j] |= adj[i][j];
            int on = 0;
            for (int i = 0; i < m; i++)
                on |= r[i] && adj[i][err.node];
            UT_ASSERT(on);
        }
        seen[want]++;
        if (!want)
            sim_ready_only(g, SIM_RANDOM, &rng);
    }
    UT_ASSERT(seen[0] > 100 && seen[CAD_ECYCLE] > 100 && seen[CAD_EUNREACH] > 100 &&
              seen[CAD_ENOEND] > 100);
}
