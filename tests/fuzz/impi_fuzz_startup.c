/* libFuzzer target: a client->server startup byte stream as impi-server parses it
 * (command headers, AUTH mask, COLL labels with order and shape checks). */
#include "impi_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer thread; the input is owned by libFuzzer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct impi_label_seq seq = {0};
    struct impi_client_shape sh = {-1, -1};
    size_t pos = 0;
    while (pos < size) {
        struct impi_cmd c;
        int e = impi_cmd_get(data + pos, size - pos, IMPI_TO_SERVER, &c);
        if (e)
            return 0;
        if (size - pos - IMPI_CMD_HDR_LEN < c.len)
            return 0; /* truncated: the server reports it at EOF */
        const uint8_t *p = data + pos + IMPI_CMD_HDR_LEN;
        if (c.cmd == IMPI_CMD_COLL) {
            if (impi_coll_check(&seq, &sh, impi_get32(p), p + 4, c.len - 4))
                return 0;
        } else if (c.cmd == IMPI_CMD_AUTH) {
            uint32_t w;
            (void)impi_auth_choose(impi_get32(p), IMPI_AUTH_MASK_ALL, &w);
        }
        pos += IMPI_CMD_HDR_LEN + c.len;
    }
    return 0;
}
