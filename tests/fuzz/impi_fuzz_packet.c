/* libFuzzer target: a host-to-host packet stream as the relay frames it, with flow-control
 * accounting per stream and an encode/decode round trip of every accepted header. */
#include "impi_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer thread; the input is owned by libFuzzer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct impi_flow_cfg cfg = {10, 20};
    struct impi_flow_rx rx = {0};
    struct impi_flow_tx tx = {0};
    size_t pos = 0;
    uint32_t maxlen = size ? (uint32_t)data[0] * 512 + 1 : 65536;
    while (pos < size) {
        struct impi_pkt p, q;
        size_t fr;
        int e = impi_frame(data + pos, size - pos, maxlen, &p, &fr);
        if (e == IMPI_E_AGAIN) {
            if (impi_frame_eof(size - pos) != IMPI_E_TRUNCATED)
                __builtin_trap();
            return 0;
        }
        if (e)
            return 0;
        uint8_t b[IMPI_PKT_HDR_LEN];
        impi_pkt_encode(&p, b);
        if (memcmp(b, data + pos, IMPI_PKT_HDR_LEN) || impi_pkt_decode(b, maxlen, &q))
            __builtin_trap(); /* decode(encode(x)) must be the identity */
        bool due;
        (void)impi_flow_received(&cfg, &rx, p.type, &due);
        if (p.type == IMPI_PK_PROTOACK)
            (void)impi_flow_acked(&cfg, &tx);
        else
            (void)impi_flow_sent(&cfg, &tx, p.type);
        pos += fr;
    }
    return 0;
}
