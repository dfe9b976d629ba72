/* lwip_chksum_test.c: our LWIP_CHKSUM (net/lwip-port/lwip_chksum.c) against RFC 1071 said
 * the plainest way (16-bit words of byte pairs from the start, one addition each, the carry
 * folded back), for every length up to a few words past the unrolled loop, at every
 * alignment, on random bytes, all-ones bytes (every addition carries) and zeros; and lwIP's
 * use of it: a TCP segment's checksum, inverted and stored, checks to zero. */
#include "ut.h"
#include "lwip/inet_chksum.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHK_MAXLEN 300 /* past several rounds of every loop of uk_chksum */
#define CHK_ALIGNS 8

/* RFC 1071 directly: the same 16-bit words (memory order: the byte at an even offset is
 * the low byte on this little-endian host, as a native load reads it). */
static uint16_t ref_chksum(const uint8_t *p, int len)
{
    uint32_t sum = 0;
    for (int i = 0; i < len; i += 2) {
        sum += (uint32_t)p[i] | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)sum;
}

static void check_all(const uint8_t *src)
{
    static uint8_t buf[CHK_MAXLEN + CHK_ALIGNS];
    for (int off = 0; off < CHK_ALIGNS; off++) {
        memcpy(buf + off, src, CHK_MAXLEN);
        for (int len = 0; len <= CHK_MAXLEN; len++)
            UT_EQ(uk_chksum(buf + off, len), ref_chksum(buf + off, len));
    }
}

UT_TEST(lwip_chksum_against_rfc1071)
{
    static uint8_t v[CHK_MAXLEN];
    srand(1071);
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < CHK_MAXLEN; i++)
            v[i] = (uint8_t)rand();
        check_all(v);
    }
    memset(v, 0xff, sizeof v);
    check_all(v);
    memset(v, 0, sizeof v);
    check_all(v);
}

/* The longest an IP datagram can be, all ones: the most carries the folds must take. */
UT_TEST(lwip_chksum_longest)
{
    static uint8_t v[65535];
    memset(v, 0xff, sizeof v);
    UT_EQ(uk_chksum(v, sizeof v), ref_chksum(v, sizeof v));
    for (size_t i = 0; i < sizeof v; i++)
        v[i] = (uint8_t)(i * 131 + 7);
    UT_EQ(uk_chksum(v, sizeof v), ref_chksum(v, sizeof v));
}

/* What lwIP does with it: inet_chksum() of a block with its own inverted sum stored in it
 * gives 0 (how a receiver checks a header). */
UT_TEST(lwip_chksum_checks_to_zero)
{
    uint8_t v[64];
    for (int i = 0; i < (int)sizeof v; i++)
        v[i] = (uint8_t)(i * 37 + 1);
    v[10] = v[11] = 0;
    uint16_t c = inet_chksum(v, sizeof v);
    memcpy(v + 10, &c, sizeof c);
    UT_EQ(inet_chksum(v, sizeof v), 0);
}
