/* cpio.h: reading the initrd, a cpio archive in the "newc" format (what `cpio -H newc`
 * writes), in place: names and data point into the archive. */
#ifndef UK_CPIO_H
#define UK_CPIO_H
#include <stddef.h>
#include <stdint.h>

struct cpio_file {
    const char *name; /* NUL-terminated inside the archive */
    const void *data;
    size_t size;
};

/* Any context. Find `name` in the archive; 0 and *f filled, -1 if absent, -2 if the archive
 * is malformed (bad magic, a header or file running past the end). */
int cpio_find(const void *archive, size_t len, const char *name, struct cpio_file *f);
/* Any context. Calls fn for every regular file; returns the count, or -2 if malformed. */
int cpio_each(const void *archive, size_t len, void (*fn)(const struct cpio_file *f, void *ctx),
              void *ctx);

#endif
