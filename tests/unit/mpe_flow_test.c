/*
 * mpe_flow_test.c: the inter-node protocol's ordering and flow control on simulated nodes:
 * MPI's non-overtaking rule over a mix of eager, rendezvous and synchronous messages;
 * descriptor credits (a sender never overruns a receiver that posts nothing; the engine
 * holds the rest); eager-slot credits (without them medium messages go as RTS); and
 * rendezvous handles that outlive 16-bit generations.
 */
#include "mpe_test_util.h"

static size_t queued(const struct mpe_reqq *q)
{
    size_t n = 0;
    for (const struct mpe_req *r = q->head; r; r = r->next)
        n++;
    return n;
}

/* One source, one destination, one tag: every size class and synchronous sends mixed;
 * half the receives posted before, half after the messages arrived, some with ANY_TAG. */
UT_TEST(mpe_net_non_overtaking)
{
    static const size_t sizes[] = {0, 5, 256, 257, 4000, 32768, 32769, 70000};
    enum { N = 240 };
    struct host_cfg cfg = {.cap = 333, .chunk = 97, .random = 1, .seed = 21};
    mt_world(2, 4, &cfg);
    static struct mpe_req s[N], r[N];
    uint8_t *src[N], *dst[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        len[i] = sizes[i % 8];
        src[i] = mt_buf(len[i], (unsigned)i);
        dst[i] = mt_buf(70000, 0);
        if (i < N / 2)
            mt_irecv(3, &r[i], dst[i], 70000, 0, i % 3 ? 6 : MPE_ANY_TAG);
    }
    for (int i = 0; i < N; i++)
        mt_isend(0, &s[i], src[i], len[i], 3, 6, i % 7 == 0 ? MPE_SYNC : 0);
    host_pump_all();
    for (int i = N / 2; i < N; i++)
        mt_irecv(3, &r[i], dst[i], 70000, i % 2 ? 0 : MPE_ANY_SOURCE, 6);
    for (int i = 0; i < N; i++) {
        mt_wait(3, &r[i]);
        UT_EQ(r[i].err, MPE_OK);
        UT_EQ(r[i].count, len[i]);
        UT_EQ(mt_diff(dst[i], len[i], (unsigned)i), -1);
    }
    for (int i = 0; i < N; i++) {
        mt_wait(0, &s[i]);
        free(src[i]);
        free(dst[i]);
    }
}

/* More small messages than the receiver has descriptors, none of them received yet: the
 * sender stops at its credits (no "exceeded its descriptor credits" at the receiver) and
 * keeps the rest queued; posting the receives returns credits and everything arrives. */
UT_TEST(mpe_net_descriptor_credits)
{
    enum { N = MPE_NET_DESCS + 100 };
    struct host_cfg cfg = {.cap = 4096};
    mt_world(2, 2, &cfg);
    static struct mpe_req s[N], r[N];
    static uint32_t val[N], got[N];
    for (int i = 0; i < N; i++) {
        val[i] = (uint32_t)i * 2654435761u;
        mt_isend(0, &s[i], &val[i], 4, 1, 0, 0);
    }
    host_pump_all();
    struct mpe_conn *c = host_conn(0, 1);
    UT_EQ(c->credit_descs, 0);
    UT_EQ(queued(&c->msgs), 100);
    UT_ASSERT(mt_done(&s[MPE_NET_DESCS - 1]) && !mt_done(&s[MPE_NET_DESCS]));
    UT_ASSERT(!host_conn(1, 0)->free_descs);
    for (int i = 0; i < N; i++)
        mt_irecv(1, &r[i], &got[i], 4, 0, 0);
    for (int i = 0; i < N; i++) {
        mt_wait(1, &r[i]);
        UT_EQ(got[i], val[i]);
    }
    for (int i = 0; i < N; i++)
        mt_wait(0, &s[i]);
}

/* 40 medium messages, no receive posted: the first MPE_NET_SLOTS go eager (their sends
 * complete at once), the rest as RTS (they wait for their receives). Once the receiver
 * took them, the slot credits are back and a medium message goes eager again. */
UT_TEST(mpe_net_slot_credits)
{
    enum { N = MPE_NET_SLOTS + 8, LEN = 1000 };
    mt_world(2, 2, 0);
    struct mpe_req s[N], r[N];
    uint8_t *src[N], *dst[N];
    for (int i = 0; i < N; i++) {
        src[i] = mt_buf(LEN, (unsigned)i);
        dst[i] = mt_buf(LEN, 0);
        mt_isend(0, &s[i], src[i], LEN, 1, 0, 0);
    }
    host_pump_all();
    struct mpe_conn *c = host_conn(0, 1);
    UT_EQ(c->credit_slots, 0);
    UT_EQ(c->rdv_out.used, 8);
    for (int i = 0; i < N; i++)
        UT_EQ(mt_done(&s[i]), i < MPE_NET_SLOTS);
    for (int i = 0; i < N; i++)
        mt_irecv(1, &r[i], dst[i], LEN, 0, 0);
    for (int i = 0; i < N; i++) {
        mt_wait(1, &r[i]);
        mt_wait(0, &s[i]);
        UT_EQ(mt_diff(dst[i], LEN, (unsigned)i), -1);
    }
    host_pump_all();
    UT_EQ(c->credit_slots, MPE_NET_SLOTS);
    mt_isend(0, &s[0], src[1], LEN, 1, 0, 0);
    host_pump_all();
    UT_ASSERT(mt_done(&s[0]));
    mt_irecv(1, &r[0], dst[0], LEN, 0, 0);
    UT_ASSERT(mt_done(&r[0]));
    UT_EQ(mt_diff(dst[0], LEN, 1), -1);
    for (int i = 0; i < N; i++) {
        free(src[i]);
        free(dst[i]);
    }
}

/* A handle slot's 16-bit generation wraps after 65535 uses (about 134 million rendezvous
 * on one connection): the next handle must still be valid and never 0. */
UT_TEST(mpe_handle_generation_wraps)
{
    static struct mpe_handles h;
    struct mpe_req a;
    memset(&h, 0, sizeof h);
    h.gen[0] = 0xffff;
    uint32_t k = mpe_handle_new(&h, &a);
    UT_ASSERT(k != 0 && k >> 16 != 0);
    UT_ASSERT(mpe_handle_take(&h, k) == &a);
    UT_ASSERT(mpe_handle_take(&h, k) == 0);

    /* The same through the protocol: RTS, CTS and DATA all name wrapped slots. */
    mt_world(2, 2, 0);
    for (int i = 0; i < MPE_HANDLES; i++) {
        host_conn(0, 1)->rdv_out.gen[i] = 0xffff;
        host_conn(1, 0)->rdv_in.gen[i] = 0xffff;
    }
    struct mpe_req s, r;
    uint8_t *src = mt_buf(100000, 8), *dst = mt_buf(100000, 0);
    mt_isend(0, &s, src, 100000, 1, 0, 0);
    mt_irecv(1, &r, dst, 100000, 0, 0);
    mt_wait(1, &r);
    mt_wait(0, &s);
    UT_EQ(mt_diff(dst, 100000, 8), -1);
    free(src);
    free(dst);
}
