/*
 * bench_chksum.c: what the TCP checksum of a 64 KiB message costs in the guest, for
 * `make bench` (tests/bench/run.sh): lwIP's LWIP_CHKSUM (ours, net/lwip-port/
 * lwip_chksum.c, 8 bytes per addition) against RFC 1071's sample loop, 2 bytes per step,
 * the shape of lwIP's default routine, and against a memcpy of the same bytes. Medians of
 * CHK_SAMPLES, each over CHK_BYTES; both sums are checked equal. Prints
 *   bench: chksum_us=X chksum2_us=Y memcpy_us=Z chksum_equal=1
 */
#include <string.h>
#include "lwipopts.h"
#include "uk/console.h"
#include "uk/ktest.h"
#include "uk/time.h"

#define CHK_BYTES   65536
#define CHK_SAMPLES 21

static uint8_t chk_src[CHK_BYTES] __attribute__((aligned(8))), chk_dst[CHK_BYTES];

/* RFC 1071's sample loop (its section 4.1): one native 16-bit load per step, as lwIP's
 * default routine. p is 2-byte aligned. */
static __attribute__((noinline)) uint16_t chk_plain(const uint8_t *p, int len)
{
    const uint16_t *w = (const uint16_t *)p;
    uint32_t sum = 0;
    for (; len > 1; len -= 2)
        sum += *w++;
    if (len > 0)
        sum += *(const uint8_t *)w;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

/* Task context, CPU 0 alone. */
KTEST(bench_chksum)
{
    uint64_t ours[CHK_SAMPLES], plain[CHK_SAMPLES], copy[CHK_SAMPLES];
    volatile uint16_t a = 0, b = 0;
    for (int i = 0; i < CHK_BYTES; i++)
        chk_src[i] = (uint8_t)(i * 131 + 7);
    for (int s = 0; s < CHK_SAMPLES; s++) {
        uint64_t t0 = rdtsc();
        a = uk_chksum(chk_src, CHK_BYTES);
        uint64_t t1 = rdtsc();
        b = chk_plain(chk_src, CHK_BYTES);
        uint64_t t2 = rdtsc();
        memcpy(chk_dst, chk_src, CHK_BYTES);
        __asm__ volatile("" ::: "memory"); /* the copy is kept */
        uint64_t t3 = rdtsc();
        ours[s] = t1 - t0;
        plain[s] = t2 - t1;
        copy[s] = t3 - t2;
    }
    kprintf("bench: chksum_us=%lu chksum2_us=%lu memcpy_us=%lu chksum_equal=%d\n",
            ktest_median(ours, CHK_SAMPLES) * 1000000 / tsc_hz,
            ktest_median(plain, CHK_SAMPLES) * 1000000 / tsc_hz,
            ktest_median(copy, CHK_SAMPLES) * 1000000 / tsc_hz, a == b);
    return 0;
}
