/* numa.h: the machine's NUMA nodes as ACPI describes them (SRAT: which CPUs and memory
 * ranges belong to which proximity domain; SLIT: relative distances). Parsed and reported
 * at boot; nothing allocates by node yet. */
#ifndef UK_NUMA_H
#define UK_NUMA_H
#include <stdint.h>
#include "memlayout.h"

#define NUMA_MAX_NODES 16 /* KNL SNC-4 flat: 4 DDR + 4 MCDRAM nodes; room to spare */

struct numa_node {
    int ncpus;
    uint64_t mem_bytes; /* enabled, not hot-pluggable ranges */
};

struct numa_info {
    int nnodes;         /* 0: the firmware has no SRAT (one node, as if UMA) */
    int nodes_ignored;  /* proximity domains >= NUMA_MAX_NODES */
    int have_distances; /* a SLIT was found */
    struct numa_node node[NUMA_MAX_NODES];
    uint8_t distance[NUMA_MAX_NODES][NUMA_MAX_NODES];
    int16_t cpu_node[MAX_CPUS]; /* by CPU index (acpi.cpu_apic_id order); -1 unknown */
};

extern struct numa_info numa;

/* Boot only (BSP), from acpi_init(): one table each, `len` bytes at `p`, checksum verified. */
void numa_parse_srat(const uint8_t *p, uint32_t len);
void numa_parse_slit(const uint8_t *p, uint32_t len);
/* Boot only, after the MADT and the SRAT: give each CPU its node. */
void numa_finish(void);
/* Boot only: print the nodes, their CPUs and memory, and the distances. */
void numa_report(void);

#endif
