/*
 * topo.c: MPI conformance of process topologies: Cartesian grids (Cart_create with a grid
 * smaller than the communicator, Topo_test, Cartdim_get, Cart_get, Cart_rank,
 * Cart_coords, Cart_shift with periodic and non-periodic edges and data moved along it,
 * Cart_sub, Comm_dup keeping the topology), graphs (Graph_create, Graphdims_get,
 * Graph_get, Graph_neighbors(_count)), distributed graphs (Dist_graph_create_adjacent
 * with weights, Dist_graph_create with edges named by other ranks,
 * Dist_graph_neighbors(_count)), and the neighbourhood collectives
 * Neighbor_allgather and Neighbor_alltoall on a grid (including periodic dimensions of
 * size 2, where the -1 and +1 neighbours are one process), a distributed graph and a
 * graph. Only rank 0 prints. Runs on any number of ranks >= 2 (the graph alltoall is
 * checked from 3 ranks: with 2 the ring's two neighbours are one process).
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

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static int topo_kind(MPI_Comm c)
{
    int k = -1;
    MPI_Topo_test(c, &k);
    return k;
}

/* A 2-D grid of all ranks (MPI_Dims_create), periodic in dimension 0 only. */
static void check_cart_basic(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, gd[2], gp[2], co[2], nd = -1, r = -1;
    MPI_Comm cart;
    MPI_Dims_create(np, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    EXPECT(cart != MPI_COMM_NULL, "no grid communicator");
    EXPECT(topo_kind(cart) == MPI_CART, "Topo_test %d", topo_kind(cart));
    EXPECT(topo_kind(MPI_COMM_WORLD) == MPI_UNDEFINED, "Topo_test(WORLD) %d",
           topo_kind(MPI_COMM_WORLD));
    MPI_Cartdim_get(cart, &nd);
    EXPECT(nd == 2, "Cartdim_get %d", nd);
    MPI_Comm_rank(cart, &r);
    EXPECT(r == me, "rank %d in the grid, world rank %d", r, me);
    MPI_Cart_get(cart, 2, gd, gp, co);
    EXPECT(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0,
           "Cart_get dims %dx%d periods %d %d", gd[0], gd[1], gp[0], gp[1]);
    EXPECT(co[0] == me / dims[1] && co[1] == me % dims[1], "Cart_get coords (%d,%d)", co[0], co[1]);
    for (int q = 0; q < np; q++) {
        int c2[2], back = -1;
        MPI_Cart_coords(cart, q, 2, c2);
        MPI_Cart_rank(cart, c2, &back);
        EXPECT(c2[0] == q / dims[1] && c2[1] == q % dims[1] && back == q,
               "rank %d: coords (%d,%d), back to %d", q, c2[0], c2[1], back);
    }
    /* Periodic dimension 0 wraps. */
    int wrap[2] = {-1, co[1]}, wr = -1;
    MPI_Cart_rank(cart, wrap, &wr);
    EXPECT(wr == (dims[0] - 1) * dims[1] + co[1], "Cart_rank of (-1,%d) = %d", co[1], wr);
    /* Comm_dup keeps the topology. */
    MPI_Comm d;
    MPI_Comm_dup(cart, &d);
    MPI_Cart_get(d, 2, gd, gp, co);
    EXPECT(topo_kind(d) == MPI_CART && gd[0] == dims[0] && gd[1] == dims[1],
           "dup of the grid: Topo_test %d dims %dx%d", topo_kind(d), gd[0], gd[1]);
    MPI_Comm_free(&d);
    MPI_Comm_free(&cart);
    report("Cart_create, Topo_test, Cartdim_get, Cart_get, Cart_coords, Cart_rank, dup keeps it");
}

static void check_cart_shift(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, src, dst, co[2];
    MPI_Comm cart;
    MPI_Dims_create(np, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, me, 2, co);
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    int esrc = mod(co[0] - 1, dims[0]) * dims[1] + co[1];
    int edst = mod(co[0] + 1, dims[0]) * dims[1] + co[1];
    EXPECT(src == esrc && dst == edst, "shift dim 0: %d %d, expected %d %d", src, dst, esrc, edst);
    /* Data along the periodic ring of dimension 0. */
    int got = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, cart, MPI_STATUS_IGNORE);
    EXPECT(got == esrc, "shifted data %d, expected %d", got, esrc);
    /* Non-periodic dimension 1: MPI_PROC_NULL at the edges. */
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    esrc = co[1] > 0 ? me - 1 : MPI_PROC_NULL;
    edst = co[1] < dims[1] - 1 ? me + 1 : MPI_PROC_NULL;
    EXPECT(src == esrc && dst == edst, "shift dim 1: %d %d, expected %d %d", src, dst, esrc, edst);
    got = -7;
    MPI_Sendrecv(&me, 1, MPI_INT, dst, 4, &got, 1, MPI_INT, src, 4, cart, MPI_STATUS_IGNORE);
    EXPECT(got == (esrc == MPI_PROC_NULL ? -7 : esrc), "edge data %d", got);
    /* A displacement of 2 backwards. */
    MPI_Cart_shift(cart, 0, -2, &src, &dst);
    EXPECT(dst == mod(co[0] - 2, dims[0]) * dims[1] + co[1], "shift by -2: dest %d", dst);
    MPI_Comm_free(&cart);
    report("Cart_shift: periodic, non-periodic (MPI_PROC_NULL), disp -2, data moved");
}

