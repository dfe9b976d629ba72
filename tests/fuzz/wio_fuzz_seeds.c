/* Writes the seed corpora of wio_fuzz_wire and wio_fuzz_rx: `wio_fuzz_seeds DIR RXDIR`.
 * DIR/seed-*: each a header, a connection state and a payload in wio_fuzz_wire's input
 * format: every packet type in the state where it is valid (the check passes; verified
 * here), a few invalid ones (bad magic, wrong sequence, DATA past the CTS length), and
 * start-up payloads (REGISTER, TABLE, REFUSE) the encoders make.
 * RXDIR/seed-*: streams from process 0 to wio_fuzz_rx's core (process 1): HELLO, then an
 * expected eager message, a whole rendezvous, the CTS of the core's own send, enough
 * packets to make it ACK, an unexpected message, BYE, and garbage. */
#include "wio_wire.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_BYTES 24
#define MAXSEED     8192

static uint8_t buf[MAXSEED];

/* main thread: writes buf[0..n) to dir/seed-name. */
static void put(const char *dir, const char *name, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/seed-%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* main thread: header h, state (phase, rseq = sent = 10 when open, peer 3, self 5, 8
 * processes, a live rendezvous of 1000 bytes taking 600, none done) and `pn` payload
 * bytes; `want` the check's verdict, confirmed before writing. */
static void seed(const char *dir, const char *name, struct wio_hdr h, enum wio_phase ph,
                 const uint8_t *pay, size_t pn, int want)
{
    struct wio_conn_view v = {.phase = ph,
                              .rseq = ph == WIO_PH_OPEN ? 10 : 0,
                              .sent = 10,
                              .peer = ph == WIO_PH_ACCEPTED ? WIO_ANY : 3,
                              .self = 5,
                              .nprocs = 8};
    struct wio_rdv_view r = {.live = 1, .len = 1000, .take = 600, .done = 0};
    if (wio_hdr_check(&h, &v, &r) != want) {
        fprintf(stderr, "wio_fuzz_seeds: %s: %s\n", name, wio_err_name(wio_hdr_check(&h, &v, &r)));
        exit(1);
    }
    wio_hdr_encode(&h, buf);
    uint8_t *s = buf + WIO_HDR;
    memset(s, 0, STATE_BYTES);
    s[0] = (uint8_t)ph;
    wio_put32(s + 1, v.rseq);
    wio_put32(s + 5, v.sent);
    s[9] = v.peer == WIO_ANY ? 0xff : (uint8_t)v.peer;
    s[10] = 5;
    s[11] = 7; /* nprocs 8 */
    s[12] = 1;
    wio_put32(s + 13, 1000);
    wio_put32(s + 17, 600);
    s[23] = 1;
    memcpy(s + STATE_BYTES, pay, pn);
    put(dir, name, WIO_HDR + STATE_BYTES + pn);
}

/* main thread: a header of `type` from peer 3 to us (5); sequenced when `ph` is OPEN. */
static struct wio_hdr hdr(uint8_t type, enum wio_phase ph)
{
    struct wio_hdr h = wio_hdr_make(type);
    h.seq = ph == WIO_PH_OPEN ? 10 : 0;
    h.ack = 7;
    h.src = 3;
    h.dst = 5;
    h.group = 0x1234567890abcdefull;
    h.tag = 42;
    return h;
}

/* The key of the group of every process of a 2-process instance (PROTOCOL.md 5). */
static uint64_t world_key(void)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const uint32_t v[5] = {0, 2, 0, 1, 0}; /* gid, count, members 0 and 1, before */
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 4; k++) {
            h ^= (uint8_t)(v[i] >> (8 * k));
            h *= 0x100000001b3ull;
        }
    return h;
}

static size_t slen;

/* main thread: append a packet from process 0 to 1 to the stream in buf. */
static void pkt(uint8_t type, uint32_t seq, uint64_t tag, uint64_t len, uint32_t msgid,
                uint32_t plen, uint64_t offset)
{
    struct wio_hdr h = wio_hdr_make(type);
    h.seq = seq;
    h.src = 0;
    h.dst = 1;
    h.group = world_key();
    h.tag = tag;
    h.len = len;
    h.msgid = msgid;
    h.plen = plen;
    h.offset = offset;
    if (slen + WIO_HDR + plen > MAXSEED)
        exit(1);
    wio_hdr_encode(&h, buf + slen);
    memset(buf + slen + WIO_HDR, 0x5a, plen);
    slen += WIO_HDR + plen;
}

/* main thread: a new stream: the piece-size byte, then HELLO. */
static void stream(uint8_t piece)
{
    buf[0] = piece;
    slen = 1;
    pkt(WIO_T_HELLO, 0, 0, 0, 0, 0, 0);
}

