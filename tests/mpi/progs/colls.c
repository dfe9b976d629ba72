/*
 * colls.c: MPI conformance of the data-moving blocking collectives: Barrier, Bcast,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v), with every root, counts 0 .. 100000,
 * MPI_IN_PLACE, v-variants with zero counts, reversed order and gaps, and derived
 * datatypes; first on MPI_COMM_WORLD, then again on a communicator of all ranks but the
 * last (odd when the world is even). The reductions are in colls_reduce.c.
 * Only rank 0 prints: one line per check, then "# conformance colls: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "colls_common.h"

/* Checks got[0..n-1] against v(src, j, salt) (or SENT when src < 0). */
static int same(const int *got, int n, int src, int salt, const char *what, int root)
{
    for (int j = 0; j < n; j++) {
        int want = src < 0 ? SENT : v(src, j, salt);
        if (got[j] != want) {
            fail("%s, root %d, count %d: element %d is %d, expected %d", what, root, n, j, got[j],
                 want);
            return 0;
        }
    }
    return 1;
}

/* Barrier: a rank leaves it only after all entered, so a message the last (first) rank
 * sends after its barrier cannot have arrived before the receiver entered: tests made
 * before entering must all fail. Then 50 barriers in a row. */
static void check_barrier(void)
{
    for (int round = 0; C != MPI_COMM_NULL && round < 2; round++) {
        int s = round ? S - 1 : 0, x = 1, flag = 0;
        if (R == s) {
            MPI_Barrier(C);
            for (int d = 0; d < S; d++)
                if (d != s)
                    MPI_Send(&x, 1, MPI_INT, d, 77, C);
        } else {
            MPI_Request r;
            MPI_Irecv(&x, 1, MPI_INT, s, 77, C, &r);
            for (int i = 0; i < 20; i++) {
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                EXPECT(!flag, "a message sent after the barrier by %d came before it", s);
            }
            MPI_Barrier(C);
            if (!flag)
                MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; C != MPI_COMM_NULL && i < 50; i++)
        MPI_Barrier(C);
    rep("Barrier: nobody leaves before all entered; 50 in a row");
}

static void check_bcast(void)
{
    int *b = ints(BIGN);
    if (C != MPI_COMM_NULL)
        FOR_COUNTS_ROOTS(n, root)
        {
            for (int j = 0; j <= n; j++)
                b[j] = R == root && j < n ? v(root, j, 1) : SENT;
            MPI_Bcast(b, n, MPI_INT, root, C);
            if (same(b, n, root, 1, "Bcast", root))
                same(b + n, 1, -1, 0, "Bcast past the end", root);
        }
    free(b);
    rep("Bcast: every root, counts 0..100000");
}

/* Gather (all = 0) and Allgather (all = 1): block r of the result is rank r's data; with
 * MPI_IN_PLACE the root's (every rank's) own block is already in place. */
static void check_gather(int all)
{
    int *in = ints(BIGN), *out = ints((size_t)S * BIGN);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            if (all && root > 0)
                break;
            int m = n == BIGN ? BIGN / S : n, me_root = all || R == root;
            for (int j = 0; j < m; j++)
                in[j] = v(R, j, 3);
            for (int j = 0; j <= S * m; j++)
                out[j] = SENT;
            if (ip && me_root)
                memcpy(out + R * m, in, m * sizeof(int));
            void *sb = ip && me_root ? MPI_IN_PLACE : in;
            if (all)
                MPI_Allgather(sb, m, MPI_INT, out, m, MPI_INT, C);
            else
                MPI_Gather(sb, m, MPI_INT, out, m, MPI_INT, root, C);
            for (int r = 0; r < S && me_root; r++)
                if (!same(out + r * m, m, r, 3, all ? "Allgather" : "Gather", root))
                    break;
            EXPECT(!me_root || out[S * m] == SENT, "root %d count %d: past the end", root, m);
        }
    free(in), free(out);
    rep(all ? "Allgather: counts 0..100000 in all, also MPI_IN_PLACE"
            : "Gather: every root, counts 0..100000 in all, also MPI_IN_PLACE");
}

/* Scatter: rank r gets block r of the root's buffer (in place: the root keeps its own). */
static void check_scatter(void)
{
    int *in = ints((size_t)S * BIGN), *out = ints(BIGN);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            int m = n == BIGN ? BIGN / S : n;
            for (int r = 0; r < S; r++)
                for (int j = 0; j < m; j++)
                    in[r * m + j] = v(r, j, 4);
            for (int j = 0; j <= m; j++)
                out[j] = SENT;
            if (ip && R == root)
                MPI_Scatter(in, m, MPI_INT, MPI_IN_PLACE, m, MPI_INT, root, C);
            else
                MPI_Scatter(in, m, MPI_INT, out, m, MPI_INT, root, C);
            if (!(ip && R == root) && same(out, m, R, 4, "Scatter", root))
                same(out + m, 1, -1, 0, "Scatter past the end", root);
            if (ip && R == root)
                same(in + R * m, m, R, 4, "Scatter in place (root's block)", root);
        }
    free(in), free(out);
    rep("Scatter: every root, counts 0..100000 in all, also MPI_IN_PLACE");
}