/* A 1-D grid of np - 1 processes: the last rank gets MPI_COMM_NULL. Then Cart_sub. */
static void check_cart_small_sub(void)
{
    int n = np - 1, per = 0;
    MPI_Comm line;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &per, 0, &line);
    if (me == np - 1) {
        EXPECT(line == MPI_COMM_NULL, "rank outside the grid got a communicator");
    } else {
        int s = -1;
        MPI_Comm_size(line, &s);
        EXPECT(line != MPI_COMM_NULL && s == n, "grid of %d has size %d", n, s);
    }
    if (line != MPI_COMM_NULL)
        MPI_Comm_free(&line);
    /* Rows and columns of the 2-D grid. */
    int dims[2] = {0, 0}, periods[2] = {0, 1}, keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
    MPI_Comm cart, row, col;
    MPI_Dims_create(np, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep_row, &row);
    MPI_Cart_sub(cart, keep_col, &col);
    int rs, rr, cs, cr, nd = -1, d1, p1, c1, sum = 0;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(col, &cs);
    MPI_Comm_rank(col, &cr);
    EXPECT(rs == dims[1] && rr == me % dims[1], "row: size %d rank %d", rs, rr);
    EXPECT(cs == dims[0] && cr == me / dims[1], "column: size %d rank %d", cs, cr);
    MPI_Cartdim_get(row, &nd);
    MPI_Cart_get(row, 1, &d1, &p1, &c1);
    EXPECT(nd == 1 && d1 == dims[1] && p1 == 1 && c1 == rr, "row grid: %d dims, %d %d %d", nd, d1,
           p1, c1);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, row);
    int row0 = me - me % dims[1], want = 0;
    for (int i = 0; i < dims[1]; i++)
        want += row0 + i;
    EXPECT(sum == want, "row sum %d, expected %d", sum, want);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&cart);
    report("Cart_create smaller than the communicator; Cart_sub into rows and columns");
}

static void check_graph(void)
{
    /* A ring: node i's neighbours are i-1 and i+1. */
    int *index = malloc(np * sizeof(int)), *edges = malloc(2 * np * sizeof(int));
    for (int i = 0; i < np; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = mod(i - 1, np);
        edges[2 * i + 1] = mod(i + 1, np);
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &g);
    int nn = -1, ne = -1, cnt = -1, nb[2] = {-1, -1};
    EXPECT(topo_kind(g) == MPI_GRAPH, "Topo_test %d", topo_kind(g));
    MPI_Graphdims_get(g, &nn, &ne);
    EXPECT(nn == np && ne == 2 * np, "Graphdims_get %d %d", nn, ne);
    int *gi = malloc(np * sizeof(int)), *ge = malloc(2 * np * sizeof(int));
    MPI_Graph_get(g, np, 2 * np, gi, ge);
    int wrong = 0;
    for (int i = 0; i < np; i++)
        wrong +=
            gi[i] != index[i] || ge[2 * i] != edges[2 * i] || ge[2 * i + 1] != edges[2 * i + 1];
    EXPECT(wrong == 0, "Graph_get: %d nodes wrong", wrong);
    int q = (me + 1) % np;
    MPI_Graph_neighbors_count(g, q, &cnt);
    MPI_Graph_neighbors(g, q, 2, nb);
    EXPECT(cnt == 2 && nb[0] == mod(q - 1, np) && nb[1] == mod(q + 1, np),
           "neighbours of %d: %d: %d %d", q, cnt, nb[0], nb[1]);
    /* Neighbour collectives on the ring. */
    int ag[2] = {-1, -1};
    MPI_Neighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, g);
    EXPECT(ag[0] == mod(me - 1, np) && ag[1] == mod(me + 1, np), "graph allgather %d %d", ag[0],
           ag[1]);
    int sb[2] = {me * 100, me * 100 + 1}, rb[2] = {-1, -1};
    MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g);
    /* From the left neighbour its block for its right one (1), and the other way. */
    EXPECT(np < 3 || (rb[0] == mod(me - 1, np) * 100 + 1 && rb[1] == mod(me + 1, np) * 100),
           "graph alltoall %d %d", rb[0], rb[1]);
    MPI_Comm_free(&g);
    free(index);
    free(edges);
    free(gi);
    free(ge);
    report("Graph_create, Graphdims_get, Graph_get, Graph_neighbors(_count), neighbour colls");
}

