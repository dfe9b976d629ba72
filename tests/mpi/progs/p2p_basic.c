/*
 * p2p_basic.c: MPI conformance of blocking point-to-point communication: non-overtaking
 * order, wildcards and status fields, probe, zero-byte and MPI_PROC_NULL messages, the
 * send modes (synchronous, ready, buffered), sendrecv, tags. Only rank 0 prints: one line
 * per check ("ok N - ..." or "not ok N - ..."), then "# conformance p2p_basic: ...".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int right(void)
{
    return (me + 1) % np;
}
static int left(void)
{
    return (me + np - 1) % np;
}
/* Payload word k of message i from rank s: any misplaced or stale word shows. */
static int word(int s, int i, int k)
{
    return s * 1000003 + i * 7919 + k * 31 + 1;
}
/* Ints in message i of the ordering check: mostly small (0 included), every 50th 80 KB
 * (beyond any eager limit: a large message must not be overtaken by small ones after it). */
static int olen(int i)
{
    return i % 50 == 49 ? 20000 : (i * 7) % 97;
}

#define NORDER 1000
static int buf[20000 + 16];

/* Every rank but 0 sends NORDER messages of mixed sizes with one tag to rank 0, which takes
 * them with MPI_ANY_SOURCE: per source they must come in the order sent. */
static void check_order_any_source(void)
{
    if (me == 0) {
        int *next = calloc(np, sizeof(int));
        for (int m = 0; m < NORDER * (np - 1); m++) {
            MPI_Status st;
            int n = -1;
            MPI_Recv(buf, 20000, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            int s = st.MPI_SOURCE;
            if (s < 1 || s >= np || st.MPI_TAG != 7) {
                fail("message %d: source %d tag %d", m, s, st.MPI_TAG);
                break;
            }
            int i = next[s]++;
            EXPECT(n == olen(i), "message %d from %d: %d ints, expected %d", i, s, n, olen(i));
            for (int k = 0; k < n && k < olen(i); k++)
                if (buf[k] != word(s, i, k)) {
                    fail("message %d from %d: word %d is %d, expected %d", i, s, k, buf[k],
                         word(s, i, k));
                    break;
                }
        }
        free(next);
    } else {
        for (int i = 0; i < NORDER; i++) {
            for (int k = 0; k < olen(i); k++)
                buf[k] = word(me, i, k);
            MPI_Send(buf, olen(i), MPI_INT, 0, 7, MPI_COMM_WORLD);
        }
    }
    report("ordering: 1000 messages of 0..80 KB from each rank to rank 0 (ANY_SOURCE), in order");
}

/* Around the ring (rank 0 sends first, the others receive first: safe with blocking sends),
 * 200 messages with varying tags: MPI_ANY_TAG receives take them in the order sent (rank 0
 * names each tag, as it never posts MPI_ANY_TAG). */
static void check_order_any_tag(void)
{
    int m[2];
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == (me == 0)) {
            for (int i = 0; i < 200; i++) {
                m[0] = i;
                m[1] = word(me, i, 0);
                MPI_Send(m, 2, MPI_INT, right(), 1 + (i * 7) % 23, MPI_COMM_WORLD);
            }
        } else {
            for (int i = 0; i < 200; i++) {
                MPI_Status st;
                int tag = 1 + (i * 7) % 23;
                MPI_Recv(m, 2, MPI_INT, left(), me ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &st);
                EXPECT(st.MPI_TAG == tag && m[0] == i && m[1] == word(left(), i, 0),
                       "message %d: tag %d seq %d, expected tag %d", i, st.MPI_TAG, m[0], tag);
            }
        }
    }
    report("ordering: 200 messages of varying tags around the ring, ANY_TAG gets send order");
}

/* Rank 1 receives 3 messages from every other rank with MPI_ANY_SOURCE and MPI_ANY_TAG:
 * status source, tag and count must describe each message; per source, send order. */
