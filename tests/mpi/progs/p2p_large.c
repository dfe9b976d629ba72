/*
 * p2p_large.c: MPI conformance of large point-to-point messages: sizes on both sides of
 * likely eager/rendezvous thresholds, checked byte by byte with a guard beyond the message;
 * 16 MiB messages around the ring and between the first and last rank, both directions at
 * once; unaligned buffers, many concurrent medium messages, ANY_SOURCE, Ssend, order of
 * large and small messages, a large strided datatype, and truncation of large messages.
 * Only rank 0 prints: one line per check, then "# conformance p2p_large: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define BIG   (16 << 20)
#define GUARD 64
static unsigned char *sbuf, *rbuf;   /* BIG + GUARD bytes each */
static unsigned char *sbuf2, *rbuf2; /* 1 MiB + GUARD */

static int right(void)
{
    return (me + 1) % np;
}
static int left(void)
{
    return (me + np - 1) % np;
}
/* Word k (8 bytes) of message `tag` from rank s: distinct in every word, so a shifted,
 * stale or misplaced block shows; whole words keep filling and checking 16 MiB cheap under
 * QEMU's TCG. Byte i of a message is byte i % 8 of word i / 8 (memcpy: any alignment). */
static unsigned long long pat(int s, int tag, size_t k)
{
    return (k + 1) * 0x9E3779B97F4A7C15ull ^ (unsigned long long)s << 48 ^
           (unsigned long long)tag << 40;
}
static void fill(unsigned char *b, size_t n, int tag)
{
    for (size_t k = 0; k * 8 < n; k++) {
        unsigned long long w = pat(me, tag, k);
        memcpy(b + k * 8, &w, n - k * 8 < 8 ? n - k * 8 : 8);
    }
}
/* Checks n bytes of message `tag` from rank s, and GUARD bytes of 0xA5 after them. */
static void verify(const unsigned char *b, size_t n, int s, int tag, const char *what)
{
    for (size_t k = 0; k * 8 < n; k++) {
        unsigned long long w = pat(s, tag, k);
        size_t len = n - k * 8 < 8 ? n - k * 8 : 8;
        if (memcmp(b + k * 8, &w, len)) {
            const unsigned char *wb = (const unsigned char *)&w;
            size_t i = 0;
            while (i < len - 1 && b[k * 8 + i] == wb[i])
                i++;
            fail("%s: %lu-byte message from %d: byte %lu is %d, expected %d", what,
                 (unsigned long)n, s, (unsigned long)(k * 8 + i), b[k * 8 + i], wb[i]);
            return;
        }
    }
    for (size_t i = n; i < n + GUARD; i++)
        if (b[i] != 0xA5) {
            fail("%s: %lu-byte message from %d: byte %lu past the end was written", what,
                 (unsigned long)n, s, (unsigned long)i);
            return;
        }
}
static void clear(unsigned char *b, size_t n)
{
    memset(b, 0xA5, n + GUARD);
}
static void count_is(MPI_Status *st, int n, int src, const char *what)
{
    int c = -1;
    MPI_Get_count(st, MPI_BYTE, &c);
    EXPECT(c == n && st->MPI_SOURCE == src, "%s: count %d from %d, expected %d from %d", what, c,
           st->MPI_SOURCE, n, src);
}

static const int sizes[] = {1,     1024,  4095,  4096,  4097,   16383,  16384,
                            16385, 65535, 65536, 65537, 262144, 1048576};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* One size: Isend to both neighbours and Irecv from both, all at once; receive buffers
 * larger than the message (count, guard). */
