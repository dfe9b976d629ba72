/*
 * neighborv.c: MPI conformance of the irregular neighbourhood collectives:
 * MPI_Neighbor_allgatherv and MPI_Neighbor_alltoallv on a distributed graph whose degrees
 * differ from rank to rank (with repeated edges when there are few ranks: they pair up in
 * the order both sides list them), and MPI_Neighbor_alltoallw on a periodic grid whose
 * first dimension has size 2 (or 1). Only rank 0 prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Open MPI's MPI_UNWEIGHTED is a small integer cast to a pointer, which GCC 12 takes for
 * an array it may read. */
#pragma GCC diagnostic ignored "-Wstringop-overread"

/* Rank s's out-neighbours: s+1 .. s+deg(s) (mod np). */
static int deg(int s)
{
    return s % 3 + 1;
}
static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* The in-neighbours of r in order of s, each as often as s lists r; slot[i] is the
 * index in s's out-list of the edge in[i] pairs with (the m-th time s lists r pairs with
 * the m-th time r lists s). Returns the in-degree. */
static int in_list(int r, int *in, int *slot)
{
    int n = 0;
    for (int s = 0; s < np; s++)
        for (int j = 0; j < deg(s); j++)
            if (mod(s + 1 + j, np) == r) {
                in[n] = s;
                slot[n++] = j;
            }
    return n;
}

static void check_dist_v(void)
{
    int out[3], in[3 * 64] = {0}, slot[3 * 64] = {0}, nout = deg(me);
    for (int j = 0; j < nout; j++)
        out[j] = mod(me + 1 + j, np);
    int nin = in_list(me, in, slot);
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, MPI_UNWEIGHTED, nout, out,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    /* allgatherv: rank s sends s + 1 ints s * 10 + t; block i lands at 5 * i + 1. */
    int sb[64], rb[5 * 3 * 64], rc[3 * 64], rd[3 * 64];
    for (int t = 0; t <= me && t < 64; t++)
        sb[t] = me * 10 + t;
    for (int i = 0; i < nin; i++) {
        rc[i] = in[i] + 1 < 4 ? in[i] + 1 : 4;
        rd[i] = 5 * i + 1;
    }
    for (int i = 0; i < 5 * nin; i++)
        rb[i] = -1;
    /* Every sender sends min(s + 1, 4) ints: cap the send count the same way. */
    MPI_Neighbor_allgatherv(sb, me + 1 < 4 ? me + 1 : 4, MPI_INT, rb, rc, rd, MPI_INT, g);
    int wrong = 0;
    for (int i = 0; i < nin; i++)
        for (int t = 0; t < 5; t++) {
            int want = t >= 1 && t <= rc[i] ? in[i] * 10 + t - 1 : -1;
            wrong += rb[5 * i + t] != want;
        }
    EXPECT(wrong == 0, "allgatherv: %d ints wrong", wrong);
    /* alltoallv: block j to out[j] is j + 1 ints s * 100 + j * 10 + t at 4 * j. */
    int sc[3], sd[3], ab[12], xb[4 * 3 * 64];
    for (int j = 0; j < nout; j++) {
        sc[j] = j + 1;
        sd[j] = 4 * j;
        for (int t = 0; t < 4; t++)
            ab[4 * j + t] = me * 100 + j * 10 + t;
    }
    for (int i = 0; i < nin; i++) {
        rc[i] = slot[i] + 1;
        rd[i] = 4 * i;
    }
    for (int i = 0; i < 4 * nin; i++)
        xb[i] = -1;
    MPI_Neighbor_alltoallv(ab, sc, sd, MPI_INT, xb, rc, rd, MPI_INT, g);
    wrong = 0;
    for (int i = 0; i < nin; i++)
        for (int t = 0; t < 4; t++) {
            int want = t < rc[i] ? in[i] * 100 + slot[i] * 10 + t : -1;
            if (xb[4 * i + t] != want) {
                if (!wrong)
                    fail("alltoallv from %d word %d: %d, expected %d", in[i], t, xb[4 * i + t],
                         want);
                wrong++;
            }
        }
    MPI_Comm_free(&g);
    report("Neighbor_allgatherv, Neighbor_alltoallv on a distributed graph of varied degrees");
}

static void check_cart_w(void)
{
    int d2[2] = {np % 2 ? 1 : 2, np % 2 ? np : np / 2}, p2[2] = {1, 1}, nbr[4];
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart);
    MPI_Cart_shift(cart, 0, 1, &nbr[0], &nbr[1]);
    MPI_Cart_shift(cart, 1, 1, &nbr[2], &nbr[3]);
    /* Block k: k + 1 ints sent from byte 16 * k. Block k of the receive side pairs with
     * block k ^ 1 of the neighbour's send side (from my -1 side comes what it sent to its
     * +1 side), so it is received as one contiguous type of (k ^ 1) + 1 ints, at byte
     * 20 * k. */
    int sb[16], rb[20], sc[4], rcnt[4];
    MPI_Aint sd[4], rd[4];
    MPI_Datatype st[4], rt[4];
    for (int k = 0; k < 4; k++) {
        sc[k] = k + 1;
        sd[k] = 16 * k;
        st[k] = MPI_INT;
        rcnt[k] = 1;
        rd[k] = 20 * k;
        MPI_Type_contiguous((k ^ 1) + 1, MPI_INT, &rt[k]);
        MPI_Type_commit(&rt[k]);
        for (int t = 0; t < 4; t++)
            sb[4 * k + t] = me * 100 + k * 10 + t;
    }
    for (int i = 0; i < 20; i++)
        rb[i] = -1;
    MPI_Neighbor_alltoallw(sb, sc, sd, st, rb, rcnt, rd, rt, cart);
    int wrong = 0;
    for (int k = 0; k < 4; k++)
        for (int t = 0; t < 5; t++) {
            int n = (k ^ 1) + 1;
            int want = t < n ? nbr[k] * 100 + (k ^ 1) * 10 + t : -1;
            if (rb[5 * k + t] != want) {
                if (!wrong)
                    fail("alltoallw block %d word %d: %d, expected %d", k, t, rb[5 * k + t], want);
                wrong++;
            }
        }
    for (int k = 0; k < 4; k++)
        MPI_Type_free(&rt[k]);
    MPI_Comm_free(&cart);
    report("Neighbor_alltoallw on a periodic grid: a type and byte displacement per block");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "neighborv"))
        return 0;
    if (np > 64) {
        if (me == 0)
            printf("# conformance neighborv: at most 64 ranks\n");
        MPI_Finalize();
        return 0;
    }
    check_dist_v();
    check_cart_w();
    return finish("neighborv");
}
