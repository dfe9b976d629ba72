/*
 * intercomm.c: intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge,
 * MPI_Comm_remote_size, MPI_Comm_remote_group, MPI_Comm_test_inter, and MPI_Comm_dup and
 * MPI_Comm_split of one (comm.c calls inter_dup and inter_split).
 *
 * An intercommunicator is a communicator with a remote group (c->remote): its rank and
 * size are in the local group, peers named in point-to-point calls are ranks of the
 * remote group (p2p.c maps them through c->remote), and a message's source is the
 * sender's rank in its own group, which is its rank in the receiver's remote group, so
 * the engine's matching needs nothing new. Both groups use one context id. c->local is
 * a private intracommunicator of the local group (a duplicate of the local_comm the
 * intercommunicator was made from), for the agreements below.
 *
 * Agreeing across both groups (create, merge, dup): each group takes the maximum of its
 * members' next free context ids over its local communicator; the two leaders (local
 * rank 0 of each side, or the named leaders for create) swap theirs with what else the
 * other side needs, and each leader broadcasts the result in its group. So every member
 * of both groups moves past the id chosen.
 *
 * Collectives on intercommunicators other than intercomm_coll.c's blocking Barrier,
 * Bcast, Reduce, Allreduce and Allgather (and the constructors other than dup, split and
 * merge) are not implemented: they stop the job with a message (inter_refuse) rather than run
 * on the local group alone.
 */
#include "mpi_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the two leaders swap. */
struct offer {
    int ctx;  /* the group's next free context id (maximum over its members) */
    int size; /* the group's size */
    int flag; /* MPI_Intercomm_merge's `high` */
    int low;  /* the leader's world rank: breaks ties between equal `high` flags */
};

/* Task context, collective over the local group (local: its intracommunicator): the
 * leaders (local rank `leader`) swap offers, by `swap` (a point-to-point exchange the
 * caller chooses), then each broadcasts what it got; *theirs the other group's offer,
 * *ctx the agreed id (taken: this rank's next free id moves past it). MPI error code. */
typedef int swap_fn(const struct offer *mine, struct offer *theirs, void *arg);
static int agree(MPI_Comm local, int leader, struct offer *mine, struct offer *theirs,
                 swap_fn *swap, void *arg, uint32_t *ctx)
{
    int v = (int)comm_ctx_candidate();
    int rc = coll_allreduce_max_int(&v, local);
    mine->ctx = v;
    mine->size = local->size;
    mine->low = mpi_comm_world_.rank;
    if (rc == MPI_SUCCESS && local->rank == leader)
        rc = swap(mine, theirs, arg);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(theirs, (int)(sizeof *theirs / sizeof(int)), MPI_INT, leader, local);
    if (rc != MPI_SUCCESS)
        return rc;
    *ctx = (uint32_t)(mine->ctx > theirs->ctx ? mine->ctx : theirs->ctx);
    comm_ctx_taken(*ctx);
    return MPI_SUCCESS;
}

/* MPI_Intercomm_create's swap: over peer_comm with the program's tag. */
struct peer_swap {
    MPI_Comm peer;
    int remote_leader, tag;
};

static int swap_over_peer(const struct offer *mine, struct offer *theirs, void *arg)
{
    struct peer_swap *p = arg;
    int n = (int)(sizeof *mine / sizeof(int));
    return MPI_Sendrecv(mine, n, MPI_INT, p->remote_leader, p->tag, theirs, n, MPI_INT,
                        p->remote_leader, p->tag, p->peer, MPI_STATUS_IGNORE);
}

/* Merge and dup: leader to leader (remote rank 0) over the intercommunicator's
 * collective context, under the call's collective tag block. */
struct inter_swap {
    MPI_Comm ic;
    int tag;
};

