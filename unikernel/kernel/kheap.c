/* kheap.c: the kernel heap region behind newlib's sbrk (see uk/heap.h). Pages are mapped
 * when the break first moves past them and stay mapped for good: the mapped end is the
 * break's high-water mark.
 *
 * Why a shrinking break unmaps nothing: heap pages are global mappings used by every CPU,
 * and this kernel has no TLB shootdown (vmm.h). A CPU that touched a page keeps its
 * translation after another CPU unmaps it; had the frame gone back to the pmm and a fresh
 * frame been mapped at the same address when the heap grew again, that CPU would read and
 * write the old frame while the others use the new one (newlib's malloc trims
 * after a window of 16 KiB MPI buffers is freed, and the payload written through a stale
 * translation ended up in malloc's chunk links). tests/uk/kheap_test.c guards this. */
#include "uk/heap.h"
#include "uk/spinlock.h"
#include "kernel/vmm.h"
#include "kernel/pmm.h"

static spinlock_t heap_lock = SPINLOCK_INIT;
static uint64_t brk = KHEAP_BASE;    /* current break */
static uint64_t mapped = KHEAP_BASE; /* end of the mapped pages: never goes down */

/* Task context; see uk/heap.h. */
void *kheap_sbrk(intptr_t incr)
{
    uint64_t f = spin_lock_irqsave(&heap_lock);
    uint64_t old = brk, want = brk + (uint64_t)incr;
    if ((incr > 0 && want > KHEAP_BASE + KHEAP_MAX) || (incr < 0 && want < KHEAP_BASE)) {
        spin_unlock_irqrestore(&heap_lock, f);
        return (void *)-1;
    }
    while (mapped < want) {
        uint64_t p = pmm_alloc_zeroed();
        if (!p || vmm_map(kernel_pml4, mapped, p, VM_W)) {
            if (p)
                pmm_free(p); /* never mapped: no CPU can hold a translation to it */
            spin_unlock_irqrestore(&heap_lock, f);
            return (void *)-1; /* pages mapped so far stay for the next attempt */
        }
        mapped += PAGE_SIZE;
    }
    brk = want; /* moving down keeps the pages (see the top of this file) */
    spin_unlock_irqrestore(&heap_lock, f);
    return (void *)old;
}
