/* pvas_image.h: the loaded form of an application image (private to unikernel/pvas/). */
#ifndef UK_PVAS_IMAGE_H
#define UK_PVAS_IMAGE_H
#include "pvas/pvas.h"
#include "pvas/pvas_elf.h"
#include "memlayout.h"

#define PVAS_MAX_SEGS 8

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
    const elf64_rela *rela;
    uint64_t nrela;
    const elf64_sym *syms; /* function symbols for fault reports (NULL if stripped) */
    uint64_t nsyms;
    const char *strtab;
    uint64_t strtab_len;
};

/* Task context, from pvas_image_open(): find .symtab/.strtab if present and sane. */
void pvas_image_find_symbols(struct pvas_image *img);

#endif
