/* Writes the seed corpus of mpe_fuzz_rx (scene: mpe_fuzz.h) from the codec's own
 * encodings: `mpe_fuzz_seeds DIR` writes DIR/seed-*. Streams node 0 could really send
 * after its HELLO: eager messages on every path, a rendezvous each way, credits, BYE. */
#include "mpe_fuzz.h"
#include "mpe_wire.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t buf[1 << 18];
static size_t pos;
static uint32_t seq;

/* main thread: starts a stream whose pieces are cut by `chunk` (mpe_fuzz.h). */
static void begin(uint8_t chunk)
{
    buf[0] = chunk;
    pos = 1;
    seq = 1;
}

/* main thread: appends a header from rank `src` to rank `dst`, and `len` payload bytes
 * if it carries them (EAGER, DATA). */
static void hdr(int type, int src, int dst, int tag, uint32_t handle, uint32_t aux, uint64_t len)
{
    struct mpe_wire w = {.type = (uint8_t)type,
                         .seq = seq++,
                         .ctx = MF_CTX,
                         .src = src,
                         .tag = tag,
                         .src_world = (uint32_t)src,
                         .dst_world = (uint32_t)dst,
                         .handle = handle,
                         .aux = aux,
                         .len = len};
    if (type == MPE_W_CREDIT)
        w.aux2 = aux;
    mpe_wire_encode(&w, buf + pos);
    pos += MPE_WIRE_HDR;
    if (type == MPE_W_EAGER || type == MPE_W_DATA) {
        for (uint64_t i = 0; i < len; i++)
            buf[pos + i] = (uint8_t)(i * 7 + 3);
        pos += len;
    }
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
    /* Eager: into a posted receive, into a slot, truncated, empty, unexpected; then BYE. */
    for (int chunk = 0; chunk < 5; chunk++) {
        static const uint8_t cut[] = {0, 1, 37, 0x81, 0x85};
        begin(cut[chunk]);
        hdr(MPE_W_EAGER, 0, 2, 1, 0, 0, 10);
        hdr(MPE_W_EAGER, 1, 3, 2, 0, 0, 300);
        hdr(MPE_W_EAGER, 0, 2, 9, 0, 0, 1000);
        hdr(MPE_W_EAGER, 1, 3, 3, 0, 0, 200);
        hdr(MPE_W_EAGER, 0, 3, 4, 0, 0, 0);
        hdr(MPE_W_EAGER, 0, 3, 4, 0, 0, 2000);
        hdr(MPE_W_BYE, 0, 0, 0, 0, 0, 0);
        char name[32];
        snprintf(name, sizeof name, "seed-eager-%02x", cut[chunk]);
        put(argv[1], name);
    }
    /* Rendezvous both ways: an RTS that node 1 answers with CTS (its first receive handle)
     * and our DATA; CTS for each of node 1's RTS; CREDIT for its eager message. In one
     * piece (the CTS find DATA still queued) and in pieces with receives between. */
    for (int k = 0; k < 2; k++) {
        begin(k ? 0x80 | 100 : 0);
        hdr(MPE_W_RTS, 1, 3, 2, 5, 0, 3000);
        hdr(MPE_W_DATA, 0, 0, 0, MF_HANDLE0, 0, 3000);
        for (unsigned i = 0; i < MF_NRDV; i++)
            hdr(MPE_W_CTS, 0, 0, 0, MF_HANDLE0 + i, 9, MF_RDV_LEN - i);
        hdr(MPE_W_CREDIT, 0, 0, 0, 0, 1, 0);
        put(argv[1], k ? "seed-rendezvous-e4" : "seed-rendezvous-00");
    }
    /* Medium messages to ranks 2 and 3 in turn, received as they stream: enough slots
     * come back that node 1 sends a CREDIT. */
    begin(0x81);
    for (int i = 0; i < 9; i++)
        hdr(MPE_W_EAGER, i & 1, 2 + (i & 1), 7, 0, 0, 300);
    put(argv[1], "seed-credit");
    /* Rendezvous truncated to a 16-byte receive, and one left unexpected. */
    begin(7);
    hdr(MPE_W_RTS, 0, 3, 3, 6, 0, 5000);
    hdr(MPE_W_DATA, 0, 0, 0, MF_HANDLE0, 0, 16);
    hdr(MPE_W_RTS, 1, 2, 8, 7, 0, 1 << 20);
    put(argv[1], "seed-truncate");
    /* A header out of sequence: the job ends. */
    begin(0);
    hdr(MPE_W_EAGER, 0, 2, 1, 0, 0, 4);
    seq++;
    hdr(MPE_W_EAGER, 0, 2, 1, 0, 0, 4);
    put(argv[1], "seed-bad-seq");
    return 0;
}
