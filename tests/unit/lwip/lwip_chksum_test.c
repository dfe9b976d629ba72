/* lwip_chksum_test.c: lwip_port_chksum (the LWIP_CHKSUM of lwipopts.h) against the
 * definition of the Internet checksum (RFC 1071), 16-bit big-endian words one at a time. */
#include <stdint.h>
#include <stdlib.h>
#include "ut.h"
#include "lwip_port_chksum.h"

#define CK_BUF    70000
#define CK_ROUNDS 20000

/* Test thread: the ones' complement sum of len bytes as big-endian words, returned in
 * memory order like lwIP's: the reference, written from the definition. */
static uint16_t ck_reference(const uint8_t *p, int len)
{
    uint32_t sum = 0;
    for (int i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    uint8_t out[2] = {(uint8_t)(sum >> 8), (uint8_t)sum};
    uint16_t v;
    __builtin_memcpy(&v, out, 2);
    return v;
}

/* Test thread: RFC 1071's worked example, 00 01 f2 03 f4 f5 f6 f7: sum dd f2. */
UT_TEST(lwip_chksum_rfc1071_example)
{
    static const uint8_t ex[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    uint16_t s = lwip_port_chksum(ex, sizeof ex);
    const uint8_t *b = (const uint8_t *)&s;
    UT_EQ(b[0], 0xdd);
    UT_EQ(b[1], 0xf2);
}

/* Test thread: every start alignment and many lengths (odd ones, the 8-byte steps' tail,
 * up to a 64 KiB datagram), with all-ones, all-zeros and random bytes. */
UT_TEST(lwip_chksum_matches_reference)
{
    static uint8_t buf[CK_BUF];
    srand(16);
    for (int r = 0; r < CK_ROUNDS; r++) {
        int len = rand() % (r % 200 == 0 ? 65536 : 300), off = r % 16, fill = r % 3;
        for (int i = 0; i < len; i++)
            buf[off + i] = fill == 0 ? 0xff : fill == 1 ? 0 : (uint8_t)rand();
        uint16_t got = lwip_port_chksum(buf + off, len), want = ck_reference(buf + off, len);
        if (got != want)
            ut_fail(__FILE__, __LINE__, "len %d offset %d fill %d: %04x, want %04x", len, off, fill,
                    got, want);
    }
}
