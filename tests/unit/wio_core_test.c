/*
 * wio_core_test.c: the WaitIO core (mpi/waitio/wio_*.c) with two or three cores wired by
 * the in-memory platform (wio_test_net.c): messages of every protocol size checked byte by
 * byte, several outstanding at once in FIFO order (posted first and unexpected first),
 * the both-at-once connect rule, truncation, messages to oneself, groups, and bad input
 * (a wrong sequence number, garbage, a peer lost mid-rendezvous): each a named error
 * and failed requests instead of a hang.
 */
#include "ut.h"
#include "wio_test_net.h"
#include <stdlib.h>
#include <string.h>

#define BIG (1u << 20)

/* Main thread: b[0..n) gets the pattern of `seed`. */
static void fill(char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(seed * 131 + i * 7 + (i >> 9));
}

/* Main thread: does b[0..n) hold the pattern of `seed`? */
static int same(const char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (char)(seed * 131 + i * 7 + (i >> 9)))
            return 0;
    return 1;
}

/* Main thread: a fresh instance of two PBs of one process each. */
static void two(void)
{
    static const uint32_t sizes[2] = {1, 1};
    tn_setup(2, sizes);
}

UT_TEST(wio_core_pingpong_sizes)
{
    two();
    struct PBGroup *g0 = tn_world(0), *g1 = tn_world(1);
    UT_ASSERT(g0 && g1 && g0->key == g1->key);
    static const size_t lens[] = {0, 1, 127, 128, 129, 4096, 65536, 65537, 200000, BIG};
    char *s = malloc(BIG), *r = malloc(BIG + 1);
    for (unsigned i = 0; i < sizeof lens / sizeof *lens; i++) {
        waitio_req_t rq, sq;
        memset(&rq, 0xa5, sizeof rq); /* garbage: the library must not assume zeroes */
        memset(&sq, 0x5a, sizeof sq);
        fill(s, lens[i], i);
        memset(r, 0, lens[i] + 1);
        int from = i & 1, to = !from; /* alternate directions */
        struct PBGroup *gs = from ? g1 : g0, *gr = from ? g0 : g1;
        UT_EQ(waitio_irecv(gr, from, r, lens[i], 7, &rq), 0);
        UT_EQ(waitio_isend(gs, to, s, lens[i], 7, &sq), 0);
        UT_EQ(waitio_wait(&sq), 0);
        UT_EQ(waitio_wait(&rq), 0);
        UT_ASSERT(same(r, lens[i], i));
        UT_EQ(r[lens[i]], 0);
    }
    free(s);
    free(r);
    tn_teardown();
}

