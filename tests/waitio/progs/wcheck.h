/*
 * wcheck.h: check counting for the WaitIO-MPI test programs (tests/waitio/wmpi.sh reads
 * their output). Each process prints at most WC_MAX_SHOWN "FAIL ..." lines and one closing
 * "RESULT <prog> pb=P rank=R pass=N fail=M" line; it exits non-zero when a check failed.
 */
#ifndef WCHECK_H
#define WCHECK_H

#include <stdio.h>

#define WC_MAX_SHOWN 20

static int wc_pass, wc_fail, wc_pb = -1, wc_rank = -1;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            wc_pass++;                                                                             \
        } else if (++wc_fail <= WC_MAX_SHOWN) {                                                    \
            printf("FAIL pb=%d rank=%d %s:%d: ", wc_pb, wc_rank, __FILE__, __LINE__);              \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fflush(stdout);                                                                        \
        }                                                                                          \
    } while (0)

/* End of main: the closing line; the exit status for main to return. */
static inline int wc_done(const char *prog)
{
    printf("RESULT %s pb=%d rank=%d pass=%d fail=%d\n", prog, wc_pb, wc_rank, wc_pass, wc_fail);
    fflush(stdout);
    return wc_fail != 0;
}

#endif /* WCHECK_H */
