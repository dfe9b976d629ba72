/* pvas_load.c: filling a partition: image segments, relocations, heap bounds, stack. */
#include "pvas/pvas_image.h"
#include "pvas/pvas_task.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "kernel/fmt.h"
#include "arch/x86_64/numa.h"
#include <string.h>

/* Any context; see pvas_task.h. Goes through the direct map, page by page. */
int pvas_copy_out(struct pvas_as *as, uint64_t va, const void *src, size_t len)
{
    const char *s = src;
    while (len) {
        uint64_t pa = vmm_translate(pvas_pml4(as), va);
        if (pa == (uint64_t)-1) /* hazard: "not mapped", never an address to write to */
            return -1;
        size_t n = PAGE_SIZE - (va & (PAGE_SIZE - 1));
        if (n > len)
            n = len;
        memcpy(phys_ptr(pa), s, n);
        va += n;
        s += n;
        len -= n;
    }
    return 0;
}

static int map_private(struct pvas_task *t, uint64_t va, uint64_t end, int flags)
{
    for (; va < end; va += PAGE_SIZE) {
        uint64_t f = mempol_alloc_zeroed(&t->mem);
        if (!f)
            return -1;
        if (vmm_map(pvas_pml4(t->as), va, f, flags)) {
            pmm_free(f);
            return -1;
        }
    }
    return 0;
}

/* Task context; see pvas_task.h. Relies on pvas_image_check's guarantees (pvas_image.h):
 * every address below is base + something inside [0, PVAS_IMAGE_LIMIT), so no sum wraps
 * and every write lands in pages mapped here; a copy that still finds a page unmapped is
 * refused, naming the image, instead of writing through a bogus address. */
int pvas_load_image(struct pvas_task *t, char *err, size_t errlen)
{
    const struct pvas_image *img = t->img;
    uint64_t base = t->base + PART_IMAGE_OFF;
    for (int i = 0; i < img->nseg; i++) {
        const struct pvas_seg *s = &img->seg[i];
        uint64_t first = s->vaddr & ~(uint64_t)(PAGE_SIZE - 1);
        uint64_t end = (s->vaddr + s->memsz + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
        int flags = (s->flags & PF_X) ? VM_X : 0;
        if (!(s->flags & PF_W)) { /* shared: the image's frames, read-only */
            for (uint64_t p = 0; p < s->npages; p++)
                if (vmm_map(pvas_pml4(t->as), base + first + p * PAGE_SIZE, s->frames[p],
                            flags | VM_SHARED)) {
                    kformat(err, errlen, "out of memory mapping %s", img->name);
                    return -1;
                }
            continue;
        }
        if (map_private(t, base + first, base + end, flags | VM_W)) {
            kformat(err, errlen, "out of memory loading %s", img->name);
            return -1;
        }
        if (pvas_copy_out(t->as, base + s->vaddr, img->elf + s->offset, s->filesz)) {
            kformat(err, errlen, "%s: segment %d is not in mapped memory", img->name, i);
            return -1;
        }
    }
    /* R_X86_64_RELATIVE: the word at base+offset becomes base+addend (checked at open). */
    for (uint64_t k = 0; k < img->nrela; k++) {
        elf64_rela r;
        pvas_image_rela(img, k, &r);
        if ((uint32_t)r.info != R_X86_64_RELATIVE)
            continue;
        uint64_t v = base + (uint64_t)r.addend; /* any value: only the rank uses it */
        if (pvas_copy_out(t->as, base + r.offset, &v, sizeof v)) {
            kformat(err, errlen, "%s: relocation %lu writes outside writable memory", img->name, k);
            return -1;
        }
    }
    t->entry = base + img->entry;
    t->heap_start = t->brk = t->heap_mapped = base + img->vend;
    t->stack_hi = t->base + PART_SIZE - PART_GUARD;
    t->stack_lo = t->stack_hi - PART_STACK_SIZE;
    t->heap_limit = t->stack_lo - PART_GUARD;
    return 0;
}

/* Task context; see pvas_task.h. */
int pvas_map_stack(struct pvas_task *t, char *err, size_t errlen)
{
    if (map_private(t, t->stack_lo, t->stack_hi, VM_W)) {
        kformat(err, errlen, "out of memory for the stack");
        return -1;
    }
    return 0;
}

/* Task context; see pvas_task.h. incr comes from the rank: heap_start <= brk <= heap_limit
 * holds, and the checks compare incr with the room left instead of forming brk + incr,
 * which INTPTR_MIN would wrap. */
void *pvas_sbrk(struct pvas_task *t, intptr_t incr)
{
    uint64_t old = t->brk;
    if ((incr > 0 && (uint64_t)incr > t->heap_limit - old) ||
        (incr < 0 && 0 - (uint64_t)incr > old - t->heap_start))
        return (void *)-1;
    uint64_t want = old + (uint64_t)incr;
    while (t->heap_mapped < want) {
        if (map_private(t, t->heap_mapped, t->heap_mapped + PAGE_SIZE, VM_W))
            return (void *)-1;
        t->heap_mapped += PAGE_SIZE;
    }
    /* Shrinking keeps the pages mapped: other CPUs of the job may hold TLB entries for
     * them (ranks read each other's memory), and freeing a frame under a stale entry would
     * be a silent corruption. They go back with the address space. */
    t->brk = want;
    return (void *)old;
}

/* Any context; see pvas.h. Only the task's own pages: the heap as mapped so far and the
 * stack (the image's writable pages are few; its read-only ones are shared). */
uint64_t pvas_task_pages_by_node(const struct pvas_task *t, uint64_t *by_node)
{
    const uint64_t span[2][2] = {{t->heap_start, t->heap_mapped}, {t->stack_lo, t->stack_hi}};
    uint64_t total = 0;
    for (int i = 0; i < NUMA_MAX_NODES; i++)
        by_node[i] = 0;
    for (int k = 0; k < 2; k++)
        for (uint64_t va = span[k][0] & ~(uint64_t)(PAGE_SIZE - 1); va < span[k][1];
             va += PAGE_SIZE) {
            uint64_t pa = vmm_translate(pvas_pml4(t->as), va);
            if (pa == (uint64_t)-1)
                continue;
            int n = numa_node_of_phys(pa);
            if (n >= 0)
                by_node[n]++;
            total++;
        }
    return total;
}
