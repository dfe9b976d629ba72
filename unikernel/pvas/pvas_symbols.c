/* pvas_symbols.c: function names of application images, for fault reports. Images built by
 * ukmpicc keep their .symtab (it is not loaded, only read from the file in the initrd, so
 * with the same care as pvas_image_check.c: ranges checked, structures copied out). */
#include "pvas/pvas_image.h"
#include "kernel/range.h"

/* Any context, from pvas_image_check(). Leaves nsyms 0 if anything looks wrong. */
void pvas_image_find_symbols(struct pvas_image *img)
{
    elf64_ehdr eh;
    if (pvas_image_read(img, 0, &eh, sizeof eh) || eh.shentsize != sizeof(elf64_shdr) ||
        !eh.shnum || !range_ok(eh.shoff, (uint64_t)eh.shnum * sizeof(elf64_shdr), img->len))
        return;
    for (int i = 0; i < eh.shnum; i++) {
        elf64_shdr sh, st;
        pvas_image_read(img, eh.shoff + (uint64_t)i * sizeof sh, &sh, sizeof sh);
        if (sh.type != SHT_SYMTAB || sh.link >= eh.shnum)
            continue;
        pvas_image_read(img, eh.shoff + (uint64_t)sh.link * sizeof st, &st, sizeof st);
        /* Names are printed up to their NUL: the table must end with one, or the last name
         * would run on past the file (into the rest of the initrd). */
        char last;
        if (!range_ok(sh.offset, sh.size, img->len) || !range_ok(st.offset, st.size, img->len) ||
            !st.size || pvas_image_read(img, st.offset + st.size - 1, &last, 1) || last)
            return;
        img->sym_off = sh.offset;
        img->nsyms = sh.size / sizeof(elf64_sym);
        img->strtab_off = st.offset;
        img->strtab_len = st.size;
        return;
    }
}

/* Any context (fault reports): linear search, images are small and this runs once. */
const char *pvas_image_symbol(const struct pvas_image *img, uint64_t off, uint64_t *symoff)
{
    elf64_sym best = {0}, s;
    int found = 0;
    for (uint64_t i = 0; img && i < img->nsyms; i++) {
        pvas_image_read(img, img->sym_off + i * sizeof s, &s, sizeof s);
        /* off - value < size, not off < value + size: that sum can wrap. */
        if (ELF64_ST_TYPE(s.info) != STT_FUNC || s.value > off || s.name >= img->strtab_len ||
            (s.size && off - s.value >= s.size))
            continue;
        if (!found || s.value > best.value) {
            best = s;
            found = 1;
        }
    }
    if (!found)
        return 0;
    *symoff = off - best.value;
    return img->elf + img->strtab_off + best.name;
}