static void check_dist_graph(void)
{
    int src[2] = {mod(me - 1, np), mod(me - 2, np)}, dst[2] = {mod(me + 1, np), mod(me + 2, np)};
    int sw[2] = {10, 20}, dw[2] = {30, 40};
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &g);
    int in = -1, out = -1, w = -1, s2[2], d2[2], sw2[2], dw2[2];
    EXPECT(topo_kind(g) == MPI_DIST_GRAPH, "Topo_test %d", topo_kind(g));
    MPI_Dist_graph_neighbors_count(g, &in, &out, &w);
    EXPECT(in == 2 && out == 2 && w, "neighbors_count %d %d weighted %d", in, out, w);
    MPI_Dist_graph_neighbors(g, 2, s2, sw2, 2, d2, dw2);
    EXPECT(s2[0] == src[0] && s2[1] == src[1] && d2[0] == dst[0] && d2[1] == dst[1],
           "neighbours %d %d / %d %d", s2[0], s2[1], d2[0], d2[1]);
    EXPECT(sw2[0] == 10 && sw2[1] == 20 && dw2[0] == 30 && dw2[1] == 40, "weights %d %d %d %d",
           sw2[0], sw2[1], dw2[0], dw2[1]);
    int ag[2] = {-1, -1};
    MPI_Neighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, g);
    EXPECT(ag[0] == src[0] && ag[1] == src[1], "dist graph allgather %d %d", ag[0], ag[1]);
    /* Block k goes to destination k: source k sent me its block k. */
    int sb[2] = {me * 100, me * 100 + 1}, rb[2] = {-1, -1};
    MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g);
    EXPECT(rb[0] == src[0] * 100 && rb[1] == src[1] * 100 + 1, "dist graph alltoall %d %d", rb[0],
           rb[1]);
    MPI_Comm_free(&g);
    /* Unweighted. */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    MPI_Dist_graph_neighbors_count(g, &in, &out, &w);
    EXPECT(in == 1 && out == 1 && !w, "unweighted: %d %d weighted %d", in, out, w);
    MPI_Comm_free(&g);
    report("Dist_graph_create_adjacent (weights), neighbors(_count), neighbour collectives");
}

