/* mempol.c: see mempol.h. */
#include "kernel/mempol.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "arch/x86_64/numa.h"
#include <string.h>

static const char *const names[] = {"ddr", "mcdram", "interleave"};

/* Any context. */
int mempol_parse(const char *s, enum mempol *out)
{
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum mempol)i;
            return 0;
        }
    return -1;
}

/* Any context. */
const char *mempol_name(enum mempol p)
{
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

/* Any context. The CPU-less node nearest to `from` (lowest SLIT distance, then lowest
 * number), or -1 if there is none. */
static int nearest_hbm(int from)
{
    int best = -1;
    for (int n = 0; n < numa.nnodes; n++)
        if (numa_is_hbm(n) && (best < 0 || numa.distance[from][n] < numa.distance[from][best]))
            best = n;
    return best;
}

/* Any context. */
struct mempol_state mempol_for_cpu(enum mempol p, int cpu)
{
    struct mempol_state s = {.pol = p, .node = -1, .next = 0};
    if (!numa.nnodes || cpu < 0 || cpu >= MAX_CPUS)
        return s;
    int home = numa.cpu_node[cpu];
    if (p == MEMPOL_DDR)
        s.node = home;
    else if (p == MEMPOL_MCDRAM) {
        int h = nearest_hbm(home >= 0 ? home : 0);
        s.node = h >= 0 ? h : home;
    } else
        s.next = (unsigned)cpu; /* ranks start their interleaving on different nodes */
    return s;
}

/* Any context. The next node with memory in turn, from s->next. */
static int interleave_next(struct mempol_state *s)
{
    for (int k = 0; k < numa.nnodes; k++) {
        int n = (int)(s->next++ % (unsigned)numa.nnodes);
        if (numa.node[n].mem_bytes)
            return n;
    }
    return -1;
}

/* Any context. A frame of `want`, else of the nearest node that has one (by SLIT). */
static uint64_t alloc_near(int want)
{
    uint64_t f = pmm_alloc_node(want);
    uint8_t tried[NUMA_MAX_NODES] = {0};
    tried[want] = 1;
    while (!f) {
        int best = -1;
        for (int n = 0; n < numa.nnodes; n++)
            if (!tried[n] && (best < 0 || numa.distance[want][n] < numa.distance[want][best]))
                best = n;
        if (best < 0)
            return 0;
        tried[best] = 1;
        f = pmm_alloc_node(best);
    }
    return f;
}

/* Any context. */
uint64_t mempol_alloc_zeroed(struct mempol_state *s)
{
    int node = s->pol == MEMPOL_INTERLEAVE && numa.nnodes ? interleave_next(s) : s->node;
    uint64_t f = node >= 0 ? alloc_near(node) : 0;
    if (!f) /* no SRAT, or every node's ranges are full: whatever memory is left */
        return pmm_alloc_zeroed();
    uint64_t *q = phys_ptr(f);
    for (unsigned i = 0; i < PAGE_SIZE / sizeof *q; i++)
        q[i] = 0;
    return f;
}
