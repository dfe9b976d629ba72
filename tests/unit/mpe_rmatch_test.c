/*
 * mpe_rmatch_test.c: the engine's seam with a transport that matches remote messages
 * itself (mpe_transport.h, struct mpe_rmatch; Linux's /dev/o2g in mpi/linux/mlx_o2g.c).
 *
 * The fake transport below takes the even contexts, as o2g does, and plays the other
 * thread of a real one: whenever the engine consults it, it first hands every byte in
 * flight to the engine (host_pump_all), as o2g's network thread may feed a message of an
 * engine context at any moment. It keeps the receives posted to it, and fails the test if
 * the engine asks it to let go of one it never had.
 */
#include "mpe_test_util.h"

#define RM_ENGINE_CTX MT_CTX       /* odd: the engine's alone */
#define RM_TAKEN_CTX  (MT_CTX + 1) /* even: the fake transport's */
#define RM_MAX        8

static struct {
    struct mpe_req *posted[RM_MAX];
    int nposted, posts, claims;
} fake;

/* Any context: contexts the fake matches. */
static int fake_takes(uint32_t ctx)
{
    host_pump_all(); /* the transport's thread feeds the engine meanwhile */
    return !(ctx & 1);
}

/* The rank's task: r is the fake's too now. */
static void fake_post(struct mpe_req *r)
{
    UT_ASSERT(!(r->m.key.comm & 1));
    UT_ASSERT(fake.nposted < RM_MAX);
    fake.posted[fake.nposted++] = r;
    fake.posts++;
    host_pump_all();
}

/* Under the rank's engine lock: a local message met r; the fake never matches one
 * itself, so it always lets go. */
static int fake_claim(struct mpe_req *r)
{
    fake.claims++;
    for (int i = 0; i < fake.nposted; i++)
        if (fake.posted[i] == r) {
            fake.posted[i] = fake.posted[--fake.nposted];
            return 1;
        }
    ut_fail(__FILE__, __LINE__, "the engine asked the transport for a receive it never had");
    return 0;
}

static int fake_probe(uint32_t ctx, int src, int tag, struct mpe_status *st)
{
    (void)ctx, (void)src, (void)tag, (void)st;
    return 0;
}

static const struct mpe_rmatch fake_rmatch = {.takes = fake_takes,
                                              .post = fake_post,
                                              .claim = fake_claim,
                                              .cancel = fake_claim,
                                              .probe = fake_probe};

/* Two nodes of one rank; node 1's transport is the fake. */
static void rm_world(void)
{
    memset(&fake, 0, sizeof fake);
    mt_world(2, 2, 0);
    mpe_node_set_rmatch(host_node(1), &fake_rmatch);
}

/* A message of an engine context fed while the receive is being posted meets it in the
 * engine, which never hands that receive to the transport. Before the fix, r->remote was
 * set during the post: the arrival asked the transport for r, took its "no" for "it took
 * a message", and the receive never completed (the o2g commgroup hang). */
UT_TEST(mpe_rmatch_engine_ctx_fed_during_post)
{
    static const size_t sizes[] = {4, MPE_NET_EAGER + 1};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        rm_world();
        size_t len = sizes[k];
        uint8_t *src = mt_buf(len, 3), *dst = mt_buf(len, 0);
        struct mpe_req s, r;
        host_as_rank(0);
        UT_EQ(mpe_ops.isend(&s, src, len, 1, RM_ENGINE_CTX, 0, 7, 0), 0);
        host_as_rank(1);
        UT_EQ(mpe_ops.irecv(&r, dst, len, RM_ENGINE_CTX, 0, 7), 0);
        mt_wait(1, &r);
        mt_wait(0, &s);
        UT_EQ(r.err, MPE_OK);
        UT_EQ(r.count, len);
        UT_EQ(mt_diff(dst, len, 3), -1);
        UT_EQ(fake.posts, 0);
        UT_EQ(fake.claims, 0);
        free(src);
        free(dst);
        host_world_destroy();
    }
}

/* A receive of a context the transport takes is posted to it; a message to oneself
 * then meets it in the engine, which asks the transport to let go first. */
UT_TEST(mpe_rmatch_taken_ctx_claimed_by_local_message)
{
    rm_world();
    int in = 0, out = 42;
    struct mpe_req s, r;
    host_as_rank(1);
    UT_EQ(mpe_ops.irecv(&r, &in, sizeof in, RM_TAKEN_CTX, 1, 5), 0);
    UT_EQ(fake.posts, 1);
    UT_EQ(mpe_ops.isend(&s, &out, sizeof out, 1, RM_TAKEN_CTX, 1, 5, 0), 0);
    mt_wait(1, &r);
    mt_wait(1, &s);
    UT_EQ(fake.claims, 1);
    UT_EQ(fake.nposted, 0);
    UT_EQ(r.err, MPE_OK);
    UT_EQ(in, 42);
    host_world_destroy();
}