UT_TEST(wio_core_fifo_outstanding)
{
    two();
    struct PBGroup *g0 = tn_world(0), *g1 = tn_world(1);
    enum { N = 12 };
    static const size_t lens[N] = {5, 300, 0, 128, 70000, 1, 129, 9, 65536, 2, 100000, 64};
    char *s[N], *r[N];
    waitio_req_t sq[N], rq[N];
    /* Half posted before the messages, half after (unexpected eager and RTS). */
    for (int i = 0; i < N; i++) {
        s[i] = malloc(lens[i] + 1);
        r[i] = calloc(1, lens[i] + 1);
        fill(s[i], lens[i], 100 + i);
    }
    for (int i = 0; i < N / 2; i++)
        waitio_irecv(g1, 0, r[i], lens[i], 3, &rq[i]);
    for (int i = 0; i < N; i++)
        waitio_isend(g0, 1, s[i], lens[i], 3, &sq[i]);
    tn_settle();
    for (int i = N / 2; i < N; i++)
        waitio_irecv(g1, 0, r[i], lens[i], 3, &rq[i]);
    for (int i = N - 1; i >= 0; i--) { /* waits in any order */
        UT_EQ(waitio_wait(&rq[i]), 0);
        UT_EQ(waitio_wait(&sq[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        UT_ASSERT(same(r[i], lens[i], 100 + i));
        free(s[i]);
        free(r[i]);
    }
    /* Many small messages: the receiver acknowledges every WIO_ACK_EVERY packets. */
    for (int i = 0; i < 3 * WIO_ACK_EVERY; i++) {
        char small[5] = "ack", got[5];
        waitio_irecv(g1, 0, got, 5, 4, &rq[0]);
        waitio_isend(g0, 1, small, 5, 4, &sq[0]);
        UT_EQ(waitio_wait(&rq[0]), 0);
        UT_EQ(waitio_wait(&sq[0]), 0);
    }
    tn_settle();
    struct wio_conn *k0 = tn_core[0].peers[1].conn, *k1 = tn_core[1].peers[0].conn;
    UT_ASSERT(k1->sseq >= 3); /* ACKs went back although core 1 sent no message */
    UT_ASSERT(k1->rseq - k1->ack_out < WIO_ACK_EVERY); /* never more unacknowledged */
    UT_ASSERT(k0->rseq == k1->sseq && k1->rseq == k0->sseq);
    /* A second wait on a spent request gives its result again; garbage is no request. */
    UT_EQ(waitio_wait(&rq[0]), 0);
    waitio_req_t junk;
    memset(&junk, 0x33, sizeof junk);
    UT_ASSERT(waitio_wait(&junk) != 0);
    tn_teardown();
}

UT_TEST(wio_core_tags_and_groups_apart)
{
    two();
    struct PBGroup *a0 = tn_world(0), *a1 = tn_world(1);
    struct PBGroup *b0 = tn_world(0), *b1 = tn_world(1); /* same members: another key */
    UT_ASSERT(a0->key != b0->key && b0->key == b1->key);
    char x[4] = "abc", y[4] = "xyz", z[4] = "tag", rx[4], ry[4], rz[4];
    waitio_req_t q[6];
    waitio_isend(a0, 1, x, 4, 1, &q[0]);
    waitio_isend(b0, 1, y, 4, 1, &q[1]);
    waitio_isend(a0, 1, z, 4, 2, &q[2]);
    waitio_irecv(a1, 0, rz, 4, 2, &q[3]); /* posted in another order than sent */
    waitio_irecv(b1, 0, ry, 4, 1, &q[4]);
    waitio_irecv(a1, 0, rx, 4, 1, &q[5]);
    for (int i = 0; i < 6; i++)
        UT_EQ(waitio_wait(&q[i]), 0);
    UT_ASSERT(!strcmp(rx, "abc") && !strcmp(ry, "xyz") && !strcmp(rz, "tag"));
    tn_teardown();
}

UT_TEST(wio_core_both_at_once)
{
    two();
    struct PBGroup *g0 = tn_world(0), *g1 = tn_world(1);
    char a[200], b[10], ra[200], rb[10];
    fill(a, sizeof a, 1);
    fill(b, sizeof b, 2);
    waitio_req_t q[4];
    /* Both receive first: both connect before either HELLO arrives. */
    waitio_irecv(g0, 1, rb, sizeof rb, 0, &q[0]);
    waitio_irecv(g1, 0, ra, sizeof ra, 0, &q[1]);
    UT_ASSERT(tn_core[0].peers[1].out && tn_core[1].peers[0].out);
    /* Both HELLOs are on the wire before either side reads one: they cross. */
    UT_EQ(tn_accept_all(), 2);
    UT_EQ(tn_pending(0, 1), WIO_HDR);
    UT_EQ(tn_pending(1, 0), WIO_HDR);
    UT_EQ(tn_deliver_hello(0, 1), 1); /* each reads the other's HELLO before any answer */
    UT_EQ(tn_deliver_hello(1, 0), 1);
    waitio_isend(g0, 1, a, sizeof a, 0, &q[2]);
    waitio_isend(g1, 0, b, sizeof b, 0, &q[3]);
    for (int i = 0; i < 4; i++)
        UT_EQ(waitio_wait(&q[i]), 0);
    tn_settle();
    UT_ASSERT(same(ra, sizeof ra, 1) && same(rb, sizeof rb, 2));
    /* One connection survived, on both sides the same one: the one core 0 (lower) made. */
    struct wio_conn *k0 = tn_core[0].peers[1].conn, *k1 = tn_core[1].peers[0].conn;
    UT_ASSERT(k0 && k1 && !tn_core[0].peers[1].out && !tn_core[1].peers[0].out);
    UT_EQ(k0->phase, WIO_PH_OPEN);
    UT_EQ(k1->phase, WIO_PH_OPEN);
    UT_EQ(k1->sseq, k0->rseq); /* the same stream: what one sent the other received */
    UT_EQ(k0->sseq, k1->rseq);
    UT_ASSERT(!tn_core[0].peers[1].failed && !tn_core[1].peers[0].failed);
    tn_teardown();
}

UT_TEST(wio_core_truncation)
{
    two();
    struct PBGroup *g0 = tn_world(0), *g1 = tn_world(1);
    char *s = malloc(BIG), *r = calloc(1, BIG + 1);
    static const size_t msg[] = {100, 100000, 100000};
    static const size_t room[] = {10, 5000, 0};
    for (int i = 0; i < 3; i++) {
        waitio_req_t rq, sq;
        fill(s, msg[i], 9 + i);
        memset(r, 0, BIG);
        waitio_irecv(g1, 0, r, room[i], 4, &rq);
        waitio_isend(g0, 1, s, msg[i], 4, &sq);
        UT_EQ(waitio_wait(&sq), 0); /* the sender completes normally */
        UT_ASSERT(waitio_wait(&rq) != 0);
        UT_ASSERT(same(r, room[i], 9 + i));
        UT_EQ(r[room[i]], 0); /* not a byte past the buffer */
        UT_ASSERT(strstr(tn_log(1), "truncated: the message has"));
    }
    /* The connection is still good. */
    waitio_req_t rq, sq;
    fill(s, 1000, 3);
    waitio_irecv(g1, 0, r, 1000, 4, &rq);
    waitio_isend(g0, 1, s, 1000, 4, &sq);
    UT_EQ(waitio_wait(&rq), 0);
    UT_EQ(waitio_wait(&sq), 0);
    UT_ASSERT(same(r, 1000, 3));
    free(s);
    free(r);
    tn_teardown();
}

UT_TEST(wio_core_self)
{
    two();
    struct PBGroup *g0 = tn_world(0);
    char *s = malloc(BIG), *r = calloc(1, BIG);
    fill(s, BIG, 5);
    waitio_req_t q[4];
    waitio_isend(g0, 0, s, BIG, 1, &q[0]); /* send first */
    waitio_isend(g0, 0, s, 10, 1, &q[1]);
    waitio_irecv(g0, 0, r, BIG, 1, &q[2]);
    UT_EQ(waitio_wait(&q[2]), 0);
    UT_EQ(waitio_wait(&q[0]), 0);
    UT_ASSERT(same(r, BIG, 5));
    waitio_irecv(g0, 0, r, 5, 1, &q[3]); /* the 10-byte one, truncated */
    UT_ASSERT(waitio_wait(&q[3]) != 0);
    UT_EQ(waitio_wait(&q[1]), 0);
    UT_EQ(tn_core[0].peers[1].conn, NULL); /* no connection was made */
    free(s);
    free(r);
    tn_teardown();
}

UT_TEST(wio_core_three)
{
    static const uint32_t sizes[2] = {1, 2};
    tn_setup(2, sizes);
    struct PBGroup *g[3] = {tn_world(0), tn_world(1), tn_world(2)};
    enum { M = 4 };
    char *s = malloc(BIG), *r[3][M];
    fill(s, BIG, 8);
    waitio_req_t rq[3][M], sq[3][2][M];
    /* Every core sends M messages to each other core; all receives outstanding. */
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++) {
            r[i][m] = calloc(1, 3 * 70000);
        }
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++)
            for (int j = 0, k = 0; j < 3; j++)
                if (j != i) {
                    size_t len = m & 1 ? 70000 : 50;
                    waitio_isend(g[i], j, s, len, (waitio_tag_t)m << 40, &sq[i][k++][m]);
                }
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++) {
            int j = (i + 1) % 3; /* from one neighbour only here */
            waitio_irecv(g[i], j, r[i][m], 70000, (waitio_tag_t)m << 40, &rq[i][m]);
        }
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++) {
            UT_EQ(waitio_wait(&rq[i][m]), 0);
            UT_ASSERT(same(r[i][m], m & 1 ? 70000 : 50, 8));
        }
    /* The other neighbour's messages arrive now. */
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++)
            waitio_irecv(g[i], (i + 2) % 3, r[i][m], 70000, (waitio_tag_t)m << 40, &rq[i][m]);
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++) {
            UT_EQ(waitio_wait(&rq[i][m]), 0);
            UT_EQ(waitio_wait(&sq[i][0][m]), 0);
            UT_EQ(waitio_wait(&sq[i][1][m]), 0);
        }
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < M; m++)
            free(r[i][m]);
    free(s);
    tn_teardown();
}

