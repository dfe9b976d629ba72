/*
 * mpe_smoke.c: the node engine (mpi/core/mpe.h) driven directly, without the MPI library,
 * so that engine faults are told apart from library faults. Every rank exchanges messages
 * of sizes around each protocol threshold with every other rank (both directions at
 * once, receives posted before and after the sends arrive), then checks wildcard
 * receives, probe and cancel. Prints one "mpe: ... ok" line per part; "BAD" on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ukapp.h>
#include "mpe.h"

static const struct mpe_ops *E;
static int me, n, bad;

static void wait_req(struct mpe_req *r)
{
    while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
        E->block();
}

static unsigned char pat(int from, int to, size_t len, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + len + i * 13);
}

/* All pairs, one size: every rank sends to every other rank and receives from each. */
static void all_pairs(size_t len, int post_late)
{
    struct mpe_req *s = calloc((size_t)n, sizeof *s), *r = calloc((size_t)n, sizeof *r);
    unsigned char **sb = calloc((size_t)n, sizeof *sb), **rb = calloc((size_t)n, sizeof *rb);
    for (int p = 0; p < n; p++) {
        sb[p] = malloc(len + 1);
        rb[p] = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            sb[p][i] = pat(me, p, len, i);
        memset(rb[p], 0xee, len + 1);
    }
    if (!post_late)
        for (int p = 0; p < n; p++)
            if (p != me)
                E->irecv(&r[p], rb[p], len, 7, p, 100);
    for (int k = 1; k < n; k++) {
        int p = (me + k) % n;
        if (E->isend(&s[p], sb[p], len, p, 7, me, 100, 0) != 0)
            bad++, printf("BAD isend to %d\n", p);
    }
    if (post_late)
        for (int p = 0; p < n; p++)
            if (p != me)
                E->irecv(&r[p], rb[p], len, 7, p, 100);
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        wait_req(&s[p]);
        wait_req(&r[p]);
        int ok = r[p].count == len && r[p].src == p && r[p].tag == 100 && !r[p].err &&
                 rb[p][len] == 0xee;
        for (size_t i = 0; ok && i < len; i++)
            ok = rb[p][i] == pat(p, me, len, i);
        if (!ok) {
            bad++;
            printf("BAD %zu bytes from %d: count %zu src %d tag %d err %d\n", len, p, r[p].count,
                   r[p].src, r[p].tag, r[p].err);
        }
    }
    for (int p = 0; p < n; p++) {
        free(sb[p]);
        free(rb[p]);
    }
    free(s);
    free(r);
    free(sb);
    free(rb);
}

/* A barrier made of engine messages on its own context. */
static void barrier(void)
{
    char z;
    struct mpe_req s, r;
    for (int k = 1; k < n; k <<= 1) {
        E->irecv(&r, &z, 0, 99, (me - k + n) % n, 1);
        E->isend(&s, &z, 0, (me + k) % n, 99, me, 1, 0);
        wait_req(&s);
        wait_req(&r);
    }
}

int main(void)
{
    E = uk_abi->mpi;
    me = uk_rank();
    n = uk_size();
    if (!E || E->init() != 0) {
        printf("BAD no engine\n");
        return 1;
    }
    static const size_t sizes[] = {0,     1,     255,   256,   257,    4096,
                                   16384, 16385, 32768, 32769, 200000, 4 << 20};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        all_pairs(sizes[i], 0);
        all_pairs(sizes[i], 1);
        barrier();
    }
    printf("mpe: all pairs, %u sizes, posted early and late: %s\n",
           (unsigned)(sizeof sizes / sizeof *sizes), bad ? "BAD" : "ok");

    /* Wildcards: rank 0 receives one message from everyone with ANY_SOURCE/ANY_TAG. */
    if (me == 0) {
        int seen = 0;
        for (int k = 1; k < n; k++) {
            int v = -1;
            struct mpe_req r;
            E->irecv(&r, &v, sizeof v, 8, MPE_ANY_SOURCE, MPE_ANY_TAG);
            wait_req(&r);
            if (v != r.src * 10 || r.tag != r.src + 1000)
                bad++, printf("BAD wildcard got %d from %d tag %d\n", v, r.src, r.tag);
            seen |= 1 << r.src;
        }
        if (seen != ((1 << n) - 2))
            bad++, printf("BAD wildcard sources %x\n", seen);
    } else {
        int v = me * 10;
        struct mpe_req s;
        E->isend(&s, &v, sizeof v, 0, 8, me, me + 1000, 0);
        wait_req(&s);
    }
    barrier();
    /* Probe, then a truncated receive, then cancel of a receive nobody matches. */
    if (me == 1) {
        char big[100];
        memset(big, 'x', sizeof big);
        struct mpe_req s;
        E->isend(&s, big, sizeof big, 0, 9, 1, 5, 0);
        wait_req(&s);
    } else if (me == 0) {
        struct mpe_status st;
        while (!E->iprobe(9, MPE_ANY_SOURCE, 5, &st))
            E->block();
        if (st.src != 1 || st.len != 100)
            bad++, printf("BAD probe src %d len %zu\n", st.src, st.len);
        char small[10];
        struct mpe_req r;
        E->irecv(&r, small, sizeof small, 9, 1, 5);
        wait_req(&r);
        if (r.err != MPE_ETRUNCATE || r.count != 10 || small[9] != 'x')
            bad++, printf("BAD truncation err %d count %zu\n", r.err, r.count);
        struct mpe_req c;
        E->irecv(&c, small, sizeof small, 9, 1, 6);
        if (E->cancel(&c) != 1 || !c.done || !c.cancelled)
            bad++, printf("BAD cancel\n");
    }
    barrier();
    printf("mpe: wildcard, probe, truncation, cancel: %s\n", bad ? "BAD" : "ok");
    return bad ? 1 : 0;
}
