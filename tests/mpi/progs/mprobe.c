/*
 * mprobe.c: MPI conformance of matched probe: MPI_Mprobe/MPI_Mrecv with wildcards, the
 * matched message taken out of matching (a later receive and probe with the same source
 * and tag get the next message, not the matched one), MPI_Improbe/MPI_Imrecv, a large
 * message (rendezvous) received into a non-contiguous datatype, MPI_PROC_NULL
 * (MPI_MESSAGE_NO_PROC), and truncation. Runs on a duplicate of MPI_COMM_WORLD so that
 * wildcards never meet the harness's verdicts. Only rank 0 prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static MPI_Comm c;
static int right, left;

/* Each rank sends to its right neighbour; Mprobe with wildcards finds the left one's. */
static void check_basic(void)
{
    int data[3] = {me, me * 10, me * 100}, got[3] = {-1, -1, -1}, n = -1;
    MPI_Request sr;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Isend(data, 3, MPI_INT, right, 11, c, &sr);
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(msg != MPI_MESSAGE_NULL, "Mprobe gave MPI_MESSAGE_NULL");
    EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 11 && n == 3, "Mprobe status: src %d tag %d n %d",
           st.MPI_SOURCE, st.MPI_TAG, n);
    memset(&st, 0, sizeof st);
    MPI_Mrecv(got, 3, MPI_INT, &msg, &st);
    EXPECT(msg == MPI_MESSAGE_NULL, "Mrecv left the message handle");
    EXPECT(got[0] == left && got[1] == left * 10 && got[2] == left * 100, "Mrecv data %d %d %d",
           got[0], got[1], got[2]);
    EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 11, "Mrecv status: src %d tag %d", st.MPI_SOURCE,
           st.MPI_TAG);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    report("Mprobe (ANY_SOURCE, ANY_TAG) + Mrecv: status and data");
}

/* Two messages with the same source and tag: after Mprobe took the first, Iprobe, Probe
 * and Recv see only the second; Mrecv then still delivers the first. */
static void check_removed(void)
{
    int a = 1000 + me, b = 2000 + me, x = -1, y = -1, flag = 0, n = -1;
    MPI_Request sr[2];
    MPI_Message msg;
    MPI_Status st;
    MPI_Isend(&a, 1, MPI_INT, right, 5, c, &sr[0]);
    MPI_Isend(&b, 1, MPI_INT, right, 5, c, &sr[1]);
    MPI_Mprobe(left, 5, c, &msg, MPI_STATUS_IGNORE);
    /* The second message may still be on its way: Probe waits for it. */
    MPI_Probe(left, 5, c, &st);
    MPI_Iprobe(left, 5, c, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(flag == 1 && n == 1, "Iprobe after Mprobe: flag %d count %d", flag, n);
    MPI_Recv(&y, 1, MPI_INT, left, 5, c, MPI_STATUS_IGNORE);
    EXPECT(y == 2000 + left, "Recv after Mprobe got %d, expected the second message %d", y,
           2000 + left);
    MPI_Iprobe(left, 5, c, &flag, MPI_STATUS_IGNORE);
    EXPECT(flag == 0, "a third message is visible");
    MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
    EXPECT(x == 1000 + left, "Mrecv got %d, expected the first message %d", x, 1000 + left);
    MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
    report("a matched message is out of matching: Probe, Iprobe and Recv get the next one");
}

static void check_improbe(void)
{
    int flag = -1, v = me * 7, got = -1;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Request sr, rr;
    MPI_Status st;
    /* Nothing with tag 21 was sent yet. */
    MPI_Improbe(left, 21, c, &flag, &msg, MPI_STATUS_IGNORE);
    EXPECT(flag == 0, "Improbe found a message before any was sent");
    MPI_Barrier(c);
    MPI_Isend(&v, 1, MPI_INT, right, 21, c, &sr);
    do
        MPI_Improbe(MPI_ANY_SOURCE, 21, c, &flag, &msg, &st);
    while (!flag);
    EXPECT(st.MPI_SOURCE == left && msg != MPI_MESSAGE_NULL, "Improbe status src %d",
           st.MPI_SOURCE);
    MPI_Imrecv(&got, 1, MPI_INT, &msg, &rr);
    EXPECT(msg == MPI_MESSAGE_NULL, "Imrecv left the message handle");
    memset(&st, 0, sizeof st);
    MPI_Wait(&rr, &st);
    EXPECT(got == left * 7 && st.MPI_SOURCE == left && st.MPI_TAG == 21,
           "Imrecv: got %d src %d tag %d", got, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    report("Improbe (nothing yet, then a message) + Imrecv + Wait");
}

#define BIG (256 * 1024) /* ints: 1 MiB, well above any eager limit */

/* A large message probed, then received as every other int of a buffer twice as long. */
static void check_big_vector(void)
{
    int *out = malloc(BIG * sizeof(int)), *in = malloc(2 * BIG * sizeof(int)), n = -1;
    MPI_Datatype vec;
    MPI_Type_vector(BIG, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < BIG; i++)
        out[i] = me * BIG + i;
    for (int i = 0; i < 2 * BIG; i++)
        in[i] = -1;
    MPI_Request sr;
    MPI_Message msg;
    MPI_Status st;
    MPI_Isend(out, BIG, MPI_INT, right, 31, c, &sr);
    MPI_Mprobe(left, 31, c, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(n == BIG, "Mprobe count %d", n);
    MPI_Mrecv(in, 1, vec, &msg, &st);
    int wrong = 0;
    for (int i = 0; i < BIG; i++)
        wrong += in[2 * i] != left * BIG + i || in[2 * i + 1] != -1;
    EXPECT(wrong == 0, "%d ints wrong in the vector", wrong);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    MPI_Type_free(&vec);
    free(out);
    free(in);
    report("1 MiB message: Mprobe, then Mrecv into a vector type");
}

static void check_proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0, x = 5, n = -1;
    MPI_Mprobe(MPI_PROC_NULL, 3, c, &msg, &st);
    EXPECT(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Mprobe status %d %d",
           st.MPI_SOURCE, st.MPI_TAG);
    MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    EXPECT(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && n == 0 && x == 5,
           "Mrecv(NO_PROC): source %d count %d x %d", st.MPI_SOURCE, n, x);
    MPI_Improbe(MPI_PROC_NULL, 3, c, &flag, &msg, MPI_STATUS_IGNORE);
    EXPECT(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d", flag);
    MPI_Request r;
    MPI_Imrecv(&x, 1, MPI_INT, &msg, &r);
    MPI_Wait(&r, &st);
    EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && x == 5, "Imrecv(NO_PROC): source %d", st.MPI_SOURCE);
    report("MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, Mrecv and Imrecv of it");
}

static void check_truncate(void)
{
    int out[4] = {1, 2, 3, 4}, in[2] = {0, 0}, cls = -1;
    MPI_Request sr;
    MPI_Message msg;
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Isend(out, 4, MPI_INT, right, 41, c, &sr);
    MPI_Mprobe(left, 41, c, &msg, MPI_STATUS_IGNORE);
    int rc = MPI_Mrecv(in, 2, MPI_INT, &msg, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_TRUNCATE, "Mrecv of 4 ints into 2: class %d", cls);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
    report("Mrecv into a buffer too small: MPI_ERR_TRUNCATE");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "mprobe"))
        return 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    check_basic();
    check_removed();
    check_improbe();
    check_big_vector();
    check_proc_null();
    check_truncate();
    MPI_Comm_free(&c);
    return finish("mprobe");
}
