/*
 * cad_hostile.c: CAD graphs a program changes or lies about (issue 15, defects 3 and 4).
 * The kernel validates a graph when it is started; it must then run what it validated,
 * whatever the program does to its graph afterwards, and it must never read the rank map
 * past the communicator's real size. Modes (the first argument):
 *
 *   rewrite    rounds in pairs of ranks (a runner and a feeder), each a graph
 *                START -> RECV a -> RECV b -> CALC acc += b -> SEND acc -> END
 *              that the runner changes after MPIX_Cad_start and before its feeder sends:
 *                1. (other node) RECV b, the CALC and the SEND pointed at 0x1000 (page 0);
 *                2. (same node) RECV b pointed at a canary of the rank's own, the SEND at
 *                   a second one, the CALC's operands at a third;
 *                3. (other node) the whole block overwritten with garbage.
 *              Every round must give the validated result and leave the canaries alone.
 *   comm_size  graphs whose header lies about the communicator's size: through
 *              MPIX_Cad_start (bigger than the communicator: refused), then straight
 *              through the kernel's ABI with a rank map that ends where the heap's mapped
 *              pages end (a lying header size, then a lying map length: refused, and
 *              the kernel reads no entry past the map).
 *
 * Rank 0 prints a line per round or case; any rank prints "BAD ..." on a failure.
 */
#include <mpi.h>
#include <mpix.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <ukapp.h>
#include "cad.h"
#include "mpe.h"

#define NODES    8
#define EDGES    8
#define TAG_GO   7       /* plain MPI: "you may send now" (the graph was changed already) */
#define PAGE0    0x1000u /* an address below every partition: unmapped */
#define LIE_SIZE (1 << 20)
#define PAGE     4096u
/* The heap grown by this much ends on pages mapped just now, followed by unmapped ones
 * (the kernel maps heap pages as the break grows; more than any heap trim left mapped). */
#define HEAP_RUN (4u << 20)

static int me, n, bad;
static _Alignas(8) unsigned char mem[8192];
static volatile long canary[3];

/* Any rank: report a failure ("BAD ..."). */
static void fail(const char *what, long got, long want)
{
    printf("BAD %s: %ld, want %ld\n", what, got, want);
    bad = 1;
}

/* An empty graph of ours in mem, for a communicator of comm_size ranks. */
static struct cad_graph *fresh(int comm_size)
{
    struct cad_owner own = {.rank = me, .comm_size = comm_size, .part_size = ~0ull >> 1};
    return cad_init(mem, sizeof mem, NODES, EDGES, &own);
}

/* The feeder: once its runner says go, send a and b (tags 1 and 2), receive acc (tag 3),
 * through a graph of its own (the runner's messages travel on the collective context). */
