/*
 * lwip_chksum.c: the Internet checksum (RFC 1071) for lwIP, as its LWIP_CHKSUM
 * (lwipopts.h), 8 bytes per addition. lwIP's own (its algorithm 2) adds 2 bytes per step:
 * under QEMU's TCG that loop takes about twice as long, and eight times a copy of the same
 * bytes (`make bench`'s "net: TCP checksum" rows), on the sender and on the receiver: time
 * a broadcast takes from computation (figs 4/5).
 *
 * Why 8 bytes at once give the same sum: the ones' complement sum of 16-bit words does not
 * depend on how they are grouped (RFC 1071, "parallel summation"), so adding 64-bit words
 * with the carry out of bit 63 added back in, then folding 64 to 16 bits, sums the same
 * 16-bit lanes. The words are read from data's start, whatever its address (unaligned
 * loads through __builtin_memcpy: under the kernel's -ffreestanding a plain memcpy is a
 * call), so each lane holds the two bytes at an even offset from data, in memory order,
 * as lwIP's native 16-bit loads do; the byte order of the result is lwIP's.
 */
#include "lwipopts.h"
#include <stddef.h>
#include <stdint.h>

#define CHK_WORD   sizeof(uint64_t)
#define CHK_UNROLL 4 /* words per step of the main loop */

/* sum + w in ones' complement: the carry out of bit 63 comes back in at bit 0. */
static inline uint64_t add_carry(uint64_t sum, uint64_t w)
{
    sum += w;
    return sum + (sum < w);
}

/* Any context. The ones' complement sum of data[0..len) as 16-bit words (an odd last byte
 * padded with a zero byte after it), folded to 16 bits, not inverted: what lwIP expects
 * of LWIP_CHKSUM. len <= 0 sums nothing (0). */
unsigned short uk_chksum(const void *data, int len)
{
    const unsigned char *p = data;
    uint64_t sum = 0, w[CHK_UNROLL];
    for (; len >= (int)sizeof w; p += sizeof w, len -= (int)sizeof w) {
        __builtin_memcpy(w, p, sizeof w);
        for (int i = 0; i < CHK_UNROLL; i++)
            sum = add_carry(sum, w[i]);
    }
    for (; len >= (int)CHK_WORD; p += CHK_WORD, len -= (int)CHK_WORD) {
        __builtin_memcpy(w, p, CHK_WORD);
        sum = add_carry(sum, w[0]);
    }
    if (len > 0) {
        w[0] = 0;
        __builtin_memcpy(w, p, (size_t)len);
        sum = add_carry(sum, w[0]);
    }
    sum = (sum & UINT32_MAX) + (sum >> 32); /* 33 bits at most */
    sum = (sum & UINT32_MAX) + (sum >> 32);
    sum = (sum & UINT16_MAX) + (sum >> 16); /* 17 bits at most */
    sum = (sum & UINT16_MAX) + (sum >> 16);
    return (unsigned short)sum;
}
