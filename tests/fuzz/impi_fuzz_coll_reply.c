/* libFuzzer target: a server->client COLL reply split into per-client pieces, as the relay
 * reads it. The first bytes choose the job's shape. */
#include "impi_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer thread; the input is owned by libFuzzer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct impi_client_shape sh[IMPI_MAX_CLIENTS];
    uint32_t off[IMPI_MAX_CLIENTS], len[IMPI_MAX_CLIENTS], label, mask;
    if (size < 2)
        return 0;
    uint32_t n = data[0] % (IMPI_MAX_CLIENTS + 1);
    for (uint32_t i = 0; i < IMPI_MAX_CLIENTS; i++) {
        sh[i].nhosts = (data[1] & 1) ? -1 : (int32_t)(i % 3 + 1);
        sh[i].nprocs = (int32_t)(i % 5 + 1);
    }
    struct impi_cmd c;
    if (impi_cmd_get(data + 2, size - 2, IMPI_TO_CLIENT, &c) || c.cmd != IMPI_CMD_COLL)
        return 0;
    if (size - 10 < c.len)
        return 0;
    if (impi_coll_split(data + 10, c.len, n, sh, &label, &mask, off, len) == IMPI_OK) {
        for (uint32_t i = 0; i < n; i++)
            if ((uint64_t)off[i] + len[i] > c.len - 8)
                __builtin_trap(); /* every piece must lie inside the reply */
    }
    return 0;
}
