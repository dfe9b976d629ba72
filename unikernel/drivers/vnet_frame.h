/*
 * vnet_frame.h: the receive-side sanity check every frame passes before it reaches lwIP.
 * Portable (host unit tests). lwIP would drop most of these frames too, but silently;
 * here each one is classified and counted, so tests can prove garbage was seen and dropped.
 */
#ifndef UK_VNET_FRAME_H
#define UK_VNET_FRAME_H
#include <stddef.h>
#include <stdint.h>

enum vnet_verdict {
    VNET_FRAME_OK = 0,
    VNET_DROP_RUNT,      /* shorter than an Ethernet header (or the virtio header) */
    VNET_DROP_OVERSIZE,  /* longer than the MTU allows */
    VNET_DROP_NOT_US,    /* unicast to another MAC */
    VNET_DROP_ETHERTYPE, /* neither IPv4 nor ARP */
    VNET_DROP_TRUNCATED, /* an IPv4/ARP/TCP header or IP payload cut short */
    VNET_DROP_BAD_IP,    /* IPv4 header malformed (version, header length) */
    VNET_DROP_CHECKSUM,  /* IPv4 header or TCP/UDP/ICMP checksum wrong */
    VNET_DROP_NKINDS
};

#define VNET_MAX_FRAME 1514 /* 1500-byte MTU + Ethernet header, no VLAN tag */

/* Any context, no state. Classifies one Ethernet frame (without FCS) for a NIC with
 * address `mac`. */
enum vnet_verdict vnet_frame_check(const uint8_t *f, size_t len, const uint8_t mac[6]);
/* Any context. The Internet checksum (RFC 1071) of [p, p+n) added to the partial sum
 * `start` (e.g. an IPv4 pseudo-header): the one's complement of the folded 16-bit sum,
 * the value a checksum field holds. Shared by the filter, its tests and the test hub. */
uint16_t vnet_csum(uint32_t start, const uint8_t *p, size_t n);
/* Any context. Name of a verdict ("runt", ...). */
const char *vnet_verdict_name(enum vnet_verdict v);

#endif