static int swap_over_inter(const struct offer *mine, struct offer *theirs, void *arg)
{
    const struct inter_swap *x = arg;
    MPI_Comm ic = x->ic;
    int n = (int)(sizeof *mine / sizeof(int)), tag = x->tag;
    MPI_Request r[2];
    int rc = p2p_irecv(theirs, n, MPI_INT, 0, tag, ic, 1, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = p2p_isend(mine, n, MPI_INT, 0, tag, ic, 1, 0, &r[1]);
    int rc2 = rc == MPI_SUCCESS ? req_wait(&r[1], MPI_STATUS_IGNORE) : rc;
    rc = req_wait(&r[0], MPI_STATUS_IGNORE);
    return rc2 != MPI_SUCCESS ? rc2 : rc;
}

/* Task context, collective over the local group (MPI_Intercomm_create): the leaders swap
 * the world ranks of their groups over peer_comm, and each broadcasts the other's;
 * *remote a new group of rsize ranks. */
static int swap_groups(MPI_Comm local, int leader, MPI_Group mine, int rsize,
                       const struct peer_swap *ps, MPI_Group *remote)
{
    MPI_Group g = grp_new(rsize);
    if (!g)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    if (local->rank == leader)
        rc = MPI_Sendrecv(mine->world, mine->size, MPI_INT, ps->remote_leader, ps->tag, g->world,
                          rsize, MPI_INT, ps->remote_leader, ps->tag, ps->peer, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(g->world, rsize, MPI_INT, leader, local);
    if (rc != MPI_SUCCESS) {
        grp_release(g);
        return rc;
    }
    *remote = g;
    return MPI_SUCCESS;
}

/* Task context: an intercommunicator of `group` (taken over) and `remote` (taken over)
 * with context ctx and local intracommunicator `local` (taken over); error handler from
 * errh_from. MPI error code; on failure everything given is released. */
static int inter_make(MPI_Group group, MPI_Group remote, MPI_Comm local, uint32_t ctx,
                      MPI_Comm errh_from, MPI_Comm *out)
{
    MPI_Comm c;
    int rc = comm_new(group, ctx, errh_from, &c);
    if (rc != MPI_SUCCESS || c == MPI_COMM_NULL) {
        grp_release(remote);
        MPI_Comm_free(&local);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
    }
    c->remote = remote;
    c->local = local;
    *out = c;
    return MPI_SUCCESS;
}

/* Task context, collective over both groups. */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(local_comm))
        return err_raise(local_comm, MPI_ERR_COMM, fn);
    inter_refuse(local_comm, fn);
    if (local_leader < 0 || local_leader >= local_comm->size || !newintercomm)
        return err_raise(local_comm, MPI_ERR_ARG, fn);
    int leader = local_comm->rank == local_leader;
    if (leader && !comm_valid(peer_comm))
        return err_raise(local_comm, MPI_ERR_COMM, fn);
    if (leader && (remote_leader < 0 || remote_leader >= peer_comm->size))
        return err_raise(local_comm, MPI_ERR_RANK, fn);
    MPI_Comm local;
    int rc = MPI_Comm_dup(local_comm, &local);
    if (rc != MPI_SUCCESS)
        return rc;
    struct peer_swap ps = {peer_comm, remote_leader, tag};
    struct offer mine = {0}, theirs = {0};
    uint32_t ctx;
    MPI_Group remote = NULL;
    rc = agree(local, local_leader, &mine, &theirs, swap_over_peer, &ps, &ctx);
    if (rc == MPI_SUCCESS)
        rc = swap_groups(local, local_leader, local->group, theirs.size, &ps, &remote);
    if (rc != MPI_SUCCESS) {
        MPI_Comm_free(&local);
        return err_raise(local_comm, rc, fn);
    }
    grp_retain(local->group);
    rc = inter_make(local->group, remote, local, ctx, local_comm, newintercomm);
    return err_raise(local_comm, rc, fn);
}

/* Task context, collective over both groups (comm.c's MPI_Comm_dup of an
 * intercommunicator): the same groups under a new context id. MPI error code. */
int inter_dup(MPI_Comm ic, MPI_Comm *out)
{
    struct offer mine = {0}, theirs = {0};
    uint32_t ctx;
    MPI_Comm local;
    int rc = MPI_Comm_dup(ic->local, &local);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Every member takes the tag block, so all count the collectives on ic alike. */
    struct inter_swap x = {ic, coll_tag_block(ic)};
    rc = agree(local, 0, &mine, &theirs, swap_over_inter, &x, &ctx);
    if (rc != MPI_SUCCESS) {
        MPI_Comm_free(&local);
        return rc;
    }
    grp_retain(ic->group);
    grp_retain(ic->remote);
    return inter_make(ic->group, ic->remote, local, ctx, ic, out);
}

