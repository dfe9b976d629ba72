/*
 * mpe_test.c: the MPI engine's point-to-point paths on simulated nodes (mpe_host_plat.h):
 * intra-node by address (posted before/after, buffered eager, rendezvous by address,
 * synchronous sends), and inter-node over the byte-stream protocol with every size class
 * (inline, slot, rendezvous), the receive posted before, after or while the payload
 * streams, through pipes that split the stream everywhere (1-byte and random chunks, a
 * send buffer of a few bytes). Every payload is checked byte for byte.
 */
#include "mpe_test_util.h"

/* ---- intra-node ---- */

/* mpe_copy, every size around its inline cases (1-3, 4-7, 8-16 bytes, then memcpy), at
 * every alignment: exactly the n bytes, none before or after. */
UT_TEST(mpe_copy_sizes)
{
    uint8_t src[64], dst[64];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    for (size_t n = 0; n <= 40; n++)
        for (size_t off = 0; off < 8; off++) {
            memset(dst, 0xee, sizeof dst);
            mpe_copy(dst + off, src + 8 - off, n);
            for (size_t i = 0; i < sizeof dst; i++) {
                int in = i >= off && i < off + n;
                UT_EQ(dst[i], in ? src[8 - off + (i - off)] : 0xee);
            }
        }
}

UT_TEST(mpe_local_posted_first)
{
    mt_world(1, 3, 0);
    struct mpe_req s, r;
    uint8_t *src = mt_buf(1000, 1), *dst = mt_buf(1000, 0);
    mt_irecv(2, &r, dst, 1000, 0, 5);
    UT_ASSERT(!mt_done(&r));
    mt_isend(0, &s, src, 1000, 2, 5, 0);
    /* The sender found the receive and copied it: both complete inside isend. */
    UT_ASSERT(mt_done(&s) && mt_done(&r));
    UT_EQ(r.err, MPE_OK);
    UT_EQ(r.count, 1000);
    UT_EQ(r.src, 0);
    UT_EQ(r.tag, 5);
    UT_EQ(mt_diff(dst, 1000, 1), -1);
    uint64_t st[8];
    mt_stats(0, st);
    UT_EQ(st[0], 1); /* local_sends */
    UT_EQ(st[1], 0); /* buffered */
    free(src);
    free(dst);
}

/* Small unexpected messages are copied so that the send completes at once; the sender may
 * reuse its buffer before the receive is posted. */
UT_TEST(mpe_local_eager_buffered)
{
    static const size_t sizes[] = {0, 1, MPE_NET_INLINE, MPE_NET_INLINE + 1, MPE_LOCAL_EAGER};
    mt_world(1, 2, 0);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t len = sizes[i];
        struct mpe_req s, r;
        uint8_t *src = mt_buf(len, (unsigned)i), *dst = mt_buf(len, 99);
        mt_isend(1, &s, src, len, 0, 3, 0);
        UT_ASSERT(mt_done(&s));
        memset(src, 0xee, len);
        mt_irecv(0, &r, dst, len, 1, 3);
        UT_ASSERT(mt_done(&r));
        UT_EQ(r.count, len);
        UT_EQ(mt_diff(dst, len, (unsigned)i), -1);
        free(src);
        free(dst);
    }
    uint64_t st[8];
    mt_stats(1, st);
    UT_EQ(st[1], 5); /* buffered */
    /* Descriptors and copies go back when received: a steady stream allocates nothing. */
    size_t before = host_allocs();
    for (int i = 0; i < 100; i++) {
        struct mpe_req s, r;
        uint8_t src[1000] = {0}, dst[1000];
        mt_isend(1, &s, src, sizeof src, 0, 3, 0);
        mt_irecv(0, &r, dst, sizeof dst, 1, 3);
        UT_ASSERT(mt_done(&s) && mt_done(&r));
    }
    UT_EQ(host_allocs(), before);
}

