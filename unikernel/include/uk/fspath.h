/*
 * fspath.h: the canonical form of a path in a job's file tree (kernel/files.h), shared by
 * the application runtime (which makes it), the kernel (which checks it again on its own
 * copy) and the host's qemu/ukfiles (which checks what a guest sent before it writes a
 * file). Header-only and freestanding, so host tools and fuzz targets compile the same
 * rules.
 *
 * Canonical: relative to the job's root, which is also every rank's working directory;
 * components joined by one '/'; no leading or trailing '/'; no "." or ".." component; ""
 * is the root itself. Such a path never leaves the tree, which is what lets the host
 * write it under its output directory.
 */
#ifndef UK_FSPATH_H
#define UK_FSPATH_H
#include <stddef.h>

#define FS_PATH_MAX 256 /* bytes of a canonical path, its NUL included */

/* Any context: `in` (absolute, or relative to the root) in canonical form into
 * out[FS_PATH_MAX]. ".." at the root stays at the root, as "/.." does in POSIX. 0, or -1
 * if the result does not fit or `in` is empty (POSIX: ENOENT for ""). */
static inline int fs_path_norm(const char *in, char out[FS_PATH_MAX])
{
    size_t n = 0;
    if (!*in)
        return -1;
    while (*in) {
        while (*in == '/')
            in++;
        const char *c = in;
        while (*in && *in != '/')
            in++;
        size_t len = (size_t)(in - c);
        if (len == 0 || (len == 1 && c[0] == '.'))
            continue;
        if (len == 2 && c[0] == '.' && c[1] == '.') {
            while (n > 0 && out[n - 1] != '/')
                n--;
            if (n > 0)
                n--; /* the '/' before the dropped component */
            continue;
        }
        if (n + (n > 0) + len >= FS_PATH_MAX)
            return -1;
        if (n > 0)
            out[n++] = '/';
        for (size_t i = 0; i < len; i++)
            out[n++] = c[i];
    }
    out[n] = 0;
    return 0;
}

/* Any context: are the first bytes of p, up to its NUL within `max` bytes, a canonical
 * path (what fs_path_norm makes)? 0 also when there is no NUL within max. */
static inline int fs_path_canonical(const char *p, size_t max)
{
    size_t i = 0, start = 0;
    for (;; i++) {
        if (i >= max || i >= FS_PATH_MAX)
            return 0;
        if (p[i] != '/' && p[i] != 0)
            continue;
        size_t len = i - start;
        if (len == 0)
            return p[i] == 0 && i == 0; /* only the root is empty */
        if ((len == 1 && p[start] == '.') || (len == 2 && p[start] == '.' && p[start + 1] == '.'))
            return 0;
        if (p[i] == 0)
            return 1;
        start = i + 1;
    }
}

#endif
