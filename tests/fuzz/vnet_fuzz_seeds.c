/* Writes the seed corpus of vnet_fuzz_frame: `vnet_fuzz_seeds DIR` writes DIR/seed-*,
 * frames the filter passes (TCP with and without payload, at full size, UDP with and
 * without a checksum, ICMP, IPv4 options, a fragment, ARP broadcast, multicast) and a few
 * it drops (a bad checksum, another MAC, IPv6's ethertype, a runt). */
#include "drivers/vnet_frame.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETH  14
#define TCP  6
#define UDP  17
#define ICMP 1

static const uint8_t mac[6] = {0x52, 0x54, 0, 0, 0, 1};
static uint8_t f[VNET_MAX_FRAME];

/* main thread: writes f[0..n) to dir/seed-name after checking the filter's verdict. */
static void put(const char *dir, const char *name, size_t n, enum vnet_verdict want)
{
    char path[512];
    if (vnet_frame_check(f, n, mac) != want) {
        fprintf(stderr, "vnet_fuzz_seeds: %s: verdict %s\n", name,
                vnet_verdict_name(vnet_frame_check(f, n, mac)));
        exit(1);
    }
    snprintf(path, sizeof path, "%s/seed-%s", dir, name);
    FILE *o = fopen(path, "wb");
    if (!o || fwrite(f, 1, n, o) != n || fclose(o)) {
        perror(path);
        exit(1);
    }
}

/* main thread: v as a big-endian 16-bit field at p. */
static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* main thread: an IPv4 frame to us of `proto` with an `l4len`-byte transport part (a
 * header of `l4hdr` bytes, then a pattern), `opt` bytes of IP options, checksums right.
 * Returns its length. */
static size_t ipv4(int proto, size_t l4hdr, size_t l4len, size_t opt, int frag)
{
    size_t ihl = 20 + opt, tot = ihl + l4len;
    memset(f, 0, sizeof f);
    memcpy(f, mac, 6);
    memcpy(f + 6, "\x52\x54\x00\x00\x00\x02", 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + ETH, *l4 = ip + ihl;
    ip[0] = (uint8_t)(0x40 | ihl / 4);
    put16(ip + 2, (uint32_t)tot);
    if (frag)
        put16(ip + 6, 0x2000); /* more fragments */
    ip[8] = 64;
    ip[9] = (uint8_t)proto;
    memcpy(ip + 12, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    for (size_t i = 0; i < opt; i++)
        ip[20 + i] = 1; /* NOP options */
    put16(ip + 10, vnet_csum(0, ip, ihl));
    for (size_t i = l4hdr; i < l4len; i++)
        l4[i] = (uint8_t)(i * 7);
    uint32_t pseudo = (uint32_t)proto + (uint32_t)l4len;
    for (int i = 12; i < 20; i += 2)
        pseudo += (uint32_t)ip[i] << 8 | ip[i + 1];
    if (proto == TCP) {
        l4[12] = 5 << 4;
        put16(l4 + 16, vnet_csum(pseudo, l4, l4len));
    } else if (proto == UDP) {
        put16(l4 + 4, (uint32_t)l4len);
        put16(l4 + 6, vnet_csum(pseudo, l4, l4len));
    } else if (proto == ICMP) {
        l4[0] = 8; /* echo request */
        put16(l4 + 2, vnet_csum(0, l4, l4len));
    }
    return ETH + tot;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: vnet_fuzz_seeds DIR\n");
        return 2;
    }
    const char *d = argv[1];
    put(d, "tcp-empty", ipv4(TCP, 20, 20, 0, 0), VNET_FRAME_OK);
    put(d, "tcp-100", ipv4(TCP, 20, 120, 0, 0), VNET_FRAME_OK);
    put(d, "tcp-full", ipv4(TCP, 20, 1480, 0, 0), VNET_FRAME_OK);
    put(d, "udp", ipv4(UDP, 8, 64, 0, 0), VNET_FRAME_OK);
    size_t n = ipv4(UDP, 8, 64, 0, 0);
    f[ETH + 20 + 6] = f[ETH + 20 + 7] = 0; /* "no checksum" */
    put(d, "udp-nocsum", n, VNET_FRAME_OK);
    put(d, "icmp", ipv4(ICMP, 8, 40, 0, 0), VNET_FRAME_OK);
    put(d, "ip-options", ipv4(TCP, 20, 40, 8, 0), VNET_FRAME_OK);
    put(d, "fragment", ipv4(UDP, 8, 64, 0, 1), VNET_FRAME_OK);
    n = ipv4(TCP, 20, 20, 0, 0);
    put(d, "tcp-padded", 60, VNET_FRAME_OK);
    n = ipv4(TCP, 20, 120, 0, 0);
    f[n - 1] ^= 1;
    put(d, "tcp-bad-csum", n, VNET_DROP_CHECKSUM);
    n = ipv4(TCP, 20, 20, 0, 0);
    f[5] = 9;
    put(d, "not-us", n, VNET_DROP_NOT_US);
    f[0] = 0x01, f[1] = 0x00, f[2] = 0x5e; /* IPv4 multicast */
    put(d, "multicast", n, VNET_FRAME_OK);
    n = ipv4(TCP, 20, 20, 0, 0);
    put16(f + 12, 0x86dd);
    put(d, "ipv6-type", n, VNET_DROP_ETHERTYPE);
    memset(f, 0xff, 6); /* ARP request, broadcast */
    put16(f + 12, 0x0806);
    memset(f + ETH, 0, 28);
    put16(f + ETH, 1);
    put16(f + ETH + 2, 0x0800);
    f[ETH + 4] = 6, f[ETH + 5] = 4, f[ETH + 7] = 1;
    put(d, "arp", ETH + 28, VNET_FRAME_OK);
    put(d, "runt", 13, VNET_DROP_RUNT);
    return 0;
}