/* Task context, collective over both groups; see mpi_impl.h. Each color's members of
 * both groups form one intercommunicator: its local group as MPI_Comm_split of the local
 * group makes it, its remote group the other side's members of the color in the order
 * their split gives them. One context id serves every color (the members are disjoint).
 * MPI_COMM_NULL for MPI_UNDEFINED, or for a color the other group does not have. */
int inter_split(MPI_Comm ic, int color, int key, MPI_Comm *out)
{
    int mine[2] = {color, key};
    int *theirs = malloc(sizeof(int) * 2 * (size_t)ic->remote->size);
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Group remote = NULL;
    struct offer om = {0}, ot = {0};
    uint32_t ctx;
    *out = MPI_COMM_NULL;
    if (!theirs)
        return MPI_ERR_NO_MEM;
    int rc = inter_allgather(mine, 2, MPI_INT, theirs, 2, MPI_INT, ic);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split(ic->local, color, key, &local);
    /* Every member takes the tag block, so all count the collectives on ic alike. */
    struct inter_swap x = {ic, coll_tag_block(ic)};
    if (rc == MPI_SUCCESS)
        rc = agree(ic->local, 0, &om, &ot, swap_over_inter, &x, &ctx);
    if (rc == MPI_SUCCESS && color != MPI_UNDEFINED)
        rc = comm_split_group(theirs, ic->remote, color, &remote);
    free(theirs);
    if (rc != MPI_SUCCESS || !remote) {
        if (local != MPI_COMM_NULL)
            MPI_Comm_free(&local);
        return rc;
    }
    grp_retain(local->group);
    return inter_make(local->group, remote, local, ctx, ic, out);
}

/* Task context, collective over both groups. The group whose ranks passed high = 0 comes
 * first; if both passed the same, the one whose leader has the lower world rank. */
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(intercomm) || !intercomm->remote)
        return err_raise(intercomm, MPI_ERR_COMM, fn);
    if (!newintracomm)
        return err_raise(intercomm, MPI_ERR_ARG, fn);
    struct offer mine = {.flag = high != 0}, theirs = {0};
    uint32_t ctx;
    struct inter_swap x = {intercomm, coll_tag_block(intercomm)};
    int rc = agree(intercomm->local, 0, &mine, &theirs, swap_over_inter, &x, &ctx);
    if (rc != MPI_SUCCESS)
        return err_raise(intercomm, rc, fn);
    /* The leaders' world ranks: this group's from the offer, the other's in theirs. */
    int my_leader_world = intercomm->group->world[0];
    int first = mine.flag != theirs.flag ? !mine.flag : my_leader_world < theirs.low;
    MPI_Group l = intercomm->group, r = intercomm->remote, g = grp_new(l->size + r->size);
    if (!g)
        return err_raise(intercomm, MPI_ERR_NO_MEM, fn);
    MPI_Group a = first ? l : r, b = first ? r : l;
    memcpy(g->world, a->world, sizeof(int) * (size_t)a->size);
    memcpy(g->world + a->size, b->world, sizeof(int) * (size_t)b->size);
    MPI_Comm c;
    rc = comm_new(g, ctx, intercomm, &c);
    if (rc == MPI_SUCCESS)
        *newintracomm = c;
    return err_raise(intercomm, rc, fn);
}

/* Task context. */
int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_test_inter");
    *flag = comm->remote != NULL;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    if (!comm_valid(comm) || !comm->remote)
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_size");
    *size = comm->remote->size;
    return MPI_SUCCESS;
}

/* Task context. The group is the caller's to free. */
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    if (!comm_valid(comm) || !comm->remote)
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_group");
    grp_retain(comm->remote);
    *group = comm->remote;
    return MPI_SUCCESS;
}

/* Task context: stop the job if comm is an intercommunicator (fn cannot work on one). */
void inter_refuse(MPI_Comm comm, const char *fn)
{
    if (comm && comm->remote) {
        char what[96];
        snprintf(what, sizeof what, "%s on an intercommunicator", fn);
        err_unimplemented(what);
    }
}
