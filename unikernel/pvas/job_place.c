/* job_place.c: see job_place.h. The end report is the placement test's evidence
 * (tests/knl/run.sh numa_*): the nodes come from the frames' physical addresses, so it
 * shows where memory went, not where the policy meant it to go. */
#include "pvas/job_place.h"
#include "arch/x86_64/numa.h"
#include "arch/x86_64/percpu.h"
#include "kernel/smp.h"
#include "kernel/pmm.h"
#include "uk/console.h"

#define MIB (1024 * 1024)

static struct pvas_task *ranks[PART_MAX]; /* this node's ranks, in spawn order */
static int nranks;

/* Task context. */
void job_place_start(enum mempol p)
{
    if (!numa.nnodes)
        return;
    kprintf("job: memory policy mem=%s over %d NUMA nodes%s; free MiB by node:", mempol_name(p),
            numa.nnodes,
            p == MEMPOL_MCDRAM && !numa_is_hbm(mempol_for_cpu(p, 0).node)
                ? " (no CPU-less node: each CPU's own instead)"
                : "");
    for (int n = 0; n < numa.nnodes; n++)
        kprintf(" %d:%lu", n, pmm_node_free_frames(n) * PAGE_SIZE / MIB);
    kprintf("\n");
}

/* Task context. */
void job_place_spawned(struct pvas_task *t)
{
    int c = t->task.cpu;
    if (numa.nnodes)
        kprintf("job: rank %d on cpu %d (APIC id %u, core %u, node %d)\n", t->rank, c,
                percpu[c].apic_id, smp_core_of(c), numa.cpu_node[c]);
    else if (smp_threads_per_core() > 1)
        kprintf("job: rank %d on cpu %d (APIC id %u, core %u)\n", t->rank, c, percpu[c].apic_id,
                smp_core_of(c));
    if (nranks < PART_MAX)
        ranks[nranks++] = t;
}

/* Task context. */
void job_place_end(void)
{
    if (!numa.nnodes)
        return;
    for (int i = 0; i < nranks; i++) {
        const struct pvas_task *t = ranks[i];
        uint64_t by_node[NUMA_MAX_NODES];
        uint64_t total = pvas_task_pages_by_node(t, by_node);
        kprintf("job: rank %d memory: cpu %d (node %d), home node %d, %lu heap+stack pages:",
                t->rank, t->task.cpu, numa.cpu_node[t->task.cpu], t->mem.node, total);
        for (int n = 0; n < numa.nnodes; n++)
            if (by_node[n])
                kprintf(" node%d=%lu", n, by_node[n]);
        kprintf("\n");
    }
}