/* Sorts n (peer, weight) pairs, for comparing neighbour lists MPI leaves unordered. */
static void sort_pairs(int n, int *peer, int *w)
{
    for (int i = 1; i < n; i++)
        for (int j = i;
             j > 0 && (peer[j - 1] > peer[j] || (peer[j - 1] == peer[j] && w[j - 1] > w[j])); j--) {
            int t = peer[j];
            peer[j] = peer[j - 1];
            peer[j - 1] = t;
            t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
}

/* Dist_graph_create: rank 0 names every edge s -> s+1 (weight 10 s + 1), and every rank
 * names its own edge to s+2 (weight 7). */
static void check_dist_graph_create(void)
{
    int *src = malloc((np + 1) * sizeof(int)), *deg = malloc((np + 1) * sizeof(int));
    int *dst = malloc((np + 1) * sizeof(int)), *w = malloc((np + 1) * sizeof(int)), n = 0;
    if (me == 0)
        for (int s = 0; s < np; s++, n++) {
            src[n] = s;
            deg[n] = 1;
            dst[n] = mod(s + 1, np);
            w[n] = 10 * s + 1;
        }
    src[n] = me;
    deg[n] = 1;
    dst[n] = mod(me + 2, np);
    w[n++] = 7;
    MPI_Comm g;
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, src, deg, dst, w, MPI_INFO_NULL, 0, &g);
    int in = -1, out = -1, wt = -1, s2[2] = {-1, -1}, sw[2], d2[2] = {-1, -1}, dw[2];
    EXPECT(topo_kind(g) == MPI_DIST_GRAPH, "Topo_test %d", topo_kind(g));
    MPI_Dist_graph_neighbors_count(g, &in, &out, &wt);
    EXPECT(in == 2 && out == 2 && wt, "neighbors_count %d %d weighted %d", in, out, wt);
    if (in == 2 && out == 2) {
        MPI_Dist_graph_neighbors(g, 2, s2, sw, 2, d2, dw);
        int ag[2] = {-1, -1};
        MPI_Neighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, g);
        EXPECT(ag[0] == s2[0] && ag[1] == s2[1], "allgather %d %d from sources %d %d", ag[0], ag[1],
               s2[0], s2[1]);
        int es[2] = {mod(me - 1, np), mod(me - 2, np)}, esw[2] = {10 * mod(me - 1, np) + 1, 7};
        int ed[2] = {mod(me + 1, np), mod(me + 2, np)}, edw[2] = {10 * me + 1, 7};
        sort_pairs(2, s2, sw);
        sort_pairs(2, d2, dw);
        sort_pairs(2, es, esw);
        sort_pairs(2, ed, edw);
        EXPECT(s2[0] == es[0] && s2[1] == es[1] && sw[0] == esw[0] && sw[1] == esw[1],
               "sources %d(%d) %d(%d)", s2[0], sw[0], s2[1], sw[1]);
        EXPECT(d2[0] == ed[0] && d2[1] == ed[1] && dw[0] == edw[0] && dw[1] == edw[1],
               "destinations %d(%d) %d(%d)", d2[0], dw[0], d2[1], dw[1]);
    }
    MPI_Comm_free(&g);
    free(src), free(deg), free(dst), free(w);
    report("Dist_graph_create: edges named by other ranks, weights, neighbour allgather");
}

/* Neighbour collectives on grids: non-periodic edges (blocks left alone), and periodic
 * dimensions of size 2 (or 1) where both neighbours of a dimension are one process. */
static void check_cart_neighbor(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, co[2];
    MPI_Comm cart;
    MPI_Dims_create(np, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, me, 2, co);
    int nbr[4];
    MPI_Cart_shift(cart, 0, 1, &nbr[0], &nbr[1]);
    MPI_Cart_shift(cart, 1, 1, &nbr[2], &nbr[3]);
    int ag[4] = {-1, -1, -1, -1};
    MPI_Neighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, cart);
    for (int k = 0; k < 4; k++)
        EXPECT(ag[k] == (nbr[k] == MPI_PROC_NULL ? -1 : nbr[k]), "allgather block %d: %d", k,
               ag[k]);
    MPI_Comm_free(&cart);
    /* Both dimensions periodic, the first of size 2 (1 with an odd number of ranks). */
    int d2[2] = {np % 2 ? 1 : 2, np % 2 ? np : np / 2}, p2[2] = {1, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart);
    MPI_Cart_shift(cart, 0, 1, &nbr[0], &nbr[1]);
    MPI_Cart_shift(cart, 1, 1, &nbr[2], &nbr[3]);
    int sb[4], rb[4] = {-1, -1, -1, -1};
    for (int k = 0; k < 4; k++)
        sb[k] = me * 100 + k;
    MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart);
    /* From my -1 neighbour in dimension d its block for its +1 side (2d + 1), and back. */
    for (int d = 0; d < 2; d++) {
        EXPECT(rb[2 * d] == nbr[2 * d] * 100 + 2 * d + 1, "alltoall dim %d from -1: %d", d,
               rb[2 * d]);
        EXPECT(rb[2 * d + 1] == nbr[2 * d + 1] * 100 + 2 * d, "alltoall dim %d from +1: %d", d,
               rb[2 * d + 1]);
    }
    MPI_Comm_free(&cart);
    report("Neighbor_allgather on a grid with edges, Neighbor_alltoall with periodic size 2");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "topo"))
        return 0;
    check_cart_basic();
    check_cart_shift();
    check_cart_small_sub();
    check_graph();
    check_dist_graph();
    check_cart_neighbor();
    check_dist_graph_create();
    return finish("topo");
}
