/*
 * libFuzzer target: the engine's IMPI receive parser (mpi/core/mpe_impi_rx.c) fed what a
 * remote IMPI host says, on the host platform (tests/unit/mpe_host_plat.c). The scene is
 * in mpe_fuzz_impi.h. Ending the job through plat_fatal is an accepted outcome; a
 * sanitizer report, a broken context rule of the host platform (abort), or a trap below
 * is not.
 *
 * As in mpe_fuzz_rx.c, the scene is set up once, kept with host_snapshot() and put back
 * with host_restore() after each input (MPE_FUZZ_FRESH=1: a fresh job per input, to check
 * the restore; MPE_FUZZ_VERBOSE=1 prints how each input ended).
 */
#include "mpe_fuzz_impi.h"
#include "mpe_host_plat.h"
#include "mpe_impi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSENDS (2 + MFI_NDATA)

static const int recvs[MFI_NRECVS][4] = MFI_RECVS;
static struct mpe_req rreq[MFI_NRECVS + MFI_LATE], sreq[NSENDS];
static struct mpe_req rreq0[MFI_NRECVS + MFI_LATE], sreq0[NSENDS]; /* as set up */
static uint8_t *rbuf[MFI_NRECVS + MFI_LATE], *sbuf[NSENDS];
static int nlate, ready; /* ready: the scene is set up (and kept by host_snapshot) */

struct input {
    const uint8_t *data;
    size_t size;
};

/* The engine's own view must stay sane whatever the peer said. */
static void check(void)
{
    for (int i = 0; i < MFI_NRECVS + MFI_LATE; i++)
        if (rreq[i].done && rreq[i].count > rreq[i].len)
            __builtin_trap();
    for (int i = 0; i < NSENDS; i++)
        if (sreq[i].sent > sreq[i].len)
            __builtin_trap();
}

/* Rank 2 or 3 (in turn) posts a wildcard receive now; every third one is small. */
static void post_late(void)
{
    if (nlate == MFI_LATE)
        return;
    int i = MFI_NRECVS + nlate;
    size_t cap = nlate % 3 == 1 ? 100 : MFI_LONG_LEN + MFI_MAXLEN;
    struct mpe_status st;
    host_as_rank(2 + (nlate & 1));
    mpe_ops.iprobe(MFI_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG, &st);
    rbuf[i] = malloc(cap);
    mpe_ops.irecv(&rreq[i], rbuf[i], cap, MFI_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG);
    nlate++;
}

/* Host 0 reads (and ignores) whatever the node sent it, which lets the node send more. */
static void drain(void)
{
    static uint8_t sink[4096];
    while (host_impi_take(0, 0, sink, sizeof sink))
        ;
}

static void setup(void)
{
    static const int32_t clients[] = {0, 2, MFI_WORLD}, host_first[] = {0, 2, MFI_WORLD};
    static struct impi_proc procs[MFI_WORLD];
    struct host_cfg cfg = {.cap = 4096};
    struct mpe_impi_cfg ic = {.maxlen = MFI_MAXLEN,
                              .ackmark = MFI_ACKMARK,
                              .hiwater = MFI_HIWATER,
                              .nhosts = MFI_HOSTS,
                              .self_host = 1,
                              .host_first = host_first,
                              .procs = procs,
                              .pool_bytes = MFI_POOL};
    mfi_procs(procs);
    if (host_world_create(1, 2, &cfg) || host_impi_layout(2, clients, 1, &ic))
        abort();
    host_init_all();
    for (int i = 0; i < MFI_NRECVS; i++) {
        rbuf[i] = malloc((size_t)recvs[i][3]);
        host_as_rank(recvs[i][0]);
        mpe_ops.irecv(&rreq[i], rbuf[i], (size_t)recvs[i][3], MFI_CTX, recvs[i][1], recvs[i][2]);
    }
    for (int i = 0; i < NSENDS; i++) {
        size_t len = i == 0 ? MFI_SSEND_LEN : i == 1 ? MFI_LONG_LEN : 10;
        sbuf[i] = calloc(1, len);
        host_as_rank(i < 2 ? 3 : 2);
        mpe_ops.isend(&sreq[i], sbuf[i], len, i < 2 ? 0 : 1, MFI_CTX, i < 2 ? 3 : 2, i,
                      i == 0 ? MPE_SYNC : 0);
    }
    drain();
}

/* Inside host_catch: the stream in pieces (receives posted between them if asked), then
 * receives that take whatever stayed unexpected (binding first packets, answering long
 * messages with SYNCACK). */
static void run(void *arg)
{
    const struct input *in = arg;
    unsigned limit = in->data[0] & 0x7f;
    uint32_t seed = limit ? limit : 1;
    struct mpe_ilink *l = host_impi_link(0, 0);
    const struct mpe_msg *posted_at = 0;
    size_t pos = 1;
    while (pos < in->size) {
        size_t n = in->size - pos;
        if (limit) {
            size_t piece = 1 + host_rand(&seed) % limit;
            n = n < piece ? n : piece;
        }
        host_impi_inject(0, 0, in->data + pos, n);
        pos += n;
        if ((in->data[0] & 0x80) && l->rx.f.in_payload && l->rx.msg && !l->rx.rreq &&
            l->rx.msg != posted_at) {
            posted_at = l->rx.msg; /* binds to a message whose payload is on its way */
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

/* After an input: the scene as it was before it; everything the input allocated is freed
 * here (libFuzzer's malloc/free balance per input). */
static void unscene(int fresh)
{
    for (int i = MFI_NRECVS; i < MFI_NRECVS + MFI_LATE; i++) {
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
    for (int i = 0; i < MFI_NRECVS; i++)
        free(rbuf[i]);
    for (int i = 0; i < NSENDS; i++)
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
    int fatal = host_catch(run, &in);
    unsigned rdone = 0, sdone = 0; /* bit i: receive (send) i is done */
    for (int i = 0; i < MFI_NRECVS + MFI_LATE; i++)
        rdone |= (unsigned)rreq[i].done << i;
    for (int i = 0; i < NSENDS; i++)
        sdone |= (unsigned)sreq[i].done << i;
    if (getenv("MPE_FUZZ_VERBOSE"))
        fprintf(stderr, "mpe_fuzz_impi: %s; receives done %#x of %d, sends done %#x\n",
                fatal ? host_fatal_msg : "accepted", rdone, MFI_NRECVS + nlate, sdone);
    unscene(fresh);
    return 0;
}
