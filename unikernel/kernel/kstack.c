/* kstack.c: kernel stacks in the KSTACK region, one slot each: a guard page that is never
 * mapped, then KSTACK_SIZE bytes of stack. Overflowing a stack faults in its guard page,
 * which trap.c recognises and names.
 *
 * Stacks are never freed: their pages are global mappings that other CPUs touch too (what
 * a task hands to smp_run() often lives on its stack), and this kernel has no TLB
 * shootdown (vmm.h), so a slot's frames could not safely go back to the pmm, nor the slot
 * be mapped afresh. */
#include "kernel/kstack.h"
#include "kernel/vmm.h"
#include "kernel/pmm.h"
#include "uk/spinlock.h"

static spinlock_t kstack_lock = SPINLOCK_INIT;
static uint8_t slot_used[KSTACK_SLOTS];

/* Any context but interrupts. */
uint64_t kstack_alloc(void)
{
    uint64_t f = spin_lock_irqsave(&kstack_lock);
    int slot = -1;
    for (int i = 0; i < KSTACK_SLOTS; i++)
        if (!slot_used[i]) {
            slot_used[i] = 1;
            slot = i;
            break;
        }
    spin_unlock_irqrestore(&kstack_lock, f);
    if (slot < 0)
        return 0;
    uint64_t base = KSTACK_BASE + (uint64_t)slot * KSTACK_SLOT + PAGE_SIZE;
    for (uint64_t va = base; va < base + KSTACK_SIZE; va += PAGE_SIZE) {
        uint64_t p = pmm_alloc();
        if (!p || vmm_map(kernel_pml4, va, p, VM_W)) {
            if (p)
                pmm_free(p); /* never mapped */
            /* Out of memory: the pages mapped so far stay, and the slot stays taken (see
             * the top of this file: its frames cannot be given back). */
            return 0;
        }
    }
    return base + KSTACK_SIZE;
}

/* Boot only. */
void stack_switch(uint64_t top, void (*fn)(void))
{
    __asm__ volatile("movq %0, %%rsp\n\t"
                     "xorl %%ebp, %%ebp\n\t"
                     "callq *%1\n\t"
                     "ud2" ::"r"(top),
                     "r"(fn)
                     : "memory");
    __builtin_unreachable();
}