/* Larger ones wait by address and are copied once, by the receiver. */
UT_TEST(mpe_local_rendezvous_by_address)
{
    size_t len = MPE_LOCAL_EAGER + 1;
    mt_world(1, 2, 0);
    struct mpe_req s, r;
    uint8_t *src = mt_buf(len, 4), *dst = mt_buf(len, 0);
    mt_isend(0, &s, src, len, 1, 0, 0);
    UT_ASSERT(!mt_done(&s));
    struct mpe_status ps;
    host_as_rank(1);
    UT_EQ(mpe_ops.iprobe(MT_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG, &ps), 1);
    UT_EQ(ps.src, 0);
    UT_EQ(ps.len, len);
    mt_irecv(1, &r, dst, len, MPE_ANY_SOURCE, 0);
    UT_ASSERT(mt_done(&s) && mt_done(&r));
    UT_EQ(mt_diff(dst, len, 4), -1);
    uint64_t st[8];
    mt_stats(0, st);
    UT_EQ(st[1], 0);
    free(src);
    free(dst);
}

UT_TEST(mpe_local_ssend_waits_for_match)
{
    mt_world(1, 2, 0);
    struct mpe_req s, r;
    uint8_t a = 42, b = 0;
    mt_isend(0, &s, &a, 1, 1, 9, MPE_SYNC);
    UT_ASSERT(!mt_done(&s)); /* small, but synchronous: not buffered */
    mt_irecv(1, &r, &b, 1, 0, 8);
    UT_ASSERT(!mt_done(&s) && !mt_done(&r)); /* other tag */
    struct mpe_req r2;
    mt_irecv(1, &r2, &b, 1, 0, 9);
    UT_ASSERT(mt_done(&s) && mt_done(&r2));
    UT_EQ(b, 42);
    host_as_rank(1);
    UT_EQ(mpe_ops.cancel(&r), 1);
    UT_ASSERT(mt_done(&r) && r.cancelled);
    UT_EQ(mpe_ops.cancel(&r), 0);
}

UT_TEST(mpe_local_truncate)
{
    mt_world(1, 2, 0);
    struct mpe_req s, r;
    uint8_t *src = mt_buf(500, 3), dst[20];
    memset(dst, 0xcc, sizeof dst);
    mt_isend(0, &s, src, 500, 1, 1, 0);
    mt_irecv(1, &r, dst, 10, 0, 1);
    UT_ASSERT(mt_done(&r));
    UT_EQ(r.err, MPE_ETRUNCATE);
    UT_EQ(r.count, 10);
    UT_EQ(mt_diff(dst, 10, 3), -1);
    UT_EQ(mt_diff_fill(dst + 10, 10, 0xcc), -1);
    free(src);
}

/* ---- inter-node ---- */

static const size_t net_sizes[] = {
    0, 1, MPE_NET_INLINE, MPE_NET_INLINE + 1, MPE_NET_EAGER, MPE_NET_EAGER + 1, 1u << 20,
};

/* Transports: roomy; 1-byte chunks through a 7-byte send buffer; random chunks. */
static const struct host_cfg net_cfgs[] = {
    {.cap = 0}, /* 64 KiB, everything at once */
    {.cap = 7, .chunk = 1},
    {.cap = 13, .chunk = 64, .random = 1, .seed = 5},
    {.cap = 4096, .chunk = 3000, .random = 1, .seed = 9},
};

enum { POST_BEFORE, POST_AFTER, POST_DURING };

/* Rank 0 (node 0) and rank 1 (node 1) send each other `len` bytes at once; each posts
 * its receive before the send, after everything arrived, or a few chunks in. */
static void exchange(size_t len, int when, unsigned seed)
{
    struct mpe_req s[2], r[2];
    uint8_t *src[2], *dst[2];
    for (int i = 0; i < 2; i++) {
        src[i] = mt_buf(len, seed + (unsigned)i);
        dst[i] = mt_buf(len, 200);
        if (when == POST_BEFORE)
            mt_irecv(i, &r[i], dst[i], len, 1 - i, 11);
    }
    for (int i = 0; i < 2; i++)
        mt_isend(i, &s[i], src[i], len, 1 - i, 11, 0);
    if (when == POST_AFTER)
        host_pump_all();
    for (int k = 0; when == POST_DURING && k < 5; k++)
        host_pump();
    for (int i = 0; when != POST_BEFORE && i < 2; i++)
        mt_irecv(i, &r[i], dst[i], len, 1 - i, 11);
    for (int i = 0; i < 2; i++) {
        mt_wait(i, &r[i]);
        mt_wait(i, &s[i]);
        UT_EQ(r[i].err, MPE_OK);
        UT_EQ(r[i].count, len);
        UT_EQ(r[i].src, 1 - i);
        UT_EQ(r[i].tag, 11);
        UT_EQ(mt_diff(dst[i], len, seed + 1 - (unsigned)i), -1);
        free(src[i]);
        free(dst[i]);
    }
}

