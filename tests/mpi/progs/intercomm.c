/*
 * intercomm.c: MPI conformance of intercommunicators: MPI_Intercomm_create between the
 * even and the odd world ranks (leaders world 0 and 1, peer MPI_COMM_WORLD), its sizes and
 * remote group, point-to-point with remote ranks (MPI_ANY_SOURCE, statuses in remote
 * ranks), MPI_Comm_dup of it (its own context), the blocking Bcast, Reduce, Allreduce,
 * Allgather and Barrier across the groups, and MPI_Intercomm_merge with high
 * flags that order the groups (and equal ones, where only contiguity is checked). Only
 * rank 0 prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static MPI_Comm half, ic;
static int lsize, lrank, rsize;

/* World rank of rank i of the even (parity 0) or odd group. */
static int world_of(int parity, int i)
{
    return 2 * i + parity;
}

static void check_create(void)
{
    int inter = -1, s = -1, r = -1, rs = -1;
    MPI_Comm_test_inter(ic, &inter);
    MPI_Comm_size(ic, &s);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rs);
    EXPECT(inter == 1 && s == lsize && r == lrank && rs == rsize,
           "inter %d size %d rank %d remote %d", inter, s, r, rs);
    MPI_Group g, wg;
    MPI_Comm_remote_group(ic, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *idx = malloc(rsize * sizeof(int)), *w = malloc(rsize * sizeof(int));
    for (int i = 0; i < rsize; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, rsize, idx, wg, w);
    int wrong = 0;
    for (int i = 0; i < rsize; i++)
        wrong += w[i] != world_of(1 - me % 2, i);
    EXPECT(wrong == 0, "remote group: %d ranks wrong", wrong);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(idx);
    free(w);
    report("Intercomm_create: test_inter, sizes, remote group");
}

/* Local rank i sends its world rank to remote rank i % rsize. */
static void check_p2p(void)
{
    MPI_Request sr;
    MPI_Isend(&me, 1, MPI_INT, lrank % rsize, 5, ic, &sr);
    int n = 0;
    for (int s = 0; s < rsize; s++)
        n += s % lsize == lrank;
    int seen = 0;
    for (int k = 0; k < n; k++) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st);
        EXPECT(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && st.MPI_SOURCE % lsize == lrank &&
                   v == world_of(1 - me % 2, st.MPI_SOURCE),
               "from remote %d got %d", st.MPI_SOURCE, v);
        seen++;
    }
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    EXPECT(seen == n, "%d messages of %d", seen, n);
    /* A direct exchange with remote rank lrank % rsize when it answers: Sendrecv with the
     * partner of the same local rank (both groups have lsize >= 1). */
    if (lrank < rsize) {
        int got = -1;
        MPI_Sendrecv(&me, 1, MPI_INT, lrank, 6, &got, 1, MPI_INT, lrank, 6, ic, MPI_STATUS_IGNORE);
        EXPECT(got == world_of(1 - me % 2, lrank), "Sendrecv got %d", got);
    }
    report("point-to-point on the intercommunicator: remote ranks, ANY_SOURCE, Sendrecv");
}

static void check_dup(void)
{
    MPI_Comm d;
    int inter = -1, rs = -1;
    MPI_Comm_dup(ic, &d);
    MPI_Comm_test_inter(d, &inter);
    MPI_Comm_remote_size(d, &rs);
    EXPECT(inter == 1 && rs == rsize, "dup: inter %d remote size %d", inter, rs);
    if (lrank < rsize) {
        int a = 1, b = 2, x = -1, y = -1;
        MPI_Request s[2];
        MPI_Isend(&a, 1, MPI_INT, lrank, 9, ic, &s[0]);
        MPI_Isend(&b, 1, MPI_INT, lrank, 9, d, &s[1]);
        MPI_Recv(&y, 1, MPI_INT, lrank, 9, d, MPI_STATUS_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, lrank, 9, ic, MPI_STATUS_IGNORE);
        MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
        EXPECT(x == 1 && y == 2, "contexts mixed: %d %d", x, y);
    }
    MPI_Comm_free(&d);
    report("Comm_dup of an intercommunicator: its own context");
}

/* The world ranks of merged, in its rank order. */
static void merged_order(MPI_Comm m, int *w)
{
    MPI_Allgather(&me, 1, MPI_INT, w, 1, MPI_INT, m);
}

