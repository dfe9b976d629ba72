/* vnet_frame_test.c: the RX filter (unikernel/drivers/vnet_frame.c) on good and bad frames. */
#include <string.h>
#include "ut.h"
#include "drivers/vnet_frame.h"

static const uint8_t mac[6] = {0x52, 0x54, 0, 0, 0, 1};

/* A valid Ethernet/IPv4/TCP frame with `plen` payload bytes; returns its length. */
static size_t tcp_frame(uint8_t *f, size_t plen)
{
    memset(f, 0, 14 + 40 + plen);
    memcpy(f, mac, 6);
    f[12] = 0x08;
    uint8_t *ip = f + 14, *t = ip + 20;
    size_t tot = 40 + plen;
    ip[0] = 0x45, ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot, ip[8] = 64, ip[9] = 6;
    memcpy(ip + 12, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    uint16_t c = vnet_csum(0, ip, 20);
    ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
    t[12] = 5 << 4;
    for (size_t i = 0; i < plen; i++)
        t[20 + i] = (uint8_t)(i * 7);
    uint32_t ps = 0;
    for (int i = 12; i < 20; i += 2)
        ps += (uint32_t)ip[i] << 8 | ip[i + 1];
    ps += 6 + (uint32_t)(tot - 20);
    c = vnet_csum(ps, t, tot - 20);
    t[16] = (uint8_t)(c >> 8), t[17] = (uint8_t)c;
    return 14 + tot;
}

UT_TEST(vnet_frame_good)
{
    uint8_t f[1600];
    size_t n = tcp_frame(f, 100);
    UT_EQ(vnet_frame_check(f, n, mac), VNET_FRAME_OK);
    n = tcp_frame(f, 1460);
    UT_EQ(n, 1514);
    UT_EQ(vnet_frame_check(f, n, mac), VNET_FRAME_OK);
    n = tcp_frame(f, 0);
    UT_EQ(vnet_frame_check(f, 60, mac), VNET_FRAME_OK); /* padded to the minimum */
    memset(f, 0xff, 6);                                 /* broadcast ARP */
    f[12] = 0x08, f[13] = 0x06;
    UT_EQ(vnet_frame_check(f, 42, mac), VNET_FRAME_OK);
    UT_EQ(vnet_frame_check(f, 41, mac), VNET_DROP_TRUNCATED);
}

UT_TEST(vnet_frame_bad)
{
    uint8_t f[2000];
    size_t n = tcp_frame(f, 200);
    for (size_t k = 0; k < 14; k++)
        UT_EQ(vnet_frame_check(f, k, mac), VNET_DROP_RUNT);
    UT_EQ(vnet_frame_check(f, 1515, mac), VNET_DROP_OVERSIZE);
    for (size_t k = 14; k < n; k++) /* every truncation is caught */
        UT_ASSERT(vnet_frame_check(f, k, mac) != VNET_FRAME_OK);
    f[14 + 20 + 20 + 5] ^= 1; /* payload bit flip */
    UT_EQ(vnet_frame_check(f, n, mac), VNET_DROP_CHECKSUM);
    f[14 + 20 + 20 + 5] ^= 1;
    f[22] ^= 1; /* TTL: IP header checksum */
    UT_EQ(vnet_frame_check(f, n, mac), VNET_DROP_CHECKSUM);
    f[22] ^= 1;
    f[14] = 0x65; /* IPv6 version nibble in an IPv4 frame */
    UT_EQ(vnet_frame_check(f, n, mac), VNET_DROP_BAD_IP);
    f[14] = 0x45;
    f[5] = 2; /* someone else's MAC */
    UT_EQ(vnet_frame_check(f, n, mac), VNET_DROP_NOT_US);
    f[5] = 1;
    f[12] = 0x86, f[13] = 0xdd;
    UT_EQ(vnet_frame_check(f, n, mac), VNET_DROP_ETHERTYPE);
    UT_ASSERT(strcmp(vnet_verdict_name(VNET_DROP_RUNT), "runt") == 0);
}