static void feed(int runner, long a, long b, long want)
{
    static long sa, sb, got;
    sa = a;
    sb = b;
    got = 0;
    MPI_Recv(0, 0, MPI_BYTE, runner, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    struct cad_graph *g = fresh(n);
    int s1 = cad_send(g, &sa, sizeof sa, runner, 1, 0);
    int s2 = cad_send(g, &sb, sizeof sb, runner, 2, 0);
    int r3 = cad_recv(g, &got, sizeof got, runner, 3, 0);
    int order[3] = {s1, s2, r3};
    for (int i = 0; i < 3; i++) {
        cad_connect(g, CAD_NODE_START, order[i]);
        cad_connect(g, order[i], CAD_NODE_END);
    }
    MPI_Request q;
    if (cad_finalize(g, 0) || MPIX_Cad_start(g, sizeof mem, MPI_COMM_WORLD, &q) ||
        MPI_Wait(&q, MPI_STATUS_IGNORE))
        fail("feeder's graph did not run", 0, 0);
    else if (got != want)
        fail("feeder received acc", got, want);
}

/* What a round does to the runner's graph after it started (nodes r2, c, s as built). */
static void change(int round, struct cad_graph *g, int r2, int c, int s)
{
    struct cad_node *nd = cad_nodes(g);
    if (round == 1) {
        nd[r2].u.x.addr = PAGE0;
        nd[r2].u.x.bytes = 1u << 20;
        nd[c].u.c.in = nd[c].u.c.inout = PAGE0;
        nd[s].u.x.addr = PAGE0;
        nd[s].u.x.bytes = PAGE;
    } else if (round == 2) {
        nd[r2].u.x.addr = (uint64_t)(uintptr_t)&canary[0];
        nd[s].u.x.addr = (uint64_t)(uintptr_t)&canary[1];
        nd[c].u.c.in = nd[c].u.c.inout = (uint64_t)(uintptr_t)&canary[2];
    } else {
        memset(mem, 0xa5, sizeof mem);
    }
}

/* One round: ranks whose bit `bit` is clear run a graph, their partners feed it. */
static void round_of(int round, int bit)
{
    static long a, b, acc;
    int partner = me ^ bit;
    long A = 100 + me, B = 1000 + me, init = 7 * (me + 1);
    if (partner >= n)
        return;
    for (int i = 0; i < 3; i++)
        canary[i] = -1 - i;
    if (me & bit) {
        int runner = partner;
        feed(runner, 100 + runner, 1000 + runner, 7 * (runner + 1) + 1000 + runner);
        return;
    }
    a = b = 0;
    acc = init;
    struct cad_graph *g = fresh(n);
    int r1 = cad_recv(g, &a, sizeof a, partner, 1, 0);
    int r2 = cad_recv(g, &b, sizeof b, partner, 2, 0);
    int c = cad_calc(g, CAD_OP_SUM, CAD_T_INT64, &b, &acc, 1);
    int s = cad_send(g, &acc, sizeof acc, partner, 3, 0);
    cad_connect(g, CAD_NODE_START, r1);
    cad_connect(g, r1, r2);
    cad_connect(g, r2, c);
    cad_connect(g, c, s);
    cad_connect(g, s, CAD_NODE_END);
    MPI_Request q;
    struct cad_error e = {0};
    if (cad_finalize(g, &e) || MPIX_Cad_start(g, sizeof mem, MPI_COMM_WORLD, &q)) {
        printf("BAD round %d: graph not started: %s\n", round, e.msg);
        bad = 1;
        return;
    }
    change(round, g, r2, c, s); /* RECV a is posted; nothing after it has started */
    MPI_Send(0, 0, MPI_BYTE, partner, TAG_GO, MPI_COMM_WORLD);
    if (MPI_Wait(&q, MPI_STATUS_IGNORE))
        fail("runner's wait", 1, 0);
    if (a != A)
        fail("runner received a", a, A);
    if (b != B)
        fail("runner received b", b, B);
    if (acc != init + B)
        fail("runner's acc", acc, init + B);
    for (int i = 0; i < 3; i++)
        if (canary[i] != -1 - i)
            fail("canary written by the kernel", canary[i], -1 - i);
}

/* Mode rewrite: the three rounds, each reported by rank 0 after every rank's check. */
static void rewrite(void)
{
    static const char *const what[] = {"", "nodes pointed at page 0",
                                       "nodes pointed at other buffers", "block overwritten"};
    const int bit[] = {0, 2, 1, 2}; /* 2x2: rank ^ 2 is on the other node, rank ^ 1 on ours */
    for (int round = 1; round <= 3; round++) {
        round_of(round, bit[round]);
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (me == 0)
            printf("cad_hostile: round %d (%s after the start): %s\n", round, what[round],
                   bad ? "BAD" : "validated graph ran, canaries intact");
    }
}

/* A graph of one SEND to `peer`, made for a communicator of `comm_size` ranks. */
static struct cad_graph *lying(int comm_size, int peer)
{
    static long x;
    struct cad_graph *g = fresh(comm_size);
    int s = cad_send(g, &x, sizeof x, peer, 1, 0);
    cad_connect(g, CAD_NODE_START, s);
    cad_connect(g, s, CAD_NODE_END);
    if (cad_finalize(g, 0))
        fail("lying graph did not finalize", 1, 0);
    return g;
}

/* Through the library: refused with the library's reason, nothing started. */
static void start_lying(int comm_size, int peer)
{
    char why[128] = "";
    MPI_Request q = MPI_REQUEST_NULL;
    int rc = MPIX_Cad_start(lying(comm_size, peer), sizeof mem, MPI_COMM_WORLD, &q);
    MPIX_Cad_error(why, sizeof why);
    if (rc != MPI_ERR_ARG || q != MPI_REQUEST_NULL || !strstr(why, "communicator of")) {
        printf("BAD comm_size %d: start %d (%s)\n", comm_size, rc, why);
        bad = 1;
    } else if (me == 0) {
        printf("cad_hostile: comm_size %d through MPIX_Cad_start refused: %s\n", comm_size, why);
    }
}

/* Straight to the kernel, as a program that skips the library may: the run record names a
 * map of `map_len` entries (the communicator's real size) that ends on the last mapped
 * byte of the heap; the graph says `comm_size`. */
static void issue_lying(int32_t *map, int comm_size, uint32_t map_len, const char *want)
{
    static _Alignas(64) unsigned char runmem[32768];
    struct mpe_cad *run = (struct mpe_cad *)runmem;
    memset(runmem, 0, sizeof runmem);
    run->g = lying(comm_size, comm_size - 1);
    run->gbytes = sizeof mem;
    run->world = map;
    run->world_size = map_len;
    run->run_nodes = NODES;
    if (uk_abi->mpi->cad_bytes(NODES) > sizeof runmem)
        fail("run record larger than expected", (long)uk_abi->mpi->cad_bytes(NODES), 0);
    else if (uk_abi->mpi->cad_issue(run) != -MPE_EINVAL || !strstr(run->why, want)) {
        printf("BAD comm_size %d, map of %u through the ABI: %s\n", comm_size, map_len, run->why);
        bad = 1;
    } else if (me == 0) {
        printf("cad_hostile: comm_size %d, map of %u through the ABI refused: %s\n", comm_size,
               map_len, run->why);
    }
}

/* Mode comm_size: the lying graphs, through the library and through the ABI. */
static void comm_size(void)
{
    start_lying(n + 1, n);
    start_lying(LIE_SIZE, 0);
    /* The map ends where the mapped heap ends: an entry read past it faults. */
    char *brk = sbrk(0);
    sbrk((intptr_t)((PAGE - (uintptr_t)brk % PAGE) % PAGE));
    char *run = sbrk(HEAP_RUN);
    if (run == (char *)-1) {
        fail("sbrk", -1, 0);
        return;
    }
    int32_t *map = (int32_t *)(run + HEAP_RUN) - n;
    for (int i = 0; i < n; i++)
        map[i] = i;
    issue_lying(map, LIE_SIZE, (uint32_t)n, "communicator of");
    issue_lying(map, LIE_SIZE, LIE_SIZE, "rank map of");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1 && !strcmp(argv[1], "rewrite"))
        rewrite();
    else if (argc > 1 && !strcmp(argv[1], "comm_size"))
        comm_size();
    else
        fail("mode (rewrite | comm_size)", 0, 1);
    int v = me, sum = 0;
    if (MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) || sum != n * (n - 1) / 2)
        fail("allreduce afterwards", sum, n * (n - 1) / 2);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("cad_hostile: job went on: %s\n", bad ? "BAD" : "ok");
    MPI_Finalize();
    return bad;
}
