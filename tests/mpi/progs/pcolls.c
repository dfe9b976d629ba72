/*
 * pcolls.c: MPI conformance of MPI-4's persistent collectives (MPI_Barrier_init ..
 * MPI_Exscan_init). Each kind on every configuration of icolls_common.h, every root,
 * counts 0 (not in place), 7, 1000 (large messages take icolls' path): initialized once,
 * then started twice with other data in the buffers before each start (a persistent collective reads
 * its buffers at MPI_Start, not at the init), each round completed in another way and
 * checked; after each completion the request is still there (inactive), and
 * MPI_Request_free releases it. Then: the same with MPI_IN_PLACE; a persistent Allreduce
 * and Bcast started 200 times back to back with nothing else between the rounds (ranks run
 * into the next start while others finish the last one); two persistent requests started
 * together by MPI_Startall, alternating with non-blocking collectives on the same
 * communicator; non-contiguous datatypes (a vector) whose data change between starts; Wait
 * and Test on an inactive persistent request return at once.
 * Only rank 0 prints: one line per check, then "# conformance pcolls: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4 /* the reference: Open MPI 4.1 has them as MPIX_ */
#include <mpi-ext.h>
#define MPI_Barrier_init              MPIX_Barrier_init
#define MPI_Bcast_init                MPIX_Bcast_init
#define MPI_Reduce_init               MPIX_Reduce_init
#define MPI_Allreduce_init            MPIX_Allreduce_init
#define MPI_Gather_init               MPIX_Gather_init
#define MPI_Gatherv_init              MPIX_Gatherv_init
#define MPI_Scatter_init              MPIX_Scatter_init
#define MPI_Scatterv_init             MPIX_Scatterv_init
#define MPI_Allgather_init            MPIX_Allgather_init
#define MPI_Allgatherv_init           MPIX_Allgatherv_init
#define MPI_Alltoall_init             MPIX_Alltoall_init
#define MPI_Alltoallv_init            MPIX_Alltoallv_init
#define MPI_Reduce_scatter_init       MPIX_Reduce_scatter_init
#define MPI_Reduce_scatter_block_init MPIX_Reduce_scatter_block_init
#define MPI_Scan_init                 MPIX_Scan_init
#define MPI_Exscan_init               MPIX_Exscan_init
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "colls_common.h"
#include "coll_call.h"
#include "icolls_common.h"

#define ROUNDS    2   /* starts of each persistent request in prun_kind */
#define BACK2BACK 200 /* starts in check_back_to_back */
#define NPCOUNTS  3
static const int pcounts[NPCOUNTS] = {0, 7, 1000}; /* counts tried in prun_kind */

/* c (set up by call_init, without CALL_NB) as a persistent request in c->req. */
static void call_pinit(struct call *c)
{
    int n = c->n, root = c->root, rc = MPI_ERR_OTHER;
    void *sb = c->flags & CALL_IP && !c->sb ? MPI_IN_PLACE : c->sb;
    MPI_Datatype t = c->dt;
    MPI_Comm m = c->comm;
    MPI_Info i = MPI_INFO_NULL;
    MPI_Request *q = &c->req;
    switch (c->kind) {
    case K_BARRIER:
        rc = MPI_Barrier_init(m, i, q);
        break;
    case K_BCAST:
        rc = MPI_Bcast_init(c->rb, n, t, root, m, i, q);
        break;
    case K_REDUCE:
        rc = MPI_Reduce_init(sb, c->rb, n, t, MPI_SUM, root, m, i, q);
        break;
    case K_ALLREDUCE:
        rc = MPI_Allreduce_init(sb, c->rb, n, t, MPI_SUM, m, i, q);
        break;
    case K_GATHER:
        rc = MPI_Gather_init(sb, n, t, c->rb, n, t, root, m, i, q);
        break;
    case K_GATHERV:
        rc = MPI_Gatherv_init(sb, c->rc[c->rank], t, c->rb, c->rc, c->rd, t, root, m, i, q);
        break;
    case K_SCATTER:
        rc = MPI_Scatter_init(c->sb, n, t, c->flags & CALL_IP && !c->rb ? MPI_IN_PLACE : c->rb, n,
                              t, root, m, i, q);
        break;
    case K_SCATTERV:
        rc = MPI_Scatterv_init(c->sb, c->sc, c->sd, t,
                               c->flags & CALL_IP && !c->rb ? MPI_IN_PLACE : c->rb, c->sc[c->rank],
                               t, root, m, i, q);
        break;
    case K_ALLGATHER:
        rc = MPI_Allgather_init(sb, n, t, c->rb, n, t, m, i, q);
        break;
    case K_ALLGATHERV:
        rc = MPI_Allgatherv_init(sb, c->rc[c->rank], t, c->rb, c->rc, c->rd, t, m, i, q);
        break;
    case K_ALLTOALL:
        rc = MPI_Alltoall_init(sb, n, t, c->rb, n, t, m, i, q);
        break;
    case K_ALLTOALLV:
        rc = MPI_Alltoallv_init(sb, c->sc, c->sd, t, c->rb, c->rc, c->rd, t, m, i, q);
        break;
    case K_REDUCE_SCATTER:
        rc = MPI_Reduce_scatter_init(sb, c->rb, c->rc, t, MPI_SUM, m, i, q);
        break;
    case K_REDUCE_SCATTER_BLOCK:
        rc = MPI_Reduce_scatter_block_init(sb, c->rb, n, t, MPI_SUM, m, i, q);
        break;
    case K_SCAN:
        rc = MPI_Scan_init(sb, c->rb, n, t, MPI_SUM, m, i, q);
        break;
    case K_EXSCAN:
        rc = MPI_Exscan_init(sb, c->rb, n, t, MPI_SUM, m, i, q);
        break;
    }
    EXPECT(rc == MPI_SUCCESS && c->req != MPI_REQUEST_NULL, "%s_init on [%s]: returned %d",
           kname[c->kind], c->cname, rc);
}

