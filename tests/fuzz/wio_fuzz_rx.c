/*
 * libFuzzer target: the WaitIO core's receive path (mpi/waitio/wio_rx.c and what it
 * drives), the code the unikernel will run in its NIC interrupt. Each input is the byte
 * stream of a connection accepted from process 0 by a fresh core (process 1 of 2) that
 * has posted an eager receive, a rendezvous receive and a rendezvous send to process 0
 * (so HELLO, EAGER, RTS, CTS, DATA, ACK and BYE all find state to act on). The first byte
 * picks the piece size the stream is cut into (headers split across wio_rx calls). The
 * receive buffers are exact-size heap blocks: ASan reports any byte written past them; a
 * crash, a sanitizer report, or a trap below is a finding. The platform hooks here take
 * every byte sent and allocate with calloc.
 * Seeds: tests/fuzz/corpus/wio_rx (`make wio-fuzz-seeds`).
 */
#include "wio_core.h"
#include <stdlib.h>
#include <string.h>

#define EAGER_ROOM 64
#define RDV_ROOM   1000 /* the seeds' rendezvous of 1500 bytes is truncated to it */
#define SEND_LEN   1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int transport_tag;

/* Hooks of wio_plat.h for the fuzzer's thread: every byte sent is taken, memory from
 * calloc, no lock, no waiting. */
long wio_plat_send(struct wio_core *c, void *t, const void *d, size_t n)
{
    return (long)n;
}
void *wio_plat_connect(struct wio_core *c, uint32_t peer, struct wio_conn *k)
{
    return &transport_tag;
}
void wio_plat_close(struct wio_core *c, void *t) {}
unsigned long wio_plat_lock(struct wio_core *c)
{
    return 0;
}
void wio_plat_unlock(struct wio_core *c, unsigned long t) {}
void wio_plat_block(struct wio_core *c)
{
    __builtin_trap(); /* the receive path never waits */
}
void wio_plat_wake(struct wio_core *c) {}
void *wio_plat_alloc(size_t n)
{
    return calloc(1, n ? n : 1);
}
void wio_plat_free(void *p)
{
    free(p);
}
void wio_plat_log(struct wio_core *c, const char *line)
{
    if (strlen(line) >= WIO_TEXT)
        __builtin_trap();
}

/* A filter selecting every process. */
static int all(int pb, int n)
{
    return 1;
}

/* libFuzzer's thread; the input is libFuzzer's. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t pb_size[2] = {1, 1};
    static const struct wio_addr addrs[2] = {{{127, 0, 0, 1}, 1}, {{127, 0, 0, 1}, 2}};
    struct wio_core c;
    memset(&c, 0, sizeof c);
    if (wio_core_init(&c, 2, 1, 0, pb_size, addrs))
        return 0;
    waitio_filter_func_t f[2] = {all, all};
    int order[2] = {1, 2};
    struct PBGroup *g = wio_group_filter(&c, 0, f, order);
    char *eager = malloc(EAGER_ROOM), *rdv = malloc(RDV_ROOM), *out = calloc(1, SEND_LEN);
    waitio_req_t q[3];
    waitio_irecv(g, 0, eager, EAGER_ROOM, 0, &q[0]);
    waitio_irecv(g, 0, rdv, RDV_ROOM, 1, &q[1]);
    waitio_isend(g, 0, out, SEND_LEN, 2, &q[2]);
    struct wio_conn *k = wio_conn_accept(&c, &transport_tag);
    size_t piece = size ? 1 + data[0] % 97 : 1;
    for (size_t off = size ? 1 : 0; k && off < size && k->transport; off += piece)
        wio_rx(k, data + off, size - off < piece ? size - off : piece);
    for (int i = 0; i < 3; i++) { /* completed requests hold sane results */
        struct wio_req *r = (struct wio_req *)&q[i];
        if (r->state == WIO_S_DONE && r->kind == WIO_K_RECV && !r->err && r->mlen > r->len)
            __builtin_trap();
    }
    wio_core_close_all(&c);
    wio_core_free(&c);
    free(eager);
    free(rdv);
    free(out);
    return 0;
}