/* Checks a v-layout buffer (colls_common.h's vlayout): block r holds v(r, ., salt) and
 * everything else SENT. */
static void vsame(const int *b, int total, const int *cnt, const int *dis, int salt,
                  const char *what, int root)
{
    for (int r = 0; r < S; r++)
        if (!same(b + dis[r], cnt[r], r, salt, what, root))
            return;
    for (int r = 0; r < S; r++)
        if (!same(b + dis[r] + cnt[r], 2, -1, 0, what, root))
            return;
    (void)total;
}

/* Gatherv, Scatterv, Allgatherv (which = 0, 1, 2) with the v-layout, also in place. */
static void check_v(int which)
{
    static const char *names[3] = {"Gatherv", "Scatterv", "Allgatherv"};
    int *cnt = malloc(S * sizeof(int)), *dis = malloc(S * sizeof(int));
    int *mine = ints(BIGN + S), *all = ints((size_t)BIGN + S * (S + 2));
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            if (which == 2 && root > 0)
                break;
            int m = n == BIGN ? BIGN / S : n, total = vlayout(m, cnt, dis), c = cnt[R];
            int at_root = which == 2 || R == root, inplace = ip && at_root;
            for (int j = 0; j <= total; j++)
                all[j] = SENT;
            for (int j = 0; j <= c; j++)
                mine[j] = j < c && which != 1 ? v(R, j, 5) : SENT;
            if (which == 1 && R == root) /* the root's send buffer in the v-layout */
                for (int r = 0; r < S; r++)
                    for (int j = 0; j < cnt[r]; j++)
                        all[dis[r] + j] = v(r, j, 5);
            else if (inplace)
                memcpy(all + dis[R], mine, c * sizeof(int));
            if (which == 0)
                MPI_Gatherv(inplace ? MPI_IN_PLACE : mine, c, MPI_INT, all, cnt, dis, MPI_INT, root,
                            C);
            else if (which == 1)
                MPI_Scatterv(all, cnt, dis, MPI_INT, inplace ? MPI_IN_PLACE : mine, c, MPI_INT,
                             root, C);
            else
                MPI_Allgatherv(inplace ? MPI_IN_PLACE : mine, c, MPI_INT, all, cnt, dis, MPI_INT,
                               C);
            if (which != 1 && at_root)
                vsame(all, total, cnt, dis, 5, names[which], root);
            if (which == 1 && !inplace && same(mine, c, R, 5, names[1], root))
                same(mine + c, 1, -1, 0, "Scatterv past the end", root);
        }
    free(cnt), free(dis), free(mine), free(all);
    char name[120];
    snprintf(name, sizeof name,
             "%s: %scounts 0 and n+r in reverse order with gaps, n 0..100000, also MPI_IN_PLACE",
             names[which], which == 2 ? "" : "every root, ");
    rep(name);
}

/* Alltoall: block d of rank s's send buffer goes to block s of rank d's receive buffer. */
static void check_alltoall(void)
{
    int *in = ints((size_t)BIGN + 8), *out = ints((size_t)BIGN + 8);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        for (int k = 0; k < 5; k++) {
            int m = k == 4 ? BIGN / S : counts[k];
            for (int d = 0; d < S; d++)
                for (int j = 0; j < m; j++)
                    in[d * m + j] = v(R, d * m + j, 6);
            for (int j = 0; j <= S * m; j++)
                out[j] = ip && j < S * m ? in[j] : SENT;
            MPI_Alltoall(ip ? MPI_IN_PLACE : in, m, MPI_INT, out, m, MPI_INT, C);
            for (int s = 0; s < S; s++)
                for (int j = 0; j < m; j++)
                    if (out[s * m + j] != v(s, R * m + j, 6)) {
                        fail("Alltoall%s count %d: block %d element %d is %d",
                             ip ? " in place" : "", m, s, j, out[s * m + j]);
                        s = S;
                        break;
                    }
            EXPECT(out[S * m] == SENT, "Alltoall count %d: past the end", m);
        }
    free(in), free(out);
    rep("Alltoall: counts 0..100000/size per pair, also MPI_IN_PLACE");
}

