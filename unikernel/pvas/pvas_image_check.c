/*
 * pvas_image_check.c: reading and validating an application image (a static-PIE x86_64
 * ELF executable) without trusting any of it: every offset, address and size comes from
 * the file, so each one is checked with range.h before use (never by forming a sum, which
 * can wrap), and every structure is copied out of the file (which may be misaligned).
 * Pure: no allocation, no page tables; also compiled on the host for the fuzz target.
 *
 * Only writable segments may be targets of relocations: an image that needs text
 * relocations is refused.
 */
#include "pvas/pvas_image.h"
#include "kernel/fmt.h"
#include "kernel/range.h"
#include <string.h>

#define ERR(...) kformat(err, errlen, __VA_ARGS__)

/* Any context; see pvas_image.h. */
int pvas_image_read(const struct pvas_image *img, uint64_t off, void *out, size_t size)
{
    if (!range_ok(off, size, img->len))
        return -1;
    memcpy(out, img->elf + off, size);
    return 0;
}

/* The file offset of image addresses [va, va + len) if some segment's file bytes hold them
 * all (in *off), else -1. */
static int va_to_off(const struct pvas_image *img, uint64_t va, uint64_t len, uint64_t *off)
{
    for (int i = 0; i < img->nseg; i++) {
        const struct pvas_seg *s = &img->seg[i];
        if (range_in(va, len, s->vaddr, s->filesz)) {
            *off = s->offset + (va - s->vaddr); /* <= offset + filesz <= file length */
            return 0;
        }
    }
    return -1;
}

/* Do image addresses [va, va + len) lie inside one segment with all of `flags`? */
static int seg_holds(const struct pvas_image *img, uint64_t va, uint64_t len, uint32_t flags)
{
    for (int i = 0; i < img->nseg; i++) {
        const struct pvas_seg *s = &img->seg[i];
        if ((s->flags & flags) == flags && range_in(va, len, s->vaddr, s->memsz))
            return 1;
    }
    return 0;
}

/* More program headers than any static-PIE executable has (ukmpicc's have about 10): a
 * bound on the walk, not a format limit. */
#define MAX_PHDRS 32

/* The ELF header (copied out of the file): a static-PIE x86_64 executable whose program
 * header table lies inside the file's `len` bytes. 0, or -1 with err set. */
static int check_header(const elf64_ehdr *eh, size_t len, const char *name, char *err,
                        size_t errlen)
{
    if (memcmp(eh->ident, "\177ELF", 4)) {
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
        !range_ok(eh->phoff, (uint64_t)eh->phnum * sizeof(elf64_phdr), len)) {
        ERR("%s: bad program header table", name);
        return -1;
    }
    return 0;
}

/* Program header `i`, a non-empty PT_LOAD, as img's next segment: its file bytes inside
 * the file, its memory inside a partition's image area, above the previous segment's last
 * page. 0, or -1 with err set. */
