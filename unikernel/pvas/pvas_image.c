/*
 * pvas_image.c: application images: static-PIE x86_64 ELF executables.
 *
 * pvas_image_open() has the file checked (pvas_image_check.c: everything the loader will
 * rely on, so that pvas_spawn() cannot be led astray by a malformed file) and builds the
 * shared read-only pages once: every non-writable PT_LOAD segment (text, rodata) becomes
 * frames that every task of the image maps, read-only. Writable segments are copied per
 * task (pvas_load.c).
 */
#include "pvas/pvas_image.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "kernel/fmt.h"
#include <stdlib.h>
#include <string.h>

/* Task context. The frames build_shared made (all of them, or as far as it got). */
static void free_shared(struct pvas_image *img)
{
    for (int i = 0; i < img->nseg; i++) {
        struct pvas_seg *s = &img->seg[i];
        for (uint64_t p = 0; s->frames && p < s->npages; p++)
            if (s->frames[p])
                pmm_free(s->frames[p]);
        free(s->frames);
    }
}

/* Task context. Build one read-only segment's frames from the file. Sums stay below
 * PVAS_IMAGE_LIMIT and the file length (pvas_image_check). */
static int build_shared(struct pvas_image *img, struct pvas_seg *s)
{
    uint64_t first = s->vaddr & ~(uint64_t)(PAGE_SIZE - 1);
    s->npages = (s->vaddr + s->memsz - first + PAGE_SIZE - 1) / PAGE_SIZE;
    s->frames = calloc(s->npages, sizeof *s->frames);
    if (!s->frames)
        return -1;
    for (uint64_t p = 0; p < s->npages; p++) {
        uint64_t f = pmm_alloc_zeroed();
        if (!f)
            return -1;
        s->frames[p] = f;
        uint64_t pva = first + p * PAGE_SIZE;
        /* Copy the part of [pva, pva+PAGE) that the file provides. */
        uint64_t lo = pva > s->vaddr ? pva : s->vaddr;
        uint64_t hi =
            pva + PAGE_SIZE < s->vaddr + s->filesz ? pva + PAGE_SIZE : s->vaddr + s->filesz;
        if (hi > lo)
            memcpy((char *)phys_ptr(f) + (lo - pva), img->elf + s->offset + (lo - s->vaddr),
                   hi - lo);
    }
    return 0;
}

/* Task context; see pvas.h. */
struct pvas_image *pvas_image_open(const char *name, const void *elf, size_t len, char *err,
                                   size_t errlen)
{
    struct pvas_image *img = calloc(1, sizeof *img);
    if (!img) {
        kformat(err, errlen, "%s: out of memory", name);
        return 0;
    }
    if (pvas_image_check(img, name, elf, len, err, errlen))
        goto fail;
    for (int i = 0; i < img->nseg; i++)
        if (!(img->seg[i].flags & PF_W) && build_shared(img, &img->seg[i])) {
            kformat(err, errlen, "%s: out of memory for its shared pages", name);
            goto fail;
        }
    return img;
fail:
    free_shared(img);
    free(img);
    return 0;
}

/* Task context. */
void pvas_image_close(struct pvas_image *img)
{
    if (!img)
        return;
    free_shared(img);
    free(img);
}
