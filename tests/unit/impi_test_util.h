/* impi_test_util.h: builds LAM-like startup submissions for the IMPI unit tests and fuzz
 * seeds. Test-only; buffers are owned by the caller. */
#ifndef IMPI_TEST_UTIL_H
#define IMPI_TEST_UTIL_H
#include "impi_wire.h"

/* Writes the data LAM 7.1.4 submits for label order index i (1 host, np procs, host
 * address ip, port, pids pid0..) into out; returns its length. */
static inline uint32_t impi_t_label_data(int i, uint8_t *out, uint32_t np, uint32_t ip,
                                         uint32_t port, int64_t pid0)
{
    const struct impi_label_info *li = impi_label_at(i);
    switch (li->label) {
    case IMPI_C_VERSION:
        impi_put64(out, 0);
        return 8;
    case IMPI_C_NHOSTS:
        impi_put32(out, 1);
        return 4;
    case IMPI_C_NPROCS:
    case IMPI_H_NPROCS:
        impi_put32(out, np);
        return 4;
    case IMPI_C_DATALEN:
        impi_put32(out, 65536);
        return 4;
    case IMPI_C_TAGUB:
        impi_put32(out, 2147483647u);
        return 4;
    case IMPI_C_COLL_XSIZE:
    case IMPI_C_COLL_MAXLINEAR:
        impi_put32(out, 0xffffffffu);
        return 4;
    case IMPI_H_IPV6:
        impi_hostid_from_ipv4(out, ip);
        return 16;
    case IMPI_H_PORT:
        impi_put32(out, port);
        return 4;
    case IMPI_H_ACKMARK:
        impi_put32(out, 10);
        return 4;
    case IMPI_H_HIWATER:
        impi_put32(out, 20);
        return 4;
    case IMPI_P_IPV6:
        for (uint32_t k = 0; k < np; k++)
            impi_hostid_from_ipv4(out + 16 * k, ip);
        return 16 * np;
    default:
        for (uint32_t k = 0; k < np; k++)
            impi_put64(out + 8 * k, (uint64_t)(pid0 + k));
        return 8 * np;
    }
}
#endif
