/*
 * pvas_image.h: the loaded form of an application image (private to unikernel/pvas/).
 *
 * Two halves: pvas_image_check.c and pvas_symbols.c only read the file (pure parsing and
 * validation, no allocation: the host fuzz target tests/fuzz/pvas_fuzz_image.c compiles
 * them); pvas_image.c builds the shared frames and pvas_load.c fills partitions, relying
 * on what the check guarantees (listed at pvas_image_check below).
 */
#ifndef UK_PVAS_IMAGE_H
#define UK_PVAS_IMAGE_H
#include "pvas/pvas.h"
#include "pvas/pvas_elf.h"
#include "memlayout.h"

#define PVAS_MAX_SEGS 8

/* The highest image address + 1 a segment may reach: the partition's image area ends a
 * guard below the lowest stack guard, leaving room for the heap's own guard. */
#define PVAS_IMAGE_LIMIT (PART_SIZE - 3 * PART_GUARD - PART_STACK_SIZE - PART_IMAGE_OFF)

struct pvas_seg {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags;   /* PF_X, PF_W */
    uint64_t *frames; /* read-only segments: one shared frame per page */
    uint64_t npages;
};

struct pvas_image {
    char name[48];
    const char *elf; /* the file, owned by whoever opened the image (the initrd) */
    uint64_t len;
    int nseg;
    struct pvas_seg seg[PVAS_MAX_SEGS];
    uint64_t vend; /* end of the highest segment, page aligned: the heap starts here */
    uint64_t entry;
    uint64_t rela_off, nrela;        /* the relocation table in the file */
    uint64_t sym_off, nsyms;         /* function symbols for fault reports (0 if stripped) */
    uint64_t strtab_off, strtab_len; /* their names; the last byte is a NUL */
};

/* Any context, no allocation. Reads the ELF file `elf` (`len` bytes, any alignment: the
 * initrd aligns its members to 4 bytes only) into *img (no shared frames yet). 0, or -1
 * with a reason naming the image in `err`. On success:
 *  - every segment's file bytes lie inside the file, filesz <= memsz, and its memory
 *    [vaddr, vaddr + memsz) inside [0, PVAS_IMAGE_LIMIT); segments ascend and no two share
 *    a page; vend is the page-aligned end of the last one;
 *  - the entry point lies inside an executable segment;
 *  - the relocation table (nrela entries) lies inside the file, and every entry is
 *    R_X86_64_NONE or R_X86_64_RELATIVE of 8 bytes inside a writable segment's memory;
 *  - the symbol table (if any) and its string table lie inside the file, the string table
 *    ends with a NUL. */
int pvas_image_check(struct pvas_image *img, const char *name, const void *elf, size_t len,
                     char *err, size_t errlen);

/* Any context. Copies the `size` bytes at file offset `off` into `out` if they lie inside
 * the file: ELF structures are copied out, never read in place (the file may be
 * misaligned). 0, or -1. */
int pvas_image_read(const struct pvas_image *img, uint64_t off, void *out, size_t size);

/* Any context. Relocation k < img->nrela (inside the file: pvas_image_check; were it not,
 * *r stays R_X86_64_NONE, which writes nothing). */
static inline void pvas_image_rela(const struct pvas_image *img, uint64_t k, elf64_rela *r)
{
    *r = (elf64_rela){0, R_X86_64_NONE, 0};
    pvas_image_read(img, img->rela_off + k * sizeof *r, r, sizeof *r);
}

/* Any context, from pvas_image_check(): find .symtab/.strtab if present and sane. */
void pvas_image_find_symbols(struct pvas_image *img);

#endif
