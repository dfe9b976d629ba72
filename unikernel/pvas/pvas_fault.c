/*
 * pvas_fault.c: what a fault report says about application code: which rank faulted,
 * where in its image (symbolised from the image's own symbol table), and what the address
 * is: NULL, a guard page of the stack, outside the partition, another job's partition, or
 * (the page-fault error code's PF_ERR_PRESENT) a mapped page the access may not touch, such
 * as a write to the image's read-only code.
 * Called from trap.c's fault_report() (any context, no locks, no allocation).
 */
#include "pvas/pvas_image.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "pvas/pvas_elf.h"
#include "pvas/pvas_task.h"
#include "kernel/vmm.h"
#include "uk/console.h"

static void where(const struct pvas_task *t, const char *what, uint64_t addr)
{
    uint64_t off, img_off = addr - (t->base + PART_IMAGE_OFF);
    const char *sym = addr >= t->base && addr < t->base + PART_SIZE
                          ? pvas_image_symbol(t->img, img_off, &off)
                          : 0;
    if (sym)
        kprintf("    %s 0x%016lx <%s+0x%lx> in %s\n", what, addr, sym, off, t->img->name);
    else
        kprintf("    %s 0x%016lx\n", what, addr);
}

/* The segment of t's image that holds `a`, or NULL. */
static const struct pvas_seg *segment_at(const struct pvas_task *t, uint64_t a)
{
    uint64_t off = a - (t->base + PART_IMAGE_OFF);
    for (int i = 0; i < t->img->nseg; i++) {
        const struct pvas_seg *s = &t->img->seg[i];
        if (off >= s->vaddr && off - s->vaddr < s->memsz)
            return s;
    }
    return 0;
}

/* A fault on a page that is mapped (PF_ERR_PRESENT): the access was not allowed. */
static void explain_protection(const struct pvas_task *t, uint64_t a, uint64_t err)
{
    const struct pvas_seg *s = a >= t->base && a < t->base + PART_SIZE ? segment_at(t, a) : 0;
    if (err & PF_ERR_FETCH)
        kprintf("    cause: instruction fetch from non-executable memory at 0x%lx\n", a);
    else if ((err & PF_ERR_WRITE) && s && !(s->flags & PF_W))
        where(t,
              s->flags & PF_X ? "cause: write to read-only code (text) at"
                              : "cause: write to read-only data at",
              a);
    else if (a >= t->base && a < t->base + PART_SIZE)
        kprintf("    cause: %s not allowed on a mapped page of rank %d's own partition\n",
                err & PF_ERR_WRITE ? "write" : "read", t->rank);
    else
        kprintf("    cause: %s not allowed on a mapped page outside rank %d's partition (the "
                "kernel's, or another rank's read-only memory)\n",
                err & PF_ERR_WRITE ? "write" : "read", t->rank);
}

static void explain(const struct pvas_task *t, uint64_t a, uint64_t err)
{
    if (a < PAGE_SIZE) {
        kprintf("    cause: NULL pointer dereference (address 0x%lx)\n", a);
    } else if (err & PF_ERR_PRESENT) {
        explain_protection(t, a, err);
    } else if (a >= t->stack_lo - PART_GUARD && a < t->stack_lo) {
        kprintf("    cause: guard page below the stack of rank %d (stack overflow)\n", t->rank);
    } else if (a >= t->stack_hi && a < t->stack_hi + PART_GUARD) {
        kprintf("    cause: guard page above the stack of rank %d\n", t->rank);
    } else if (a >= t->base && a < t->base + PART_SIZE) {
        kprintf("    cause: unmapped address inside rank %d's own partition\n", t->rank);
    } else if (a >= PART_BASE && a < PART_BASE + (uint64_t)PART_MAX * PART_SIZE) {
        kprintf("    cause: partition %lu is not mapped in this job's address space (another "
                "job's, or free)\n",
                (a - PART_BASE) / PART_SIZE);
    } else {
        kprintf("    cause: address 0x%lx is outside every partition\n", a);
    }
}

/* Any context: fault_task_hook. */
static int describe(const struct trapframe *tf, uint64_t cr2)
{
    const struct pvas_task *t = pvas_current();
    if (!t)
        return 0;
    kprintf("    in rank %d of %d (pid %d, image %s, partition %d at 0x%lx)\n", t->rank, t->size,
            t->task.pid, t->img->name, t->part, t->base);
    where(t, "instruction", tf->rip);
    if (tf->vector == VEC_PAGE_FAULT)
        explain(t, cr2, tf->error);
    /* The application's frames, symbolised against its image. A function that has not
     * pushed its frame yet (a leaf, or a fault in its first instructions) still has its
     * return address on top of the stack. */
    uint64_t symoff, rip_off = tf->rip - (t->base + PART_IMAGE_OFF);
    if (pvas_image_symbol(t->img, rip_off, &symoff) && tf->rsp >= t->stack_lo &&
        tf->rsp + 8 <= t->stack_hi) {
        if (symoff < FRAME_PROLOGUE_LEN || !frame_prologue_at((const uint8_t *)(tf->rip - symoff)))
            where(t, "called from", *(const uint64_t *)tf->rsp);
    }
    uint64_t rbp = tf->rbp;
    for (int d = 0; d < 16 && rbp >= t->stack_lo && rbp + 16 <= t->stack_hi && !(rbp & 7); d++) {
        uint64_t ret = ((const uint64_t *)rbp)[1];
        if (ret < t->base || ret >= t->base + PART_SIZE)
            break;
        where(t, "called from", ret);
        rbp = ((const uint64_t *)rbp)[0];
    }
    kprintf("    the other %d ranks of this node were stopped with it\n", pvas_live(t->as) - 1);
    return 1;
}

/* Boot only. */
void pvas_fault_init(void)
{
    fault_task_hook = describe;
}
