/*
 * p2p_nonblocking.c: MPI conformance of nonblocking point-to-point communication: the wait
 * and test families, synchronous-send completion, Request_free, cancel, truncation errors,
 * many outstanding requests, and the matching order of posted wildcard receives. Only rank
 * 0 prints: one line per check, then "# conformance p2p_nonblocking: N checks, M failed".
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
static int word(int s, int i, int k)
{
    return s * 1000003 + i * 7919 + k * 31 + 1;
}
/* Fills n words of message i from this rank; checks message i from rank s. */
static void fill(int *b, int n, int i)
{
    for (int k = 0; k < n; k++)
        b[k] = word(me, i, k);
}
static int intact(const int *b, int n, int s, int i)
{
    for (int k = 0; k < n; k++)
        if (b[k] != word(s, i, k))
            return 0;
    return 1;
}

/* Isend/Irecv both ways around the ring, each request completed by MPI_Wait in an order
 * unrelated to posting; receive statuses name the source, tag and count. */
static void check_wait(void)
{
    int out[2][8], in[2][8], n;
    MPI_Request r[4];
    MPI_Status st;
    MPI_Irecv(in[0], 8, MPI_INT, left(), 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(in[1], 8, MPI_INT, right(), 2, MPI_COMM_WORLD, &r[1]);
    fill(out[0], 5, 1);
    fill(out[1], 7, 2);
    MPI_Isend(out[0], 5, MPI_INT, right(), 1, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(out[1], 7, MPI_INT, left(), 2, MPI_COMM_WORLD, &r[3]);
    MPI_Wait(&r[3], MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == right() && st.MPI_TAG == 2 && n == 7 && intact(in[1], 7, right(), 2),
           "from the right: (%d,%d,%d)", st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Wait(&r[0], &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == left() && st.MPI_TAG == 1 && n == 5 && intact(in[0], 5, left(), 1),
           "from the left: (%d,%d,%d)", st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Wait(&r[2], MPI_STATUS_IGNORE);
    EXPECT(r[0] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL, "Wait left a request set");
    report("Isend/Irecv both ways around the ring, Wait in another order, statuses");
}

/* Posts receives from every rank (itself included) and sends to every rank, then one of
 * the wait/test families completes all 2*np requests. Receive i comes from rank i with
 * tag 10 + i and i + 1 words. kind: 0 Waitall, 1 Waitany, 2 Waitsome, 3 Test loop,
 * 4 Testall loop, 5 Testany loop, 6 Testsome loop. */
static void all_to_all(int kind)
{
    int *in = calloc(np * 64, sizeof(int)), *out = malloc(64 * sizeof(int));
    int *seen = calloc(2 * np, sizeof(int)), *idx = malloc(2 * np * sizeof(int));
    MPI_Request *r = malloc(2 * np * sizeof(MPI_Request));
    MPI_Status *st = malloc(2 * np * sizeof(MPI_Status)),
               *sst = malloc(2 * np * sizeof(MPI_Status));
    for (int i = 0; i < np; i++)
        MPI_Irecv(in + 64 * i, 64, MPI_INT, i, 10 + i, MPI_COMM_WORLD, &r[i]);
    fill(out, me + 1, kind);
    for (int i = 0; i < np; i++)
        MPI_Isend(out, me + 1, MPI_INT, i, 10 + me, MPI_COMM_WORLD, &r[np + i]);
    int done = 0, flag = 0, k, cnt;
    switch (kind) {
    case 0:
        MPI_Waitall(2 * np, r, st);
        for (int i = 0; i < 2 * np; i++)
            seen[i]++;
        break;
    case 1:
    case 5:
        for (done = 0; done < 2 * np;) {
            MPI_Status one;
            if (kind == 1)
                MPI_Waitany(2 * np, r, &k, &one);
            else
                MPI_Testany(2 * np, r, &k, &flag, &one);
            if (kind == 1 || flag) {
                if (k < 0 || k >= 2 * np) {
                    fail("index %d", k);
                    break;
                }
                seen[k]++, done++, st[k] = one;
            }
        }
        /* Every request is now MPI_REQUEST_NULL: the answer is MPI_UNDEFINED at once. */
        flag = 0;
        if (kind == 1)
            MPI_Waitany(2 * np, r, &k, MPI_STATUS_IGNORE), flag = 1;
        else
            MPI_Testany(2 * np, r, &k, &flag, MPI_STATUS_IGNORE);
        EXPECT(flag && k == MPI_UNDEFINED, "on null requests: flag %d index %d", flag, k);
        break;
    case 2:
    case 6:
        for (done = 0; done < 2 * np;) {
            if (kind == 2)
                MPI_Waitsome(2 * np, r, &cnt, idx, sst);
            else
                MPI_Testsome(2 * np, r, &cnt, idx, sst);
            if (cnt < 0 || cnt > 2 * np || (kind == 2 && cnt == 0)) {
                fail("outcount %d", cnt);
                break;
            }
            for (int j = 0; j < cnt; j++) {
                if (idx[j] < 0 || idx[j] >= 2 * np) {
                    fail("index %d", idx[j]);
                    break;
                }
                seen[idx[j]]++, st[idx[j]] = sst[j];
            }
            done += cnt;
        }
        if (kind == 2)
            MPI_Waitsome(2 * np, r, &cnt, idx, MPI_STATUSES_IGNORE);
        else
            MPI_Testsome(2 * np, r, &cnt, idx, MPI_STATUSES_IGNORE);
        EXPECT(cnt == MPI_UNDEFINED, "on null requests: outcount %d", cnt);
        break;
    case 3:
        for (int i = 0; i < 2 * np; i++) {
            for (flag = 0; !flag;)
                MPI_Test(&r[i], &flag, &st[i]);
            seen[i]++;
        }
        break;
    case 4:
        for (flag = 0; !flag;)
            MPI_Testall(2 * np, r, &flag, st);
        for (int i = 0; i < 2 * np; i++)
            seen[i]++;
        break;
    }
    for (int i = 0; i < 2 * np; i++) {
        EXPECT(seen[i] == 1, "request %d completed %d times", i, seen[i]);
        EXPECT(r[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    }
    for (int i = 0; i < np && !bad; i++) {
        MPI_Get_count(&st[i], MPI_INT, &cnt);
        EXPECT(st[i].MPI_SOURCE == i && st[i].MPI_TAG == 10 + i && cnt == i + 1,
               "receive %d: status (%d,%d,%d)", i, st[i].MPI_SOURCE, st[i].MPI_TAG, cnt);
        EXPECT(intact(in + 64 * i, i + 1, i, kind), "receive %d: wrong data", i);
    }
    free(in), free(out), free(seen), free(idx), free(r), free(st), free(sst);
    static const char *names[] = {"Waitall",          "Waitany",          "Waitsome",
                                  "Test (polled)",    "Testall (polled)", "Testany (polled)",
                                  "Testsome (polled)"};
    char name[120];
    snprintf(name, sizeof name, "%s: all-to-all Isend/Irecv, each request once, statuses%s",
             names[kind],
             kind == 1 || kind == 2 || kind == 5 || kind == 6 ? ", then UNDEFINED" : "");
    report(name);
}

/* MPI_REQUEST_NULL: Wait and Test complete at once with the empty status. */
static void check_null_requests(void)
{
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st;
    int flag = 0, n = -1;
    MPI_Wait(&r[0], &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && n == 0,
           "Wait: empty status (%d,%d,%d)", st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Test(&r[0], &flag, &st);
    EXPECT(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
           "Test: flag %d status (%d,%d)", flag, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    flag = 0;
    MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
    EXPECT(flag, "Testall on null requests: flag 0");
    report("MPI_REQUEST_NULL: Wait/Test/Waitall/Testall complete at once, empty status");
}

/* MPI_Issend cannot complete before the receive is matched: the right neighbour posts it
 * only after a "go" that this rank sends after testing, so every test must say no. */
static void check_issend(void)
{
    int out[4], in[4], flag = 1, go = 0;
    MPI_Request rs, rg;
    fill(out, 4, 3);
    MPI_Issend(out, 4, MPI_INT, right(), 20, MPI_COMM_WORLD, &rs);
    for (int i = 0; i < 100 && !bad; i++) {
        MPI_Test(&rs, &flag, MPI_STATUS_IGNORE);
        EXPECT(!flag, "Issend completed before the receive was posted (test %d)", i);
    }
    MPI_Isend(&go, 1, MPI_INT, right(), 21, MPI_COMM_WORLD, &rg);
    MPI_Recv(&go, 1, MPI_INT, left(), 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(in, 4, MPI_INT, left(), 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (flag == 0)
        MPI_Wait(&rs, MPI_STATUS_IGNORE);
    MPI_Wait(&rg, MPI_STATUS_IGNORE);
    EXPECT(intact(in, 4, left(), 3), "wrong data");
    report("Issend: Test says incomplete until the receiver posts its receive");
}

/* MPI_Request_free of an active send: the message is still delivered; the receiver's
 * acknowledgement tells the sender it may reuse the buffer. */
static void check_request_free(void)
{
    int *out = malloc(1000 * sizeof(int)), *in = malloc(1000 * sizeof(int)), ack;
    MPI_Request r;
    fill(out, 1000, 4);
    MPI_Isend(out, 1000, MPI_INT, right(), 25, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    EXPECT(r == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
    MPI_Recv(in, 1000, MPI_INT, left(), 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT(intact(in, 1000, left(), 4), "wrong data");
    MPI_Sendrecv(&ack, 1, MPI_INT, left(), 26, &ack, 1, MPI_INT, right(), 26, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    free(out), free(in);
    report("Request_free of an active Isend: the message still arrives");
}

/* MPI_Cancel. An Irecv that nothing can match yet (the left neighbour sends only after
 * hearing from us) is cancelled: Test_cancelled says so, and the message sent afterwards
 * goes to a new receive. A receive matched by a completed Ssend cannot be cancelled. */
static void check_cancel(void)
{
    int in[4] = {0, 0, 0, 0}, out[4], flag = 0, z = 0;
    MPI_Request r;
    MPI_Status st;
    fill(out, 4, 5);
    MPI_Irecv(in, 4, MPI_INT, left(), 30, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    EXPECT(flag, "an unmatched Irecv was not cancelled");
    EXPECT(r == MPI_REQUEST_NULL, "Wait left the cancelled request set");
    MPI_Sendrecv(&z, 1, MPI_INT, left(), 31, &z, 1, MPI_INT, right(), 31, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Send(out, 4, MPI_INT, right(), 30, MPI_COMM_WORLD);
    MPI_Recv(in, 4, MPI_INT, left(), 30, MPI_COMM_WORLD, &st);
    EXPECT(intact(in, 4, left(), 5), "the message after the cancel was wrong");

    /* Matched: the left neighbour's Ssend completed (it tells us), so the receive started. */
    memset(in, 0, sizeof in);
    MPI_Irecv(in, 4, MPI_INT, left(), 32, MPI_COMM_WORLD, &r);
    MPI_Ssend(out, 4, MPI_INT, right(), 32, MPI_COMM_WORLD);
    MPI_Sendrecv(&z, 1, MPI_INT, right(), 33, &z, 1, MPI_INT, left(), 33, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    flag = 1;
    MPI_Test_cancelled(&st, &flag);
    EXPECT(!flag, "a matched receive was cancelled");
    EXPECT(intact(in, 4, left(), 5), "the matched receive's data is wrong");
    report("Cancel: unmatched Irecv cancelled, message goes to a later receive; matched not");
}

static int errclass(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* A receive buffer too small: MPI_ERR_TRUNCATE from Wait and Recv, MPI_ERR_IN_STATUS from
 * Waitall with the truncated request's status saying MPI_ERR_TRUNCATE (the others
 * MPI_SUCCESS, or MPI_ERR_PENDING and completed afterwards), under MPI_ERRORS_RETURN. The
 * communicator stays usable. */
static void check_truncate(void)
{
    int out[100], in[100], rc, n = -1;
    MPI_Request r[3];
    MPI_Status st[3];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fill(out, 100, 6);
    MPI_Irecv(in, 50, MPI_INT, left(), 40, MPI_COMM_WORLD, &r[0]);
    MPI_Send(out, 100, MPI_INT, right(), 40, MPI_COMM_WORLD);
    rc = MPI_Wait(&r[0], &st[0]);
    EXPECT(errclass(rc) == MPI_ERR_TRUNCATE, "Wait returned class %d", errclass(rc));
    MPI_Isend(out, 10, MPI_INT, right(), 41, MPI_COMM_WORLD, &r[1]);
    rc = MPI_Recv(in, 5, MPI_INT, left(), 41, MPI_COMM_WORLD, &st[0]);
    EXPECT(errclass(rc) == MPI_ERR_TRUNCATE, "Recv returned class %d", errclass(rc));
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);

    for (int i = 0; i < 3; i++)
        MPI_Irecv(in + 30 * i, i == 1 ? 10 : 30, MPI_INT, left(), 42 + i, MPI_COMM_WORLD, &r[i]);
    for (int i = 0; i < 3; i++)
        MPI_Send(out, 20, MPI_INT, right(), 42 + i, MPI_COMM_WORLD);
    rc = MPI_Waitall(3, r, st);
    EXPECT(rc == MPI_ERR_IN_STATUS, "Waitall returned %d (class %d)", rc, errclass(rc));
    EXPECT(errclass(st[1].MPI_ERROR) == MPI_ERR_TRUNCATE, "truncated status error class %d",
           errclass(st[1].MPI_ERROR));
    for (int i = 0; i < 3; i += 2) {
        if (st[i].MPI_ERROR == MPI_ERR_PENDING)
            MPI_Wait(&r[i], &st[i]);
        else
            EXPECT(st[i].MPI_ERROR == MPI_SUCCESS, "status %d error %d", i, st[i].MPI_ERROR);
        EXPECT(intact(in + 30 * i, 20, left(), 6), "receive %d: wrong data", i);
    }

    /* Still usable: an ordinary exchange. */
    rc = MPI_Sendrecv(out, 100, MPI_INT, right(), 45, in, 100, MPI_INT, left(), 45, MPI_COMM_WORLD,
                      &st[0]);
    MPI_Get_count(&st[0], MPI_INT, &n);
    EXPECT(rc == MPI_SUCCESS && n == 100 && intact(in, 100, left(), 6),
           "exchange after the errors: rc %d count %d", rc, n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    report("truncation: MPI_ERR_TRUNCATE from Wait/Recv, ERR_IN_STATUS from Waitall; comm usable");
}

/* 512 Irecvs with distinct tags, posted in reverse tag order, and 512 Isends to the right:
 * every receive gets the message of its tag. */
static void check_many(void)
{
    enum { N = 512 };
    int *in = calloc(2 * N, sizeof(int)), *out = malloc(2 * N * sizeof(int));
    MPI_Request *r = malloc(2 * N * sizeof(MPI_Request));
    for (int t = N - 1; t >= 0; t--)
        MPI_Irecv(in + 2 * t, 2, MPI_INT, left(), t, MPI_COMM_WORLD, &r[t]);
    for (int t = 0; t < N; t++) {
        out[2 * t] = t;
        out[2 * t + 1] = word(me, 7, t);
        MPI_Isend(out + 2 * t, 2, MPI_INT, right(), t, MPI_COMM_WORLD, &r[N + t]);
    }
    MPI_Waitall(2 * N, r, MPI_STATUSES_IGNORE);
    for (int t = 0; t < N; t++)
        if (in[2 * t] != t || in[2 * t + 1] != word(left(), 7, t)) {
            fail("receive of tag %d got (%d,%d)", t, in[2 * t], in[2 * t + 1]);
            break;
        }
    free(in), free(out), free(r);
    report("512 outstanding Irecvs with distinct tags posted in reverse order");
}

/* Matching order with wildcards: receives R1(tag 7), R2(ANY_TAG), R3(tag 5), R4(ANY_TAG)
 * from the left, and messages A(5) B(7) C(5) D(9) in that order: R1=B, R2=A, R3=C, R4=D,
 * whether the receives were posted before the messages came (after = 0) or after. The
 * receivers are ranks 1..np-1 (rank 0 posts no ANY_TAG receive). */
static void check_wildcard_order(int after)
{
    static const int stags[4] = {5, 7, 5, 9}, rtags[4] = {7, MPI_ANY_TAG, 5, MPI_ANY_TAG};
    static const int want[4] = {1, 0, 2, 3}; /* message each receive must get */
    int out[4], in[4] = {-1, -1, -1, -1}, z = 0;
    MPI_Request r[4];
    MPI_Status st[4];
    int recv = me != 0, send = right() != 0;
    for (int i = 0; i < 4; i++)
        out[i] = word(me, 8, i);
    if (recv && after) {
        MPI_Recv(&z, 1, MPI_INT, left(), 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (recv) {
        for (int i = 0; i < 4; i++)
            MPI_Irecv(&in[i], 1, MPI_INT, left(), rtags[i], MPI_COMM_WORLD, &r[i]);
        if (!after)
            MPI_Send(&z, 1, MPI_INT, left(), 50, MPI_COMM_WORLD);
    }
    if (send) {
        MPI_Request sr[4];
        if (!after)
            MPI_Recv(&z, 1, MPI_INT, right(), 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            MPI_Isend(&out[i], 1, MPI_INT, right(), stags[i], MPI_COMM_WORLD, &sr[i]);
        if (after)
            MPI_Send(&z, 1, MPI_INT, right(), 51, MPI_COMM_WORLD);
        MPI_Waitall(4, sr, MPI_STATUSES_IGNORE);
    }
    if (recv) {
        MPI_Waitall(4, r, st);
        for (int i = 0; i < 4; i++)
            EXPECT(in[i] == word(left(), 8, want[i]) && st[i].MPI_TAG == stags[want[i]],
                   "receive %d got tag %d value %d, expected message %d", i + 1, st[i].MPI_TAG,
                   in[i], want[i]);
    }
    report(after ? "wildcard order: R(7) R(ANY) R(5) R(ANY) posted after A(5) B(7) C(5) D(9)"
                 : "wildcard order: R(7) R(ANY) R(5) R(ANY) posted before A(5) B(7) C(5) D(9)");
}

/* Rank 1 posts one MPI_ANY_SOURCE Irecv per other rank; each message goes to exactly one
 * receive, and the statuses name every other rank once. */
static void check_any_source_irecv(void)
{
    int x = word(me, 9, 0);
    if (me == 1) {
        int *in = malloc(np * sizeof(int)), *seen = calloc(np, sizeof(int));
        MPI_Request *r = malloc(np * sizeof(MPI_Request));
        MPI_Status *st = malloc(np * sizeof(MPI_Status));
        for (int i = 0; i < np - 1; i++)
            MPI_Irecv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &r[i]);
        MPI_Waitall(np - 1, r, st);
        for (int i = 0; i < np - 1; i++) {
            int s = st[i].MPI_SOURCE;
            if (s < 0 || s >= np || s == 1 || seen[s]++ || in[i] != word(s, 9, 0))
                fail("receive %d: source %d value %d", i, s, in[i]);
        }
        free(in), free(seen), free(r), free(st);
    } else {
        MPI_Send(&x, 1, MPI_INT, 1, 60, MPI_COMM_WORLD);
    }
    report("ANY_SOURCE Irecvs on rank 1: every other rank's message exactly once");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "p2p_nonblocking"))
        return 1;
    check_wait();
    for (int kind = 0; kind < 7; kind++)
        all_to_all(kind);
    check_null_requests();
    check_issend();
    check_request_free();
    check_truncate();
    check_many();
    check_wildcard_order(0);
    check_wildcard_order(1);
    check_any_source_irecv();
    check_cancel(); /* last: a cancel that does nothing leaves the job hanging */
    return finish("p2p_nonblocking");
}
