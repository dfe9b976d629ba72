/* vmm.h: page tables: the kernel's own, and mapping helpers for every address space. */
#ifndef UK_VMM_H
#define UK_VMM_H
#include <stddef.h>
#include <stdint.h>
#include "memlayout.h"

/* Where physical memory is reachable: 1:1 during boot, the direct map afterwards. */
extern uint64_t pv_offset;
static inline void *phys_ptr(uint64_t phys)
{
    return (void *)(phys + pv_offset);
}

extern uint64_t kernel_pml4; /* physical address of the kernel's top-level table */

/* Mapping flags (architecture PTE bits, see arch/x86_64/x86.h): VM_W writable,
 * VM_X executable (default: no-execute), VM_UC uncached (device memory), VM_HUGE 2 MiB. */
#define VM_W      0x1
#define VM_X      0x2
#define VM_UC     0x4
#define VM_HUGE   0x8
#define VM_SHARED 0x10 /* the frame belongs to someone else: vmm_free_lower() leaves it */

/* Boot only: build the kernel page tables (direct map, kernel image with per-section
 * permissions, the shared upper-half tables) and switch to them. The low identity map
 * ends here: from now on page 0 faults. */
void vmm_init(void);

/*
 * TLBs: there is no TLB shootdown in this kernel. Upper-half (kernel) mappings are global
 * (PTE_G): every CPU may cache them and keeps them across CR3 loads, until it flushes the
 * page itself. So a kernel mapping, once made, is never removed or changed: the heap keeps
 * its high-water mark (kheap.c), kernel stacks are never freed (kstack.c), MMIO windows
 * stay. Lower-half (partition) mappings are not global and go only with their whole table
 * (vmm_free_lower), once no CPU has it loaded: the CR3 load that left it flushed them.
 * Whoever needs to unmap or remap a live page must first add a shootdown (an IPI to every
 * CPU that may hold the translation, invlpg there, wait for all) before freeing the frame.
 */

/* Any context; the caller serialises changes to one address space. Map one page (4 KiB, or
 * 2 MiB with VM_HUGE) at `va` to `pa` in the table rooted at `pml4`. Returns 0, or -1 if a
 * table frame could not be allocated. Hazard: `va` must not be mapped yet (see TLBs above:
 * other CPUs would go on using the old translation). */
int vmm_map(uint64_t pml4, uint64_t va, uint64_t pa, int flags);
/* Any context. Physical address `va` maps to in `pml4`, or (uint64_t)-1. */
uint64_t vmm_translate(uint64_t pml4, uint64_t va);
/* Any context, fault handlers included (reads tables only). Is `va` mapped right now? */
int vmm_is_mapped(uint64_t va);

/* Task context; no CPU has `pml4` loaded any more (see TLBs above). Frees every frame
 * mapped in the lower half (except VM_SHARED ones), every lower-half table, and the
 * top-level table itself. */
void vmm_free_lower(uint64_t pml4);
/* Any context. Page-table frames (all levels) that map [lo, hi) in `pml4`'s lower half. */
uint64_t vmm_count_tables(uint64_t pml4, uint64_t lo, uint64_t hi);

/* Task or boot context. Maps device registers (uncached) and returns their address. */
void *mmio_map(uint64_t phys, size_t size);

#endif
