/* range.h: bounds checks for offsets and sizes that come from outside the kernel (the
 * initrd, the ELF images in it), written so that no sum is ever formed: off + len can wrap
 * around 2^64 and then compare as small. Header-only so that host fuzz targets and tests
 * compile the same checks. */
#ifndef UK_RANGE_H
#define UK_RANGE_H
#include <stdint.h>

/* Any context. Does [off, off + len) lie inside [0, size)? */
static inline int range_ok(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* Any context. Does [a, a + alen) lie inside [b, b + blen)? */
static inline int range_in(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a >= b && range_ok(a - b, alen, blen);
}

#endif
