/*
 * numa_test.c: allocation by NUMA node (tests/knl/run.sh numa): frames of each node lie in
 * that node's SRAT ranges; the mem= policies pick the nodes they should for every CPU
 * (ddr: the CPU's own; mcdram: the nearest CPU-less one); interleaving visits every node
 * with memory in turn; a full node's requests go to the nearest other node. One line per
 * check; the last is "numa: all ok" or "numa: N FAILED".
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "kernel/mempol.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "arch/x86_64/numa.h"
#include "memlayout.h"

#define FRAMES_PER_NODE 16
#define HELD_MAX        (1 << 16) /* frames held to fill one node: 256 MiB of 4 KiB */

static uint64_t held[HELD_MAX];

/* Task context. Frames of every node with memory lie inside its own ranges. */
static int check_nodes(void)
{
    int bad = 0;
    for (int n = 0; n < numa.nnodes; n++) {
        if (!numa.node[n].mem_bytes)
            continue;
        int wrong = 0, got = 0;
        for (int i = 0; i < FRAMES_PER_NODE; i++)
            if ((held[i] = pmm_alloc_node(n)) != 0) {
                got++;
                wrong += numa_node_of_phys(held[i]) != n;
            }
        for (int i = 0; i < FRAMES_PER_NODE; i++)
            if (held[i])
                pmm_free(held[i]);
        int ok = got == FRAMES_PER_NODE && !wrong;
        kprintf("numa: node %d: %d frames, %d outside its ranges: %s\n", n, got, wrong,
                ok ? "ok" : "WRONG");
        bad += !ok;
    }
    return bad;
}

/* Task context. Each CPU's home nodes under ddr and mcdram. */
static int check_homes(void)
{
    int bad = 0;
    for (int c = 0; c < smp_ncpus(); c++) {
        int home = numa.cpu_node[c];
        int ddr = mempol_for_cpu(MEMPOL_DDR, c).node, hbm = mempol_for_cpu(MEMPOL_MCDRAM, c).node;
        int ok = ddr == home && numa_is_hbm(hbm);
        for (int n = 0; n < numa.nnodes && ok; n++)
            ok = !numa_is_hbm(n) || numa.distance[home][n] >= numa.distance[home][hbm];
        kprintf("numa: cpu %d (node %d): ddr -> node %d, mcdram -> node %d: %s\n", c, home, ddr,
                hbm, ok ? "ok" : "WRONG");
        bad += !ok;
    }
    return bad;
}

/* Task context. Interleaving from CPU 0 visits every node with memory once per turn. */
static int check_interleave(void)
{
    struct mempol_state s = mempol_for_cpu(MEMPOL_INTERLEAVE, 0);
    int seen[NUMA_MAX_NODES] = {0}, k = 0, bad = 0;
    for (int n = 0; n < numa.nnodes; n++)
        k += numa.node[n].mem_bytes != 0;
    for (int i = 0; i < 2 * k; i++) {
        held[i] = mempol_alloc_zeroed(&s);
        int n = numa_node_of_phys(held[i]);
        if (n >= 0)
            seen[n]++;
    }
    for (int n = 0; n < numa.nnodes; n++)
        bad += numa.node[n].mem_bytes && seen[n] != 2;
    for (int i = 0; i < 2 * k; i++)
        if (held[i])
            pmm_free(held[i]);
    kprintf("numa: interleave: %d frames, 2 on each of %d nodes: %s\n", 2 * k, k,
            bad ? "WRONG" : "ok");
    return bad != 0;
}

/* Task context. CPU 0's MCDRAM node filled up: the next frame comes from the node nearest
 * to it (a preference, not a binding). */
static int check_full(void)
{
    struct mempol_state s = mempol_for_cpu(MEMPOL_MCDRAM, 0);
    int hbm = s.node, n = 0, next = -1, nearest = -1;
    if (!numa_is_hbm(hbm))
        return 0;
    while (n < HELD_MAX && (held[n] = pmm_alloc_node(hbm)) != 0)
        n++;
    if (n < HELD_MAX) {
        held[n] = mempol_alloc_zeroed(&s);
        next = held[n] ? numa_node_of_phys(held[n]) : -1;
        n += held[n] != 0;
    }
    for (int m = 0; m < numa.nnodes; m++)
        if (m != hbm && numa.node[m].mem_bytes &&
            (nearest < 0 || numa.distance[hbm][m] < numa.distance[hbm][nearest]))
            nearest = m;
    for (int i = 0; i < n; i++)
        pmm_free(held[i]);
    int ok = next == nearest;
    kprintf("numa: node %d full after %d frames: the next from node %d (nearest %d): %s\n", hbm,
            n - 1, next, nearest, ok ? "ok" : "WRONG");
    return !ok;
}

KTEST(numa)
{
    (void)args;
    if (!numa.nnodes) {
        int ok = pmm_alloc_node(0) == 0;
        kprintf("numa: no SRAT: no frames by node: %s\n", ok ? "ok" : "WRONG");
        kprintf(ok ? "numa: all ok\n" : "numa: 1 FAILED\n");
        return !ok;
    }
    int bad = check_nodes() + check_homes() + check_interleave() + check_full();
    if (bad)
        kprintf("numa: %d FAILED\n", bad);
    else
        kprintf("numa: all ok\n");
    return bad != 0;
}
