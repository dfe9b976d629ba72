/*
 * numa.c: SRAT and SLIT (ACPI 6.5, 5.2.16 and 5.2.17). The SRAT gives each local APIC
 * (type 0, 8-bit ids; type 2, x2APIC ids) and each memory range (type 1) a proximity
 * domain, used as the node number; the SLIT gives distances (10 = local). A node with
 * memory and no CPU is what a Knights Landing in flat mode shows for its MCDRAM.
 */
#include "arch/x86_64/numa.h"
#include "arch/x86_64/acpi.h"
#include "uk/console.h"

struct numa_info numa;

#define SDT_HEADER_LEN 36
#define SRAT_FIRST     48 /* header, then 12 reserved bytes */
#define SRAT_LAPIC     0
#define SRAT_MEMORY    1
#define SRAT_X2APIC    2
#define SRAT_ENABLED   1
#define SRAT_HOTPLUG   2
#define SLIT_FIRST     44 /* header, then the locality count (8 bytes) */
#define NUMA_LOCAL     10
#define MIB            (1024 * 1024)

/* SRAT CPU entries, kept until numa_finish() matches them to the MADT's CPUs. */
static struct {
    uint32_t apic_id;
    uint32_t node;
} cpu_aff[MAX_CPUS];
static int ncpu_aff;

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Boot only: a proximity domain as a node number, counting those out of range. */
static int node_of(uint32_t domain)
{
    if (domain >= NUMA_MAX_NODES) {
        numa.nodes_ignored++;
        return -1;
    }
    if ((int)domain >= numa.nnodes)
        numa.nnodes = (int)domain + 1;
    return (int)domain;
}

/* Boot only (BSP). */
void numa_parse_srat(const uint8_t *p, uint32_t len)
{
    for (uint32_t off = SRAT_FIRST; off + 2 <= len && p[off + 1] >= 2; off += p[off + 1]) {
        const uint8_t *e = p + off;
        uint32_t domain, apic;
        int node;
        switch (e[0]) {
        case SRAT_LAPIC: /* domain bits 7:0 at 2, bits 31:8 at 9..11 */
            if (!(rd32(e + 4) & SRAT_ENABLED))
                break;
            domain = e[2] | (uint32_t)e[9] << 8 | (uint32_t)e[10] << 16 | (uint32_t)e[11] << 24;
            apic = e[3];
            goto cpu;
        case SRAT_X2APIC:
            if (!(rd32(e + 12) & SRAT_ENABLED))
                break;
            domain = rd32(e + 4);
            apic = rd32(e + 8);
        cpu:
            if ((node = node_of(domain)) >= 0 && ncpu_aff < MAX_CPUS) {
                cpu_aff[ncpu_aff].apic_id = apic;
                cpu_aff[ncpu_aff++].node = (uint32_t)node;
            }
            break;
        case SRAT_MEMORY: {
            uint32_t flags = rd32(e + 28);
            if (!(flags & SRAT_ENABLED) || (flags & SRAT_HOTPLUG))
                break; /* hot-pluggable: room QEMU reserves for memory that is not there */
            uint64_t base = rd32(e + 8) | (uint64_t)rd32(e + 12) << 32;
            uint64_t size = rd32(e + 16) | (uint64_t)rd32(e + 20) << 32;
            if ((node = node_of(rd32(e + 2))) < 0 || !size)
                break;
            numa.node[node].mem_bytes += size;
            if (numa.nranges < NUMA_MAX_RANGES)
                numa.range[numa.nranges++] = (struct numa_range){base, base + size, node};
            else
                numa.ranges_ignored++;
            break;
        }
        }
    }
}

/* Boot only (BSP). Distances between nodes we keep; the rest of the matrix is dropped. */
void numa_parse_slit(const uint8_t *p, uint32_t len)
{
    uint64_t n = rd32(p + SDT_HEADER_LEN) | (uint64_t)rd32(p + SDT_HEADER_LEN + 4) << 32;
    if (SLIT_FIRST + n * n > len)
        return;
    for (uint64_t i = 0; i < n && i < NUMA_MAX_NODES; i++)
        for (uint64_t j = 0; j < n && j < NUMA_MAX_NODES; j++)
            numa.distance[i][j] = p[SLIT_FIRST + i * n + j];
    numa.have_distances = 1;
}

/* Boot only (BSP), after acpi_init() has the CPUs. */
void numa_finish(void)
{
    for (int i = 0; i < MAX_CPUS; i++)
        numa.cpu_node[i] = -1;
    for (int i = 0; i < acpi.ncpus; i++)
        for (int k = 0; k < ncpu_aff; k++)
            if (cpu_aff[k].apic_id == acpi.cpu_apic_id[i]) {
                numa.cpu_node[i] = (int16_t)cpu_aff[k].node;
                numa.node[cpu_aff[k].node].ncpus++;
                break;
            }
    if (!numa.have_distances) /* ACPI's default: local 10, remote 20 */
        for (int i = 0; i < NUMA_MAX_NODES; i++)
            for (int j = 0; j < NUMA_MAX_NODES; j++)
                numa.distance[i][j] = i == j ? NUMA_LOCAL : 2 * NUMA_LOCAL;
}

/* Any context. */
int numa_node_of_phys(uint64_t pa)
{
    for (int i = 0; i < numa.nranges; i++)
        if (pa >= numa.range[i].base && pa < numa.range[i].end)
            return numa.range[i].node;
    return -1;
}

/* Any context. */
int numa_is_hbm(int node)
{
    return node >= 0 && node < numa.nnodes && !numa.node[node].ncpus && numa.node[node].mem_bytes;
}

/* Boot only (BSP). One line per node, then one per row of distances. */
void numa_report(void)
{
    if (!numa.nnodes) {
        kprintf("numa: no SRAT: one node\n");
        return;
    }
    kprintf("numa: %d nodes%s%s\n", numa.nnodes,
            numa.nodes_ignored ? " (entries beyond NUMA_MAX_NODES ignored)" : "",
            numa.ranges_ignored ? " (memory ranges beyond NUMA_MAX_RANGES ignored)" : "");
    for (int i = 0; i < numa.nnodes; i++) {
        const struct numa_node *nd = &numa.node[i];
        kprintf("numa: node %d: %d CPUs, %lu MiB%s\n", i, nd->ncpus, nd->mem_bytes / MIB,
                numa_is_hbm(i) ? ", CPU-less (high-bandwidth memory, e.g. MCDRAM)" : "");
    }
    for (int i = 0; i < numa.nnodes; i++) {
        kprintf("numa: distances from node %d:", i);
        for (int j = 0; j < numa.nnodes; j++)
            kprintf(" %u", numa.distance[i][j]);
        kprintf("%s\n", numa.have_distances ? "" : " (no SLIT: ACPI defaults)");
    }
}
