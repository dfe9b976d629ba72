/* Writes the seed corpus of cad_fuzz_validate: `cad_fuzz_seeds DIR` writes DIR/seed-*,
 * graphs the collective builders make (every kind, a few sizes and ranks, the algorithms
 * cad_alg_plan picks and some it does not) and broken ones the validator must refuse (a
 * cycle, a dangling node, a buffer outside the partition, a peer outside the
 * communicator, no successor lists). Buffers are fixed fake addresses, so the files are
 * the same on every run; nothing is read from them. */
#include "cad_alg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SBUF  0x100000u /* fake buffer addresses, inside the seeds' partition */
#define RBUF  0x200000u
#define TMP   0x300000u
#define PART  (1ull << 32)
#define SMALL 16 /* nodes and edges of the hand-made graphs */

static _Alignas(8) uint8_t mem[1 << 20];

/* main thread: writes the graph block to dir/seed-name. */
static void put(const char *dir, const char *name, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/seed-%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(mem, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* main thread: rank `rank`'s graph of `kind` on `size` ranks with `alg` (AUTO: the plan's
 * choice), written as seed-KIND-ALG-SIZE-RANK. */
static void coll(const char *dir, int kind, int alg, int size, int rank)
{
    struct cad_coll c = {.kind = kind,
                         .alg = alg,
                         .rank = rank,
                         .size = size,
                         .root = size > 1 ? 1 : 0,
                         .ctx = 9,
                         .sbuf = (const void *)(uintptr_t)SBUF,
                         .rbuf = (void *)(uintptr_t)RBUF,
                         .bytes = 64 * (uint64_t)size,
                         .op = CAD_OP_SUM,
                         .dtype = CAD_T_INT32,
                         .count = 16 * (uint64_t)size,
                         .commutative = 1};
    struct cad_plan p;
    if (cad_alg_plan(&c, &p, 0) < 0)
        return; /* an algorithm this kind or size does not take */
    size_t n = cad_bytes(p.node_cap, p.edge_cap);
    struct cad_owner own = {.rank = rank, .comm_size = size, .part_size = PART};
    struct cad_graph *g = cad_init(mem, n, p.node_cap, p.edge_cap, &own);
    if (!g || n > sizeof mem || cad_alg_build(g, &c, (void *)(uintptr_t)TMP) < 0 ||
        cad_finalize(g, 0) < 0) {
        fprintf(stderr, "cad_fuzz_seeds: %s on %d ranks did not build\n", cad_kind_name(kind),
                size);
        exit(1);
    }
    char name[96];
    snprintf(name, sizeof name, "%s-%s-%d-%d", cad_kind_name(kind), cad_alg_name(c.alg), size,
             rank);
    put(dir, name, n);
}

/* main thread: a small graph START -> a -> b -> END of a SEND and a RECV to rank 1. */
static struct cad_graph *pair(int *a, int *b)
{
    struct cad_owner own = {.rank = 0, .comm_size = 2, .part_size = PART};
    memset(mem, 0, sizeof mem);
    struct cad_graph *g = cad_init(mem, cad_bytes(SMALL, SMALL), SMALL, SMALL, &own);
    *a = cad_send(g, (void *)(uintptr_t)SBUF, 8, 1, 1, 9);
    *b = cad_recv(g, (void *)(uintptr_t)RBUF, 8, 1, 2, 9);
    cad_connect(g, CAD_NODE_START, *a);
    cad_connect(g, *a, *b);
    cad_connect(g, *b, CAD_NODE_END);
    return g;
}

/* main thread: the graphs the validator must refuse, written as seed-broken-*. */
static void broken(const char *dir)
{
    size_t n = cad_bytes(SMALL, SMALL);
    int a, b;
    struct cad_graph *g = pair(&a, &b);
    cad_connect(g, b, a); /* a cycle (finalize builds the lists, then refuses) */
    cad_finalize(g, 0);
    put(dir, "broken-cycle", n);
    g = pair(&a, &b);
    cad_recv(g, (void *)(uintptr_t)RBUF, 8, 1, 3, 9); /* never connected */
    cad_finalize(g, 0);
    put(dir, "broken-dangling", n);
    g = pair(&a, &b);
    cad_finalize(g, 0);
    cad_nodes(g)[b].u.x.addr = PART - 4; /* past the partition's end */
    put(dir, "broken-buffer", n);
    g = pair(&a, &b);
    cad_finalize(g, 0);
    cad_nodes(g)[a].u.x.peer = 2;
    put(dir, "broken-peer", n);
    pair(&a, &b); /* never finalized: no successor lists */
    put(dir, "broken-unsealed", n);
}

int main(int argc, char **argv)
{
    static const int sizes[] = {1, 2, 3, 4, 7, 8};
    if (argc != 2) {
        fprintf(stderr, "usage: cad_fuzz_seeds DIR\n");
        return 2;
    }
    for (int k = 1; k < CAD_K_COUNT; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            coll(argv[1], k, CAD_A_AUTO, sizes[s], sizes[s] - 1);
    for (int a = 1; a < CAD_A_COUNT; a++) /* every algorithm where it applies */
        for (int k = 1; k < CAD_K_COUNT; k++)
            coll(argv[1], k, a, 5, 2);
    broken(argv[1]);
    return 0;
}
