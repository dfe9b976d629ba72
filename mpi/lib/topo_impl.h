/*
 * topo_impl.h: the virtual topology a communicator carries (comm->topo), shared by
 * topo.c, topo_cart.c, topo_graph.c and topo_neighbor.c.
 *
 * One allocation holds the header and every array (v[], nv ints), so a copy is one
 * memcpy. The arrays by kind:
 *   MPI_CART        dims[ndims], periods[ndims]
 *   MPI_GRAPH       index[nnodes], edges[nedges]       (MPI_Graph_create's arrays)
 *   MPI_DIST_GRAPH  sources[indeg], dests[outdeg], then the weights of both if weighted
 */
#ifndef TOPO_IMPL_H
#define TOPO_IMPL_H
#include "mpi_impl.h"

struct topo {
    int kind;   /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int ndims;  /* cart */
    int nnodes; /* graph */
    int nedges;
    int indeg; /* dist graph */
    int outdeg;
    int weighted;
    int nv;
    int v[];
};

/* Task context: a zeroed topology with nv ints of arrays, or NULL. */
struct topo *topo_new(int kind, int nv);
/* Task context, collective over parent: see topo.c. */
int topo_attach(MPI_Comm parent, int n, struct topo *t, MPI_Comm *out);

/* topo_cart.c. Task context: the ranks disp steps back (*src) and forward (*dst) of rank
 * along dimension `direction` of grid t, MPI_PROC_NULL off a non-periodic edge. */
void cart_shift_of(const struct topo *t, int rank, int direction, int disp, int *src, int *dst);
/* topo_graph.c. Task context: rank's neighbours in graph t are the *n edges from
 * index *first of its edge array. */
void graph_neighbors_of(const struct topo *t, int rank, int *first, int *n);
/* topo_graph.c. Task context, collective over comm_old: a distributed graph communicator
 * of all its ranks with this rank's in- and out-neighbours (weights read only if
 * weighted). MPI error code. */
int dist_graph_attach(MPI_Comm comm_old, int indeg, const int sources[], const int sweights[],
                      int outdeg, const int dests[], const int dweights[], int weighted,
                      MPI_Comm *out);

#endif
