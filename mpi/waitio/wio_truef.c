/*
 * wio_truef.c: truef, the filter that selects every process (spec 3.3). Weak, so that a
 * program defining its own truef (as the published test.c does) still links.
 */
#include "waitio.h"

/* Task context (a filter, called by group creation). */
__attribute__((weak)) int truef(int pbid, int n)
{
    (void)pbid;
    (void)n;
    return 1;
}
