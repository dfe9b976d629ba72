/*
 * mpe_bad_test.c: a peer that breaks the protocol. Node 1 (ranks 2, 3) of a 2-node job is
 * the victim: after a valid HELLO from node 0, the test writes headers into its
 * connection as node 0 would, each wrong in one way. Every one must end the job through
 * plat_fatal with a message naming the node, the peer and the problem, and must not touch
 * a posted receive (a wildcard one: any message that got through would land in it).
 */
#include "mpe_test_util.h"
#include <stdio.h>

#define VBUF 100000

static struct {
    struct mpe_req r;
    uint8_t *buf;
    const uint8_t *bytes;
    size_t len;
    int bytewise;
} V;

/* A fresh job; rank 2 posts a wildcard receive into a buffer of 0xee bytes. */
static void victim(int hello)
{
    host_fail_hook = mt_host_failed;
    UT_EQ(host_world_create(2, 4, 0), 0);
    if (hello) {
        host_init_all();
        host_pump_all();
    }
    V.bytewise = 0;
    free(V.buf);
    V.buf = malloc(VBUF);
    memset(V.buf, 0xee, VBUF);
    host_as_rank(2);
    UT_EQ(mpe_ops.irecv(&V.r, V.buf, VBUF, MT_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG), 0);
}

/* A header as node 0 would send it next, to rank 2 from rank 0. */
static struct mpe_wire next_hdr(int type)
{
    struct mpe_wire w = {.type = (uint8_t)type,
                         .seq = host_conn(1, 0)->rx_seq,
                         .ctx = MT_CTX,
                         .tag = 1,
                         .dst_world = 2};
    return w;
}

static void inject(void *arg)
{
    (void)arg;
    if (!V.bytewise) {
        host_inject(1, 0, V.bytes, V.len);
        return;
    }
    for (size_t i = 0; i < V.len; i++)
        host_inject(1, 0, V.bytes + i, 1);
}

/* Feed bytes to the victim (whole and one byte at a time) and expect the job to end with
 * every one of the strings in its message. */
static void expect_fatal(const uint8_t *bytes, size_t len, const char *type, const char *why)
{
    char hdr[64];
    snprintf(hdr, sizeof hdr, "bad %s header", type);
    V.bytes = bytes;
    V.len = len;
    if (!host_catch(inject, 0))
        ut_fail(__FILE__, __LINE__, "accepted: want \"%s\"", why);
    if (!strstr(host_fatal_msg, "node 1: connection to node 0: ") || !strstr(host_fatal_msg, hdr) ||
        !strstr(host_fatal_msg, why))
        ut_fail(__FILE__, __LINE__, "message \"%s\", want \"%s\": \"%s\"", host_fatal_msg, hdr,
                why);
    UT_ASSERT(!mt_done(&V.r));
    UT_EQ(mt_diff_fill(V.buf, VBUF, 0xee), -1);
}

struct bad_case {
    struct mpe_wire w; /* seq: added to the expected one */
    int off, val;      /* if off > 0: byte `off` of the encoded header becomes val */
    const char *type, *why;
};

/* dst_world 0 stands for rank 2 (the victim's; a rank of node 0 is tested as rank 1). */
#define HDR(...)                                                                                   \
    {                                                                                              \
        .ctx = MT_CTX, __VA_ARGS__                                                                 \
    }

