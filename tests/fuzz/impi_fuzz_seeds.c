/* Generates the fuzz seed corpus from real encodings made by the codec (a LAM-like 2-proc
 * client's startup stream, a short/long/control packet stream, COLL replies). Host tool:
 * `impi_fuzz_seeds DIR` writes DIR/{startup,packet,coll_reply}/seed-*. */
#include "impi_test_util.h"
#include "impi_wire.h"
#include <stdio.h>
#include <stdlib.h>

static uint8_t buf[1 << 18];

/* main thread: writes buf[0..n) to dir/sub/name. */
static void put(const char *dir, const char *sub, const char *name, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* main thread: appends a command to buf at *pos. */
static void cmd(size_t *pos, uint32_t c, const uint8_t *p, uint32_t len)
{
    size_t n;
    if (impi_cmd_encode(buf + *pos, sizeof buf - *pos, c, p, len, &n))
        exit(1);
    *pos += n;
}

/* main thread: appends a packet header (and payload bytes) to buf at *pos. */
static void pkt(size_t *pos, uint32_t type, uint32_t len, uint64_t msglen, uint64_t srq)
{
    struct impi_pkt p;
    struct impi_proc a = {{0}, 4242}, b = {{0}, 4343};
    impi_hostid_from_ipv4(a.hostid, 0x7f000002);
    impi_hostid_from_ipv4(b.hostid, 0x7f000001);
    if (impi_pkt_has_payload(type)) {
        memset(&p, 0, sizeof p);
        p.type = type;
        p.len = len;
        p.msglen = msglen;
        p.src = a;
        p.dest = b;
        p.srqid = srq;
        p.tag = 7;
    } else {
        impi_pkt_control(&p, type, &b, &a);
        p.srqid = srq;
    }
    impi_pkt_encode(&p, buf + *pos);
    *pos += IMPI_PKT_HDR_LEN;
    if (impi_pkt_has_payload(type)) {
        memset(buf + *pos, 0xab, len);
        *pos += len;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    uint8_t d[512];
    size_t n = 0;
    impi_put32(d, 0x1);
    cmd(&n, IMPI_CMD_AUTH, d, 4);
    impi_put32(d, 0);
    cmd(&n, IMPI_CMD_IMPI, d, 4);
    for (int i = 0; i < IMPI_NLABELS; i++) {
        impi_put32(d, impi_label_at(i)->label);
        uint32_t len = impi_t_label_data(i, d + 4, 2, 0x7f000002, 60097, 1000);
        cmd(&n, IMPI_CMD_COLL, d, len + 4);
    }
    cmd(&n, IMPI_CMD_DONE, NULL, 0);
    cmd(&n, IMPI_CMD_FINI, NULL, 0);
    put(argv[1], "startup", "seed-lam-2procs", n);

    n = 0;
    pkt(&n, IMPI_PK_DATA, 8, 8, 0);
    pkt(&n, IMPI_PK_DATASYNC, 300, 700, 1);
    pkt(&n, IMPI_PK_SYNCACK, 0, 0, 1);
    pkt(&n, IMPI_PK_DATA, 400, 700, 1);
    pkt(&n, IMPI_PK_PROTOACK, 0, 0, 0);
    pkt(&n, IMPI_PK_FINI, 0, 0, 0);
    memmove(buf + 1, buf, n); /* first byte picks maxlen: 1 * 512 + 1 */
    buf[0] = 1;
    put(argv[1], "packet", "seed-stream", n + 1);

    /* COLL reply for P_PID with 2 clients of 1 and 2 procs (shape byte 0: hosts known) */
    n = 0;
    buf[n++] = 2;
    buf[n++] = 0;
    impi_coll_reply_hdr(buf + n, IMPI_P_PID, 3, 24);
    n += 16;
    for (int i = 0; i < 3; i++, n += 8)
        impi_put64(buf + n, 100 + i);
    put(argv[1], "coll_reply", "seed-p-pid", n);
    n = 2;
    impi_coll_reply_hdr(buf + n, IMPI_H_PORT, 3, 12);
    n += 16;
    for (int i = 0; i < 3; i++, n += 4)
        impi_put32(buf + n, 60000 + i);
    put(argv[1], "coll_reply", "seed-h-port", n);
    return 0;
}
