/* numa.h: the machine's NUMA nodes as ACPI describes them (SRAT: which CPUs and memory
 * ranges belong to which proximity domain; SLIT: relative distances). Parsed and reported
 * at boot; the frame allocator (pmm_alloc_node) and the placement policy (kernel/mempol.h)
 * allocate by node from the ranges kept here. */
#ifndef UK_NUMA_H
#define UK_NUMA_H
#include <stdint.h>
#include "memlayout.h"

#define NUMA_MAX_NODES  16 /* KNL SNC-4 flat: 4 DDR + 4 MCDRAM nodes; room to spare */
#define NUMA_MAX_RANGES 64 /* SRAT memory ranges kept (QEMU: one or two per node) */

struct numa_node {
    int ncpus;
    uint64_t mem_bytes; /* enabled, not hot-pluggable ranges */
};

struct numa_range {
    uint64_t base, end; /* [base, end), physical */
    int node;
};

struct numa_info {
    int nnodes;         /* 0: the firmware has no SRAT (one node, as if UMA) */
    int nodes_ignored;  /* proximity domains >= NUMA_MAX_NODES */
    int ranges_ignored; /* memory ranges beyond NUMA_MAX_RANGES */
    int have_distances; /* a SLIT was found */
    struct numa_node node[NUMA_MAX_NODES];
    uint8_t distance[NUMA_MAX_NODES][NUMA_MAX_NODES];
    int16_t cpu_node[MAX_CPUS]; /* by CPU index (acpi.cpu_apic_id order); -1 unknown */
    int nranges;                /* the SRAT's enabled memory ranges, in table order */
    struct numa_range range[NUMA_MAX_RANGES];
};

extern struct numa_info numa;

/* Boot only (BSP), from acpi_init(): one table each, `len` bytes at `p`, checksum verified. */
void numa_parse_srat(const uint8_t *p, uint32_t len);
void numa_parse_slit(const uint8_t *p, uint32_t len);
/* Boot only, after the MADT and the SRAT: give each CPU its node. */
void numa_finish(void);
/* Any context, after acpi_init(): the node of physical address `pa`, or -1 (no SRAT, or
 * no range holds it). */
int numa_node_of_phys(uint64_t pa);
/* Any context, after acpi_init(): a CPU-less node with memory, what a KNL in flat mode shows
 * for its MCDRAM (high-bandwidth memory; no CPU has it as its local node). */
int numa_is_hbm(int node);
/* Boot only: print the nodes, their CPUs and memory, and the distances. */
void numa_report(void);

#endif
