/*
 * comm_group.c: MPI_Comm_create_group, a communicator made by the members of a group
 * alone (the rest of the parent takes no part).
 *
 * The members agree on a context id like every constructor (the maximum of their next
 * free ids) by point-to-point on the parent's collective context under the program's tag:
 * each sends its candidate to the group's rank 0, which answers with the maximum.
 * HAZARD: the tag shares that context with the tag blocks of the parent's CAD
 * collectives (coll_tag_block); a non-blocking collective on the parent still running
 * between the same two members with a tag equal to the program's could take the message.
 * Blocking programs never have one running.
 */
#include "mpi_impl.h"

/* Task context: one blocking message on comm's collective context. */
static int xfer(int send, int *v, int peer, int tag, MPI_Comm comm)
{
    MPI_Request r;
    int rc = send ? p2p_isend(v, 1, MPI_INT, peer, tag, comm, 1, 0, &r)
                  : p2p_irecv(v, 1, MPI_INT, peer, tag, comm, 1, &r);
    return rc == MPI_SUCCESS ? req_wait(&r, MPI_STATUS_IGNORE) : rc;
}

/* Task context, collective over the members of group. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, fn);
    inter_refuse(comm, fn);
    if (comm->clients)
        return err_raise(comm, world_refuse(fn, "a new communicator"), fn);
    if (!group || !newcomm)
        return err_raise(comm, !group ? MPI_ERR_GROUP : MPI_ERR_ARG, fn);
    if (tag < 0)
        return err_raise(comm, MPI_ERR_TAG, fn);
    int me = grp_rank_of(group, mpi_comm_world_.rank);
    for (int i = 0; i < group->size; i++)
        if (grp_rank_of(comm->group, group->world[i]) == MPI_UNDEFINED)
            return err_raise(comm, MPI_ERR_GROUP, fn);
    if (me == MPI_UNDEFINED) /* MPI: only the members call it */
        return err_raise(comm, MPI_ERR_GROUP, fn);
    int v = (int)comm_ctx_candidate(), rc = MPI_SUCCESS;
    int root = grp_rank_of(comm->group, group->world[0]);
    if (me != 0) {
        rc = xfer(1, &v, root, tag, comm);
        if (rc == MPI_SUCCESS)
            rc = xfer(0, &v, root, tag, comm);
    } else {
        for (int i = 1; rc == MPI_SUCCESS && i < group->size; i++) {
            int w;
            rc = xfer(0, &w, grp_rank_of(comm->group, group->world[i]), tag, comm);
            if (rc == MPI_SUCCESS && w > v)
                v = w;
        }
        for (int i = 1; rc == MPI_SUCCESS && i < group->size; i++)
            rc = xfer(1, &v, grp_rank_of(comm->group, group->world[i]), tag, comm);
    }
    if (rc != MPI_SUCCESS)
        return err_raise(comm, rc, fn);
    comm_ctx_taken((uint32_t)v);
    grp_retain(group);
    return err_raise(comm, comm_new(group, (uint32_t)v, comm, newcomm), fn);
}