/* Init c's persistent request, ROUNDS times: fill with new data, start, complete, check;
 * then free it. */
static void prun(int kind, int root, int n, int salt, int flags)
{
    struct call c;
    /* CALL_NB: the non-blocking calls' layouts (no zero counts in place for Alltoallv):
     * Open MPI's persistent collectives are its non-blocking ones (libnbc), see call_init */
    call_init(&c, kind, root, n, salt, flags | CALL_NB | CALL_PERSIST);
    call_pinit(&c);
    for (int round = 0; round < ROUNDS; round++) {
        call_fill(&c, salt + 1000 * round);
        MPI_Start(&c.req);
        call_complete(&c, how_next++);
        call_check(&c);
    }
    MPI_Request_free(&c.req);
    EXPECT(c.req == MPI_REQUEST_NULL, "MPI_Request_free left the request");
    call_free(&c);
}

/* One kind on every configuration, as icolls_common.h's run_kind. One check line. */
static void prun_kind(int kind, int flags)
{
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        for (int ci = 0; ci < (kind == K_BARRIER ? 1 : NPCOUNTS); ci++)
            for (int root = 0; root < (rooted(kind) ? S : 1); root++)
                if (!(flags & CALL_IP) || pcounts[ci]) /* in place: not the empty ones */
                    prun(kind, root, pcounts[ci], k * 31 + ci * 7 + root, flags);
    }
    char name[200];
    snprintf(name, sizeof name,
             "%s_init%s: communicators of sizes 1..%d in both orders%s, %d starts each with new "
             "data",
             kname[kind], flags & CALL_IP ? " with MPI_IN_PLACE" : "", np,
             rooted(kind) ? ", every root" : "", ROUNDS);
    report(name);
}

/* An Allreduce and a Bcast (rooted at the last rank) started BACK2BACK times each, with
 * nothing between the rounds but the check of the result. */
static void check_back_to_back(void)
{
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        struct call c[2];
        call_init(&c[0], K_ALLREDUCE, 0, 3, 500, 0);
        call_init(&c[1], K_BCAST, S - 1, 5, 501, 0);
        for (int j = 0; j < 2; j++) {
            call_pinit(&c[j]);
            for (int round = 0; round < BACK2BACK; round++) {
                call_fill(&c[j], 500 + j + round);
                MPI_Start(&c[j].req);
                MPI_Wait(&c[j].req, MPI_STATUS_IGNORE);
                call_check(&c[j]);
            }
            MPI_Request_free(&c[j].req);
            call_free(&c[j]);
        }
    }
    char name[160];
    snprintf(name, sizeof name,
             "Allreduce_init and Bcast_init started %d times back to back on every "
             "communicator",
             BACK2BACK);
    report(name);
}

/* A persistent Allreduce and Alltoall started together by MPI_Startall, with an Ibcast
 * started between the two and a blocking Allgather after, on one communicator; 4 rounds,
 * all completed by one Waitall. */