/* Main thread: a header from (fake) process 1 to process 0 into the raw stream. */
static void raw_hdr(void *raw, uint8_t type, uint32_t seq, uint64_t len, uint32_t plen,
                    uint64_t group)
{
    struct wio_hdr h = wio_hdr_make(type);
    h.group = group;
    uint8_t b[WIO_HDR];
    h.seq = seq;
    h.src = 1;
    h.dst = 0;
    h.len = len;
    h.plen = plen;
    wio_hdr_encode(&h, b);
    tn_inject(raw, b, sizeof b);
}

UT_TEST(wio_core_bad_sequence)
{
    two();
    struct PBGroup *g0 = tn_world(0);
    waitio_req_t q;
    char r[16];
    /* A fake process 1 connects before anyone asked and sends with a skipped seq. */
    void *raw = tn_raw(0);
    raw_hdr(raw, WIO_T_HELLO, 0, 0, 0, 0);
    raw_hdr(raw, WIO_T_EAGER, 0, 4, 4, g0->key);
    tn_inject(raw, "abcd", 4);
    raw_hdr(raw, WIO_T_EAGER, 2, 4, 4, g0->key); /* seq 1 skipped */
    tn_inject(raw, "efgh", 4);
    tn_settle();
    const char *log = tn_log(0);
    UT_ASSERT(strstr(log, "peer 1 (PB 1 rank 0, 127.0.0.1:40001)"));
    UT_ASSERT(strstr(log, "wrong sequence number: EAGER header seq 2, expected 1"));
    /* The message before the bad one was good and is kept; the next receive fails. */
    UT_EQ(waitio_irecv(g0, 1, r, sizeof r, 0, &q), 0);
    UT_EQ(waitio_wait(&q), 0);
    UT_ASSERT(!memcmp(r, "abcd", 4));
    UT_EQ(waitio_irecv(g0, 1, r, sizeof r, 0, &q), 0);
    UT_ASSERT(waitio_wait(&q) != 0);
    tn_teardown();
}

