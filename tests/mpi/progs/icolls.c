/*
 * icolls.c: MPI conformance of the non-blocking collectives: Ibarrier, Ibcast, Ireduce,
 * Iallreduce, Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v), Ireduce_scatter(_block),
 * Iscan, Iexscan. Each on communicators of every size from 1 to the world's, in rank order
 * and reversed (icolls_common.h), every root, counts 0 .. 100000, the data checked element
 * by element (coll_call.h), each request completed with Wait, Test loops, Waitall,
 * Testall, Waitany, Testany, Waitsome or Testsome, the ranks of one call mixing them.
 * Then several outstanding at once: on different communicators, started in different
 * orders on different ranks (MPI only orders the collectives of one communicator) and
 * completed together; on one communicator, started in the same order and completed in
 * reverse; mixed with blocking collectives and point-to-point on the same communicator.
 * An Ibarrier must not complete before every rank started it. MPI_IN_PLACE is in
 * icolls_inplace.c, large messages and datatypes in colls_big.c.
 * Only rank 0 prints: one line per check, then "# conformance icolls: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "colls_common.h"
#include "coll_call.h"
#include "icolls_common.h"

/* Ibarrier: with one rank late (the last, then the first), the others start theirs and
 * test it 20 times (it must not complete: the late rank has not started), then tell the
 * late rank, which starts only after hearing from all of them. Then 20 Ibarriers
 * outstanding at once on one communicator, completed by one Waitall. */
static void check_ibarrier_order(void)
{
    MPI_Request rq[20];
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        for (int late = S - 1, round = 0; S > 1 && round < 2; late = 0, round++) {
            int x = 0, flag = 0;
            if (R == late) {
                for (int r = 0; r < S - 1; r++)
                    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 78, C, MPI_STATUS_IGNORE);
                struct call c;
                call_init(&c, K_BARRIER, 0, 0, 0, CALL_NB);
                call_start(&c);
                call_complete(&c, how_next++);
                call_free(&c);
            } else {
                MPI_Ibarrier(C, &rq[0]);
                for (int i = 0; i < 20 && !flag; i++) {
                    MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
                    EXPECT(!flag, "[%s] Ibarrier completed before rank %d started it", CN, late);
                }
                MPI_Send(&x, 1, MPI_INT, late, 78, C);
                if (!flag)
                    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            }
        }
        for (int i = 0; i < 20; i++)
            MPI_Ibarrier(C, &rq[i]);
        MPI_Waitall(20, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 20; i++)
            EXPECT(rq[i] == MPI_REQUEST_NULL, "[%s] Waitall left request %d", CN, i);
    }
    report("Ibarrier: none completes before a late rank (the last, the first) started it; 20 "
           "outstanding at once");
}

/* Completes the requests of calls c[0..n-1] together: Waitall, Waitany or Testsome loops,
 * Testall loop (way % 4); then checks each. */
static void complete_all(struct call *c, int n, int way)
{
    MPI_Request rq[32];
    int idx[32], done = 0, outs, flag = 0;
    for (int i = 0; i < n; i++)
        rq[i] = c[i].req;
    switch (way % 4) {
    case 0:
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        break;
    case 1:
        for (done = 0; done < n; done++) {
            MPI_Waitany(n, rq, idx, MPI_STATUS_IGNORE);
            EXPECT(idx[0] >= 0 && idx[0] < n, "Waitany: index %d", idx[0]);
        }
        MPI_Waitany(n, rq, idx, MPI_STATUS_IGNORE);
        EXPECT(idx[0] == MPI_UNDEFINED, "Waitany with none active: index %d", idx[0]);
        break;
    case 2:
        while (done < n) {
            MPI_Testsome(n, rq, &outs, idx, MPI_STATUSES_IGNORE);
            EXPECT(outs >= 0 && outs <= n - done, "Testsome: outcount %d", outs);
            done += outs > 0 ? outs : 0;
        }
        break;
    case 3:
        while (!flag)
            MPI_Testall(n, rq, &flag, MPI_STATUSES_IGNORE);
        break;
    }
    for (int i = 0; i < n; i++) {
        EXPECT(rq[i] == MPI_REQUEST_NULL, "way %d: request %d not MPI_REQUEST_NULL", way % 4, i);
        c[i].req = MPI_REQUEST_NULL;
        call_check(&c[i]);
        call_free(&c[i]);
    }
}

/* Six outstanding on five communicators: the configurations k, k + 1 and k + 2 and two
 * duplicates of the world. On each communicator the order is the same on all ranks (two
 * on configuration k), but even and odd ranks start them in different orders. */