static void check_startall_mixed(void)
{
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        struct call p[2], nb, b;
        call_init(&p[0], K_ALLREDUCE, 0, 100, 600, 0);
        call_init(&p[1], K_ALLTOALL, 0, 4, 601, 0);
        call_pinit(&p[0]);
        call_pinit(&p[1]);
        for (int round = 0; round < 4; round++) {
            MPI_Request rq[3];
            call_fill(&p[0], 600 + round);
            call_fill(&p[1], 700 + round);
            rq[0] = p[0].req, rq[1] = p[1].req;
            MPI_Startall(2, rq);
            call_init(&nb, K_BCAST, round % S, 1000, 800 + round, CALL_NB);
            call_start(&nb);
            call_init(&b, K_ALLGATHER, 0, 3, 900 + round, 0);
            call_start(&b);
            call_check(&b);
            call_free(&b);
            rq[2] = nb.req;
            MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
            EXPECT(rq[0] == p[0].req && rq[1] == p[1].req && rq[2] == MPI_REQUEST_NULL,
                   "[%s] Waitall: persistent requests freed or the non-blocking one not", CN);
            call_check(&p[0]);
            call_check(&p[1]);
            call_check(&nb);
            call_free(&nb);
        }
        for (int j = 0; j < 2; j++) {
            MPI_Request_free(&p[j].req);
            call_free(&p[j]);
        }
    }
    report("Allreduce_init and Alltoall_init started by Startall around an Ibcast and an "
           "Allgather on the same communicator, 4 rounds");
}

/* Bcast_init of a vector type (every other int of 2N) and Allgather_init sending one, the
 * data changed between starts; the gaps must stay untouched. */
static void check_noncontig(void)
{
    enum { N = 500 };
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        MPI_Datatype vec;
        MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int *b = malloc(2 * N * sizeof(int)), *s = malloc(2 * N * sizeof(int));
        int *r = malloc(S * N * sizeof(int));
        MPI_Request rq[2];
        MPI_Bcast_init(b, 1, vec, S - 1, C, MPI_INFO_NULL, &rq[0]);
        MPI_Allgather_init(s, 1, vec, r, N, MPI_INT, C, MPI_INFO_NULL, &rq[1]);
        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < 2 * N; i++) {
                b[i] = R == S - 1 || i % 2 ? i * 3 + round : -1;
                s[i] = i % 2 ? -7 : R + i + round;
            }
            for (int i = 0; i < S * N; i++)
                r[i] = -5;
            MPI_Startall(2, rq);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            for (int i = 0; i < 2 * N; i++)
                EXPECT(b[i] == i * 3 + round,
                       "[%s] Bcast_init of a vector, round %d: element %d is %d, expected %d", CN,
                       round, i, b[i], i * 3 + round);
            for (int i = 0; i < S * N; i++) {
                int w = i / N + 2 * (i % N) + round;
                EXPECT(r[i] == w,
                       "[%s] Allgather_init of a vector, round %d: element %d is %d, "
                       "expected %d",
                       CN, round, i, r[i], w);
            }
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        /* Freed only now: Open MPI 4.1.4's persistent collectives (the reference) do not
         * keep the type and crash at the next start if it is freed after the init. */
        MPI_Type_free(&vec);
        free(b), free(s), free(r);
    }
    report("Bcast_init and Allgather_init of a vector type, data changed between starts, gaps "
           "untouched");
}

/* Wait and Test on an inactive persistent collective return at once, empty status. */
static void check_inactive(void)
{
    MPI_Request q;
    MPI_Status st;
    int flag = 0, x = 1;
    MPI_Allreduce_init(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    MPI_Wait(&q, &st);
    EXPECT(q != MPI_REQUEST_NULL && st.MPI_TAG == MPI_ANY_TAG && st.MPI_SOURCE == MPI_ANY_SOURCE,
           "Wait on an inactive persistent request: request %s, tag %d, source %d",
           q == MPI_REQUEST_NULL ? "freed" : "kept", st.MPI_TAG, st.MPI_SOURCE);
    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    EXPECT(flag && q != MPI_REQUEST_NULL, "Test on an inactive persistent request: flag %d", flag);
    EXPECT(x == 1, "the init ran the collective: x = %d", x);
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    EXPECT(x == np, "Allreduce_init in place: %d, expected %d", x, np);
    MPI_Request_free(&q);
    report("Wait and Test on an inactive persistent collective return at once; the init does "
           "not run it");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "pcolls"))
        return 1;
    confs_make();
    for (int kind = 0; kind < NKINDS; kind++)
        prun_kind(kind, 0);
    for (int kind = K_REDUCE; kind < NKINDS; kind++)
        prun_kind(kind, CALL_IP);
    check_back_to_back();
    check_startall_mixed();
    check_noncontig();
    check_inactive();
    confs_free();
    return finish("pcolls");
}