static void check_size_ring(int n)
{
    MPI_Request r[4];
    MPI_Status st[4];
    fill(sbuf, n, 1);
    fill(sbuf2, n, 2);
    clear(rbuf, n);
    clear(rbuf2, n);
    MPI_Irecv(rbuf, n + GUARD, MPI_BYTE, left(), 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(rbuf2, n + GUARD, MPI_BYTE, right(), 2, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(sbuf, n, MPI_BYTE, right(), 1, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(sbuf2, n, MPI_BYTE, left(), 2, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, st);
    count_is(&st[0], n, left(), "from the left");
    count_is(&st[1], n, right(), "from the right");
    verify(rbuf, n, left(), 1, "from the left");
    verify(rbuf2, n, right(), 2, "from the right");
    char name[100];
    snprintf(name, sizeof name, "%d B both ways around the ring at once (Isend/Irecv)", n);
    report(name);
}

/* Every size with blocking Send/Recv between pairs (2k, 2k+1): even ranks send first, then
 * odd ranks; with an odd size the last rank pairs with no one. */
static void check_sizes_blocking(void)
{
    int peer = me % 2 ? me - 1 : me + 1;
    if (peer < np) {
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k];
            MPI_Status st;
            for (int turn = 0; turn < 2; turn++) {
                if (turn == me % 2) {
                    fill(sbuf, n, 3);
                    MPI_Send(sbuf, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                } else {
                    clear(rbuf, n);
                    MPI_Recv(rbuf, n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st);
                    count_is(&st, n, peer, "blocking");
                    verify(rbuf, n, peer, 3, "blocking");
                }
            }
        }
    }
    report("every size 1 B .. 1 MiB with blocking Send/Recv between pairs of ranks");
}

/* Buffers at odd addresses on both sides (the copy paths must not assume alignment). */
static void check_unaligned(void)
{
    static const int n[3] = {4097, 65537, 1048577};
    for (int k = 0; k < 3; k++) {
        MPI_Status st;
        fill(sbuf + 1, n[k], 4);
        clear(rbuf + 3, n[k]);
        MPI_Sendrecv(sbuf + 1, n[k], MPI_BYTE, right(), 4, rbuf + 3, n[k], MPI_BYTE, left(), 4,
                     MPI_COMM_WORLD, &st);
        count_is(&st, n[k], left(), "unaligned");
        verify(rbuf + 3, n[k], left(), 4, "unaligned");
    }
    report("unaligned send and receive buffers (4097 B, 64 KiB + 1, 1 MiB + 1)");
}

/* 16 MiB to the right while receiving 16 MiB from the left. */
static void check_16m_ring(void)
{
    MPI_Request r[2];
    MPI_Status st[2];
    fill(sbuf, BIG, 5);
    clear(rbuf, BIG);
    MPI_Irecv(rbuf, BIG, MPI_BYTE, left(), 5, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(sbuf, BIG, MPI_BYTE, right(), 5, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, st);
    count_is(&st[0], BIG, left(), "16 MiB ring");
    verify(rbuf, BIG, left(), 5, "16 MiB ring");
    report("16 MiB around the ring, every rank sending and receiving at once");
}

/* The first and last rank exchange 16 MiB both ways at once (across nodes when there are
 * several); the others wait. */
static void check_16m_pair(void)
{
    int peer = me == 0 ? np - 1 : me == np - 1 ? 0 : -1;
    if (peer >= 0) {
        MPI_Request r[2];
        MPI_Status st[2];
        fill(sbuf, BIG, 6);
        clear(rbuf, BIG);
        MPI_Irecv(rbuf, BIG, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(sbuf, BIG, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, st);
        count_is(&st[0], BIG, peer, "16 MiB pair");
        verify(rbuf, BIG, peer, 6, "16 MiB pair");
    }
    report("16 MiB exchanged both ways at once between the first and the last rank");
}

/* Four 64 KiB + 1 messages from every rank to every other rank, all posted at once. */
static void check_concurrent(void)
{
    enum { N = 65537, K = 4 };
    int m = (np - 1) * K, i = 0;
    unsigned char *out = malloc((size_t)K * N), *in = malloc((size_t)m * (N + GUARD));
    MPI_Request *r = malloc(2 * m * sizeof(MPI_Request));
    MPI_Status *st = malloc(2 * m * sizeof(MPI_Status));
    for (int k = 0; k < K; k++)
        fill(out + (size_t)k * N, N, 10 + k);
    for (int p = 0; p < np; p++)
        for (int k = 0; k < K && p != me; k++, i++) {
            clear(in + (size_t)i * (N + GUARD), N);
            MPI_Irecv(in + (size_t)i * (N + GUARD), N, MPI_BYTE, p, 10 + k, MPI_COMM_WORLD, &r[i]);
        }
    for (int p = 0; p < np; p++)
        for (int k = 0; k < K && p != me; k++, i++)
            MPI_Isend(out + (size_t)k * N, N, MPI_BYTE, p, 10 + k, MPI_COMM_WORLD, &r[i]);
    MPI_Waitall(2 * m, r, st);
    i = 0;
    for (int p = 0; p < np; p++)
        for (int k = 0; k < K && p != me; k++, i++) {
            count_is(&st[i], N, p, "concurrent");
            verify(in + (size_t)i * (N + GUARD), N, p, 10 + k, "concurrent");
        }
    free(out), free(in), free(r), free(st);
    report("4 x (64 KiB + 1) from every rank to every other, all outstanding at once");
}

/* Rank 1 receives a 1 MiB message from every other rank with MPI_ANY_SOURCE. */
static void check_any_source(void)
{
    enum { N = 1 << 20 };
    if (me == 1) {
        int *seen = calloc(np, sizeof(int));
        for (int k = 0; k < np - 1; k++) {
            MPI_Status st;
            clear(rbuf, N);
            MPI_Recv(rbuf, N, MPI_BYTE, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &st);
            int s = st.MPI_SOURCE;
            if (s < 0 || s >= np || s == 1 || seen[s]++) {
                fail("unexpected source %d", s);
                break;
            }
            count_is(&st, N, s, "ANY_SOURCE");
            verify(rbuf, N, s, 20, "ANY_SOURCE");
        }
        free(seen);
    } else {
        fill(sbuf, N, 20);
        MPI_Send(sbuf, N, MPI_BYTE, 1, 20, MPI_COMM_WORLD);
    }
    report("1 MiB from every rank to rank 1, received with ANY_SOURCE");
}

/* Large synchronous sends around the ring (rank 0 first) and Sendrecv_replace of 1 MiB. */
static void check_ssend_replace(void)
{
    enum { N = 1 << 20 };
    MPI_Status st;
    for (int turn = 0; turn < 2; turn++) {
        if ((turn == 0) == (me == 0)) {
            fill(sbuf, N, 21);
            MPI_Ssend(sbuf, N, MPI_BYTE, right(), 21, MPI_COMM_WORLD);
        } else {
            clear(rbuf, N);
            MPI_Recv(rbuf, N, MPI_BYTE, left(), 21, MPI_COMM_WORLD, &st);
            verify(rbuf, N, left(), 21, "Ssend");
        }
    }
    fill(rbuf, N, 22);
    memset(rbuf + N, 0xA5, GUARD);
    MPI_Sendrecv_replace(rbuf, N, MPI_BYTE, right(), 22, left(), 22, MPI_COMM_WORLD, &st);
    count_is(&st, N, left(), "Sendrecv_replace");
    verify(rbuf, N, left(), 22, "Sendrecv_replace");
    report("1 MiB Ssend around the ring; 1 MiB Sendrecv_replace");
}

/* Order: 1 MiB, 10 B, 1 MiB with one tag to the right; the three receives, posted before,
 * must get them in that order (a small message may not overtake a large one). */
static void check_large_small_order(void)
{
    enum { N = 1 << 20 };
    static const int len[3] = {N, 10, N};
    unsigned char *in[3] = {rbuf, rbuf2, rbuf + N + GUARD}, *out[3] = {sbuf, sbuf2, sbuf + N};
    MPI_Request r[6];
    MPI_Status st[6];
    for (int k = 0; k < 3; k++) {
        clear(in[k], len[k]);
        MPI_Irecv(in[k], N, MPI_BYTE, left(), 23, MPI_COMM_WORLD, &r[k]);
    }
    for (int k = 0; k < 3; k++) {
        fill(out[k], len[k], 24 + k);
        MPI_Isend(out[k], len[k], MPI_BYTE, right(), 23, MPI_COMM_WORLD, &r[3 + k]);
    }
    MPI_Waitall(6, r, st);
    for (int k = 0; k < 3; k++) {
        count_is(&st[k], len[k], left(), "order");
        verify(in[k], len[k], left(), 24 + k, "order");
    }
    report("1 MiB, 10 B, 1 MiB with one tag: received in the order sent");
}

/* 256 Ki ints taken every other int of a 2 MiB buffer (MPI_Type_vector) into a contiguous
 * receive, and back from contiguous into the strided layout. */
static void check_strided(void)
{
    enum { N = 256 * 1024 };
    MPI_Datatype vec;
    MPI_Status st;
    int *s = (int *)sbuf, *d = (int *)rbuf, c = -1;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 2 * N; i++)
        s[i] = i % 2 ? -1 : me * 7 + i * 3;
    MPI_Sendrecv(s, 1, vec, right(), 30, d, N, MPI_INT, left(), 30, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &c);
    EXPECT(c == N, "count %d", c);
    for (int i = 0; i < N; i++)
        if (d[i] != left() * 7 + 2 * i * 3) {
            fail("strided to contiguous: int %d is %d", i, d[i]);
            break;
        }
    for (int i = 0; i < 2 * N; i++)
        s[i] = -7;
    MPI_Sendrecv(d, N, MPI_INT, left(), 31, s, 1, vec, right(), 31, MPI_COMM_WORLD, &st);
    for (int i = 0; i < 2 * N; i++)
        if (s[i] != (i % 2 ? -7 : me * 7 + i * 3)) {
            fail("contiguous to strided: int %d is %d", i, s[i]);
            break;
        }
    MPI_Type_free(&vec);
    report("1 MiB of strided ints (Type_vector) to contiguous and back");
}

static int errclass(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Truncation of large messages under MPI_ERRORS_RETURN: 1 MiB into 256 KiB (Recv), 4097 B
 * into 4096 (Irecv + Wait), 16 MiB into 1 MiB; afterwards a 1 MiB exchange works. */
static void check_truncate(void)
{
    static const int sent[3] = {1 << 20, 4097, BIG}, room[3] = {256 << 10, 4096, 1 << 20};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 3; k++) {
        MPI_Request r[2];
        MPI_Status st;
        int rc;
        if (k < 2) /* the 16 MiB message's content does not matter: spare QEMU the fill */
            fill(sbuf, sent[k], 40 + k);
        MPI_Isend(sbuf, sent[k], MPI_BYTE, right(), 40 + k, MPI_COMM_WORLD, &r[0]);
        if (k == 1) {
            MPI_Irecv(rbuf, room[k], MPI_BYTE, left(), 40 + k, MPI_COMM_WORLD, &r[1]);
            rc = MPI_Wait(&r[1], &st);
        } else {
            rc = MPI_Recv(rbuf, room[k], MPI_BYTE, left(), 40 + k, MPI_COMM_WORLD, &st);
        }
        EXPECT(errclass(rc) == MPI_ERR_TRUNCATE, "%d B into %d B: error class %d", sent[k], room[k],
               errclass(rc));
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    }
    MPI_Status st;
    int n = 1 << 20, rc;
    fill(sbuf, n, 45);
    clear(rbuf, n);
    rc = MPI_Sendrecv(sbuf, n, MPI_BYTE, right(), 45, rbuf, n, MPI_BYTE, left(), 45, MPI_COMM_WORLD,
                      &st);
    EXPECT(rc == MPI_SUCCESS, "exchange after truncation: rc %d", rc);
    count_is(&st, n, left(), "after truncation");
    verify(rbuf, n, left(), 45, "after truncation");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    report("truncation of 1 MiB, 4097 B and 16 MiB messages: MPI_ERR_TRUNCATE; comm usable");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "p2p_large"))
        return 1;
    sbuf = malloc(BIG + GUARD), sbuf2 = malloc((1 << 20) + GUARD);
    rbuf = malloc(BIG + GUARD), rbuf2 = malloc((1 << 20) + GUARD);
    if (!sbuf || !sbuf2 || !rbuf || !rbuf2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int k = 0; k < NSIZES; k++)
        check_size_ring(sizes[k]);
    check_sizes_blocking();
    check_unaligned();
    check_16m_ring();
    check_16m_pair();
    check_concurrent();
    check_any_source();
    check_ssend_replace();
    check_large_small_order();
    check_strided();
    check_truncate();
    free(sbuf), free(sbuf2), free(rbuf), free(rbuf2);
    return finish("p2p_large");
}
