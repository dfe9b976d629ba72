/*
 * libFuzzer target: the WaitIO codec (mpi/waitio/wio_wire.c) on any bytes. The input is
 * a 64-byte header, a connection state and a rendezvous view taken from the next bytes,
 * and the rest as a start-up payload. The check must return a known code; a header it
 * accepts must keep the promises the receive path relies on (payload within the type's
 * limit, DATA inside the CTS length); a payload the decoders accept must have entries that
 * lie inside the input (an exact-size copy: ASan reports a read past it) and counts that
 * add up. Round trips: decode(encode(h)) == h, and re-encoding an accepted payload gives
 * the same bytes. A trap or a sanitizer report is a finding.
 * Seeds: tests/fuzz/corpus/wio_wire (`make wio-fuzz-seeds`).
 */
#include "wio_wire.h"
#include <stdlib.h>
#include <string.h>

#define STATE_BYTES 24 /* phase, rseq, sent, peer, self/nprocs, rdv */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer's thread: the payload decoders on p[0..n) (a heap copy of exactly n bytes). */
static void payloads(const uint8_t *p, size_t n)
{
    struct wio_register r;
    if (wio_register_decode(p, n, &r) == WIO_OK) {
        struct wio_addr *a = malloc(sizeof *a * r.nprocs);
        uint8_t *again = malloc(n);
        if (!a || !again || r.pbid >= r.npb || wio_register_size(r.nprocs) != n)
            __builtin_trap();
        for (uint32_t i = 0; i < r.nprocs; i++)
            wio_payload_addr(r.addrs, i, &a[i]);
        if (wio_register_encode(r.pbid, r.npb, r.nprocs, a, again, n) != n || memcmp(again, p, n))
            __builtin_trap();
        free(a);
        free(again);
    }
    struct wio_table t;
    if (wio_table_decode(p, n, &t) == WIO_OK) {
        uint32_t *np = malloc(sizeof *np * t.npb);
        struct wio_addr *a = malloc(sizeof *a * t.total);
        uint8_t *again = malloc(n);
        if (!np || !a || !again)
            __builtin_trap();
        for (uint32_t i = 0; i < t.npb; i++)
            np[i] = wio_table_nprocs(&t, i);
        for (uint32_t i = 0; i < t.total; i++)
            wio_payload_addr(t.addrs, i, &a[i]);
        if (wio_table_encode(t.npb, np, a, again, n) != n || memcmp(again, p, n))
            __builtin_trap();
        free(np);
        free(a);
        free(again);
    }
    char text[WIO_REFUSE_MAX + 1];
    if (wio_refuse_decode(p, n, text, sizeof text) == WIO_OK && strlen(text) != n)
        __builtin_trap();
}

/* libFuzzer's thread; the input is libFuzzer's. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < WIO_HDR + STATE_BYTES) {
        uint8_t *p = malloc(size ? size : 1);
        if (!p)
            return 0;
        memcpy(p, data, size);
        payloads(p, size);
        free(p);
        return 0;
    }
    struct wio_hdr h, again;
    uint8_t b[WIO_HDR];
    wio_hdr_decode(data, &h);
    wio_hdr_encode(&h, b);
    if (memcmp(b, data, WIO_HDR))
        __builtin_trap();
    wio_hdr_decode(b, &again);
    if (again.len != h.len || again.offset != h.offset || again.flags != h.flags)
        __builtin_trap();
    const uint8_t *s = data + WIO_HDR;
    struct wio_conn_view v = {.phase = (enum wio_phase)(s[0] % 6),
                              .rseq = wio_get32(s + 1),
                              .sent = wio_get32(s + 5),
                              .peer = s[9] == 0xff ? WIO_ANY : s[9] % 8,
                              .self = s[10] % 8,
                              .nprocs = 1 + s[11] % 8};
    struct wio_rdv_view r = {.live = s[12] & 1,
                             .len = wio_get32(s + 13),
                             .take = wio_get32(s + 17),
                             .done = (uint64_t)s[21] << 8 | s[22]};
    int e = wio_hdr_check(&h, &v, s[23] & 1 ? &r : NULL);
    if (e < 0 || e >= WIO_E_NKINDS || !strcmp(wio_err_name(e), "?"))
        __builtin_trap();
    if (e == WIO_OK) {
        if (h.magic != WIO_MAGIC || h.flags || h.seq != (v.phase == WIO_PH_OPEN ? v.rseq : 0))
            __builtin_trap();
        if (h.type == WIO_T_EAGER && (h.plen > WIO_EAGER_MAX || h.len != h.plen))
            __builtin_trap();
        if (h.type == WIO_T_DATA && (h.plen > WIO_CHUNK || h.offset != r.done ||
                                     h.offset + h.plen > r.take || !(s[23] & 1) || !r.live))
            __builtin_trap();
        if (h.type != WIO_T_EAGER && h.type != WIO_T_DATA && !wio_startup_limit(h.type) && h.plen)
            __builtin_trap();
    }
    size_t n = size - WIO_HDR - STATE_BYTES;
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        return 0;
    memcpy(p, s + STATE_BYTES, n);
    payloads(p, n);
    free(p);
    return 0;
}