static int add_segment(struct pvas_image *img, const elf64_phdr *ph, int i, const char *name,
                       char *err, size_t errlen)
{
    if (img->nseg == PVAS_MAX_SEGS || ph->filesz > ph->memsz ||
        !range_ok(ph->offset, ph->filesz, img->len) ||
        !range_ok(ph->vaddr, ph->memsz, PVAS_IMAGE_LIMIT) ||
        (ph->vaddr & (PAGE_SIZE - 1)) != (ph->offset & (PAGE_SIZE - 1))) {
        ERR("%s: segment %d is malformed or too large for a partition", name, i);
        return -1;
    }
    /* Segments must not share a page: each page is either shared or private. */
    uint64_t first = ph->vaddr & ~(uint64_t)(PAGE_SIZE - 1);
    if (img->nseg && first < img->vend) {
        ERR("%s: segments %d and %d share a page", name, i - 1, i);
        return -1;
    }
    img->seg[img->nseg++] =
        (struct pvas_seg){ph->vaddr, ph->memsz, ph->offset, ph->filesz, ph->flags, 0, 0};
    /* vaddr + memsz <= PVAS_IMAGE_LIMIT, far below 2^64: rounding up cannot wrap. */
    img->vend = (ph->vaddr + ph->memsz + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    return 0;
}

/* The program headers (their table checked by check_header): no dynamic linker, no TLS;
 * the PT_LOAD segments into img, the PT_DYNAMIC header into *dyn (left alone if none);
 * the entry point inside an executable segment. 0, or -1 with err set. */
static int read_segments(struct pvas_image *img, const elf64_ehdr *eh, elf64_phdr *dyn,
                         const char *name, char *err, size_t errlen)
{
    for (int i = 0; i < eh->phnum; i++) {
        elf64_phdr ph;
        pvas_image_read(img, eh->phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph);
        if (ph.type == PT_INTERP) {
            ERR("%s: wants a dynamic linker; link statically (ukmpicc)", name);
            return -1;
        }
        if (ph.type == PT_TLS && ph.memsz) {
            ERR("%s: uses thread-local storage, which tasks do not have yet", name);
            return -1;
        }
        if (ph.type == PT_DYNAMIC)
            *dyn = ph;
        if (ph.type != PT_LOAD || ph.memsz == 0)
            continue;
        if (add_segment(img, &ph, i, name, err, errlen))
            return -1;
    }
    /* Anywhere else the rank would fault on its first instruction, with no loader message. */
    if (!seg_holds(img, eh->entry, 1, PF_X)) {
        ERR("%s: no executable segment holds the entry point", name);
        return -1;
    }
    img->entry = eh->entry;
    return 0;
}

/* The relocation table as the dynamic section describes it. */
struct rela_table {
    uint64_t addr, size, entsize;
};

/* The dynamic section `dyn`: where the relocation table is; text relocations are refused.
 * 0, or -1 with err set. */
static int read_dynamic(const struct pvas_image *img, const elf64_phdr *dyn, struct rela_table *t,
                        const char *name, char *err, size_t errlen)
{
    *t = (struct rela_table){0, 0, sizeof(elf64_rela)};
    if (!range_ok(dyn->offset, dyn->filesz, img->len)) {
        ERR("%s: bad dynamic section", name);
        return -1;
    }
    elf64_dyn d;
    for (uint64_t k = 0; k < dyn->filesz / sizeof d; k++) {
        pvas_image_read(img, dyn->offset + k * sizeof d, &d, sizeof d);
        if (d.tag == DT_NULL)
            break;
        if (d.tag == DT_RELA)
            t->addr = d.val;
        else if (d.tag == DT_RELASZ)
            t->size = d.val;
        else if (d.tag == DT_RELAENT)
            t->entsize = d.val;
        else if (d.tag == DT_TEXTREL || (d.tag == DT_FLAGS && (d.val & DF_TEXTREL))) {
            ERR("%s: has text relocations (compile with -fPIE)", name);
            return -1;
        }
    }
    return 0;
}

/* The relocation table `t` (empty: nothing to do): whole entries inside some segment's
 * file bytes, and only R_X86_64_RELATIVE (and NONE) into writable memory; img->rela_off
 * and img->nrela say where it is. 0, or -1 with err set. */
static int check_relocations(struct pvas_image *img, const struct rela_table *t, const char *name,
                             char *err, size_t errlen)
{
    if (!t->size)
        return 0;
    if (t->entsize != sizeof(elf64_rela) || t->size % sizeof(elf64_rela) ||
        va_to_off(img, t->addr, t->size, &img->rela_off)) {
        ERR("%s: bad relocation table", name);
        return -1;
    }
    img->nrela = t->size / sizeof(elf64_rela);
    for (uint64_t k = 0; k < img->nrela; k++) {
        elf64_rela r;
        pvas_image_rela(img, k, &r);
        uint32_t type = (uint32_t)r.info;
        if (type == R_X86_64_NONE)
            continue;
        if (type != R_X86_64_RELATIVE) {
            ERR("%s: relocation %lu has type %u; only R_X86_64_RELATIVE is "
                "supported (static-PIE)",
                name, k, type);
            return -1;
        }
        if (!seg_holds(img, r.offset, sizeof(uint64_t), PF_W)) {
            ERR("%s: relocation %lu writes outside writable memory", name, k);
            return -1;
        }
    }
    return 0;
}

/* Any context; see pvas_image.h. Each step checks what the next one and the loader rely
 * on. */
int pvas_image_check(struct pvas_image *img, const char *name, const void *elf, size_t len,
                     char *err, size_t errlen)
{
    *img = (struct pvas_image){.elf = elf, .len = len};
    kformat(img->name, sizeof img->name, "%s", name);
    elf64_ehdr eh;
    if (pvas_image_read(img, 0, &eh, sizeof eh)) {
        ERR("%s: not an ELF file", name);
        return -1;
    }
    elf64_phdr dyn = {.type = PT_NULL};
    struct rela_table rela;
    if (check_header(&eh, len, name, err, errlen) ||
        read_segments(img, &eh, &dyn, name, err, errlen))
        return -1;
    if (dyn.type == PT_DYNAMIC && (read_dynamic(img, &dyn, &rela, name, err, errlen) ||
                                   check_relocations(img, &rela, name, err, errlen)))
        return -1;
    pvas_image_find_symbols(img);
    return 0;
}
