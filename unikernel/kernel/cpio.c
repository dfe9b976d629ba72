/* cpio.c: see cpio.h. Every field is checked against the archive's end before use: the
 * initrd comes from outside the kernel. */
#include "kernel/cpio.h"
#include <string.h>

#define HDR 110 /* "070701" + 13 fields of 8 hex digits */

static int hex8(const char *p, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < 8; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        *v = *v * 16 + (uint64_t)d;
    }
    return 0;
}

/* Any context; see cpio.h. */
int cpio_each(const void *archive, size_t len, void (*fn)(const struct cpio_file *f, void *ctx),
              void *ctx)
{
    const char *a = archive;
    size_t off = 0;
    int n = 0;
    for (;;) {
        uint64_t mode, namesize, filesize;
        if (off > len || len - off < HDR || memcmp(a + off, "070701", 6) ||
            hex8(a + off + 14, &mode) || hex8(a + off + 54, &filesize) ||
            hex8(a + off + 94, &namesize))
            return -2;
        size_t name = off + HDR;
        if (namesize == 0 || namesize > len - name || a[name + namesize - 1] != '\0')
            return -2;
        size_t data = (name + namesize + 3) & ~(size_t)3;
        if (data > len || filesize > len - data)
            return -2;
        if (!strcmp(a + name, "TRAILER!!!"))
            return n;
        if ((mode & 0170000) == 0100000) { /* regular file */
            struct cpio_file f = {a + name, a + data, filesize};
            fn(&f, ctx);
            n++;
        }
        off = (data + filesize + 3) & ~(size_t)3;
    }
}

struct find_ctx {
    const char *name;
    struct cpio_file *out;
    int found;
};

static void match(const struct cpio_file *f, void *ctx)
{
    struct find_ctx *c = ctx;
    const char *n = f->name;
    if (n[0] == '.' && n[1] == '/')
        n += 2;
    if (!c->found && !strcmp(n, c->name)) {
        *c->out = *f;
        c->found = 1;
    }
}

/* Any context; see cpio.h. */
int cpio_find(const void *archive, size_t len, const char *name, struct cpio_file *f)
{
    struct find_ctx c = {name, f, 0};
    int r = cpio_each(archive, len, match, &c);
    if (r < 0)
        return r;
    return c.found ? 0 : -1;
}