UT_TEST(mpe_net_sizes_and_splits)
{
    for (size_t c = 0; c < sizeof net_cfgs / sizeof net_cfgs[0]; c++) {
        mt_world(2, 2, &net_cfgs[c]);
        for (size_t i = 0; i < sizeof net_sizes / sizeof net_sizes[0]; i++)
            for (int when = POST_BEFORE; when <= POST_DURING; when++) {
                /* 1 MiB a byte at a time takes seconds: once is enough. */
                if (net_sizes[i] > MPE_NET_EAGER + 1 && net_cfgs[c].chunk == 1 && when)
                    continue;
                exchange(net_sizes[i], when, (unsigned)(i * 3 + (size_t)when));
            }
        /* Everything the receivers took went back as descriptors; slots too. */
        for (int n = 0; n < 2; n++)
            UT_EQ(host_conn(n, 1 - n)->nfree_slots, MPE_NET_SLOTS);
    }
}

/* A message too long for its receive: status says so, only `capacity` bytes are stored,
 * the rest is skipped in the stream, and the next message is intact. */
static void truncate_one(size_t len, size_t cap, int when)
{
    struct mpe_req s, r, s2, r2;
    uint8_t *src = mt_buf(len, 5), *dst = malloc(cap + 16);
    uint8_t *next = mt_buf(300, 6), *dst2 = mt_buf(300, 0);
    memset(dst, 0xcc, cap + 16);
    if (when == POST_BEFORE)
        mt_irecv(1, &r, dst, cap, 0, 2);
    mt_isend(0, &s, src, len, 1, 2, 0);
    mt_isend(0, &s2, next, 300, 1, 2, 0);
    if (when == POST_AFTER)
        host_pump_all();
    if (when != POST_BEFORE)
        mt_irecv(1, &r, dst, cap, 0, 2);
    mt_irecv(1, &r2, dst2, 300, 0, 2);
    mt_wait(1, &r);
    mt_wait(1, &r2);
    mt_wait(0, &s);
    mt_wait(0, &s2);
    UT_EQ(r.err, MPE_ETRUNCATE);
    UT_EQ(r.count, cap);
    UT_EQ(s.err, MPE_OK);
    UT_EQ(mt_diff(dst, cap, 5), -1);
    UT_EQ(mt_diff_fill(dst + cap, 16, 0xcc), -1);
    UT_EQ(r2.err, MPE_OK);
    UT_EQ(r2.count, 300);
    UT_EQ(mt_diff(dst2, 300, 6), -1);
    free(src);
    free(dst);
    free(next);
    free(dst2);
}

UT_TEST(mpe_net_truncate)
{
    static const size_t cases[][2] = {
        {200, 10}, {MPE_NET_EAGER, 100}, {100000, 5000}, {100000, 0}, {1, 0},
    };
    struct host_cfg cfg = {.cap = 29, .chunk = 17, .random = 1, .seed = 3};
    mt_world(2, 2, &cfg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int when = POST_BEFORE; when <= POST_AFTER; when++)
            truncate_one(cases[i][0], cases[i][1], when);
}

