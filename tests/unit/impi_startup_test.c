/* Unit tests for mpi/impi/impi_startup.c: commands, auth, labels, order, COLL replies. */
#include "impi_test_util.h"
#include "impi_wire.h"
#include "ut.h"

UT_TEST(impi_cmd_roundtrip)
{
    uint8_t buf[64], rank[4];
    size_t n;
    struct impi_cmd c;
    impi_put32(rank, 1);
    UT_EQ(impi_cmd_encode(buf, sizeof buf, IMPI_CMD_IMPI, rank, 4, &n), IMPI_OK);
    UT_EQ(n, 12);
    UT_EQ(memcmp(buf, "IMPI\0\0\0\4\0\0\0\1", 12), 0);
    UT_EQ(impi_cmd_get(buf, 7, IMPI_TO_SERVER, &c), IMPI_E_AGAIN);
    UT_EQ(impi_cmd_get(buf, n, IMPI_TO_SERVER, &c), IMPI_OK);
    UT_EQ(c.cmd, IMPI_CMD_IMPI);
    UT_EQ(c.len, 4);
    UT_EQ(impi_cmd_encode(buf, 11, IMPI_CMD_IMPI, rank, 4, &n), IMPI_E_NOSPACE);
}

UT_TEST(impi_cmd_rejects_garbage)
{
    struct impi_cmd c;
    UT_EQ(impi_cmd_get((const uint8_t *)"GET / HTTP/1.0", 14, IMPI_TO_SERVER, &c), IMPI_E_BAD_CMD);
    UT_EQ(impi_cmd_get((const uint8_t *)"AUTH\0\0\0\5", 8, IMPI_TO_SERVER, &c), IMPI_E_BAD_LEN);
    UT_EQ(impi_cmd_get((const uint8_t *)"AUTH\0\0\0\4", 8, IMPI_TO_CLIENT, &c), IMPI_E_BAD_CMD);
    UT_EQ(impi_cmd_get((const uint8_t *)"COLL\0\0\0\3", 8, IMPI_TO_SERVER, &c), IMPI_E_BAD_LEN);
    UT_EQ(impi_cmd_get((const uint8_t *)"COLL\0\0\0\7", 8, IMPI_TO_CLIENT, &c), IMPI_E_BAD_LEN);
    UT_EQ(impi_cmd_get((const uint8_t *)"COLL\x7f\0\0\0", 8, IMPI_TO_SERVER, &c), IMPI_E_BAD_LEN);
    UT_EQ(impi_cmd_get((const uint8_t *)"FINI\0\0\0\1", 8, IMPI_TO_SERVER, &c), IMPI_E_BAD_LEN);
    UT_EQ(impi_cmd_get((const uint8_t *)"DONE\0\0\0\4", 8, IMPI_TO_SERVER, &c), IMPI_OK);
}

UT_TEST(impi_auth)
{
    uint8_t b[8];
    uint32_t w = 9;
    UT_EQ(impi_auth_choose(0x1, 0x3, &w), IMPI_OK);
    UT_EQ(w, IMPI_AUTH_NONE);
    UT_EQ(impi_auth_choose(0x3, 0x3, &w), IMPI_OK);
    UT_EQ(w, IMPI_AUTH_KEY);
    UT_EQ(impi_auth_choose(0x0, 0x3, &w), IMPI_E_BAD_VALUE); /* LAM's "no auth" mask */
    UT_EQ(impi_auth_choose(0x2, 0x1, &w), IMPI_E_BAD_VALUE);
    impi_auth_reply_put(b, IMPI_AUTH_KEY);
    UT_EQ(memcmp(b, "\0\0\0\1\0\0\0\0", 8), 0);
    UT_EQ(impi_auth_reply_get(b, &w), IMPI_OK);
    UT_EQ(w, 1);
    b[3] = 2;
    UT_EQ(impi_auth_reply_get(b, &w), IMPI_E_BAD_VALUE);
}

/* LAM's whole client->server stream for a 1-proc client is 296 bytes and the server's
 * answer in a 2-client job 428 bytes (spec §3.8): rebuild both from the codec. */
UT_TEST(impi_startup_lam_sizes)
{
    size_t up = 12 + 12, down = 8 + 12, n;
    uint8_t d[256], cmd[300];
    struct impi_label_seq seq = {0};
    struct impi_client_shape sh = {-1, -1};
    for (int i = 0; i < IMPI_NLABELS; i++) {
        uint32_t len = impi_t_label_data(i, d + 4, 1, 0x7f000002, 60097, 4242);
        impi_put32(d, impi_label_at(i)->label);
        UT_EQ(impi_coll_check(&seq, &sh, impi_label_at(i)->label, d + 4, len), IMPI_OK);
        UT_EQ(impi_cmd_encode(cmd, sizeof cmd, IMPI_CMD_COLL, d, len + 4, &n), IMPI_OK);
        up += n;
        down += 16 + 2 * len;
    }
    up += 8 + 8; /* DONE, FINI */
    down += 8;   /* DONE */
    UT_EQ(up, 296);
    UT_EQ(down, 428);
    UT_EQ(sh.nhosts, 1);
    UT_EQ(sh.nprocs, 1);
}

