/*
 * comm_type.c: MPI_Comm_split_type. MPI_COMM_TYPE_SHARED groups the ranks that can share
 * memory: the ranks of one node (one unikernel instance: its ranks are partitions of one
 * address space), named by the node number qemu/ukrun gives each node in UK_NODE.
 */
#include "mpi_impl.h"
#include <stdlib.h>

/* Task context: this rank's node number (0 when the job has one node). */
static int node_number(void)
{
    const char *s = getenv("UK_NODE");
    return s ? atoi(s) : 0;
}

/* Task context, collective over comm. MPI_UNDEFINED as split_type leaves this rank out. */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info;
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
        if (!comm_valid(comm))
            return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_split_type");
        return err_raise(comm, MPI_ERR_ARG, "MPI_Comm_split_type");
    }
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : node_number();
    return MPI_Comm_split(comm, color, key, newcomm);
}
