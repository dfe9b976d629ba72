/*
 * mpe_frame.h: the byte-stream framing both receive parsers share: the native protocol's
 * (mpe_net_rx.c) and IMPI's (mpe_impi_rx.c). A stream is a sequence of fixed-size headers,
 * each followed by a payload the header announces. The header is gathered across calls
 * (it may straddle pbufs); the payload's first `keep` bytes are stored at `dst` and the
 * rest (a truncated receive's excess) dropped. What a header means is the parser's.
 */
#ifndef MPI_MPE_FRAME_H
#define MPI_MPE_FRAME_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct mpe_frame {
    size_t hgot; /* header bytes gathered */
    int in_payload;
    uint64_t want, got; /* payload bytes of the current item: in all / so far */
    uint64_t keep;      /* of those, bytes stored at dst */
    uint8_t *dst;
};

/*
 * Under the network lock (the transport's receive callback): consume `len` bytes. Once
 * hdr[0..hlen) is whole, header(arg) runs (hgot is 0 again by then); to announce a payload
 * it sets in_payload, want, got = 0, keep and dst. When the payload is all in (at once for
 * want = 0), payload_done(arg) runs with in_payload already 0. Stops early once *stop is
 * set (the parser ended the connection).
 */
static inline void mpe_frame_feed(struct mpe_frame *f, uint8_t *hdr, size_t hlen, const void *data,
                                  size_t len, void (*header)(void *arg),
                                  void (*payload_done)(void *arg), void *arg, const int *stop)
{
    const uint8_t *p = data;
    while (len > 0 && !*stop) {
        if (!f->in_payload) {
            size_t n = hlen - f->hgot < len ? hlen - f->hgot : len;
            memcpy(hdr + f->hgot, p, n);
            f->hgot += n;
            p += n;
            len -= n;
            if (f->hgot == hlen) {
                f->hgot = 0;
                header(arg);
            }
        } else {
            uint64_t n = f->want - f->got < len ? f->want - f->got : len;
            if (f->got < f->keep) { /* bytes past `keep`: a truncated receive's excess */
                uint64_t k = f->keep - f->got < n ? f->keep - f->got : n;
                memcpy(f->dst + f->got, p, k);
            }
            f->got += n;
            p += n;
            len -= n;
        }
        if (f->in_payload && f->got == f->want) {
            f->in_payload = 0;
            payload_done(arg);
        }
    }
}

#endif
