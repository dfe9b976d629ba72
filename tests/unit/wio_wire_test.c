/*
 * wio_wire_test.c: the WaitIO codec (mpi/waitio/wio_wire.c): the byte layout of
 * PROTOCOL.md 2, every validation failure in its order (and the accepted values right at
 * each limit), and the start-up payloads with their length and count checks.
 */
#include "ut.h"
#include "wio_wire.h"
#include <string.h>

/* An established connection from peer 3 to us (5), 10 packets each way so far. */
static const struct wio_conn_view open_view = {
    .phase = WIO_PH_OPEN, .rseq = 10, .sent = 10, .peer = 3, .self = 5, .nprocs = 8};

/* A header of `type` that passes against open_view. */
static struct wio_hdr good(uint8_t type)
{
    struct wio_hdr h = wio_hdr_make(type);
    h.seq = 10;
    h.ack = 10;
    h.src = 3;
    h.dst = 5;
    return h;
}

/* The check's verdict on h, after a trip through the wire bytes. */
static int check(const struct wio_hdr *h, const struct wio_rdv_view *r)
{
    uint8_t b[WIO_HDR];
    struct wio_hdr d;
    wio_hdr_encode(h, b); /* always through the bytes */
    wio_hdr_decode(b, &d);
    return wio_hdr_check(&d, &open_view, r);
}

UT_TEST(wio_wire_layout)
{
    struct wio_hdr h = {.magic = WIO_MAGIC,
                        .version = 1,
                        .type = WIO_T_DATA,
                        .flags = 0x0807,
                        .seq = 0x0c0b0a09,
                        .ack = 0x100f0e0d,
                        .src = 0x14131211,
                        .dst = 0x18171615,
                        .group = 0x201f1e1d1c1b1a19ull,
                        .tag = 0x2827262524232221ull,
                        .len = 0x302f2e2d2c2b2a29ull,
                        .msgid = 0x34333231,
                        .plen = 0x38373635,
                        .offset = 0x403f3e3d3c3b3a39ull};
    uint8_t b[WIO_HDR];
    wio_hdr_encode(&h, b);
    UT_ASSERT(!memcmp(b, "WIO1", 4));
    UT_EQ(b[4], 1);
    UT_EQ(b[5], WIO_T_DATA);
    for (int i = 6; i < WIO_HDR; i++) /* little-endian fields in order: byte i holds i+1 */
        UT_EQ(b[i], i + 1);
    struct wio_hdr d;
    wio_hdr_decode(b, &d);
    UT_EQ(d.magic, h.magic);
    UT_EQ(d.flags, h.flags);
    UT_EQ(d.seq, h.seq);
    UT_EQ(d.ack, h.ack);
    UT_EQ(d.src, h.src);
    UT_EQ(d.dst, h.dst);
    UT_EQ(d.group, h.group);
    UT_EQ(d.plen, h.plen);
    UT_EQ(d.offset, h.offset);
    UT_EQ(d.tag, h.tag);
    UT_EQ(d.len, h.len);
    UT_EQ(d.msgid, h.msgid);
}

UT_TEST(wio_wire_check_order)
{
    struct wio_hdr h = good(WIO_T_ACK);
    UT_EQ(check(&h, 0), WIO_OK);
    h.magic ^= 1;
    h.seq = 99; /* two faults: the first in the order wins */
    UT_EQ(check(&h, 0), WIO_E_MAGIC);
    h = good(WIO_T_ACK);
    h.version = 2;
    UT_EQ(check(&h, 0), WIO_E_VERSION);
    h = good(WIO_T_ACK);
    h.flags = 0x100;
    UT_EQ(check(&h, 0), WIO_E_FLAGS);
    h = good(10);
    UT_EQ(check(&h, 0), WIO_E_TYPE);
    h = good(0);
    UT_EQ(check(&h, 0), WIO_E_TYPE);
    h = good(WIO_T_HELLO);
    UT_EQ(check(&h, 0), WIO_E_STATE);
    h = good(WIO_T_TABLE);
    UT_EQ(check(&h, 0), WIO_E_STATE);
    h = good(WIO_T_ACK);
    h.seq = 11;
    UT_EQ(check(&h, 0), WIO_E_SEQ);
    h.seq = 9;
    UT_EQ(check(&h, 0), WIO_E_SEQ);
    h = good(WIO_T_ACK);
    h.src = 4;
    UT_EQ(check(&h, 0), WIO_E_SRC);
    h = good(WIO_T_ACK);
    h.dst = 3;
    UT_EQ(check(&h, 0), WIO_E_DST);
    h = good(WIO_T_ACK);
    h.ack = 11;
    UT_EQ(check(&h, 0), WIO_E_ACK);
    h.ack = 0;
    UT_EQ(check(&h, 0), WIO_OK);
    h.plen = 1;
    UT_EQ(check(&h, 0), WIO_E_PLEN);
    for (int e = 0; e < WIO_E_NKINDS; e++) /* every code has its own name */
        for (int f = e + 1; f < WIO_E_NKINDS; f++)
            UT_ASSERT(strcmp(wio_err_name(e), wio_err_name(f)));
    UT_ASSERT(!strcmp(wio_err_name(WIO_E_NKINDS), "?"));
}