static const struct bad_case cases[] = {
    {HDR(.type = MPE_W_EAGER, .len = 8), 1, 0x00, "?", "bad magic"},
    {HDR(.type = MPE_W_EAGER, .len = 8), 2, 9, "?", "unsupported version"},
    {HDR(.type = MPE_W_EAGER), 3, 0, "?", "unknown type"},
    {HDR(.type = MPE_W_EAGER), 3, MPE_W_TYPES, "?", "unknown type"},
    {HDR(.type = MPE_W_EAGER, .seq = 1), 0, 0, "EAGER", "sequence number out of order"},
    {HDR(.type = MPE_W_CREDIT, .seq = ~0u), 0, 0, "CREDIT", "sequence number out of order"},
    {HDR(.type = MPE_W_EAGER, .dst_world = 1), 0, 0, "EAGER", "destination rank does not run"},
    {HDR(.type = MPE_W_RTS, .dst_world = 4, .len = 1 << 20), 0, 0, "RTS",
     "destination rank does not run"},
    {HDR(.type = MPE_W_EAGER, .dst_world = ~0u), 0, 0, "EAGER", "destination rank does not run"},
    {HDR(.type = MPE_W_EAGER, .src_world = 3), 0, 0, "EAGER", "source rank does not run"},
    {HDR(.type = MPE_W_RTS, .src_world = 4), 0, 0, "RTS", "source rank does not run"},
    {HDR(.type = MPE_W_EAGER, .src_world = ~0u), 0, 0, "EAGER", "source rank does not run"},
    {HDR(.type = MPE_W_EAGER, .src = -1), 0, 0, "EAGER", "negative source or tag"},
    {HDR(.type = MPE_W_RTS, .tag = MPE_ANY_TAG), 0, 0, "RTS", "negative source or tag"},
    {HDR(.type = MPE_W_EAGER, .len = MPE_NET_EAGER + 1), 0, 0, "EAGER",
     "longer than the eager limit"},
    {HDR(.type = MPE_W_CTS, .handle = 0x10000, .len = 1), 0, 0, "CTS", "unknown rendezvous handle"},
    {HDR(.type = MPE_W_CTS, .handle = 0), 0, 0, "CTS", "unknown rendezvous handle"},
    {HDR(.type = MPE_W_DATA, .handle = 0x10000, .len = 5), 0, 0, "DATA",
     "unknown rendezvous handle"},
    {HDR(.type = MPE_W_DATA, .handle = 0x10000, .len = 1ull << 48), 0, 0, "DATA",
     "length out of range"},
    {HDR(.type = MPE_W_CREDIT, .aux = 1), 0, 0, "CREDIT", "more credits returned than were spent"},
    {HDR(.type = MPE_W_CREDIT, .aux2 = 1), 0, 0, "CREDIT", "more credits returned than were spent"},
    /* Counts that wrap a signed sum: they took credits away, or overflowed an int32_t. */
    {HDR(.type = MPE_W_CREDIT, .aux = ~0u), 0, 0, "CREDIT",
     "more credits returned than were spent"},
    {HDR(.type = MPE_W_CREDIT, .aux = 0x7fffffff), 0, 0, "CREDIT",
     "more credits returned than were spent"},
    {HDR(.type = MPE_W_CREDIT, .aux2 = 0xfffffff0), 0, 0, "CREDIT",
     "more credits returned than were spent"},
    {HDR(.type = MPE_W_HELLO, .aux = 0, .aux2 = 4), 0, 0, "HELLO", "peer is not the node"},
    {HDR(.type = MPE_W_BYE, .len = 1), 0, 0, "BYE", "length on a control header"},
};

UT_TEST(mpe_bad_headers)
{
    uint8_t b[MPE_WIRE_HDR + 64];
    memset(b, 0x11, sizeof b); /* a payload, where the header has one */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int bytewise = 0; bytewise < 2; bytewise++) {
            const struct bad_case *k = &cases[i];
            victim(1);
            V.bytewise = bytewise;
            struct mpe_wire w = k->w;
            w.seq += host_conn(1, 0)->rx_seq;
            if (!w.dst_world)
                w.dst_world = 2;
            mpe_wire_encode(&w, b);
            if (k->off > 0)
                b[k->off] = (uint8_t)k->val;
            size_t len = MPE_WIRE_HDR + (w.len < 64 ? w.len : 64);
            expect_fatal(b, len, k->type, k->why);
        }
    host_world_destroy();
}

/* A header the decoder rejects is reported with the sequence number the parser expected
 * (the decoder filled nothing in: no stale stack contents in the message). */
UT_TEST(mpe_bad_magic_names_position)
{
    uint8_t b[MPE_WIRE_HDR];
    char want[64];
    victim(1);
    struct mpe_wire w = next_hdr(MPE_W_EAGER);
    mpe_wire_encode(&w, b);
    b[0] ^= 0xff;
    snprintf(want, sizeof want, "bad ? header (seq %u): bad magic", w.seq);
    expect_fatal(b, sizeof b, "?", want);
    host_world_destroy();
}

