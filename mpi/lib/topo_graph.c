/*
 * topo_graph.c: graph topologies: MPI_Graph_create and its queries (MPI_Graphdims_get,
 * MPI_Graph_get, MPI_Graph_neighbors_count, MPI_Graph_neighbors, MPI_Graph_map), and
 * distributed graphs given by each process's own neighbours
 * (MPI_Dist_graph_create_adjacent, MPI_Dist_graph_neighbors_count,
 * MPI_Dist_graph_neighbors; MPI_Dist_graph_create is topo_dist.c). No reordering
 * (topo.c).
 */
#include "topo_impl.h"
#include <string.h>

#define INDEX(t)    ((t)->v)
#define EDGES(t)    ((t)->v + (t)->nnodes)
#define SOURCES(t)  ((t)->v)
#define DESTS(t)    ((t)->v + (t)->indeg)
#define SWEIGHTS(t) ((t)->v + (t)->indeg + (t)->outdeg)
#define DWEIGHTS(t) ((t)->v + 2 * (t)->indeg + (t)->outdeg)

/* Task context: comm's topology if it is of `kind`, or NULL (then *rc is the error). */
static struct topo *topo_of(MPI_Comm comm, int kind, int *rc)
{
    if (!comm_valid(comm)) {
        *rc = MPI_ERR_COMM;
        return NULL;
    }
    if (!comm->topo || comm->topo->kind != kind) {
        *rc = MPI_ERR_TOPOLOGY;
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return comm->topo;
}

/* Task context: MPI_SUCCESS if index[] and edges[] describe a graph of nnodes nodes. */
static int graph_check(int nnodes, const int index[], const int edges[])
{
    if (nnodes == 0)
        return MPI_SUCCESS;
    if (!index || !edges)
        return MPI_ERR_ARG;
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return MPI_ERR_ARG;
    for (int e = 0; e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/* Task context, collective over comm_old. */
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    (void)reorder;
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm_old))
        return err_raise(comm_old, MPI_ERR_COMM, fn);
    if (nnodes < 0 || nnodes > comm_old->size || !comm_graph)
        return err_raise(comm_old, MPI_ERR_ARG, fn);
    int rc = graph_check(nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return err_raise(comm_old, rc, fn);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    struct topo *t = topo_new(MPI_GRAPH, nnodes + nedges);
    if (!t)
        return err_raise(comm_old, MPI_ERR_NO_MEM, fn);
    t->nnodes = nnodes;
    t->nedges = nedges;
    memcpy(INDEX(t), index, sizeof(int) * (size_t)nnodes);
    memcpy(EDGES(t), edges, sizeof(int) * (size_t)nedges);
    return err_raise(comm_old, topo_attach(comm_old, nnodes, t, comm_graph), fn);
}

/* Task context. */
int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    int rc;
    struct topo *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Graphdims_get");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    int rc;
    struct topo *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Graph_get");
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = INDEX(t)[i];
    for (int e = 0; e < t->nedges && e < maxedges; e++)
        edges[e] = EDGES(t)[e];
    return MPI_SUCCESS;
}

/* Task context: the neighbours of rank in graph t: *n of them from EDGES(t)[*first]. */
void graph_neighbors_of(const struct topo *t, int rank, int *first, int *n)
{
    *first = rank ? INDEX(t)[rank - 1] : 0;
    *n = INDEX(t)[rank] - *first;
}

/* Task context. */
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    int rc, first;
    struct topo *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Graph_neighbors_count");
    if (rank < 0 || rank >= t->nnodes)
        return err_raise(comm, MPI_ERR_RANK, "MPI_Graph_neighbors_count");
    graph_neighbors_of(t, rank, &first, nneighbors);
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    int rc, first, n;
    struct topo *t = topo_of(comm, MPI_GRAPH, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Graph_neighbors");
    if (rank < 0 || rank >= t->nnodes)
        return err_raise(comm, MPI_ERR_RANK, "MPI_Graph_neighbors");
    graph_neighbors_of(t, rank, &first, &n);
    for (int i = 0; i < n && i < maxneighbors; i++)
        neighbors[i] = EDGES(t)[first + i];
    return MPI_SUCCESS;
}

/* Task context. Without reordering, a process keeps its rank if the graph includes it. */
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    (void)index;
    (void)edges;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Graph_map");
    if (nnodes < 0 || nnodes > comm->size)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Graph_map");
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Task context: MPI_SUCCESS if the n ranks in r[] are ranks of a communicator of size. */
static int ranks_check(int n, const int r[], int size)
{
    if (n < 0 || (n > 0 && !r))
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return MPI_ERR_RANK;
    return MPI_SUCCESS;
}

/* Task context, collective over comm_old: every process names its own in- and
 * out-neighbours; weights are kept only if given (not MPI_UNWEIGHTED) on this process. */
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    (void)info;
    (void)reorder;
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm_old))
        return err_raise(comm_old, MPI_ERR_COMM, fn);
    int rc = ranks_check(indegree, sources, comm_old->size);
    if (rc == MPI_SUCCESS)
        rc = ranks_check(outdegree, destinations, comm_old->size);
    if (rc == MPI_SUCCESS && !comm_dist_graph)
        rc = MPI_ERR_ARG;
    if (rc != MPI_SUCCESS)
        return err_raise(comm_old, rc, fn);
    int weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    return err_raise(comm_old,
                     dist_graph_attach(comm_old, indegree, sources, sourceweights, outdegree,
                                       destinations, destweights, weighted, comm_dist_graph),
                     fn);
}

/* Task context, collective over comm_old; see topo_impl.h. */
int dist_graph_attach(MPI_Comm comm_old, int indeg, const int sources[], const int sweights[],
                      int outdeg, const int dests[], const int dweights[], int weighted,
                      MPI_Comm *out)
{
    int n = indeg + outdeg;
    struct topo *t = topo_new(MPI_DIST_GRAPH, weighted ? 2 * n : n);
    if (!t)
        return MPI_ERR_NO_MEM;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = weighted;
    memcpy(SOURCES(t), sources, sizeof(int) * (size_t)indeg);
    memcpy(DESTS(t), dests, sizeof(int) * (size_t)outdeg);
    /* MPI_WEIGHTS_EMPTY stands for an empty array: its degree is 0, nothing to copy. */
    if (weighted && indeg)
        memcpy(SWEIGHTS(t), sweights, sizeof(int) * (size_t)indeg);
    if (weighted && outdeg)
        memcpy(DWEIGHTS(t), dweights, sizeof(int) * (size_t)outdeg);
    return topo_attach(comm_old, comm_old->size, t, out);
}

/* Task context. */
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    int rc;
    struct topo *t = topo_of(comm, MPI_DIST_GRAPH, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Dist_graph_neighbors_count");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

/* Task context. Weights are written only for a weighted graph and when asked for. */
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[])
{
    int rc;
    struct topo *t = topo_of(comm, MPI_DIST_GRAPH, &rc);
    if (!t)
        return err_raise(comm, rc, "MPI_Dist_graph_neighbors");
    int wi = t->weighted && sourceweights != MPI_UNWEIGHTED;
    int wo = t->weighted && destweights != MPI_UNWEIGHTED;
    for (int i = 0; i < t->indeg && i < maxindegree; i++) {
        sources[i] = SOURCES(t)[i];
        if (wi)
            sourceweights[i] = SWEIGHTS(t)[i];
    }
    for (int i = 0; i < t->outdeg && i < maxoutdegree; i++) {
        destinations[i] = DESTS(t)[i];
        if (wo)
            destweights[i] = DWEIGHTS(t)[i];
    }
    return MPI_SUCCESS;
}