static void check_many_comms(void)
{
    static const int kind[6] = {K_BCAST, K_ALLREDUCE, K_BARRIER, K_ALLTOALLV, K_GATHERV, K_SCAN};
    static const int cnt[6] = {1000, 1000, 0, 7, 100, 50};
    static const int even[6] = {0, 1, 2, 3, 4, 5}, odd[6] = {4, 3, 2, 1, 0, 5};
    MPI_Comm dup[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &dup[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup[1]);
    for (int k = 0; k < nconf; k++) {
        struct call c[6];
        for (int j = 0; j < 6; j++) {
            int i = me % 2 ? odd[j] : even[j];
            if (i == 2 || i == 4) /* the duplicates */
                C = dup[i / 4], CN = i == 2 ? "world dup 1" : "world dup 2", R = me, S = np;
            else /* configuration k (calls 0 and 5), k + 1 (call 1), k + 2 (call 3) */
                conf_use((k + (i == 1) + 2 * (i == 3)) % nconf);
            call_init(&c[i], kind[i], i == 4 ? k % S : S - 1, cnt[i], 100 + i, CALL_NB);
            call_start(&c[i]);
        }
        complete_all(c, 6, k);
    }
    MPI_Comm_free(&dup[0]);
    MPI_Comm_free(&dup[1]);
    report("outstanding on 5 communicators (Ibcast, Iallreduce, Ibarrier, Ialltoallv, Igatherv, "
           "Iscan), started in different orders on even and odd ranks, completed together");
}

/* Every kind outstanding on one communicator, some twice (Ibcast from two roots, two alike
 * Iallreduce), a large one first; completed by Wait in reverse order (even configurations)
 * or together (odd ones). */
static void check_same_comm(void)
{
    static const struct {
        int kind, root, n; /* root -1: the last rank; -2: the middle one */
    } seq[] = {
        {K_BCAST, 0, 20000},  {K_ALLREDUCE, 0, 7},  {K_BCAST, -1, 1},
        {K_BARRIER, 0, 0},    {K_GATHER, -2, 1000}, {K_ALLREDUCE, 0, 7},
        {K_SCAN, 0, 5},       {K_ALLTOALL, 0, 3},   {K_REDUCE_SCATTER_BLOCK, 0, 2},
        {K_EXSCAN, 0, 1000},  {K_SCATTERV, -2, 10}, {K_ALLGATHERV, 0, 3},
        {K_REDUCE, -1, 1000}, {K_ALLTOALLV, 0, 2},  {K_REDUCE_SCATTER, 0, 4},
        {K_GATHERV, -1, 5},   {K_SCATTER, 0, 6},    {K_ALLGATHER, 0, 8},
    };
    enum { N = sizeof seq / sizeof seq[0] };
    struct call c[N];
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        for (int i = 0; i < N; i++) {
            int root = seq[i].root == -1 ? S - 1 : seq[i].root == -2 ? S / 2 : seq[i].root;
            call_init(&c[i], seq[i].kind, root, seq[i].n, 200 + i, CALL_NB);
            call_start(&c[i]);
        }
        if (k % 2)
            complete_all(c, N, k / 2);
        else
            for (int i = N - 1; i >= 0; i--) {
                MPI_Wait(&c[i].req, MPI_STATUS_IGNORE);
                call_check(&c[i]);
                call_free(&c[i]);
            }
    }
    report("18 outstanding on one communicator (every kind, some twice), completed by Wait in "
           "reverse order or together");
}

/* Non-blocking ones outstanding while blocking collectives and point-to-point messages
 * (a ring) run on the same communicator. */
static void check_mixed(void)
{
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        struct call nb[2], b[2];
        int big = k == 0 ? BIGN : 1000, to = (R + 1) % S, from = (R + S - 1) % S, x = -1;
        call_init(&nb[0], K_BCAST, 0, big, 300, CALL_NB);
        call_init(&nb[1], K_ALLREDUCE, 0, 1000, 301, CALL_NB);
        call_init(&b[0], K_ALLREDUCE, 0, 100, 302, 0);
        call_init(&b[1], K_BCAST, S - 1, big, 303, 0);
        call_start(&nb[0]);
        call_start(&nb[1]);
        MPI_Sendrecv(&R, 1, MPI_INT, to, 9, &x, 1, MPI_INT, from, 9, C, MPI_STATUS_IGNORE);
        EXPECT(x == from, "[%s] ring: got %d from %d", CN, x, from);
        for (int i = 0; i < 2; i++) {
            call_start(&b[i]);
            call_check(&b[i]);
            call_free(&b[i]);
        }
        complete_all(nb, 2, k);
    }
    report("Ibcast and Iallreduce outstanding across Allreduce, Bcast and Sendrecv on the same "
           "communicator");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "icolls"))
        return 1;
    confs_make();
    check_ibarrier_order();
    for (int kind = 0; kind < NKINDS; kind++)
        run_kind(kind, CALL_NB);
    check_many_comms();
    check_same_comm();
    check_mixed();
    confs_free();
    return finish("icolls");
}
