/* ut_main.c: runs every registered unit test; see ut.h. */
#include "ut.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static struct ut_test *head, **tail = &head;
static jmp_buf ut_env;

void ut_register(struct ut_test *t)
{
    *tail = t; /* keep registration (link) order: stable output */
    tail = &t->next;
}

void ut_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    longjmp(ut_env, 1);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    volatile int passed = 0, failed = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (struct ut_test *volatile t = head; t; t = t->next) {
        if (filter && !strstr(t->name, filter))
            continue;
        if (setjmp(ut_env) == 0) {
            t->fn();
            printf("PASS %s\n", t->name);
            passed++;
        } else {
            printf("FAIL %s\n", t->name);
            failed++;
        }
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
