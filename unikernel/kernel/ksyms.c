/* ksyms.c: lookup in the generated symbol table (see ksyms.h and mk/gen-ksyms.sh). */
#include "kernel/ksyms.h"

struct ksym {
    uint64_t addr;
    uint64_t name; /* offset into ksyms_names */
};

/* Weak: the first link has no table; the second provides it. */
extern const uint64_t ksyms_count __attribute__((weak));
extern const struct ksym ksyms_table[] __attribute__((weak));
extern const char ksyms_names[] __attribute__((weak));
extern char __text_start[], __text_end[];

/* Any context. Binary search for the last symbol at or below addr. */
const char *ksyms_lookup(uint64_t addr, uint64_t *off)
{
    if (!&ksyms_count || addr < (uint64_t)__text_start || addr >= (uint64_t)__text_end)
        return 0;
    uint64_t lo = 0, hi = ksyms_count;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (ksyms_table[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    *off = addr - ksyms_table[lo - 1].addr;
    return ksyms_names + ksyms_table[lo - 1].name;
}