UT_TEST(mpe_net_ssend_and_probe)
{
    mt_world(2, 2, 0);
    struct mpe_req s, r, s2;
    uint32_t v = 0xdeadbeef, got = 0;
    unsigned wakes = host_wakes(1);
    mt_isend(0, &s, &v, 4, 1, 4, MPE_SYNC);
    host_pump_all();
    UT_ASSERT(!mt_done(&s));     /* an RTS waits for the receive */
    UT_EQ(host_wakes(1), wakes); /* rank 1 polls: the arrival costs no wake-up (lf_nap) */
    host_as_rank(1);
    mpe_ops.block(); /* announces: returns at once, may sleep from now on */
    mt_isend(0, &s2, &v, 4, 1, 5, MPE_SYNC);
    host_pump_all();
    UT_ASSERT(host_wakes(1) > wakes); /* the arrival woke the announced rank (to probe) */
    struct mpe_status ps;
    host_as_rank(1);
    UT_EQ(mpe_ops.iprobe(MT_CTX, 0, MPE_ANY_TAG, &ps), 1);
    UT_EQ(ps.tag, 4);
    UT_EQ(ps.len, 4);
    UT_EQ(mpe_ops.iprobe(MT_CTX + 1, 0, MPE_ANY_TAG, &ps), 0);
    mt_irecv(1, &r, &got, 4, 0, 4);
    mt_wait(0, &s);
    mt_wait(1, &r);
    UT_EQ(got, 0xdeadbeef);
    mt_irecv(1, &r, &got, 4, 0, 5);
    mt_wait(0, &s2);
    mt_wait(1, &r);
}

/* Three nodes, uneven (3 + 2 + 2 ranks): wildcard receives on node 0 take messages from
 * both other nodes, each source's messages in its order. */
UT_TEST(mpe_net_wildcard_two_source_nodes)
{
    struct host_cfg cfg = {.cap = 64, .chunk = 10, .random = 1, .seed = 77};
    mt_world(3, 7, &cfg);
    UT_EQ(host_node_of(2), 0);
    UT_EQ(host_node_of(3), 1);
    UT_EQ(host_node_of(5), 2);
    enum { K = 6 };
    struct mpe_req r[2 * K], s[2 * K];
    uint8_t *src[2 * K], *dst[2 * K];
    for (int i = 0; i < 2 * K; i++) {
        dst[i] = mt_buf(MPE_NET_EAGER + 10, 0);
        mt_irecv(1, &r[i], dst[i], MPE_NET_EAGER + 10, MPE_ANY_SOURCE, MPE_ANY_TAG);
    }
    for (int k = 0; k < K; k++)
        for (int from = 4; from <= 6; from += 2) {
            int i = k * 2 + (from == 6);
            size_t len = (size_t)k * 6000; /* up to 30000: inline, slots */
            src[i] = mt_buf(len, (unsigned)i);
            mt_isend(from, &s[i], src[i], len, 1, k, 0);
        }
    int next[2] = {0, 0};
    for (int i = 0; i < 2 * K; i++) {
        mt_wait(1, &r[i]);
        UT_ASSERT(r[i].src == 4 || r[i].src == 6);
        int f = r[i].src == 6, k = next[f]++;
        UT_EQ(r[i].tag, k);
        UT_EQ(r[i].count, (size_t)k * 6000);
        UT_EQ(mt_diff(dst[i], r[i].count, (unsigned)(k * 2 + f)), -1);
    }
    for (int i = 0; i < 2 * K; i++) {
        mt_wait(4 + 2 * (i & 1), &s[i]);
        free(src[i]);
        free(dst[i]);
    }
}

/* A NIC interrupt that arrives while the receiving rank holds its engine lock leaves the
 * message in the lock-free inbox; the rank matches it when it unlocks. */
