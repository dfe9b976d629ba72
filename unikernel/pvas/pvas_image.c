/*
 * pvas_image.c: application images: static-PIE x86_64 ELF executables.
 *
 * pvas_image_open() checks everything the loader will rely on (so pvas_spawn() cannot be
 * led astray by a malformed file) and builds the shared read-only pages once: every
 * non-writable PT_LOAD segment (text, rodata) becomes frames that every task of the image
 * maps, read-only. Writable segments are copied per task, and only they may be targets of
 * relocations: an image that needs text relocations is refused.
 */
#include "pvas/pvas_image.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "kernel/fmt.h"
#include <stdlib.h>
#include <string.h>

#define ERR(...) kformat(err, errlen, __VA_ARGS__)

static int in_file(const struct pvas_image *img, uint64_t off, uint64_t len)
{
    return off <= img->len && len <= img->len - off;
}

/* The file offset of image address `va` (inside some segment's file bytes), or -1. */
static int64_t va_to_off(const struct pvas_image *img, uint64_t va, uint64_t len)
{
    for (int i = 0; i < img->nseg; i++) {
        const struct pvas_seg *s = &img->seg[i];
        if (va >= s->vaddr && va + len <= s->vaddr + s->filesz)
            return (int64_t)(s->offset + (va - s->vaddr));
    }
    return -1;
}

static int writable_at(const struct pvas_image *img, uint64_t va, uint64_t len)
{
    for (int i = 0; i < img->nseg; i++) {
        const struct pvas_seg *s = &img->seg[i];
        if ((s->flags & PF_W) && va >= s->vaddr && va + len <= s->vaddr + s->memsz)
            return 1;
    }
    return 0;
}

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

/* Build one read-only segment's frames from the file. */
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

/* More program headers than any static-PIE executable has (ukmpicc's have about 10): a
 * bound on the walk, not a format limit. */
#define MAX_PHDRS 32

/* Task context. The ELF header: a static-PIE x86_64 executable whose program header table
 * lies inside the file's `len` bytes. 0, or -1 with err set. */
static int check_header(const elf64_ehdr *eh, size_t len, const char *name, char *err,
                        size_t errlen)
{
    if (len < sizeof *eh || memcmp(eh->ident, "\177ELF", 4)) {
        ERR("%s: not an ELF file", name);
        return -1;
    }
    if (eh->ident[EI_CLASS] != ELFCLASS64 || eh->ident[EI_DATA] != ELFDATA2LSB ||
        eh->machine != EM_X86_64) {
        ERR("%s: not a 64-bit little-endian x86_64 ELF", name);
        return -1;
    }
    if (eh->type != ET_DYN) {
        ERR("%s: not position independent (ELF type %u; link with ukmpicc, which "
            "makes static-PIE)",
            name, eh->type);
        return -1;
    }
    if (eh->phentsize != sizeof(elf64_phdr) || eh->phnum == 0 || eh->phnum > MAX_PHDRS ||
        eh->phoff > len || (uint64_t)eh->phnum * sizeof(elf64_phdr) > len - eh->phoff) {
        ERR("%s: bad program header table", name);
        return -1;
    }
    return 0;
}

/* Task context. Program header `i`, a non-empty PT_LOAD, as img's next segment: its file
 * bytes inside the file, its memory inside a partition's image area, above the previous
 * segment's last page. 0, or -1 with err set. */
