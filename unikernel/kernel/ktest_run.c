/* ktest_run.c: see ktest_run.h. The tests are the .ktests records the linker gathers. */
#include "kernel/ktest_run.h"
#include "kernel/bootinfo.h"
#include "uk/ktest.h"
#include "uk/console.h"

extern const struct ktest __ktests_start[], __ktests_end[];

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* Boot CPU, task context. */
int ktest_run_from_cmdline(void)
{
    char name[64], args[256] = "";
    if (!cmdline_get("test", name, sizeof name))
        return 0;
    cmdline_get("targs", args, sizeof args);
    for (const struct ktest *t = __ktests_start; t < __ktests_end; t++) {
        if (streq(t->name, name)) {
            kprintf("ktest %s: start\n", name);
            int rc = t->fn(args);
            kprintf("ktest %s: exit %d\n", name, rc);
            return rc;
        }
    }
    kprintf("ktest: no test named '%s'; this image has:", name);
    for (const struct ktest *t = __ktests_start; t < __ktests_end; t++)
        kprintf(" %s", t->name);
    kprintf("\n");
    return 2;
}
