/* ktest_apps.h: the application images of tests/uk/apps/ built into the test kernel
 * (build/uk/apps_blob.S, generated), for in-kernel tests that spawn tasks themselves. */
#ifndef KTEST_APPS_H
#define KTEST_APPS_H
#include <stddef.h>

struct ktest_app {
    const char *name;
    const char *start, *end;
};

extern const struct ktest_app ktest_apps[]; /* ends with a NULL name */

static inline const void *ktest_app(const char *name, size_t *len)
{
    for (const struct ktest_app *a = ktest_apps; a->name; a++) {
        const char *p = a->name, *q = name;
        while (*p && *p == *q)
            p++, q++;
        if (*p == *q) {
            *len = (size_t)(a->end - a->start);
            return a->start;
        }
    }
    return 0;
}

#endif
