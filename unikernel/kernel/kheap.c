/* kheap.c: the kernel heap region behind newlib's sbrk (see uk/heap.h). Pages are mapped
 * when the break moves up and unmapped and freed when it moves down. */
#include "uk/heap.h"
#include "uk/spinlock.h"
#include "kernel/vmm.h"
#include "kernel/pmm.h"

static spinlock_t heap_lock = SPINLOCK_INIT;
static uint64_t brk = KHEAP_BASE;    /* current break */
static uint64_t mapped = KHEAP_BASE; /* end of the mapped pages */

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
                pmm_free(p);
            spin_unlock_irqrestore(&heap_lock, f);
            return (void *)-1; /* pages mapped so far stay for the next attempt */
        }
        mapped += PAGE_SIZE;
    }
    while (mapped >= want + PAGE_SIZE) {
        mapped -= PAGE_SIZE;
        pmm_free(vmm_unmap(kernel_pml4, mapped));
    }
    brk = want;
    spin_unlock_irqrestore(&heap_lock, f);
    return (void *)old;
}
