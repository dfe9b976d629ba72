/*
 * mpe_test_util.h: helpers shared by the engine's host tests (mpe_*_test.c): a simulated
 * job (mpe_host_plat.h), sends and receives made "as" a rank, and payload patterns that
 * make every byte checkable.
 */
#ifndef TESTS_MPE_TEST_UTIL_H
#define TESTS_MPE_TEST_UTIL_H
#include "mpe_host_plat.h"
#include "mpe_internal.h" /* the tests look inside the engine */
#include "mpe_net.h"
#include "ut.h"
#include <stdlib.h>
#include <string.h>

#define MT_CTX 7 /* the communicator every test uses; sources are world ranks */

/* A failed check of the host platform (deadlock, unexpected plat_fatal, a context rule)
 * fails the running test. */
static inline void mt_host_failed(const char *msg) __attribute__((noreturn));
static inline void mt_host_failed(const char *msg)
{
    ut_fail("mpe_host_plat", 0, "%s", msg);
}

/* A fresh job with HELLOs exchanged and every rank past mpe_ops.init. */
static inline void mt_world(int nodes, int size, const struct host_cfg *cfg)
{
    host_fail_hook = mt_host_failed;
    UT_EQ(host_world_create(nodes, size, cfg), 0);
    host_init_all();
}

static inline uint8_t mt_pat(size_t i, unsigned seed)
{
    return (uint8_t)(i * 131 + (i >> 9) * 7 + seed * 29 + 1);
}

/* len bytes of pattern `seed` (at least 1 byte allocated: a valid pointer for len 0). */
static inline uint8_t *mt_buf(size_t len, unsigned seed)
{
    uint8_t *b = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
        b[i] = mt_pat(i, seed);
    return b;
}

/* Index of the first byte of b[0..len) that is not pattern `seed`, or -1. */
static inline long mt_diff(const uint8_t *b, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != mt_pat(i, seed))
            return (long)i;
    return -1;
}

/* Index of the first byte of b[0..len) that is not `v`, or -1. */
static inline long mt_diff_fill(const uint8_t *b, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != v)
            return (long)i;
    return -1;
}

static inline void mt_isend(int from, struct mpe_req *r, const void *buf, size_t len, int to,
                            int tag, int flags)
{
    host_as_rank(from);
    UT_EQ(mpe_ops.isend(r, buf, len, to, MT_CTX, from, tag, flags), 0);
}

static inline void mt_irecv(int at, struct mpe_req *r, void *buf, size_t len, int src, int tag)
{
    host_as_rank(at);
    UT_EQ(mpe_ops.irecv(r, buf, len, MT_CTX, src, tag), 0);
}

static inline int mt_done(const struct mpe_req *r)
{
    return (int)__atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

/* Rank `rank` waits for r as an MPI library would: block, re-check. */
static inline void mt_wait(int rank, struct mpe_req *r)
{
    host_as_rank(rank);
    while (!mt_done(r))
        mpe_ops.block();
}

/* Rank `rank`'s counters (mpe_ops.stats). */
static inline void mt_stats(int rank, uint64_t out[8])
{
    host_as_rank(rank);
    mpe_ops.stats(out);
}

#endif
