/* Writes the seed corpus of mpe_fuzz_impi (scene: mpe_fuzz_impi.h) from the codec's own
 * encodings: `mpe_fuzz_impi_seeds DIR` writes DIR/seed-*. Streams host 0 could really
 * send: short messages on every path, the answers to the node's DATASYNCs and the rest of
 * its long send's flow control, long messages into a posted, a late and a small receive,
 * CANCEL, FINI. */
#include "mpe_fuzz_impi.h"
#include <stdio.h>
#include <stdlib.h>

static uint8_t buf[1 << 18];
static size_t pos;
static uint64_t seq;
static struct impi_proc procs[MFI_WORLD];

/* main thread: starts a stream whose pieces are cut by `chunk` (mpe_fuzz_impi.h). */
static void begin(uint8_t chunk)
{
    buf[0] = chunk;
    pos = 1;
    seq = 0;
}

/* main thread: appends a packet from world rank src to dst; DATA and DATASYNC carry `len`
 * bytes of a message of `msglen`. */
static void pkt(uint32_t type, int src, int dst, int tag, uint32_t len, uint64_t msglen,
                uint64_t srqid, uint64_t drqid)
{
    struct impi_pkt p;
    static const struct impi_proc none = {.pid = -1};
    impi_pkt_control(&p, type, src < 0 ? &none : &procs[src], dst < 0 ? &none : &procs[dst]);
    if (impi_pkt_has_payload(type)) {
        p.len = len;
        p.msglen = msglen;
        p.lsrank = src;
        p.tag = tag;
        p.cid = MFI_CTX;
        p.count = 0;
    }
    p.srqid = srqid;
    p.drqid = drqid;
    p.seqnum = seq++;
    impi_pkt_encode(&p, buf + pos);
    pos += IMPI_PKT_HDR_LEN;
    if (impi_pkt_has_payload(type)) {
        for (uint32_t i = 0; i < len; i++)
            buf[pos + i] = (uint8_t)(i * 7 + 3);
        pos += len;
    }
}

static void data(int src, int dst, int tag, uint32_t len)
{
    pkt(IMPI_PK_DATA, src, dst, tag, len, len, 0, 0);
}

/* main thread: writes buf[0..pos) to dir/name. */
static void put(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, pos, f) != pos || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    mfi_procs(procs);
    /* Short messages: into posted receives (also truncated), unexpected, empty. (No FINI:
     * the node's Ssend and long send still wait for their SYNCACK, so FINI ends the job.) */
    static const uint8_t cut[] = {0, 1, 37, 0x81, 0x85};
    for (size_t k = 0; k < sizeof cut; k++) {
        begin(cut[k]);
        data(0, 2, 1, 10);
        data(1, 2, 5, 300);
        data(1, 3, 2, 1000);
        data(0, 3, 3, 200);
        data(0, 3, 4, 0);
        data(1, 3, 4, MFI_MAXLEN);
        char name[32];
        snprintf(name, sizeof name, "seed-short-%02x", cut[k]);
        put(argv[1], name);
    }
    /* The answers to the node's sends: SYNCACK for its Ssend and its long send (whose rest
     * then goes), PROTOACKs for both pairs; a CANCEL; FINI. */
    for (int k = 0; k < 2; k++) {
        begin(k ? 0x80 | 50 : 0);
        pkt(IMPI_PK_SYNCACK, 0, 3, 0, 0, 0, MFI_HANDLE0, 0);
        pkt(IMPI_PK_SYNCACK, 0, 3, 0, 0, 0, MFI_HANDLE0 + 1, 7);
        pkt(IMPI_PK_PROTOACK, 1, 2, 0, 0, 0, 0, 0);
        pkt(IMPI_PK_PROTOACK, 0, 3, 0, 0, 0, 0, 0);
        pkt(IMPI_PK_CANCEL, 1, 3, 0, 0, 0, 42, 0);
        pkt(IMPI_PK_FINI, -1, -1, 0, 0, 0, 0, 0);
        put(argv[1], k ? "seed-answers-b2" : "seed-answers-00");
    }
    /* A long message into the posted receive (rank 1 to rank 3, tag 2): DATASYNC, then
     * DATA with our SYNCACK's drqid; the same with a piece cut and receives between. */
    for (int k = 0; k < 2; k++) {
        begin(k ? 0x80 | 90 : 0);
        pkt(IMPI_PK_DATASYNC, 1, 3, 2, MFI_MAXLEN, 4500, 11, 0);
        pkt(IMPI_PK_DATA, 1, 3, 2, MFI_MAXLEN, 4500, 11, MFI_HANDLE0);
        pkt(IMPI_PK_DATA, 1, 3, 2, 500, 4500, 11, MFI_HANDLE0);
        data(1, 3, 2, 20);
        put(argv[1], k ? "seed-long-da" : "seed-long-00");
    }
    /* A long message into the 16-byte receive (truncated), and one left unexpected (the
     * receives at the end take it and answer SYNCACK). */
    begin(7);
    pkt(IMPI_PK_DATASYNC, 0, 3, 3, MFI_MAXLEN, 4100, 12, 0);
    pkt(IMPI_PK_DATA, 0, 3, 3, MFI_MAXLEN, 4100, 12, MFI_HANDLE0);
    pkt(IMPI_PK_DATA, 0, 3, 3, 100, 4100, 12, MFI_HANDLE0);
    pkt(IMPI_PK_DATASYNC, 0, 2, 9, MFI_MAXLEN, 1 << 20, 13, 0);
    pkt(IMPI_PK_DATASYNC, 1, 3, 8, 30, 30, 14, 0);
    put(argv[1], "seed-truncate");
    /* Many short messages to rank 3: its posted receives fill, the rest waits; PROTOACKs go
     * back every ackmark. */
    begin(0x81);
    for (int i = 0; i < 20; i++)
        data(i & 1, 3, 2 + (i % 3), 100 + 50 * (uint32_t)i);
    put(argv[1], "seed-burst");
    /* A packet the node must refuse: a source it does not know. */
    begin(0);
    data(0, 2, 1, 4);
    procs[0].pid = 7;
    data(0, 2, 1, 4);
    put(argv[1], "seed-bad-source");
    return 0;
}
