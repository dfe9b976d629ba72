/* vnet_frame.c: see vnet_frame.h. Portable C, no allocation, reads only [f, f+len). */
#include "drivers/vnet_frame.h"

/* Any context: 16-bit one's-complement partial sum, big-endian words. */
static uint32_t vf_sum(uint32_t s, const uint8_t *p, size_t n)
{
    for (; n > 1; p += 2, n -= 2)
        s += (uint32_t)p[0] << 8 | p[1];
    if (n)
        s += (uint32_t)p[0] << 8;
    return s;
}

/* Any context: fold carries into 16 bits. */
static uint16_t vf_fold(uint32_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)s;
}

/* Any context; see vnet_frame.h. */
uint16_t vnet_csum(uint32_t start, const uint8_t *p, size_t n)
{
    return (uint16_t)~vf_fold(vf_sum(start, p, n));
}

/* The transport checksum over the IPv4 pseudo-header and the segment `l4`. */
static int vf_l4_ok(const uint8_t *ip, const uint8_t *l4, size_t l4len, uint8_t proto)
{
    uint32_t s = vf_sum(0, ip + 12, 8); /* source and destination addresses */
    s += proto;
    s += (uint32_t)l4len;
    s = vf_sum(s, l4, l4len);
    return vf_fold(s) == 0xffff;
}

/* Any context; see vnet_frame.h. */
enum vnet_verdict vnet_frame_check(const uint8_t *f, size_t len, const uint8_t mac[6])
{
    if (len < 14)
        return VNET_DROP_RUNT;
    if (len > VNET_MAX_FRAME)
        return VNET_DROP_OVERSIZE;
    int group = f[0] & 1; /* broadcast and multicast */
    if (!group)
        for (int i = 0; i < 6; i++)
            if (f[i] != mac[i])
                return VNET_DROP_NOT_US;
    uint16_t type = (uint16_t)(f[12] << 8 | f[13]);
    const uint8_t *ip = f + 14;
    size_t room = len - 14;
    if (type == 0x0806)
        return room < 28 ? VNET_DROP_TRUNCATED : VNET_FRAME_OK;
    if (type != 0x0800)
        return VNET_DROP_ETHERTYPE;
    if (room < 20)
        return VNET_DROP_TRUNCATED;
    size_t ihl = (size_t)(ip[0] & 0xf) * 4, tot = (size_t)(ip[2] << 8 | ip[3]);
    if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl)
        return VNET_DROP_BAD_IP;
    if (tot > room || ihl > room)
        return VNET_DROP_TRUNCATED; /* padding after tot (short frames) is fine */
    if (vf_fold(vf_sum(0, ip, ihl)) != 0xffff)
        return VNET_DROP_CHECKSUM;
    if ((ip[6] & 0x3f) || ip[7]) /* a fragment: lwIP reassembles, then checks L4 */
        return VNET_FRAME_OK;
    const uint8_t *l4 = ip + ihl;
    size_t l4len = tot - ihl;
    switch (ip[9]) {
    case 6: /* TCP */
        if (l4len < 20 || (size_t)(l4[12] >> 4) * 4 > l4len)
            return VNET_DROP_TRUNCATED;
        return vf_l4_ok(ip, l4, l4len, 6) ? VNET_FRAME_OK : VNET_DROP_CHECKSUM;
    case 17: /* UDP: a zero checksum means "none" */
        if (l4len < 8)
            return VNET_DROP_TRUNCATED;
        if ((l4[6] | l4[7]) == 0)
            return VNET_FRAME_OK;
        return vf_l4_ok(ip, l4, l4len, 17) ? VNET_FRAME_OK : VNET_DROP_CHECKSUM;
    case 1: /* ICMP: no pseudo-header */
        if (l4len < 8)
            return VNET_DROP_TRUNCATED;
        return vf_fold(vf_sum(0, l4, l4len)) == 0xffff ? VNET_FRAME_OK : VNET_DROP_CHECKSUM;
    default:
        return VNET_FRAME_OK;
    }
}

/* Any context. */
const char *vnet_verdict_name(enum vnet_verdict v)
{
    static const char *const names[VNET_DROP_NKINDS] = {
        "ok", "runt", "oversize", "not_us", "ethertype", "truncated", "bad_ip", "checksum",
    };
    return (unsigned)v < VNET_DROP_NKINDS ? names[v] : "?";
}