static void check_wildcards(void)
{
    if (me == 1) {
        int *next = calloc(np, sizeof(int));
        for (int m = 0; m < 3 * (np - 1); m++) {
            MPI_Status st;
            int n = -1;
            memset(buf, 0, 64 * sizeof(int));
            MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            int s = st.MPI_SOURCE;
            if (s < 0 || s >= np || s == 1 || next[s] > 2) {
                fail("message %d: unexpected source %d", m, s);
                break;
            }
            int k = next[s]++;
            EXPECT(st.MPI_TAG == 100 * (k + 1) + s, "from %d: tag %d, expected %d", s, st.MPI_TAG,
                   100 * (k + 1) + s);
            EXPECT(n == s + k, "from %d: count %d, expected %d", s, n, s + k);
            for (int j = 0; j < n && j < 64; j++)
                EXPECT(buf[j] == word(s, k, j), "from %d, message %d: bad word %d", s, k, j);
        }
        free(next);
    } else {
        for (int k = 0; k < 3; k++) {
            for (int j = 0; j < me + k; j++)
                buf[j] = word(me, k, j);
            MPI_Send(buf, me + k, MPI_INT, 1, 100 * (k + 1) + me, MPI_COMM_WORLD);
        }
    }
    report("ANY_SOURCE + ANY_TAG: status source, tag and count of each message");
}

/* The last rank probes (ANY_SOURCE/ANY_TAG, then a named source with ANY_TAG), sizes its
 * buffer from the probe's count and receives exactly the probed message. */
static void check_probe(void)
{
    int last = np - 1;
    if (me == last) {
        int *left_from = malloc(np * sizeof(int)); /* messages still to come per source */
        for (int s = 0; s < np; s++)
            left_from[s] = s == last ? 0 : 2;
        for (int m = 0; m < 2 * (np - 1); m++) {
            MPI_Status ps, rs;
            int n = -1, rn = -1, named = 0;
            while (named < last && left_from[named] == 0)
                named++;
            if (m % 2 == 0)
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ps);
            else
                MPI_Probe(named, MPI_ANY_TAG, MPI_COMM_WORLD, &ps);
            if (ps.MPI_SOURCE < 0 || ps.MPI_SOURCE >= last || !left_from[ps.MPI_SOURCE]--) {
                fail("probe %d: unexpected source %d", m, ps.MPI_SOURCE);
                break;
            }
            MPI_Get_count(&ps, MPI_DOUBLE, &n);
            double *d = malloc((n > 0 ? n : 1) * sizeof(double));
            MPI_Recv(d, n, MPI_DOUBLE, ps.MPI_SOURCE, ps.MPI_TAG, MPI_COMM_WORLD, &rs);
            MPI_Get_count(&rs, MPI_DOUBLE, &rn);
            int s = ps.MPI_SOURCE, k = ps.MPI_TAG - 10;
            EXPECT(rs.MPI_SOURCE == s && rs.MPI_TAG == ps.MPI_TAG && rn == n,
                   "received (%d,%d,%d) after probing (%d,%d,%d)", rs.MPI_SOURCE, rs.MPI_TAG, rn, s,
                   ps.MPI_TAG, n);
            EXPECT(s >= 0 && s < last && k == 1 - left_from[s] && n == 100 * s + 7 * k + 3,
                   "probe: source %d tag %d count %d", s, ps.MPI_TAG, n);
            for (int j = 0; j < n && j < rn; j++)
                if (d[j] != word(s, k, j)) {
                    fail("from %d tag %d: bad element %d", s, ps.MPI_TAG, j);
                    break;
                }
            free(d);
        }
        free(left_from);
    } else {
        for (int k = 0; k < 2; k++) {
            int n = 100 * me + 7 * k + 3;
            double *d = malloc(n * sizeof(double));
            for (int j = 0; j < n; j++)
                d[j] = word(me, k, j);
            MPI_Send(d, n, MPI_DOUBLE, last, 10 + k, MPI_COMM_WORLD);
            free(d);
        }
    }
    report("Probe (ANY_SOURCE/ANY_TAG and named source) then Recv of the probed message");
}

/* MPI_Iprobe, polled without any timing, finds the message from the left; it finds none
 * for a tag nobody sends; on MPI_PROC_NULL it answers at once with the null status. */
