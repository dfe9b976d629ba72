/* cpio.c: see cpio.h. Every field is checked against the archive's end before use (with
 * range.h, never by forming a sum that could wrap): the initrd comes from outside the
 * kernel. */
#include "kernel/cpio.h"
#include "kernel/range.h"
#include <string.h>

#define HDR        110 /* "070701" + 13 fields of 8 hex digits */
#define F_MODE     14  /* header offsets of the fields read */
#define F_FILESIZE 54
#define F_NAMESIZE 94
#define ALIGN      4 /* names and data start on 4-byte boundaries */
#define S_IFMT     0170000
#define S_IFREG    0100000

/* Any context. `end` rounded up to ALIGN, if that padding lies inside the archive's `len`
 * bytes: 0 and *next set, or -1. */
static int pad(size_t end, size_t len, size_t *next)
{
    size_t n = (ALIGN - end % ALIGN) % ALIGN;
    if (!range_ok(end, n, len))
        return -1;
    *next = end + n;
    return 0;
}

/* Any context. The 8 hex digits at p into *v: 0, or -1 if one is not a hex digit. */
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
            hex8(a + off + F_MODE, &mode) || hex8(a + off + F_FILESIZE, &filesize) ||
            hex8(a + off + F_NAMESIZE, &namesize))
            return -2;
        size_t name = off + HDR, data;
        if (namesize == 0 || !range_ok(name, namesize, len) || a[name + namesize - 1] != '\0' ||
            pad(name + namesize, len, &data) || !range_ok(data, filesize, len))
            return -2;
        if (!strcmp(a + name, "TRAILER!!!"))
            return n;
        if ((mode & S_IFMT) == S_IFREG) {
            struct cpio_file f = {a + name, a + data, filesize};
            fn(&f, ctx);
            n++;
        }
        /* Another header follows (the trailer's at least), after the padding. */
        if (pad(data + filesize, len, &off))
            return -2;
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