static int add_segment(struct pvas_image *img, const elf64_phdr *ph, int i, const char *name,
                       char *err, size_t errlen)
{
    uint64_t limit = PART_SIZE - 3 * PART_GUARD - PART_STACK_SIZE - PART_IMAGE_OFF;
    if (img->nseg == PVAS_MAX_SEGS || ph->filesz > ph->memsz ||
        !in_file(img, ph->offset, ph->filesz) || ph->vaddr > limit ||
        ph->memsz > limit - ph->vaddr ||
        (ph->vaddr & (PAGE_SIZE - 1)) != (ph->offset & (PAGE_SIZE - 1))) {
        ERR("%s: segment %d is malformed or too large for a partition", name, i);
        return -1;
    }
    struct pvas_seg *s = &img->seg[img->nseg];
    /* Segments must not share a page: each page is either shared or private. */
    uint64_t first = ph->vaddr & ~(uint64_t)(PAGE_SIZE - 1);
    if (img->nseg && first < img->vend) {
        ERR("%s: segments %d and %d share a page", name, i - 1, i);
        return -1;
    }
    *s = (struct pvas_seg){ph->vaddr, ph->memsz, ph->offset, ph->filesz, ph->flags, 0, 0};
    img->nseg++;
    img->vend = (ph->vaddr + ph->memsz + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    return 0;
}

/* Task context. The program headers (checked by check_header): no dynamic linker, no TLS;
 * the PT_LOAD segments into img, *dyn the PT_DYNAMIC header (NULL if none); the entry
 * point inside the loaded image. 0, or -1 with err set. */
static int read_segments(struct pvas_image *img, const elf64_ehdr *eh, const elf64_phdr **dyn,
                         const char *name, char *err, size_t errlen)
{
    const elf64_phdr *ph = (const elf64_phdr *)(img->elf + eh->phoff);
    *dyn = 0;
    for (int i = 0; i < eh->phnum; i++) {
        if (ph[i].type == PT_INTERP) {
            ERR("%s: wants a dynamic linker; link statically (ukmpicc)", name);
            return -1;
        }
        if (ph[i].type == PT_TLS && ph[i].memsz) {
            ERR("%s: uses thread-local storage, which tasks do not have yet", name);
            return -1;
        }
        if (ph[i].type == PT_DYNAMIC)
            *dyn = &ph[i];
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        if (add_segment(img, &ph[i], i, name, err, errlen))
            return -1;
    }
    if (!img->nseg || eh->entry >= img->vend) {
        ERR("%s: no loadable segment holds the entry point", name);
        return -1;
    }
    img->entry = eh->entry;
    return 0;
}

/* The relocation table as the dynamic section describes it. */
struct rela_table {
    uint64_t addr, size, entsize;
};

/* Task context. The dynamic section `dyn` (inside the file): where the relocation table
 * is; text relocations are refused. 0, or -1 with err set. */
static int read_dynamic(const struct pvas_image *img, const elf64_phdr *dyn, struct rela_table *t,
                        const char *name, char *err, size_t errlen)
{
    *t = (struct rela_table){0, 0, sizeof(elf64_rela)};
    if (!in_file(img, dyn->offset, dyn->filesz)) {
        ERR("%s: bad dynamic section", name);
        return -1;
    }
    const elf64_dyn *d = (const elf64_dyn *)(img->elf + dyn->offset);
    for (uint64_t k = 0; k < dyn->filesz / sizeof *d && d[k].tag != DT_NULL; k++) {
        if (d[k].tag == DT_RELA)
            t->addr = d[k].val;
        else if (d[k].tag == DT_RELASZ)
            t->size = d[k].val;
        else if (d[k].tag == DT_RELAENT)
            t->entsize = d[k].val;
        else if (d[k].tag == DT_TEXTREL || (d[k].tag == DT_FLAGS && (d[k].val & DF_TEXTREL))) {
            ERR("%s: has text relocations (compile with -fPIE)", name);
            return -1;
        }
    }
    return 0;
}

/* Task context. The relocation table `t` (empty: nothing to do): inside some segment's
 * file bytes, and only R_X86_64_RELATIVE (and NONE) into writable memory; img->rela and
 * img->nrela point at it. 0, or -1 with err set. */
static int check_relocations(struct pvas_image *img, const struct rela_table *t, const char *name,
                             char *err, size_t errlen)
{
    if (!t->size)
        return 0;
    int64_t off = va_to_off(img, t->addr, t->size);
    if (t->entsize != sizeof(elf64_rela) || off < 0) {
        ERR("%s: bad relocation table", name);
        return -1;
    }
    img->rela = (const elf64_rela *)(img->elf + off);
    img->nrela = t->size / sizeof(elf64_rela);
    for (uint64_t k = 0; k < img->nrela; k++) {
        uint32_t type = (uint32_t)img->rela[k].info;
        if (type == R_X86_64_NONE)
            continue;
        if (type != R_X86_64_RELATIVE) {
            ERR("%s: relocation %lu has type %u; only R_X86_64_RELATIVE is "
                "supported (static-PIE)",
                name, k, type);
            return -1;
        }
        if (!writable_at(img, img->rela[k].offset, sizeof(uint64_t))) {
            ERR("%s: relocation %lu writes outside writable memory", name, k);
            return -1;
        }
    }
    return 0;
}

/* Task context; see pvas.h. Each step checks what the next one and the loader rely on. */
struct pvas_image *pvas_image_open(const char *name, const void *elf, size_t len, char *err,
                                   size_t errlen)
{
    const elf64_ehdr *eh = elf;
    if (check_header(eh, len, name, err, errlen))
        return 0;
    struct pvas_image *img = calloc(1, sizeof *img);
    if (!img) {
        ERR("%s: out of memory", name);
        return 0;
    }
    img->elf = elf;
    img->len = len;
    kformat(img->name, sizeof img->name, "%s", name);
    const elf64_phdr *dyn;
    struct rela_table rela;
    if (read_segments(img, eh, &dyn, name, err, errlen))
        goto fail;
    if (dyn && (read_dynamic(img, dyn, &rela, name, err, errlen) ||
                check_relocations(img, &rela, name, err, errlen)))
        goto fail;
    pvas_image_find_symbols(img);
    for (int i = 0; i < img->nseg; i++)
        if (!(img->seg[i].flags & PF_W) && build_shared(img, &img->seg[i])) {
            ERR("%s: out of memory for its shared pages", name);
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
