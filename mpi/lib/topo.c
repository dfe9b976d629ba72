/*
 * topo.c: what the virtual topologies share: the object a communicator carries
 * (struct topo, topo_impl.h), its copy on MPI_Comm_dup and release on MPI_Comm_free,
 * MPI_Topo_test, and the communicator a topology constructor makes.
 *
 * Topologies never reorder ranks (MPI allows keeping them): the new communicator holds
 * the parent's first `n` ranks in the parent's order.
 */
#include "topo_impl.h"
#include <stdlib.h>
#include <string.h>

/* Task context: a topology of `kind` with nv ints of arrays (zeroed), or NULL. */
struct topo *topo_new(int kind, int nv)
{
    struct topo *t = calloc(1, sizeof *t + sizeof(int) * (size_t)nv);
    if (t) {
        t->kind = kind;
        t->nv = nv;
    }
    return t;
}

/* Task context. */
void topo_free(struct topo *t)
{
    free(t);
}

/* Task context (MPI_Comm_dup): the duplicate gets its own copy. MPI error code. */
int topo_copy(MPI_Comm from, MPI_Comm to)
{
    if (!from->topo)
        return MPI_SUCCESS;
    size_t bytes = sizeof *from->topo + sizeof(int) * (size_t)from->topo->nv;
    to->topo = malloc(bytes);
    if (!to->topo)
        return MPI_ERR_NO_MEM;
    memcpy(to->topo, from->topo, bytes);
    return MPI_SUCCESS;
}

/* Task context, collective over parent: a communicator of the parent's first n ranks
 * (*out = MPI_COMM_NULL on the others) that takes over t (freed on failure and on the
 * ranks left out). MPI error code. */
int topo_attach(MPI_Comm parent, int n, struct topo *t, MPI_Comm *out)
{
    int rc = MPI_Comm_split(parent, parent->rank < n ? 0 : MPI_UNDEFINED, parent->rank, out);
    if (rc != MPI_SUCCESS || *out == MPI_COMM_NULL) {
        topo_free(t);
        return rc;
    }
    (*out)->topo = t;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Topo_test(MPI_Comm comm, int *status)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Topo_test");
    if (!status)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Topo_test");
    *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