UT_TEST(impi_label_order_and_lengths)
{
    uint8_t d[64];
    struct impi_label_seq seq = {0};
    struct impi_client_shape sh = {-1, -1};
    impi_put32(d, 2);
    UT_EQ(impi_coll_check(&seq, &sh, 0x9999, d, 4), IMPI_E_BAD_LABEL);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_H_PORT, d, 4), IMPI_E_LABEL_ORDER); /* no NHOSTS */
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_NHOSTS, d, 4), IMPI_OK);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_NHOSTS, d, 4), IMPI_E_LABEL_ORDER);  /* repeat */
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_VERSION, d, 8), IMPI_E_LABEL_ORDER); /* back */
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_NPROCS, d, 5), IMPI_E_BAD_LEN);
    impi_put32(d, 3);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_NPROCS, d, 4), IMPI_OK);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_H_PORT, d, 4), IMPI_E_BAD_LEN); /* 2 hosts */
    impi_put32(d, 70000);
    impi_put32(d + 4, 1);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_H_PORT, d, 8), IMPI_E_BAD_VALUE);
    impi_put32(d, 1);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_H_NPROCS, d, 8), IMPI_E_BAD_VALUE); /* sum 2 != 3 */
    impi_put32(d + 4, 2);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_H_NPROCS, d, 8), IMPI_OK);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_P_PID, d, 8 * 3), IMPI_OK);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_P_IPV6, d, 16 * 3), IMPI_E_LABEL_ORDER);
}

UT_TEST(impi_label_values)
{
    uint8_t d[32];
    struct impi_label_seq seq = {0};
    struct impi_client_shape sh = {-1, -1};
    impi_put64(d, 0x100000000ull); /* 1.0 only: 0.0 is mandatory */
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_VERSION, d, 8), IMPI_E_BAD_VALUE);
    impi_put64(d, 0);
    impi_put64(d + 8, 0);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_VERSION, d, 16), IMPI_E_BAD_VALUE); /* not ascending */
    impi_put64(d + 8, 1);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_VERSION, d, 12), IMPI_E_BAD_LEN);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_VERSION, d, 16), IMPI_OK);
    impi_put32(d, 0);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_NHOSTS, d, 4), IMPI_E_BAD_VALUE);
    seq.next = 4;
    impi_put32(d, 1000);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_TAGUB, d, 4), IMPI_E_BAD_VALUE);
    impi_put32(d, (uint32_t)-2);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_COLL_XSIZE, d, 4), IMPI_E_BAD_VALUE);
    impi_put32(d, (uint32_t)-1);
    UT_EQ(impi_coll_check(&seq, &sh, IMPI_C_COLL_XSIZE, d, 4), IMPI_OK);
}

UT_TEST(impi_coll_split_reply)
{
    struct impi_client_shape sh[2] = {{1, 2}, {1, 1}};
    uint8_t p[8 + 24];
    uint32_t lab, mask, off[2], len[2];
    impi_put32(p, IMPI_P_PID);
    impi_put32(p + 4, 3);
    UT_EQ(impi_coll_split(p, sizeof p, 2, sh, &lab, &mask, off, len), IMPI_OK);
    UT_EQ(lab, IMPI_P_PID);
    UT_EQ(off[1], 16);
    UT_EQ(len[1], 8);
    UT_EQ(impi_coll_split(p, sizeof p - 1, 2, sh, &lab, &mask, off, len), IMPI_E_BAD_LEN);
    impi_put32(p + 4, 7); /* a third client in a 2-client job */
    UT_EQ(impi_coll_split(p, sizeof p, 2, sh, &lab, &mask, off, len), IMPI_E_BAD_VALUE);
    impi_put32(p + 4, 1); /* only client 0 submitted: 16 bytes, not 24 */
    UT_EQ(impi_coll_split(p, sizeof p, 2, sh, &lab, &mask, off, len), IMPI_E_BAD_LEN);
    impi_put32(p, 0x4242);
    UT_EQ(impi_coll_split(p, sizeof p, 2, sh, &lab, &mask, off, len), IMPI_E_BAD_LABEL);
    uint8_t h[16];
    impi_coll_reply_hdr(h, IMPI_C_NPROCS, 3, 8);
    UT_EQ(impi_get32(h + 4), 16);
    UT_EQ(impi_get32(h + 12), 3);
}

UT_TEST(impi_strerror_names)
{
    UT_ASSERT(strcmp(impi_strerror(IMPI_E_LABEL_ORDER), "COLL label repeated or out of order") ==
              0);
    UT_ASSERT(strcmp(impi_strerror(-3), "unknown IMPI error") == 0);
    UT_ASSERT(strcmp(impi_strerror(IMPI_E__COUNT), "unknown IMPI error") == 0);
}