UT_TEST(wio_core_bad_garbage)
{
    two();
    struct PBGroup *g0 = tn_world(0);
    waitio_req_t q;
    char r[16];
    UT_EQ(waitio_irecv(g0, 1, r, sizeof r, 0, &q), 0); /* waits for peer 1 */
    void *raw = tn_raw(0);
    static const char junk[WIO_HDR] = "GET / HTTP/1.0\r\n\r\nnot a WaitIO header";
    tn_inject(raw, junk, sizeof junk);
    tn_settle();
    UT_ASSERT(strstr(tn_log(0), "connection from an unnamed process closed: bad magic"));
    /* A stranger's garbage fails nothing: the real peer 1 still can send. */
    struct PBGroup *g1 = tn_world(1);
    waitio_req_t s;
    waitio_isend(g1, 0, "hi", 3, 0, &s);
    UT_EQ(waitio_wait(&q), 0);
    UT_EQ(waitio_wait(&s), 0);
    /* A truncated header then the end of the stream: nothing happens but the close. */
    raw = tn_raw(0);
    uint8_t b[WIO_HDR];
    struct wio_hdr h = wio_hdr_make(WIO_T_HELLO);
    h.src = 1;
    wio_hdr_encode(&h, b);
    tn_inject(raw, b, 30);
    tn_settle();
    UT_ASSERT(!tn_core[0].peers[1].failed);
    tn_teardown();
}

