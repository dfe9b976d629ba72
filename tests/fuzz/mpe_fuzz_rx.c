/*
 * libFuzzer target: the MPI engine's receive parser (mpi/core/mpe_net_rx.c) fed what a
 * peer node says, on the host platform (tests/unit/mpe_host_plat.c). The scene is in
 * mpe_fuzz.h. Ending the job through plat_fatal is an accepted outcome; a sanitizer
 * report, a broken context rule of the host platform (abort), or a trap below is not.
 *
 * Every input starts from the same job: the scene is set up once, kept with
 * host_snapshot() and put back with host_restore() after each input (every engine block
 * at its address, the pipes, the simulator, our requests), so an input's outcome does not
 * depend on the inputs before it and a crash reproduces from its input alone. Building
 * the job for each input cost ~2 MB of fresh, zeroed, page-faulted memory (a connection's
 * descriptors and eager slots) and byte loops over the ranks' match tables: about 770
 * executions per CPU second; the restore copies ~1 MB and clears ~1 MB (all-zero pages):
 * about 12000. MPE_FUZZ_FRESH=1 builds a fresh job for each input as before (to check the
 * restore: the outcomes MPE_FUZZ_VERBOSE prints must be the same, in any order).
 */
#include "mpe_fuzz.h"
#include "mpe_host_plat.h"
#include "mpe_net.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int recvs[MF_NRECVS][4] = MF_RECVS;
static struct mpe_req rreq[MF_NRECVS + MF_LATE], sreq[1 + MF_NRDV];
static struct mpe_req rreq0[MF_NRECVS + MF_LATE], sreq0[1 + MF_NRDV]; /* as set up */
static uint8_t *rbuf[MF_NRECVS + MF_LATE], *sbuf[1 + MF_NRDV];
static int nlate, ready; /* ready: the scene is set up (and kept by host_snapshot) */

struct input {
    const uint8_t *data;
    size_t size;
};

/* The engine's own view must stay sane whatever the peer said. */
static void check(void)
{
    struct mpe_conn *c = host_conn(1, 0);
    if (c->credit_descs < 0 || c->credit_descs > MPE_NET_DESCS || c->credit_slots < 0 ||
        c->credit_slots > MPE_NET_SLOTS || c->nfree_slots < 0 || c->nfree_slots > MPE_NET_SLOTS)
        __builtin_trap();
    for (int i = 0; i < MF_NRECVS + MF_LATE; i++)
        if (rreq[i].done && rreq[i].count > rreq[i].len)
            __builtin_trap();
}

/* Rank 2 or 3 (in turn) posts a wildcard receive now; every third one is small. */
static void post_late(void)
{
    if (nlate == MF_LATE)
        return;
    int i = MF_NRECVS + nlate;
    size_t cap = nlate % 3 == 1 ? 100 : 70000;
    struct mpe_status st;
    host_as_rank(2 + (nlate & 1));
    mpe_ops.iprobe(MF_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG, &st);
    rbuf[i] = malloc(cap);
    mpe_ops.irecv(&rreq[i], rbuf[i], cap, MF_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG);
    nlate++;
}

/* Until node 1 has nothing more to send (node 0 reads and ignores it all). */
static void drain(void)
{
    while (host_pipe_drop(1, 0))
        ;
}

static void setup(void)
{
    /* Only node 1 runs an engine (half the set-up cost per input); we play node 0. */
    struct host_cfg cfg = {.cap = 4096, .solo = 2};
    struct mpe_wire hello = {.type = MPE_W_HELLO, .aux = 0, .aux2 = MF_SIZE};
    uint8_t b[MPE_WIRE_HDR];
    host_world_create(MF_NODES, MF_SIZE, &cfg);
    mpe_wire_encode(&hello, b);
    host_inject(1, 0, b, sizeof b); /* node 1 expects sequence number 1 next */
    host_init_all();
    for (int i = 0; i < MF_NRECVS; i++) {
        rbuf[i] = malloc((size_t)recvs[i][3]);
        host_as_rank(recvs[i][0]);
        mpe_ops.irecv(&rreq[i], rbuf[i], (size_t)recvs[i][3], MF_CTX, recvs[i][1], recvs[i][2]);
    }
    host_as_rank(3);
    for (int i = 0; i <= MF_NRDV; i++) {
        size_t len = i ? MF_RDV_LEN : MF_EAGER_LEN;
        sbuf[i] = calloc(1, len);
        mpe_ops.isend(&sreq[i], sbuf[i], len, 0, MF_CTX, 3, i, 0);
    }
    drain();
}

/* Inside host_catch: the stream in pieces (receives posted between them if asked), then
 * receives that take whatever stayed unexpected (binding eager payloads, answering RTS
 * with CTS). */
static void run(void *arg)
{
    const struct input *in = arg;
    unsigned limit = in->data[0] & 0x7f;
    uint32_t seed = limit ? limit : 1, posted_at = ~0u;
    struct mpe_conn *c = host_conn(1, 0);
    size_t pos = 1;
    while (pos < in->size) {
        size_t n = in->size - pos;
        if (limit) {
            size_t piece = 1 + host_rand(&seed) % limit;
            n = n < piece ? n : piece;
        }
        host_inject(1, 0, in->data + pos, n);
        pos += n;
        if ((in->data[0] & 0x80) && c->rx.f.in_payload && c->rx_seq != posted_at) {
            posted_at = c->rx_seq; /* binds to a message whose payload is on its way */
            post_late();
        }
        drain();
        check();
    }
    post_late();
    post_late();
    drain();
    check();
}

/* Before an input: the scene, set up (on the first input, or each time with
 * MPE_FUZZ_FRESH) or as the previous input's end put it back. */
static void scene(int fresh)
{
    if (ready)
        return;
    memset(rreq, 0, sizeof rreq);
    setup();
    memcpy(rreq0, rreq, sizeof rreq);
    memcpy(sreq0, sreq, sizeof sreq);
    if (!fresh && host_snapshot())
        abort();
    ready = 1;
}

/* After an input: the scene as it was before it (the receive buffers posted at set-up
 * stay: the engine only writes them). Everything the input allocated is freed here, so
 * libFuzzer's malloc/free balance per input holds (it would re-run unbalanced inputs
 * looking for leaks). */
static void unscene(int fresh)
{
    for (int i = MF_NRECVS; i < MF_NRECVS + MF_LATE; i++) {
        free(rbuf[i]);
        rbuf[i] = 0;
    }
    if (!fresh) {
        host_restore();
        memcpy(rreq, rreq0, sizeof rreq);
        memcpy(sreq, sreq0, sizeof sreq);
        return;
    }
    host_world_destroy();
    for (int i = 0; i < MF_NRECVS; i++)
        free(rbuf[i]);
    for (int i = 0; i <= MF_NRDV; i++)
        free(sbuf[i]);
    ready = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fresh = -1;
    if (fresh < 0)
        fresh = getenv("MPE_FUZZ_FRESH") != 0;
    if (!size)
        return 0;
    struct input in = {data, size};
    scene(fresh);
    nlate = 0;
    /* MPE_FUZZ_VERBOSE=1: say how each input ended (to check what seeds reach). */
    int fatal = host_catch(run, &in), done = 0;
    for (int i = 0; i < MF_NRECVS + MF_LATE; i++)
        done += (int)rreq[i].done;
    if (getenv("MPE_FUZZ_VERBOSE"))
        fprintf(stderr, "mpe_fuzz_rx: %s; %d of %d receives done\n",
                fatal ? host_fatal_msg : "accepted", done, MF_NRECVS + nlate);
    unscene(fresh);
    return 0;
}
