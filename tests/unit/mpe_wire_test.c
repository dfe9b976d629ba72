/*
 * mpe_wire_test.c: the engine's native header codec (mpi/core/mpe_wire.c): the byte
 * layout, a round trip of every type, and every rejection of the decoder (with the
 * accepted values right at each limit).
 */
#include "mpe_host_plat.h" /* host_rand */
#include "mpe_wire.h"
#include "ut.h"
#include <string.h>

#define LIMIT 1000 /* max_eager for these tests */

static const char *decode(const struct mpe_wire *w, struct mpe_wire *out)
{
    uint8_t b[MPE_WIRE_HDR];
    mpe_wire_encode(w, b);
    return mpe_wire_decode(b, out, LIMIT);
}

static int same(const char *got, const char *want)
{
    return got && want ? !strcmp(got, want) : got == want;
}

UT_TEST(mpe_wire_layout)
{
    struct mpe_wire w = {.type = MPE_W_DATA,
                         .seq = 0x04030201,
                         .ctx = 0x08070605,
                         .src = 0x0c0b0a09,
                         .tag = 0x100f0e0d,
                         .src_world = 0x14131211,
                         .dst_world = 0x18171615,
                         .handle = 0x1c1b1a19,
                         .aux = 0x201f1e1d,
                         .aux2 = 0x24232221,
                         .len = 0x00aa2a2928272625ull};
    uint8_t b[MPE_WIRE_HDR];
    mpe_wire_encode(&w, b);
    UT_EQ(b[0], 0x55);
    UT_EQ(b[1], 0x4d);
    UT_EQ(b[2], MPE_WIRE_VERSION);
    UT_EQ(b[3], MPE_W_DATA);
    for (int i = 4; i < 46; i++) /* little-endian fields in order, byte i holds i-3 */
        UT_EQ(b[i], i - 3);
    UT_EQ(b[46], 0xaa);
    UT_EQ(b[47], 0);
}

UT_TEST(mpe_wire_round_trip)
{
    uint32_t s = 12345;
    for (int type = MPE_W_HELLO; type < MPE_W_TYPES; type++)
        for (int k = 0; k < 200; k++) {
            struct mpe_wire w = {.type = (uint8_t)type}, d;
            w.seq = host_rand(&s);
            w.ctx = host_rand(&s);
            w.src = (int32_t)(host_rand(&s) >> 1);
            w.tag = (int32_t)(host_rand(&s) >> 1);
            w.src_world = host_rand(&s);
            w.dst_world = host_rand(&s);
            w.handle = host_rand(&s);
            w.aux = host_rand(&s);
            w.aux2 = host_rand(&s);
            if (type == MPE_W_EAGER)
                w.len = host_rand(&s) % (LIMIT + 1);
            else if (type == MPE_W_RTS)
                w.len = (uint64_t)host_rand(&s) << 32 | host_rand(&s);
            else if (type == MPE_W_DATA || type == MPE_W_CTS)
                w.len = ((uint64_t)host_rand(&s) << 32 | host_rand(&s)) >> 16;
            UT_ASSERT(same(decode(&w, &d), 0));
            UT_EQ(d.type, w.type);
            UT_EQ(d.seq, w.seq);
            UT_EQ(d.ctx, w.ctx);
            UT_EQ(d.src, w.src);
            UT_EQ(d.tag, w.tag);
            UT_EQ(d.src_world, w.src_world);
            UT_EQ(d.dst_world, w.dst_world);
            UT_EQ(d.handle, w.handle);
            UT_EQ(d.aux, w.aux);
            UT_EQ(d.aux2, w.aux2);
            UT_ASSERT(d.len == w.len);
        }
}

/* Byte-level damage the encoder cannot produce. */
UT_TEST(mpe_wire_reject_framing)
{
    struct mpe_wire w = {.type = MPE_W_HELLO}, d;
    uint8_t b[MPE_WIRE_HDR];
    static const struct {
        int off;
        uint8_t val;
        const char *why;
    } cases[] = {
        {0, 0x54, "bad magic"},        {1, 0x00, "bad magic"},
        {2, 0, "unsupported version"}, {2, MPE_WIRE_VERSION + 1, "unsupported version"},
        {3, 0, "unknown type"},        {3, MPE_W_TYPES, "unknown type"},
        {3, 0xff, "unknown type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mpe_wire_encode(&w, b);
        UT_ASSERT(same(mpe_wire_decode(b, &d, LIMIT), 0));
        b[cases[i].off] = cases[i].val;
        UT_ASSERT(same(mpe_wire_decode(b, &d, LIMIT), cases[i].why));
    }
}

/* Field checks, each next to the nearest value that passes. */
UT_TEST(mpe_wire_reject_fields)
{
    static const struct {
        struct mpe_wire w;
        const char *why;
    } cases[] = {
        {{.type = MPE_W_EAGER, .src = -1}, "negative source or tag"},
        {{.type = MPE_W_EAGER, .tag = -2}, "negative source or tag"},
        {{.type = MPE_W_RTS, .src = -1}, "negative source or tag"},
        {{.type = MPE_W_RTS, .tag = -1}, "negative source or tag"},
        {{.type = MPE_W_EAGER, .src = 0x7fffffff, .tag = 0x7fffffff}, 0},
        {{.type = MPE_W_EAGER, .len = LIMIT + 1}, "eager message longer than the eager limit"},
        {{.type = MPE_W_EAGER, .len = ~0ull}, "eager message longer than the eager limit"},
        {{.type = MPE_W_EAGER, .len = LIMIT}, 0},
        {{.type = MPE_W_RTS, .len = ~0ull}, 0},
        {{.type = MPE_W_DATA, .len = 1ull << 48}, "length out of range"},
        {{.type = MPE_W_CTS, .len = ~0ull}, "length out of range"},
        {{.type = MPE_W_DATA, .len = (1ull << 48) - 1}, 0},
        {{.type = MPE_W_CTS, .src = -1, .tag = -1}, 0}, /* unmatched: keys not checked */
        {{.type = MPE_W_HELLO, .len = 1}, "length on a control header"},
        {{.type = MPE_W_CREDIT, .len = 1ull << 40}, "length on a control header"},
        {{.type = MPE_W_BYE, .len = 1}, "length on a control header"},
        {{.type = MPE_W_CREDIT, .aux = ~0u, .aux2 = ~0u}, 0}, /* mpe_net_rx checks those */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct mpe_wire d;
        const char *got = decode(&cases[i].w, &d);
        if (!same(got, cases[i].why))
            ut_fail(__FILE__, __LINE__, "case %zu: got \"%s\", want \"%s\"", i, got ? got : "ok",
                    cases[i].why ? cases[i].why : "ok");
    }
}

UT_TEST(mpe_wire_type_names)
{
    UT_ASSERT(!strcmp(mpe_wire_type_name(MPE_W_HELLO), "HELLO"));
    UT_ASSERT(!strcmp(mpe_wire_type_name(MPE_W_BYE), "BYE"));
    UT_ASSERT(!strcmp(mpe_wire_type_name(0), "?"));
    UT_ASSERT(!strcmp(mpe_wire_type_name(MPE_W_TYPES), "?"));
    UT_ASSERT(!strcmp(mpe_wire_type_name(-1), "?"));
}