UT_TEST(wio_wire_check_wrap)
{
    struct wio_conn_view v = open_view;
    v.sent = 3; /* sent wrapped past 2^32: an ack of 0xfffffff0 is behind it */
    v.rseq = 0xffffffffu;
    struct wio_hdr h = good(WIO_T_ACK);
    h.seq = 0xffffffffu;
    h.ack = 0xfffffff0u;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_OK);
    h.ack = 4;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_ACK);
}

UT_TEST(wio_wire_check_handshake)
{
    struct wio_conn_view v = {.phase = WIO_PH_ACCEPTED, .peer = WIO_ANY, .self = 5, .nprocs = 8};
    struct wio_hdr h = wio_hdr_make(WIO_T_HELLO);
    h.src = 7;
    h.dst = 5;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_OK);
    h.src = 8;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_SRC);
    h.src = 5; /* ourselves: we never connect to ourselves */
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_SRC);
    h.src = 7;
    h.seq = 1;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_SEQ);
    h = wio_hdr_make(WIO_T_EAGER);
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_STATE); /* no data before the handshake */
    v.phase = WIO_PH_HELLO;
    v.peer = 7;
    h = wio_hdr_make(WIO_T_HELLO_NO);
    h.src = 7;
    h.dst = 5;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_OK);
    v.phase = WIO_PH_CLOSED;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_STATE);
}

UT_TEST(wio_wire_check_lengths)
{
    struct wio_hdr h = good(WIO_T_EAGER);
    h.len = h.plen = WIO_EAGER_MAX;
    UT_EQ(check(&h, 0), WIO_OK);
    h.len = h.plen = WIO_EAGER_MAX + 1;
    UT_EQ(check(&h, 0), WIO_E_PLEN);
    h.len = 5;
    h.plen = 4;
    UT_EQ(check(&h, 0), WIO_E_LEN);
    h = good(WIO_T_RTS);
    h.len = WIO_EAGER_MAX;
    UT_EQ(check(&h, 0), WIO_E_LEN);
    h.len = WIO_EAGER_MAX + 1;
    UT_EQ(check(&h, 0), WIO_OK);
    h.plen = 1;
    UT_EQ(check(&h, 0), WIO_E_PLEN);
    struct wio_rdv_view r = {.live = 1, .len = 1000, .take = 600, .done = 0};
    h = good(WIO_T_CTS);
    h.len = 1000;
    UT_EQ(check(&h, &r), WIO_OK);
    h.len = 1001;
    UT_EQ(check(&h, &r), WIO_E_LEN);
    h.len = 10;
    UT_EQ(check(&h, 0), WIO_E_MSGID);
    h = good(WIO_T_DATA);
    h.len = 1000;
    h.plen = 600;
    UT_EQ(check(&h, &r), WIO_OK);
    h.plen = 601; /* more than our CTS asked for */
    UT_EQ(check(&h, &r), WIO_E_LEN);
    h.plen = 0;
    UT_EQ(check(&h, &r), WIO_E_PLEN);
    h.plen = WIO_CHUNK + 1;
    UT_EQ(check(&h, &r), WIO_E_PLEN);
    h.plen = 100;
    h.offset = 100;
    UT_EQ(check(&h, &r), WIO_E_OFFSET);
    h.offset = 0xffffffffffffff00ull; /* offset + plen wraps */
    h.len = 0xffffffffffffffffull;
    UT_EQ(check(&h, &r), WIO_E_LEN);
    h.len = 1000;
    h.offset = 950;
    UT_EQ(check(&h, &r), WIO_E_LEN);
    h.offset = 0;
    r.live = 0;
    UT_EQ(check(&h, &r), WIO_E_MSGID);
}

