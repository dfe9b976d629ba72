/* pmm.h: the physical frame allocator (4 KiB frames, one bit each). */
#ifndef UK_PMM_H
#define UK_PMM_H
#include <stdint.h>

/* Boot only: build the bitmap from bootinfo's memory map, reserving low memory, the kernel
 * image and the initrd. */
void pmm_init(void);
/* Boot only: the direct map is up; reach the bitmap through it from now on. */
void pmm_relocate(void);

/* Any context. A free frame (not zeroed), or 0 when memory is exhausted. */
uint64_t pmm_alloc(void);
/* Any context, after acpi_init(). A free frame (not zeroed) of NUMA node `node`: inside one
 * of the SRAT's memory ranges of that node (arch/x86_64/numa.h). 0 when the node has none
 * left, or the machine has no such node (no SRAT: the caller falls back to pmm_alloc). */
uint64_t pmm_alloc_node(int node);
/* Any context, after acpi_init(). Free frames of `node` (a scan: for reports, not hot paths). */
uint64_t pmm_node_free_frames(int node);
/* Any context. A zeroed frame, or 0. */
uint64_t pmm_alloc_zeroed(void);
/* Any context. `n` physically contiguous frames (e.g. DMA rings), or 0. */
uint64_t pmm_alloc_contig(uint64_t n);
/* Any context. The caller owned the frame; it must not be used afterwards. */
void pmm_free(uint64_t phys);
void pmm_free_contig(uint64_t phys, uint64_t n);

uint64_t pmm_free_frames(void);
uint64_t pmm_total_frames(void); /* usable frames found in the memory map */

#endif
