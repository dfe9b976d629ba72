/*
 * libFuzzer target: the initrd reader (unikernel/kernel/cpio.c) on any archive. Refusing it
 * (-2) is an accepted outcome; a sanitizer report (a read outside the archive) or a trap
 * below (a member handed out that does not lie inside the archive) is not.
 */
#include "kernel/cpio.h"
#include "kernel/range.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct archive {
    const char *base;
    size_t len;
};

/* libFuzzer thread, from cpio_each: each member's name and data inside the archive. */
static void member(const struct cpio_file *f, void *ctx)
{
    const struct archive *a = ctx;
    if (f->name < a->base || !range_ok((uint64_t)(f->name - a->base), strlen(f->name) + 1, a->len))
        __builtin_trap();
    const char *d = f->data;
    if (d < a->base || !range_ok((uint64_t)(d - a->base), f->size, a->len))
        __builtin_trap();
}

/* libFuzzer thread; the input is owned by libFuzzer (copied: ASan guards the exact end). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    struct archive a = {buf, size};
    struct cpio_file f;
    int n = cpio_each(buf, size, member, &a);
    int r = cpio_find(buf, size, "job.conf", &f);
    if (n < -2 || r < -2 || (n == -2) != (r == -2))
        __builtin_trap();
    if (r == 0)
        member(&f, &a);
    free(buf);
    return 0;
}
