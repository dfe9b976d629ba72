/*
 * topo_dist.c: MPI_Dist_graph_create, the distributed graph built from edges any process
 * may name. Each edge (s -> d, weight w) is sent to both ends as a record (an all-to-all
 * of counts, then of records); each process then knows its own in- and out-neighbours
 * and the communicator is made as by MPI_Dist_graph_create_adjacent (topo_graph.c). The
 * neighbours come in the order of the processes that named the edges, then the order
 * they named them in (MPI leaves the order open).
 */
#include "topo_impl.h"
#include <stdlib.h>

/* A record: 3 ints, kind (REC_OUT: the receiver is the edge's source, REC_IN: its
 * destination), the peer at the other end, the weight. */
enum { REC_OUT, REC_IN };
#define REC_KIND   0
#define REC_PEER   1
#define REC_WEIGHT 2
#define REC_INTS   3

/* Task context: the edges' checks: n sources with their degrees, every rank in range.
 * *nedges the number of edges. MPI error code. */
static int edges_check(int n, const int sources[], const int degrees[], const int dests[], int size,
                       int *nedges)
{
    long long e = 0;
    if (n < 0 || (n > 0 && (!sources || !degrees)))
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= size)
            return MPI_ERR_RANK;
        if (degrees[i] < 0)
            return MPI_ERR_ARG;
        e += degrees[i];
        if (e > (1 << 28)) /* records of 3 ints each must fit an int count */
            return MPI_ERR_ARG;
    }
    for (long long k = 0; k < e; k++)
        if (!dests || dests[k] < 0 || dests[k] >= size)
            return MPI_ERR_RANK;
    *nedges = (int)e;
    return MPI_SUCCESS;
}

/* Task context, collective over c: the records this rank receives (*got, malloc'd, *ngot
 * ints). MPI error code. */
static int swap_records(MPI_Comm c, int n, const int sources[], const int degrees[],
                        const int dests[], const int weights[], int nedges, int **got, int *ngot)
{
    int size = c->size, rc = MPI_ERR_NO_MEM;
    int *cnt = calloc((size_t)(4 * size), sizeof(int));
    int *recs = malloc(sizeof(int) * (size_t)(2 * REC_INTS * nedges + 1));
    int *in = NULL;
    if (!cnt || !recs)
        goto out;
    int *sd = cnt + size, *rcnt = cnt + 2 * size, *rd = cnt + 3 * size;
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            cnt[sources[i]] += REC_INTS;
            cnt[dests[k]] += REC_INTS;
        }
    for (int r = 1; r < size; r++)
        sd[r] = sd[r - 1] + cnt[r - 1];
    /* Fill with sd as the write positions, then put them back. */
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int w = weights == MPI_UNWEIGHTED ? 0 : weights[k];
            int *o = recs + sd[sources[i]];
            o[REC_KIND] = REC_OUT, o[REC_PEER] = dests[k], o[REC_WEIGHT] = w;
            sd[sources[i]] += REC_INTS;
            int *p = recs + sd[dests[k]];
            p[REC_KIND] = REC_IN, p[REC_PEER] = sources[i], p[REC_WEIGHT] = w;
            sd[dests[k]] += REC_INTS;
        }
    for (int r = 0; r < size; r++)
        sd[r] -= cnt[r];
    rc = MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, c);
    if (rc != MPI_SUCCESS)
        goto out;
    for (int r = 1; r < size; r++)
        rd[r] = rd[r - 1] + rcnt[r - 1];
    *ngot = rd[size - 1] + rcnt[size - 1];
    in = malloc(sizeof(int) * (size_t)(*ngot + 1));
    rc = in ? MPI_Alltoallv(recs, cnt, sd, MPI_INT, in, rcnt, rd, MPI_INT, c) : MPI_ERR_NO_MEM;
out:
    free(cnt);
    free(recs);
    if (rc != MPI_SUCCESS) {
        free(in);
        in = NULL;
    }
    *got = in;
    return rc;
}

/* Task context, collective over comm_old. */
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    (void)info;
    (void)reorder;
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm_old))
        return err_raise(comm_old, MPI_ERR_COMM, fn);
    int nedges = 0, ngot = 0, *got = NULL;
    int rc = edges_check(n, sources, degrees, destinations, comm_old->size, &nedges);
    if (rc == MPI_SUCCESS && !comm_dist_graph)
        rc = MPI_ERR_ARG;
    if (rc == MPI_SUCCESS)
        rc =
            swap_records(comm_old, n, sources, degrees, destinations, weights, nedges, &got, &ngot);
    if (rc != MPI_SUCCESS)
        return err_raise(comm_old, rc, fn);
    /* One array: in-peers, out-peers, in-weights, out-weights, each up to nrec long. */
    int nrec = ngot / REC_INTS, nin = 0, nout = 0;
    int *a = malloc(sizeof(int) * (size_t)(4 * nrec + 1));
    if (!a) {
        free(got);
        return err_raise(comm_old, MPI_ERR_NO_MEM, fn);
    }
    int *inp = a, *outp = a + nrec, *inw = a + 2 * nrec, *outw = a + 3 * nrec;
    for (int i = 0; i < nrec; i++) {
        const int *r = got + REC_INTS * i;
        if (r[REC_KIND] == REC_IN) {
            inw[nin] = r[REC_WEIGHT];
            inp[nin++] = r[REC_PEER];
        } else {
            outw[nout] = r[REC_WEIGHT];
            outp[nout++] = r[REC_PEER];
        }
    }
    rc = dist_graph_attach(comm_old, nin, inp, inw, nout, outp, outw, weights != MPI_UNWEIGHTED,
                           comm_dist_graph);
    free(a);
    free(got);
    return err_raise(comm_old, rc, fn);
}