UT_TEST(mpe_bad_hello)
{
    uint8_t b[MPE_WIRE_HDR];
    struct mpe_wire hello = {.type = MPE_W_HELLO, .aux = 0, .aux2 = 4};
    struct mpe_wire other = hello, size = hello, eager = {.type = MPE_W_EAGER, .dst_world = 2};
    other.aux = 1;
    size.aux2 = 5;
    victim(0);
    mpe_wire_encode(&eager, b);
    expect_fatal(b, sizeof b, "EAGER", "no HELLO first");
    victim(0);
    mpe_wire_encode(&other, b);
    expect_fatal(b, sizeof b, "HELLO", "peer is not the node or job we expect");
    victim(0);
    mpe_wire_encode(&size, b);
    expect_fatal(b, sizeof b, "HELLO", "peer is not the node or job we expect");
    victim(0);
    host_inject(1, 0, (mpe_wire_encode(&hello, b), b), sizeof b);
    UT_ASSERT(mpe_net_hello_seen(host_conn(1, 0)));
    host_world_destroy();
}

/* The peer asks (CTS) for more than our message has, or sends DATA of another length than
 * our CTS granted, or DATA for a handle of an earlier generation. */
UT_TEST(mpe_bad_rendezvous)
{
    uint8_t b[MPE_WIRE_HDR], *src = mt_buf(50000, 1);
    struct mpe_req s;
    struct mpe_wire cts, rts, got;

    victim(1);
    mt_isend(2, &s, src, 50000, 0, 0, 0);
    UT_EQ(host_pipe_take(1, 0, b, sizeof b), sizeof b);
    UT_ASSERT(!mpe_wire_decode(b, &rts, MPE_NET_EAGER));
    UT_EQ(rts.type, MPE_W_RTS);
    cts = next_hdr(MPE_W_CTS);
    cts.handle = rts.handle;
    cts.len = 50001;
    mpe_wire_encode(&cts, b);
    expect_fatal(b, sizeof b, "CTS", "receiver asks for more than the message has");
    UT_EQ(host_pipe_len(1, 0), 0); /* no DATA went out */

    for (int k = 0; k < 2; k++) {
        victim(1);
        rts = next_hdr(MPE_W_RTS);
        rts.handle = 77;
        rts.len = 60000;
        host_inject(1, 0, (mpe_wire_encode(&rts, b), b), sizeof b);
        UT_EQ(host_pipe_take(1, 0, b, sizeof b), sizeof b);
        UT_ASSERT(!mpe_wire_decode(b, &got, MPE_NET_EAGER));
        UT_EQ(got.type, MPE_W_CTS);
        UT_EQ(got.handle, 77);
        UT_EQ(got.len, 60000);
        struct mpe_wire data = next_hdr(MPE_W_DATA);
        data.handle = k ? got.aux + 0x10000 : got.aux;
        data.len = k ? 60000 : 59999;
        uint8_t *d = malloc(MPE_WIRE_HDR + 100);
        memset(d, 0x11, MPE_WIRE_HDR + 100);
        mpe_wire_encode(&data, d);
        expect_fatal(d, MPE_WIRE_HDR + 100, "DATA",
                     k ? "unknown rendezvous handle" : "length differs from the one granted");
        free(d);
    }
    free(src);
    host_world_destroy();
}

/* A sender that ignores its credits: one message more than the receiver's descriptors,
 * or one medium eager message more than its slots. */
UT_TEST(mpe_bad_credit_overrun)
{
    static uint8_t b[(MPE_WIRE_HDR + 1000) * (MPE_NET_DESCS + 1)];
    for (int slots = 0; slots < 2; slots++) {
        int n = slots ? MPE_NET_SLOTS + 1 : MPE_NET_DESCS + 1;
        size_t plen = slots ? 1000 : 0, len = 0;
        victim(1);
        for (int i = 0; i < n; i++) {
            struct mpe_wire w = next_hdr(MPE_W_EAGER);
            w.seq += (uint32_t)i;
            w.dst_world = 3; /* rank 3 posted nothing: everything stays unexpected */
            w.len = plen;
            mpe_wire_encode(&w, b + len);
            memset(b + len + MPE_WIRE_HDR, 0x22, plen);
            len += MPE_WIRE_HDR + plen;
        }
        expect_fatal(b, len, "EAGER",
                     slots ? "exceeded its eager slot credits" : "exceeded its descriptor credits");
    }
    free(V.buf);
    V.buf = 0;
    host_world_destroy();
}
