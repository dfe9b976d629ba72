/* pvas_symbols.c: function names of application images, for fault reports. Images built by
 * ukmpicc keep their .symtab (it is not loaded, only read from the file in the initrd). */
#include "pvas/pvas_image.h"

/* Task context, from pvas_image_open(). Leaves syms NULL if anything looks wrong. */
void pvas_image_find_symbols(struct pvas_image *img)
{
    const elf64_ehdr *eh = (const elf64_ehdr *)img->elf;
    if (eh->shentsize != sizeof(elf64_shdr) || !eh->shnum || eh->shoff > img->len ||
        (uint64_t)eh->shnum * sizeof(elf64_shdr) > img->len - eh->shoff)
        return;
    const elf64_shdr *sh = (const elf64_shdr *)(img->elf + eh->shoff);
    for (int i = 0; i < eh->shnum; i++) {
        if (sh[i].type != SHT_SYMTAB || sh[i].link >= eh->shnum)
            continue;
        const elf64_shdr *st = &sh[sh[i].link];
        if (sh[i].offset > img->len || sh[i].size > img->len - sh[i].offset ||
            st->offset > img->len || st->size > img->len - st->offset || !st->size)
            return;
        img->syms = (const elf64_sym *)(img->elf + sh[i].offset);
        img->nsyms = sh[i].size / sizeof(elf64_sym);
        img->strtab = img->elf + st->offset;
        img->strtab_len = st->size;
        return;
    }
}

/* Any context (fault reports): linear search, images are small and this runs once. */
const char *pvas_image_symbol(const struct pvas_image *img, uint64_t off, uint64_t *symoff)
{
    const elf64_sym *best = 0;
    for (uint64_t i = 0; img && i < img->nsyms; i++) {
        const elf64_sym *s = &img->syms[i];
        if ((s->info & 0xf) != STT_FUNC || s->value > off || s->name >= img->strtab_len)
            continue;
        if (s->size ? off < s->value + s->size : 1)
            if (!best || s->value > best->value)
                best = s;
    }
    if (!best || (best->size && off >= best->value + best->size))
        return 0;
    *symoff = off - best->value;
    return img->strtab + best->name;
}