/* main thread: the rx corpus. */
static void rx_seeds(const char *d)
{
    stream(0);
    pkt(WIO_T_EAGER, 0, 0, 10, 0, 10, 0);
    pkt(WIO_T_BYE, 1, 0, 0, 0, 0, 0);
    put(d, "eager-bye", slen);
    stream(13);
    pkt(WIO_T_RTS, 0, 1, 1000, 7, 0, 0);
    pkt(WIO_T_DATA, 1, 1, 1000, 7, 600, 0);
    pkt(WIO_T_DATA, 2, 1, 1000, 7, 400, 600);
    put(d, "rendezvous", slen);
    stream(17); /* longer than the receive: the CTS asks for 1000 of 1500 */
    pkt(WIO_T_RTS, 0, 1, 1500, 8, 0, 0);
    pkt(WIO_T_DATA, 1, 1, 1500, 8, 1000, 0);
    put(d, "rendezvous-truncated", slen);
    stream(96);
    pkt(WIO_T_CTS, 0, 2, 1000, 0, 0, 0); /* the core's send: msgid 0 */
    put(d, "cts", slen);
    stream(1);
    for (uint32_t i = 0; i < WIO_ACK_EVERY + 2; i++)
        pkt(WIO_T_ACK, i, 0, 0, 0, 0, 0);
    put(d, "acks", slen);
    stream(40);
    pkt(WIO_T_EAGER, 0, 9, 100, 0, 100, 0);
    pkt(WIO_T_RTS, 1, 9, 5000, 3, 0, 0);
    put(d, "unexpected", slen);
    stream(5);
    memcpy(buf + slen, "garbage, not a header at all.........................................", 64);
    put(d, "garbage", slen + 64);
}

/* Writes both corpora (usage at the top of the file). */
int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: wio_fuzz_seeds DIR RXDIR\n");
        return 2;
    }
    rx_seeds(argv[2]);
    const char *d = argv[1];
    static const uint8_t text[WIO_EAGER_MAX] = "eager payload";
    seed(d, "hello", hdr(WIO_T_HELLO, WIO_PH_ACCEPTED), WIO_PH_ACCEPTED, 0, 0, WIO_OK);
    seed(d, "hello-ok", hdr(WIO_T_HELLO_OK, WIO_PH_HELLO), WIO_PH_HELLO, 0, 0, WIO_OK);
    seed(d, "hello-no", hdr(WIO_T_HELLO_NO, WIO_PH_HELLO), WIO_PH_HELLO, 0, 0, WIO_OK);
    struct wio_hdr h = hdr(WIO_T_EAGER, WIO_PH_OPEN);
    h.len = h.plen = WIO_EAGER_MAX;
    seed(d, "eager", h, WIO_PH_OPEN, text, WIO_EAGER_MAX, WIO_OK);
    h.len = h.plen = 0;
    seed(d, "eager-0", h, WIO_PH_OPEN, 0, 0, WIO_OK);
    h = hdr(WIO_T_RTS, WIO_PH_OPEN);
    h.len = 1 << 20;
    h.msgid = 9;
    seed(d, "rts", h, WIO_PH_OPEN, 0, 0, WIO_OK);
    h = hdr(WIO_T_CTS, WIO_PH_OPEN);
    h.len = 600;
    seed(d, "cts", h, WIO_PH_OPEN, 0, 0, WIO_OK);
    h = hdr(WIO_T_DATA, WIO_PH_OPEN);
    h.len = 1000;
    h.plen = 600;
    seed(d, "data", h, WIO_PH_OPEN, text, 64, WIO_OK);
    h.plen = 601;
    seed(d, "data-past-cts", h, WIO_PH_OPEN, 0, 0, WIO_E_LEN);
    seed(d, "ack", hdr(WIO_T_ACK, WIO_PH_OPEN), WIO_PH_OPEN, 0, 0, WIO_OK);
    seed(d, "bye", hdr(WIO_T_BYE, WIO_PH_OPEN), WIO_PH_OPEN, 0, 0, WIO_OK);
    h = hdr(WIO_T_ACK, WIO_PH_OPEN);
    h.seq = 11;
    seed(d, "bad-seq", h, WIO_PH_OPEN, 0, 0, WIO_E_SEQ);
    h.magic = 0x12345678;
    seed(d, "bad-magic", h, WIO_PH_OPEN, 0, 0, WIO_E_MAGIC);

    struct wio_addr a[4] = {{{127, 0, 0, 1}, 7100},
                            {{127, 0, 0, 1}, 40001},
                            {{10, 0, 0, 2}, 40002},
                            {{10, 0, 0, 3}, 40003}};
    uint8_t p[512];
    size_t n = wio_register_encode(1, 2, 2, a, p, sizeof p);
    h = hdr(WIO_T_REGISTER, WIO_PH_MASTER);
    h.src = 1;
    h.dst = 0;
    h.ack = 0;
    h.len = h.plen = (uint32_t)n;
    struct wio_conn_view mv = {.phase = WIO_PH_MASTER, .peer = WIO_ANY, .self = 0, .nprocs = 2};
    if (!n || wio_hdr_check(&h, &mv, 0) != WIO_OK)
        return 1;
    memcpy(buf, p, n); /* bare payloads too: short inputs go to the decoders alone */
    put(d, "register-bare", n);
    uint32_t np[2] = {2, 2};
    n = wio_table_encode(2, np, a, p, sizeof p);
    memcpy(buf, p, n);
    put(d, "table-bare", n);
    h = hdr(WIO_T_TABLE, WIO_PH_CLIENT);
    h.len = h.plen = (uint32_t)n;
    seed(d, "table", h, WIO_PH_CLIENT, p, n, WIO_OK);
    n = wio_refuse_encode("PB 1 registered twice", p, sizeof p);
    h = hdr(WIO_T_REFUSE, WIO_PH_CLIENT);
    h.len = h.plen = (uint32_t)n;
    seed(d, "refuse", h, WIO_PH_CLIENT, p, n, WIO_OK);
    return 0;
}
