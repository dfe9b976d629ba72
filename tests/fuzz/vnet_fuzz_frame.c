/*
 * libFuzzer target: the NIC's receive filter (unikernel/drivers/vnet_frame.c) on any bytes
 * as one frame for the node's MAC, as virtio-net hands it over in the interrupt. It must
 * read only the frame (an exact-size copy: ASan reports a read past it) and give a known
 * verdict; an IPv4 frame it passes must have a header checksum that checks (recomputed
 * here with vnet_csum over the header it claims). A trap below or a sanitizer report is a
 * finding. Seeds: tests/fuzz/corpus/vnet_frame (`make vnet-fuzz-seeds`).
 */
#include "drivers/vnet_frame.h"
#include <stdlib.h>
#include <string.h>

#define ETH_HDR   14
#define ETH_IPV4  0x0800
#define IP_MIN    20
#define FUZZ_MAC0 0x52 /* the filter's MAC: 52:54:00:00:00:01, node 0's */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer's thread; the input is libFuzzer's. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t mac[6] = {FUZZ_MAC0, 0x54, 0, 0, 0, 1};
    uint8_t *f = malloc(size ? size : 1);
    if (!f)
        return 0;
    memcpy(f, data, size);
    enum vnet_verdict v = vnet_frame_check(f, size, mac);
    if ((unsigned)v >= VNET_DROP_NKINDS || !strcmp(vnet_verdict_name(v), "?"))
        __builtin_trap();
    if (v == VNET_FRAME_OK && size >= ETH_HDR + IP_MIN && (f[12] << 8 | f[13]) == ETH_IPV4) {
        size_t ihl = (size_t)(f[ETH_HDR] & 0xf) * 4;
        if (ihl < IP_MIN || ETH_HDR + ihl > size || vnet_csum(0, f + ETH_HDR, ihl))
            __builtin_trap(); /* passed with a header it did not check */
    }
    free(f);
    return 0;
}
