/*
 * mpe_host_snap_test.c: host_snapshot/host_restore (mpe_host_plat.c), the reset the engine's
 * receive-path fuzz target runs before every input: a world put back runs the same steps
 * to the same state, blocks allocated since are freed, a block freed since comes back at
 * its address with its bytes.
 *
 * The scene: ranks 0, 1 on node 0, ranks 2, 3 on node 1. Before the snapshot rank 0 sends
 * rank 1 a message nobody receives yet (its bytes buffered in a block of the engine's);
 * each round rank 1 receives it (the block is freed) and rank 2 sends rank 0 a message
 * across the nodes.
 */
#include "mpe_test_util.h"

#define LOCAL_LEN (4 * MPE_NET_INLINE) /* buffered in a block of its own */
#define NET_LEN   5000

struct round {
    uint64_t st0[MPE_ST_COUNT], st1[MPE_ST_COUNT];
    size_t allocs;
};

static uint8_t *lbuf, *nbuf, *lrecv, *nrecv;

/* One round of the scene (file comment), checked on the data; the counters after it. */
static void one_round(struct round *out)
{
    struct mpe_req r1, s2, r0;
    memset(&r1, 0, sizeof r1);
    memset(&s2, 0, sizeof s2);
    memset(&r0, 0, sizeof r0);
    memset(lrecv, 0, LOCAL_LEN);
    memset(nrecv, 0, NET_LEN);
    mt_irecv(1, &r1, lrecv, LOCAL_LEN, 0, 5);
    mt_irecv(0, &r0, nrecv, NET_LEN, 2, 6);
    mt_isend(2, &s2, nbuf, NET_LEN, 0, 6, 0);
    mt_wait(1, &r1);
    mt_wait(0, &r0);
    mt_wait(2, &s2);
    UT_EQ(mt_diff(lrecv, LOCAL_LEN, 3), -1);
    UT_EQ(mt_diff(nrecv, NET_LEN, 4), -1);
    mt_stats(0, out->st0);
    mt_stats(1, out->st1);
    out->allocs = host_allocs();
}

UT_TEST(mpe_host_snapshot_restore)
{
    static struct mpe_req s0;
    struct round a, b;
    lbuf = mt_buf(LOCAL_LEN, 3);
    nbuf = mt_buf(NET_LEN, 4);
    lrecv = malloc(LOCAL_LEN);
    nrecv = malloc(NET_LEN);
    mt_world(2, 4, 0);
    memset(&s0, 0, sizeof s0);
    mt_isend(0, &s0, lbuf, LOCAL_LEN, 1, 5, 0); /* buffered: complete at once */
    UT_ASSERT(mt_done(&s0));
    size_t before = host_allocs();
    UT_EQ(host_snapshot(), 0);
    one_round(&a);
    host_restore();
    UT_EQ(host_allocs(), before);
    one_round(&b); /* the buffered message is back: received again */
    UT_ASSERT(!memcmp(a.st0, b.st0, sizeof a.st0) && !memcmp(a.st1, b.st1, sizeof a.st1));
    UT_EQ(b.allocs, a.allocs);
    host_restore();
    UT_EQ(host_allocs(), before);
    host_world_destroy();
    UT_EQ(host_allocs(), 0);
    free(lbuf);
    free(nbuf);
    free(lrecv);
    free(nrecv);
}