static void check_iprobe(void)
{
    int flag = 0, x = word(me, 0, 0), y = 0, n = -1;
    MPI_Status st;
    MPI_Request r;
    MPI_Isend(&x, 1, MPI_INT, right(), 55, MPI_COMM_WORLD, &r);
    while (!flag)
        MPI_Iprobe(left(), 55, MPI_COMM_WORLD, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == left() && st.MPI_TAG == 55 && n == 1, "iprobe status (%d,%d,%d)",
           st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Iprobe(MPI_ANY_SOURCE, 56, MPI_COMM_WORLD, &flag, &st);
    EXPECT(!flag, "Iprobe found a message with tag 56 that nobody sent");
    MPI_Iprobe(MPI_PROC_NULL, 55, MPI_COMM_WORLD, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(flag && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
           "Iprobe(PROC_NULL): flag %d source %d tag %d count %d", flag, st.MPI_SOURCE, st.MPI_TAG,
           n);
    MPI_Recv(&y, 1, MPI_INT, left(), 55, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    EXPECT(y == word(left(), 0, 0), "received %d after Iprobe", y);
    report("Iprobe: polled until found, none for an unsent tag, PROC_NULL answers at once");
}

/* Zero-count messages (MPI_INT and MPI_BYTE) around the ring: count 0, right source and
 * tag, the receive buffer untouched. */
static void check_zero(void)
{
    int z[4] = {1, 2, 3, 4};
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == (me == 0)) {
            MPI_Send(z, 0, MPI_INT, right(), 21, MPI_COMM_WORLD);
            MPI_Send(NULL, 0, MPI_BYTE, right(), 22, MPI_COMM_WORLD);
        } else {
            for (int t = 21; t <= 22; t++) {
                MPI_Status st;
                int n = -1, e = -1;
                for (int j = 0; j < 10; j++)
                    buf[j] = -5;
                MPI_Recv(buf, 10, t == 21 ? MPI_INT : MPI_BYTE, left(), t, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, t == 21 ? MPI_INT : MPI_BYTE, &n);
                MPI_Get_elements(&st, MPI_INT, &e);
                EXPECT(st.MPI_SOURCE == left() && st.MPI_TAG == t && n == 0 && e == 0,
                       "tag %d: status (%d,%d) count %d elements %d", t, st.MPI_SOURCE, st.MPI_TAG,
                       n, e);
                for (int j = 0; j < 10; j++)
                    EXPECT(buf[j] == -5, "tag %d: buffer word %d written", t, j);
            }
        }
    }
    report("zero-byte messages: count 0, status source and tag, buffer untouched");
}

/* MPI_PROC_NULL: sends of every mode return at once, a receive (blocking or not) and a
 * probe complete at once with source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0. */
static void check_proc_null(void)
{
    int x[4] = {9, 9, 9, 9}, n = -1;
    MPI_Status st;
    MPI_Request r;
    MPI_Send(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Ssend(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Rsend(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Recv(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
           "Recv: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
    EXPECT(x[0] == 9 && x[3] == 9, "Recv from PROC_NULL wrote the buffer");
    MPI_Irecv(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
           "Irecv: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
           "Probe: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
    report("MPI_PROC_NULL: sends return, receive and probe give source PROC_NULL, ANY_TAG, 0");
}

/* MPI_Ssend around the ring (rank 0 first), small and 64 KiB + 1. */
static void check_ssend(void)
{
    static char c[65537];
    for (int size = 5; size <= 65537; size += 65532) {
        for (int pass = 0; pass < 2; pass++) {
            if ((pass == 0) == (me == 0)) {
                for (int j = 0; j < size; j++)
                    c[j] = (char)(me * 13 + j * 7);
                MPI_Ssend(c, size, MPI_CHAR, right(), 4, MPI_COMM_WORLD);
            } else {
                MPI_Status st;
                int n = -1;
                memset(c, 0, sizeof c);
                MPI_Recv(c, size, MPI_CHAR, left(), 4, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_CHAR, &n);
                EXPECT(n == size, "count %d, expected %d", n, size);
                for (int j = 0; j < size; j++)
                    if (c[j] != (char)(left() * 13 + j * 7)) {
                        fail("%d-byte Ssend: byte %d wrong", size, j);
                        break;
                    }
            }
        }
    }
    report("Ssend around the ring (5 B and 64 KiB + 1)");
}

/* MPI_Rsend is legal only once the receive is posted: each rank posts its receive, then
 * tells its left neighbour, which Rsends only after hearing it. */
static void check_rsend(void)
{
    int out[3] = {word(me, 1, 0), word(me, 1, 1), word(me, 1, 2)}, in[3] = {0, 0, 0};
    MPI_Request rr, rs;
    MPI_Irecv(in, 3, MPI_INT, left(), 31, MPI_COMM_WORLD, &rr);
    MPI_Isend(NULL, 0, MPI_INT, left(), 30, MPI_COMM_WORLD, &rs);
    MPI_Recv(NULL, 0, MPI_INT, right(), 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Rsend(out, 3, MPI_INT, right(), 31, MPI_COMM_WORLD);
    MPI_Wait(&rs, MPI_STATUS_IGNORE);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    for (int j = 0; j < 3; j++)
        EXPECT(in[j] == word(left(), 1, j), "word %d is %d", j, in[j]);
    report("Rsend after the receiver posted its receive (handshake)");
}

/* MPI_Bsend is local: every rank buffers 10 messages (up to 64 KiB) to the right before
 * anyone receives, which with plain sends could deadlock. Detach returns the buffer. */
static void check_bsend(void)
{
    int size = 0, ps;
    for (int i = 0; i < 10; i++) { /* what the standard says a buffered message may take */
        MPI_Pack_size(i == 9 ? 16384 : i, MPI_INT, MPI_COMM_WORLD, &ps);
        size += ps + MPI_BSEND_OVERHEAD;
    }
    char *b = malloc(size), *got = NULL;
    int gotsize = 0;
    MPI_Buffer_attach(b, size);
    for (int i = 0; i < 10; i++) {
        int n = i == 9 ? 16384 : i;
        for (int k = 0; k < n; k++)
            buf[k] = word(me, i, k);
        MPI_Bsend(buf, n, MPI_INT, right(), 40 + i, MPI_COMM_WORLD);
    }
    for (int i = 0; i < 10; i++) {
        int n = i == 9 ? 16384 : i, c = -1;
        MPI_Status st;
        MPI_Recv(buf, n, MPI_INT, left(), 40 + i, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &c);
        EXPECT(c == n, "message %d: count %d", i, c);
        for (int k = 0; k < n; k++)
            if (buf[k] != word(left(), i, k)) {
                fail("message %d: word %d wrong", i, k);
                break;
            }
    }
    MPI_Buffer_detach(&got, &gotsize);
    EXPECT(got == b && gotsize == size, "detach gave another buffer or size %d (attached %d)",
           gotsize, size);
    free(b);
    report("Bsend: 10 buffered messages (to 64 KiB) before any receive; Buffer_detach");
}

/* MPI_Sendrecv: a shift right with send and receive counts that differ, and a shift on
 * a non-periodic chain whose ends talk to MPI_PROC_NULL. */
static void check_sendrecv(void)
{
    int out[64], in[64], n = -1;
    MPI_Status st;
    for (int j = 0; j <= me; j++)
        out[j] = word(me, 2, j);
    MPI_Sendrecv(out, me + 1, MPI_INT, right(), 8, in, 64, MPI_INT, left(), 8, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == left() && st.MPI_TAG == 8 && n == left() + 1,
           "ring: status (%d,%d) count %d", st.MPI_SOURCE, st.MPI_TAG, n);
    for (int j = 0; j < n && j < 64; j++)
        EXPECT(in[j] == word(left(), 2, j), "ring: word %d", j);
    int to = me == np - 1 ? MPI_PROC_NULL : me + 1, from = me == 0 ? MPI_PROC_NULL : me - 1;
    in[0] = -1;
    MPI_Sendrecv(out, 1, MPI_INT, to, 9, in, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    if (from == MPI_PROC_NULL)
        EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && n == 0 && in[0] == -1,
               "chain end: source %d count %d", st.MPI_SOURCE, n);
    else
        EXPECT(st.MPI_SOURCE == from && n == 1 && in[0] == word(from, 2, 0),
               "chain: source %d count %d value %d", st.MPI_SOURCE, n, in[0]);
    report("Sendrecv: ring shift with differing counts; chain ends with PROC_NULL");
}

/* MPI_Sendrecv_replace: np shifts by one around the ring; after k shifts every rank holds
 * the data of rank me - k, and after np shifts its own again. */
static void check_sendrecv_replace(void)
{
    int d[1000];
    for (int j = 0; j < 1000; j++)
        d[j] = word(me, 3, j);
    for (int k = 1; k <= np; k++) {
        MPI_Status st;
        MPI_Sendrecv_replace(d, 1000, MPI_INT, right(), k, left(), k, MPI_COMM_WORLD, &st);
        int src = (me + np * 2 - k) % np;
        EXPECT(st.MPI_SOURCE == left() && st.MPI_TAG == k, "shift %d: status (%d,%d)", k,
               st.MPI_SOURCE, st.MPI_TAG);
        for (int j = 0; j < 1000; j++)
            if (d[j] != word(src, 3, j)) {
                fail("shift %d: word %d holds %d, expected rank %d's", k, j, d[j], src);
                break;
            }
    }
    report("Sendrecv_replace: np shifts around the ring, data of rank me-k after k shifts");
}

/* Tags 0, 32767 (the minimum MPI_TAG_UB the standard allows) and MPI_TAG_UB itself, received
 * in the reverse order of sending: matching is by tag. */
static void check_tags(void)
{
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    EXPECT(flag && ub && *ub >= 32767, "MPI_TAG_UB attribute: flag %d value %d", flag,
           flag && ub ? *ub : -1);
    int tags[3] = {0, 32767, flag && ub ? *ub : 32767}, out[3], in[3];
    MPI_Request r[3];
    for (int i = 0; i < 3; i++) {
        out[i] = word(me, 4, i);
        MPI_Isend(&out[i], 1, MPI_INT, right(), tags[i], MPI_COMM_WORLD, &r[i]);
    }
    for (int i = 2; i >= 0; i--) {
        MPI_Status st;
        MPI_Recv(&in[i], 1, MPI_INT, left(), tags[i], MPI_COMM_WORLD, &st);
        EXPECT(st.MPI_TAG == tags[i] && in[i] == word(left(), 4, i), "tag %d: got tag %d", tags[i],
               st.MPI_TAG);
    }
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    report("tags 0, 32767 and MPI_TAG_UB, received in reverse order");
}

/* Messages to oneself: Isend then Recv, Sendrecv with oneself, and on MPI_COMM_SELF. */
static void check_self(void)
{
    int a = word(me, 5, 0), b = 0, c = 0, sr, ss;
    MPI_Request r;
    MPI_Isend(&a, 1, MPI_INT, me, 3, MPI_COMM_WORLD, &r);
    MPI_Recv(&b, 1, MPI_INT, me, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&a, 1, MPI_INT, me, 4, &c, 1, MPI_INT, me, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT(b == a && c == a, "self: %d %d, expected %d", b, c, a);
    MPI_Comm_rank(MPI_COMM_SELF, &sr);
    MPI_Comm_size(MPI_COMM_SELF, &ss);
    EXPECT(sr == 0 && ss == 1, "COMM_SELF rank %d size %d", sr, ss);
    b = 0;
    MPI_Sendrecv(&a, 1, MPI_INT, 0, 5, &b, 1, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    EXPECT(b == a, "COMM_SELF: %d", b);
    report("messages to oneself (Isend+Recv, Sendrecv) and on MPI_COMM_SELF");
}

/* Not a check: rank 0 prints a line of 5000 bytes in pieces, which must reach the output
 * unchanged (the unikernel writes a rank's line whole up to 4 KiB, the rest after it
 * without a second prefix), as Open MPI's does. */
static void print_long_line(void)
{
    if (me != 0)
        return;
    printf("# a line of 5000 bytes: ");
    for (int i = 0; i < 5000 - 24; i++)
        putchar('a' + i % 26);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "p2p_basic"))
        return 1;
    check_order_any_source();
    check_order_any_tag();
    check_wildcards();
    check_probe();
    check_iprobe();
    check_zero();
    check_proc_null();
    check_ssend();
    check_rsend();
    check_bsend();
    check_sendrecv();
    check_sendrecv_replace();
    check_tags();
    check_self();
    print_long_line();
    return finish("p2p_basic");
}