UT_TEST(wio_core_lost_mid_rendezvous)
{
    two();
    struct PBGroup *g0 = tn_world(0), *g1 = tn_world(1);
    char *s = malloc(BIG), *r = malloc(BIG);
    waitio_req_t rq, sq, rq2;
    waitio_irecv(g1, 0, r, BIG, 0, &rq);
    waitio_isend(g0, 1, s, BIG, 0, &sq);
    for (int i = 0; i < 40; i++) /* some chunks moved, not all */
        tn_pump();
    UT_ASSERT(tn_core[1].peers[0].recving.head);
    tn_cut(1, 0);
    UT_ASSERT(waitio_wait(&rq) != 0);
    UT_ASSERT(waitio_wait(&sq) != 0);
    UT_ASSERT(strstr(tn_log(1), "peer 0 (PB 0 rank 0, 127.0.0.1:40000): connection lost: "
                                "connection reset by peer"));
    /* Later requests to the lost peer fail at once. */
    waitio_irecv(g1, 0, r, 10, 0, &rq2);
    UT_ASSERT(waitio_wait(&rq2) != 0);
    free(s);
    free(r);
    tn_teardown();
}

/* A filter selecting the even MPI ranks. */
static int even(int pb, int n)
{
    return n % 2 == 0;
}
/* A filter selecting every process. */
static int all(int pb, int n)
{
    return 1;
}

UT_TEST(wio_core_groups)
{
    static const uint32_t sizes[3] = {1, 2, 1};
    tn_setup(3, sizes); /* universe: PB0 {0}, PB1 {1, 2}, PB2 {3} */
    waitio_filter_func_t f[3] = {all, even, all};
    int order[3] = {2, 1, 2}; /* PB1 first, then PB0 and PB2 (a tie: PB id order) */
    struct PBGroup *g[4];
    for (int i = 0; i < 4; i++)
        g[i] = wio_group_filter(&tn_core[i], 5, f, order);
    UT_ASSERT(g[0] && g[1] && !g[2] && g[3]); /* PB1 rank 1 is odd: not a member, NULL */
    int rank, size;
    UT_EQ(waitio_group_size(g[0], &size), 0);
    UT_EQ(size, 3);
    waitio_group_rank(g[1], &rank);
    UT_EQ(rank, 0);
    waitio_group_rank(g[0], &rank);
    UT_EQ(rank, 1);
    waitio_group_rank(g[3], &rank);
    UT_EQ(rank, 2);
    UT_ASSERT(g[0]->key == g[1]->key && g[1]->key == g[3]->key);
    /* Rank lists end with -1; a NULL list excludes the PB. */
    int l0[] = {0, -1}, l1[] = {1, 0, -1}, bad[] = {2, -1}, twice[] = {1, 1, -1};
    int *lists[3] = {l0, l1, NULL};
    int ord[3] = {1, 2, 3};
    struct PBGroup *w = wio_group_ranks(&tn_core[2], 0, lists, ord);
    UT_ASSERT(w);
    UT_EQ(w->size, 3);
    UT_EQ(w->rank, 2); /* PB1 rank 1: after PB0's one and PB1 rank 0 */
    UT_ASSERT(!wio_group_ranks(&tn_core[3], 0, lists, ord)); /* PB2 excluded */
    lists[1] = bad;
    UT_ASSERT(!wio_group_ranks(&tn_core[0], 0, lists, ord));
    lists[1] = twice;
    UT_ASSERT(!wio_group_ranks(&tn_core[0], 0, lists, ord));
    /* Bad group ranks fail at waitio_wait, not by crashing. */
    waitio_req_t q;
    waitio_isend(g[0], 3, "x", 1, 0, &q);
    UT_ASSERT(waitio_wait(&q) != 0);
    tn_teardown();
}

UT_TEST(wio_core_bye)
{
    two();
    struct PBGroup *g0 = tn_world(0), *g1 = tn_world(1);
    waitio_req_t q[2];
    char r[8];
    waitio_irecv(g1, 0, r, 8, 0, &q[0]);
    waitio_isend(g0, 1, "bye", 4, 0, &q[1]);
    UT_EQ(waitio_wait(&q[0]), 0);
    UT_EQ(waitio_wait(&q[1]), 0);
    wio_core_bye(&tn_core[0]);
    wio_core_bye(&tn_core[1]);
    tn_settle();
    UT_ASSERT(wio_core_quiet(&tn_core[0]) && wio_core_quiet(&tn_core[1]));
    UT_ASSERT(tn_core[0].peers[1].bye_in && tn_core[1].peers[0].bye_in);
    wio_core_close_all(&tn_core[0]);
    tn_settle();
    UT_ASSERT(!tn_core[1].peers[0].failed); /* closed after BYE: no error */
    UT_EQ(tn_log(1)[0], 0);
    tn_teardown();
}