UT_TEST(wio_wire_register)
{
    struct wio_addr a[3] = {{{127, 0, 0, 1}, 7100}, {{10, 1, 2, 3}, 1}, {{1, 2, 3, 4}, 65535}};
    uint8_t b[WIO_REG_FIXED + 3 * WIO_ADDR_BYTES + 1];
    UT_EQ(wio_register_encode(1, 2, 3, a, b, sizeof b - 2), 0); /* too small */
    UT_EQ(wio_register_encode(2, 2, 3, a, b, sizeof b), 0);     /* pbid >= npb */
    size_t n = wio_register_encode(1, 2, 3, a, b, sizeof b);
    UT_EQ(n, WIO_REG_FIXED + 3 * WIO_ADDR_BYTES);
    UT_EQ(b[WIO_REG_FIXED + 4], 7100 >> 8); /* port in network order */
    struct wio_register r;
    UT_EQ(wio_register_decode(b, n, &r), WIO_OK);
    UT_EQ(r.pbid, 1);
    UT_EQ(r.npb, 2);
    UT_EQ(r.nprocs, 3);
    struct wio_addr x;
    wio_payload_addr(r.addrs, 2, &x);
    UT_ASSERT(!memcmp(x.ip, a[2].ip, 4) && x.port == 65535);
    UT_EQ(wio_register_decode(b, n - 1, &r), WIO_E_SHORT);
    UT_EQ(wio_register_decode(b, n + 1, &r), WIO_E_LONG);
    UT_EQ(wio_register_decode(b, 15, &r), WIO_E_SHORT);
    b[WIO_REG_FIXED + 6] = 1;
    UT_EQ(wio_register_decode(b, n, &r), WIO_E_RESERVED);
    b[WIO_REG_FIXED + 6] = 0;
    wio_put32(b + 8, 0xffffffffu); /* a count whose size would overflow 32 bits */
    UT_EQ(wio_register_decode(b, n, &r), WIO_E_TOTAL);
    wio_put32(b + 8, 0);
    UT_EQ(wio_register_decode(b, n, &r), WIO_E_NPROCS);
    wio_put32(b + 8, 3);
    wio_put32(b, 2);
    UT_EQ(wio_register_decode(b, n, &r), WIO_E_PBID);
    wio_put32(b + 4, 0);
    UT_EQ(wio_register_decode(b, n, &r), WIO_E_NPB);
    UT_EQ(wio_register_size(WIO_MAX_PROCS + 1), 0);
}

UT_TEST(wio_wire_table)
{
    struct wio_addr a[3] = {{{127, 0, 0, 1}, 7100}, {{10, 1, 2, 3}, 1}, {{1, 2, 3, 4}, 2}};
    uint32_t np[2] = {1, 2};
    uint8_t b[64];
    size_t n = wio_table_encode(2, np, a, b, sizeof b);
    UT_EQ(n, WIO_TABLE_FIXED + 2 * 4 + 3 * WIO_ADDR_BYTES);
    struct wio_table t;
    UT_EQ(wio_table_decode(b, n, &t), WIO_OK);
    UT_EQ(t.total, 3);
    UT_EQ(wio_table_nprocs(&t, 1), 2);
    struct wio_addr x;
    wio_payload_addr(t.addrs, 1, &x);
    UT_ASSERT(!memcmp(x.ip, a[1].ip, 4) && x.port == 1);
    UT_EQ(wio_table_decode(b, n - 1, &t), WIO_E_SHORT);
    UT_EQ(wio_table_decode(b, n + 1, &t), WIO_E_LONG);
    wio_put32(b + WIO_TABLE_FIXED, 0); /* PB 0 empty: the sum no longer matches either */
    UT_EQ(wio_table_decode(b, n, &t), WIO_E_NPROCS);
    wio_put32(b + WIO_TABLE_FIXED, 2);
    UT_EQ(wio_table_decode(b, n, &t), WIO_E_TOTAL);
    wio_put32(b + WIO_TABLE_FIXED, 0xffffffffu); /* a sum that would wrap */
    UT_EQ(wio_table_decode(b, n, &t), WIO_E_TOTAL);
    wio_put32(b + WIO_TABLE_FIXED, 1);
    wio_put32(b + 12, 1);
    UT_EQ(wio_table_decode(b, n, &t), WIO_E_RESERVED);
    wio_put32(b + 12, 0);
    wio_put32(b + 4, 1); /* total below npb */
    UT_EQ(wio_table_decode(b, n, &t), WIO_E_TOTAL);
    np[1] = 0;
    UT_EQ(wio_table_encode(2, np, a, b, sizeof b), 0);
    UT_EQ(wio_table_size(WIO_MAX_PROCS, WIO_MAX_PROCS + 1), 0);
}

UT_TEST(wio_wire_refuse)
{
    uint8_t b[WIO_REFUSE_MAX + 8];
    char long_text[WIO_REFUSE_MAX + 8], out[WIO_REFUSE_MAX + 1];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    UT_EQ(wio_refuse_encode(long_text, b, sizeof b), WIO_REFUSE_MAX);
    size_t n = wio_refuse_encode("PB 1 registered twice\n", b, sizeof b);
    UT_EQ(wio_refuse_decode(b, n, out, sizeof out), WIO_OK);
    UT_ASSERT(!strcmp(out, "PB 1 registered twice?"));
    UT_EQ(wio_refuse_decode(b, WIO_REFUSE_MAX + 1, out, sizeof out), WIO_E_PLEN);
    struct wio_hdr h = wio_hdr_make(WIO_T_REFUSE);
    struct wio_conn_view v = {.phase = WIO_PH_CLIENT, .peer = 0, .self = 1, .nprocs = 2};
    h.dst = 1;
    h.len = h.plen = WIO_REFUSE_MAX + 1;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_E_PLEN);
    h.len = h.plen = WIO_REFUSE_MAX;
    UT_EQ(wio_hdr_check(&h, &v, 0), WIO_OK);
}
