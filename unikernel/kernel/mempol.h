/* mempol.h: where a job's ranks get their memory on a NUMA machine (the job's mem= policy).
 * A rank's private frames (its image's data and bss, its heap, its stack) come from the
 * node the policy names for the CPU it runs on; kernel memory (page tables, kernel stacks,
 * the kernel heap) is not placed. Without an SRAT every policy is plain pmm_alloc(). */
#ifndef UK_MEMPOL_H
#define UK_MEMPOL_H
#include <stdint.h>

enum mempol {
    MEMPOL_DDR,        /* the CPU's own node (on a KNL: its quadrant's DDR); the default */
    MEMPOL_MCDRAM,     /* the nearest CPU-less node (SLIT distance): high-bandwidth memory */
    MEMPOL_INTERLEAVE, /* page by page over every node with memory, in turn */
};

/* A rank's placement: its policy, its home node (-1: any) and, interleaving, the next. */
struct mempol_state {
    enum mempol pol;
    int node;
    unsigned next;
};

/* Any context. "ddr", "mcdram", "interleave" as a policy: 0, or -1 for anything else. */
int mempol_parse(const char *s, enum mempol *out);
const char *mempol_name(enum mempol p);
/* Any context, after acpi_init(). The state for a rank on `cpu`: its home node (mcdram on a
 * machine without CPU-less nodes falls back to the CPU's own node, and says so at boot). */
struct mempol_state mempol_for_cpu(enum mempol p, int cpu);
/* Any context. A zeroed frame where `s` says; when that node is full, the nearest other
 * node with a free frame (a preference, as Linux's preferred policy, not a binding), then
 * any frame. 0 when memory is exhausted. Advances `s` when interleaving. */
uint64_t mempol_alloc_zeroed(struct mempol_state *s);

#endif
