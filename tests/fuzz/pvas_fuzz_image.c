/*
 * libFuzzer target: the loader's image validator (unikernel/pvas/pvas_image_check.c and
 * pvas_symbols.c, the kernel's own files) on any file, placed at an odd address as the
 * worst case of the initrd's 4-byte alignment. Refusing the file with a reason that names
 * the image is an accepted outcome; a sanitizer report (a read outside the file, a
 * misaligned read) or a trap below is not: every image it accepts must keep the
 * guarantees pvas_load.c relies on (pvas_image.h), checked here independently.
 */
#include "kernel/range.h"
#include "pvas/pvas_image.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzzed"

/* libFuzzer thread. Segments inside the file and the image area, ascending, no shared
 * page; the entry point executable. */
static void check_segments(const struct pvas_image *img)
{
    uint64_t vend = 0;
    int entry_ok = 0;
    for (int i = 0; i < img->nseg; i++) {
        const struct pvas_seg *s = &img->seg[i];
        if (!range_ok(s->offset, s->filesz, img->len) || s->filesz > s->memsz ||
            !range_ok(s->vaddr, s->memsz, PVAS_IMAGE_LIMIT) ||
            (i && (s->vaddr & ~(uint64_t)(PAGE_SIZE - 1)) < vend))
            __builtin_trap();
        vend = (s->vaddr + s->memsz + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
        entry_ok |= (s->flags & PF_X) && range_in(img->entry, 1, s->vaddr, s->memsz);
    }
    if (vend != img->vend || !entry_ok)
        __builtin_trap();
}

/* libFuzzer thread. Every relocation the loader will apply writes 8 bytes of a writable
 * segment. */
static void check_relocations(const struct pvas_image *img)
{
    if (img->nrela && !range_ok(img->rela_off, img->nrela * sizeof(elf64_rela), img->len))
        __builtin_trap();
    for (uint64_t k = 0; k < img->nrela; k++) {
        elf64_rela r;
        pvas_image_rela(img, k, &r);
        if ((uint32_t)r.info == R_X86_64_NONE)
            continue;
        int ok = 0;
        for (int i = 0; i < img->nseg; i++)
            ok |= (img->seg[i].flags & PF_W) &&
                  range_in(r.offset, sizeof(uint64_t), img->seg[i].vaddr, img->seg[i].memsz);
        if ((uint32_t)r.info != R_X86_64_RELATIVE || !ok)
            __builtin_trap();
    }
}

/* libFuzzer thread. Symbol names found for a few offsets lie inside the string table and
 * end there (strlen reads them: ASan reports a name that runs past the file). */
static void check_symbols(const struct pvas_image *img)
{
    if (img->nsyms && (!range_ok(img->sym_off, img->nsyms * sizeof(elf64_sym), img->len) ||
                       !range_ok(img->strtab_off, img->strtab_len, img->len)))
        __builtin_trap();
    uint64_t offs[] = {0, img->entry, img->entry + 1, img->vend - 1, ~(uint64_t)0};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        uint64_t symoff;
        const char *n = pvas_image_symbol(img, offs[i], &symoff);
        if (!n)
            continue;
        const char *tab = img->elf + img->strtab_off;
        if (n < tab || n + strlen(n) >= tab + img->strtab_len || symoff > offs[i])
            __builtin_trap();
    }
}

/* libFuzzer thread; the input is owned by libFuzzer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), err[160] = "";
    if (!buf)
        return 0;
    memcpy(buf + 1, data, size); /* odd address; ASan still guards the end */
    struct pvas_image img;
    if (pvas_image_check(&img, NAME, buf + 1, size, err, sizeof err) == 0) {
        check_segments(&img);
        check_relocations(&img);
        check_symbols(&img);
    } else if (strncmp(err, NAME ": ", strlen(NAME ": "))) {
        __builtin_trap(); /* the reason must name the image */
    }
    free(buf);
    return 0;
}