UT_TEST(mpe_net_arrivals_during_engine_lock)
{
    static const size_t sizes[] = {3, 2000, MPE_NET_EAGER, 70000, 0};
    enum { N = sizeof sizes / sizeof sizes[0] };
    struct host_cfg cfg = {.cap = 1000, .chunk = 300, .random = 1, .seed = 8};
    mt_world(2, 2, &cfg);
    struct mpe_req s[N], r[N];
    uint8_t *src[N], *dst[N];
    for (int i = 0; i < N; i++) {
        src[i] = mt_buf(sizes[i], (unsigned)i + 40);
        dst[i] = mt_buf(sizes[i], 0);
        if (i < 3)
            mt_irecv(1, &r[i], dst[i], sizes[i], 0, 1);
        mt_isend(0, &s[i], src[i], sizes[i], 1, 1, 0);
    }
    struct match_rank *mr = &host_node(1)->ranks[0].mr;
    match_rank_lock(mr);
    for (int k = 0; k < 12; k++) /* some arrive whole, the last one part way */
        host_pump();
    UT_ASSERT(!lf_empty(&mr->box.inbox));
    match_rank_unlock(mr);
    UT_ASSERT(mr->deferred > 0);
    for (int i = 3; i < N; i++)
        mt_irecv(1, &r[i], dst[i], sizes[i], 0, 1);
    for (int i = 0; i < N; i++) {
        mt_wait(1, &r[i]);
        mt_wait(0, &s[i]);
        UT_EQ(r[i].count, sizes[i]);
        UT_EQ(mt_diff(dst[i], sizes[i], (unsigned)i + 40), -1);
        free(src[i]);
        free(dst[i]);
    }
}

/* The connection breaks under a send: the job ends, naming the peer; after both sides
 * said BYE at the end of the job the same is not an error, and later sends say EPEER. */
static void send_one(void *arg)
{
    static struct mpe_req s;
    static uint8_t b[8];
    host_as_rank(0);
    *(int *)arg = mpe_ops.isend(&s, b, sizeof b, 1, MT_CTX, 0, 0, 0);
}

UT_TEST(mpe_net_transport_failure)
{
    int rc = 0;
    mt_world(2, 2, 0);
    host_pipe_break(0, 1);
    UT_EQ(host_catch(send_one, &rc), 1);
    UT_ASSERT(strstr(host_fatal_msg, "node 0: connection to node 1 failed (send failed)"));

    mt_world(2, 2, 0);
    host_as_rank(1);
    mpe_node_finish(host_node(1));
    host_pump_all();
    UT_ASSERT(mpe_conn_done(host_conn(0, 1)));
    mpe_node_finish(host_node(0));
    host_pipe_break(0, 1);
    UT_EQ(host_catch(send_one, &rc), 0);
    UT_EQ(host_catch(send_one, &rc), 0);
    UT_EQ(rc, -MPE_EPEER);
    host_world_destroy();
}

/* Zero-length messages with NULL buffers (MPI_Send(NULL, 0, ...) is legal), on every
 * path: local buffered and matched, inter-node direct, unexpected, and rendezvous. */
UT_TEST(mpe_null_buffers)
{
    mt_world(2, 4, 0);
    for (int to = 1; to <= 2; to++)
        for (int when = POST_BEFORE; when <= POST_AFTER; when++)
            for (int sync = 0; sync < 2; sync++) {
                struct mpe_req s, r;
                if (when == POST_BEFORE)
                    mt_irecv(to, &r, 0, 0, 0, 0);
                mt_isend(0, &s, 0, 0, to, 0, sync ? MPE_SYNC : 0);
                host_pump_all();
                if (when == POST_AFTER)
                    mt_irecv(to, &r, 0, 0, 0, 0);
                mt_wait(to, &r);
                mt_wait(0, &s);
                UT_EQ(r.count, 0);
                UT_EQ(r.err, MPE_OK);
            }
}

/* The host platform itself: a rank that waits for a message nobody sends fails the test
 * (here: is caught) instead of hanging. */
static jmp_buf deadlock_env;
static char deadlock_msg[200];

static void deadlock_hook(const char *msg) __attribute__((noreturn));
static void deadlock_hook(const char *msg)
{
    snprintf(deadlock_msg, sizeof deadlock_msg, "%s", msg);
    longjmp(deadlock_env, 1);
}

UT_TEST(mpe_host_detects_deadlock)
{
    static struct mpe_req r;
    static uint8_t b[4];
    mt_world(2, 2, 0);
    mt_irecv(1, &r, b, sizeof b, 0, 0);
    host_fail_hook = deadlock_hook;
    if (!setjmp(deadlock_env))
        mt_wait(1, &r);
    host_fail_hook = mt_host_failed;
    UT_ASSERT(strstr(deadlock_msg, "deadlock: rank 1 blocks"));
    host_world_destroy();
}