static void check_merge(void)
{
    MPI_Comm m;
    int *w = malloc(np * sizeof(int)), s = -1, wrong = 0, neven = (np + 1) / 2;
    /* Odds high: evens first. */
    MPI_Intercomm_merge(ic, me % 2, &m);
    MPI_Comm_size(m, &s);
    merged_order(m, w);
    for (int i = 0; i < np; i++)
        wrong += w[i] != (i < neven ? world_of(0, i) : world_of(1, i - neven));
    EXPECT(s == np && wrong == 0, "odds high: size %d, %d ranks misplaced", s, wrong);
    MPI_Comm_free(&m);
    /* Evens high: odds first. */
    MPI_Intercomm_merge(ic, 1 - me % 2, &m);
    merged_order(m, w);
    wrong = 0;
    for (int i = 0; i < np; i++)
        wrong += w[i] != (i < np - neven ? world_of(1, i) : world_of(0, i - (np - neven)));
    EXPECT(wrong == 0, "evens high: %d ranks misplaced", wrong);
    MPI_Comm_free(&m);
    /* Equal flags: either group first, each contiguous and in order. */
    MPI_Intercomm_merge(ic, 0, &m);
    merged_order(m, w);
    int ef = w[0] % 2 == 0, nfirst = ef ? neven : np - neven;
    wrong = 0;
    for (int i = 0; i < np; i++)
        wrong += w[i] != (i < nfirst ? world_of(ef ? 0 : 1, i) : world_of(ef ? 1 : 0, i - nfirst));
    EXPECT(wrong == 0, "equal flags: %d ranks misplaced", wrong);
    int sum = -1;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, m);
    EXPECT(sum == np * (np - 1) / 2, "Allreduce on the merged communicator: %d", sum);
    MPI_Comm_free(&m);
    free(w);
    report("Intercomm_merge: high orders the groups; equal flags keep them contiguous");
}

/* Blocking collectives across the two groups: the evens' rank 1 (or 0) is the root. */
static void check_colls(void)
{
    int even = me % 2 == 0, eroot = (np + 1) / 2 > 1 ? 1 : 0;
    /* Bcast from the evens' root to the odds. */
    int v = even && lrank == eroot ? 4242 : -1;
    MPI_Bcast(&v, 1, MPI_INT, even ? (lrank == eroot ? MPI_ROOT : MPI_PROC_NULL) : eroot, ic);
    EXPECT(even ? (lrank == eroot ? v == 4242 : v == -1) : v == 4242, "Bcast: %d", v);
    /* Reduce to the evens' root of the odds' world ranks. */
    int sum = -1, want_odd = 0, want_even = 0;
    for (int i = 0; i < np; i++) {
        if (i % 2)
            want_odd += i;
        else
            want_even += i;
    }
    MPI_Reduce(&me, &sum, 1, MPI_INT, MPI_SUM,
               even ? (lrank == eroot ? MPI_ROOT : MPI_PROC_NULL) : eroot, ic);
    EXPECT(!even || lrank != eroot || sum == want_odd, "Reduce at the root: %d, expected %d", sum,
           want_odd);
    /* Allreduce: each group gets the other's sum. */
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ic);
    EXPECT(sum == (even ? want_odd : want_even), "Allreduce: %d", sum);
    /* Allgather: each group gets the other's world ranks in their order. */
    int *all = malloc(rsize * sizeof(int)), wrong = 0;
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, ic);
    for (int i = 0; i < rsize; i++)
        wrong += all[i] != world_of(1 - me % 2, i);
    EXPECT(wrong == 0, "Allgather: %d wrong", wrong);
    free(all);
    /* Barrier, then point-to-point still matches (the tag blocks agree). */
    MPI_Barrier(ic);
    int got = -1;
    if (lrank < rsize)
        MPI_Sendrecv(&me, 1, MPI_INT, lrank, 3, &got, 1, MPI_INT, lrank, 3, ic, MPI_STATUS_IGNORE);
    EXPECT(lrank >= rsize || got == world_of(1 - me % 2, lrank), "after Barrier: %d", got);
    report("Bcast, Reduce (MPI_ROOT, MPI_PROC_NULL), Allreduce, Allgather, Barrier across groups");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "intercomm"))
        return 0;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    MPI_Comm_size(half, &lsize);
    MPI_Comm_rank(half, &lrank);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 77, &ic);
    rsize = me % 2 ? (np + 1) / 2 : np / 2;
    check_create();
    check_p2p();
    check_dup();
    check_colls();
    check_merge();
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    return finish("intercomm");
}