/* Alltoallv with colls_common.h's layout (symmetric counts, zeros, reverse order with
 * gaps on both sides); in place too. */
static void check_alltoallv(void)
{
    int *sc = malloc(S * sizeof(int)), *sd = malloc(S * sizeof(int));
    int *rc = malloc(S * sizeof(int)), *rd = malloc(S * sizeof(int));
    int *in = ints((size_t)3 * BIGN / 2 + 3 * S), *out = ints((size_t)3 * BIGN / 2 + 3 * S);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        for (int k = 0; k < 5; k++) {
            int m = k == 4 ? BIGN / S / 2 : counts[k], so,
                ro = a2avlayout(m, 0, sc, sd, rc, rd, &so);
            for (int j = 0; j <= so; j++)
                in[j] = SENT;
            for (int j = 0; j <= ro; j++)
                out[j] = SENT;
            for (int d = 0; d < S; d++)
                for (int j = 0; j < sc[d]; j++)
                    in[sd[d] + j] = out[rd[d] + j] = v(R, d * 7 + j, 7);
            if (!ip)
                for (int j = 0; j <= ro; j++)
                    out[j] = SENT;
            MPI_Alltoallv(ip ? MPI_IN_PLACE : in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, C);
            for (int s = 0; s < S; s++) {
                for (int j = 0; j < rc[s]; j++)
                    if (out[rd[s] + j] != v(s, R * 7 + j, 7)) {
                        fail("Alltoallv%s m %d: from %d element %d is %d", ip ? " in place" : "", m,
                             s, j, out[rd[s] + j]);
                        s = S;
                        break;
                    }
                if (s < S && !same(out + rd[s] + rc[s], 3, -1, 0, "Alltoallv gap", -1))
                    break;
            }
        }
    free(sc), free(sd), free(rc), free(rd), free(in), free(out);
    rep("Alltoallv: counts 0..3m with zeros, reverse order with gaps, also MPI_IN_PLACE");
}

/* Derived datatypes in collectives: Bcast of a vector type, Allgather sent as one
 * contiguous(7) and received as 7 ints, Alltoall of resized column types (a distributed
 * transpose of an S x S matrix of one row per rank). */
static void check_derived(void)
{
    MPI_Datatype vec, c7, col, colr;
    int *row = ints(64), *t = ints(64), b[40], g[7 * 64 + 1];
    if (C != MPI_COMM_NULL) {
        MPI_Type_vector(5, 2, 4, MPI_INT, &vec);
        MPI_Type_contiguous(7, MPI_INT, &c7);
        MPI_Type_vector(1, 1, 1, MPI_INT, &col);
        MPI_Type_create_resized(col, 0, sizeof(int), &colr);
        MPI_Type_commit(&vec), MPI_Type_commit(&c7), MPI_Type_commit(&colr);
        for (int root = 0; root < S; root++) {
            for (int j = 0; j < 40; j++)
                b[j] = R == root ? v(root, j, 11) : SENT;
            MPI_Bcast(b, 2, vec, root, C);
            for (int j = 0; j < 36; j++)
                EXPECT(b[j] == (j % 18 % 4 < 2 || R == root ? v(root, j, 11) : SENT),
                       "Bcast of vectors, root %d: int %d is %d", root, j, b[j]);
        }
        int mine[7];
        for (int j = 0; j < 7; j++)
            mine[j] = v(R, j, 12);
        g[7 * S] = SENT;
        MPI_Allgather(mine, 1, c7, g, 7, MPI_INT, C);
        for (int r = 0; r < S; r++)
            same(g + 7 * r, 7, r, 12, "Allgather contiguous(7) to ints", -1);
        EXPECT(g[7 * S] == SENT, "Allgather: past the end");
        for (int j = 0; j < S; j++)
            row[j] = R * 100 + j;
        MPI_Alltoall(row, 1, colr, t, 1, colr, C);
        for (int j = 0; j < S; j++)
            EXPECT(t[j] == j * 100 + R, "Alltoall transpose: element %d is %d", j, t[j]);
        MPI_Type_free(&vec), MPI_Type_free(&c7), MPI_Type_free(&col), MPI_Type_free(&colr);
    }
    free(row), free(t);
    rep("derived types: Bcast of vectors, Allgather contiguous(7) as ints, Alltoall");
}

static void all_checks(void)
{
    check_barrier();
    check_bcast();
    check_gather(0);
    check_gather(1);
    check_scatter();
    for (int which = 0; which < 3; which++)
        check_v(which);
    check_alltoall();
    check_alltoallv();
    check_derived();
}

int main(int argc, char **argv)
{
    return run_world_and_sub(&argc, &argv, "colls", all_checks);
}
