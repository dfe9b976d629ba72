/*
 * comm.c: communicators: MPI_COMM_WORLD and MPI_COMM_SELF, dup/split/create/free,
 * compare and names (attributes: attr.c).
 *
 * Context ids: a communicator's point-to-point traffic is matched under context id ctx,
 * its collective traffic under ctx + 1, so neither can take the other's messages. WORLD
 * has 0, SELF 2; a new communicator gets an id all its members agree on: the maximum of
 * their next free ids (an allreduce over the parent), after which each member's next free
 * id moves past it. Ids are never reused (2^31 communicator creations would wrap).
 *
 * IMPI (world.c): a communicator whose ranks belong to several IMPI clients keeps their
 * map (c->clients) for the collectives, and cannot make new communicators: LAM cannot.
 * Only MPI_COMM_WORLD can be such a communicator, since nothing can be made from it.
 */
#include "mpi_impl.h"
#include <stdlib.h>
#include <string.h>

struct mpi_comm_s mpi_comm_world_, mpi_comm_self_;
static int next_ctx = 4;

/* The constructors' refusal on a communicator that spans IMPI clients (LAM's user guide:
 * no communicator constructor works across clients). Every member of the parent refuses
 * alike, before any message, so nobody waits for the others. */
#define SPANS(comm, fn)                                                                            \
    do {                                                                                           \
        if ((comm)->clients)                                                                       \
            return err_raise(comm, world_refuse(fn, "a new communicator"), fn);                    \
    } while (0)

/* Task context: c's fields from its group; MPI_ERR_NO_MEM if the client map failed. */
static int comm_setup(MPI_Comm c, MPI_Group g, int my_world, uint32_t ctx, const char *name)
{
    int err;
    c->clients = world_client_map(g->world, g->size, &err);
    c->group = g;
    c->size = g->size;
    c->rank = grp_rank_of(g, my_world);
    c->ctx = ctx;
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->refs = 1;
    strncpy(c->name, name, sizeof c->name - 1);
    return err;
}

/* Task context (MPI_Init). */
int comm_init_world(int rank, int size)
{
    MPI_Group w = grp_new(size), s = grp_new(1);
    if (!w || !s)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < size; i++)
        w->world[i] = i;
    s->world[0] = rank;
    int rc = comm_setup(&mpi_comm_world_, w, rank, 0, "MPI_COMM_WORLD");
    if (rc == MPI_SUCCESS)
        rc = comm_setup(&mpi_comm_self_, s, rank, 2, "MPI_COMM_SELF");
    mpi_comm_world_.predefined = mpi_comm_self_.predefined = 1;
    return rc;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_rank");
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_size");
    *size = comm->size;
    return MPI_SUCCESS;
}

/* Collective over parent: a context id every member agrees on. */
static int agree_ctx(MPI_Comm parent, uint32_t *ctx)
{
    int v = next_ctx;
    int rc = coll_allreduce_max_int(&v, parent);
    if (rc != MPI_SUCCESS)
        return rc;
    *ctx = (uint32_t)v;
    next_ctx = v + 2;
    return MPI_SUCCESS;
}

/* A communicator of group g (taken over), or MPI_COMM_NULL if we are not in it. */
static int comm_make(MPI_Group g, uint32_t ctx, MPI_Comm parent, MPI_Comm *out)
{
    int me = mpi_comm_world_.rank;
    if (grp_rank_of(g, me) == MPI_UNDEFINED) {
        grp_release(g);
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    MPI_Comm c = calloc(1, sizeof *c);
    if (!c) {
        grp_release(g);
        return MPI_ERR_NO_MEM;
    }
    if (comm_setup(c, g, me, ctx, "") != MPI_SUCCESS) {
        grp_release(g);
        free(c);
        return MPI_ERR_NO_MEM;
    }
    c->errh = parent->errh; /* MPI: a new communicator inherits the parent's handler */
    err_retain(c->errh);
    *out = c;
    return MPI_SUCCESS;
}

/* Task context; see mpi_impl.h (intercomm.c makes its communicators with it). */
int comm_new(MPI_Group g, uint32_t ctx, MPI_Comm parent, MPI_Comm *out)
{
    return comm_make(g, ctx, parent, out);
}

/* Task context; see mpi_impl.h. */
uint32_t comm_ctx_candidate(void)
{
    return (uint32_t)next_ctx;
}

/* Task context; see mpi_impl.h. */
void comm_ctx_taken(uint32_t ctx)
{
    if ((int)ctx + 2 > next_ctx)
        next_ctx = (int)ctx + 2;
}

/* Task context (MPI_Comm_dup): what a duplicate inherits besides the group: attributes
 * through their copy callbacks, and the topology. On failure *dup is freed. */
static int comm_dup_extras(MPI_Comm comm, MPI_Comm *dup)
{
    int rc = attr_copy_all(comm, *dup);
    if (rc == MPI_SUCCESS)
        rc = topo_copy(comm, *dup);
    if (rc != MPI_SUCCESS)
        MPI_Comm_free(dup); /* MPI-3.1 6.7.2: a failed copy leaves the program MPI_COMM_NULL */
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    if (!mpi_ready("MPI_Comm_dup"))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_dup");
    SPANS(comm, "MPI_Comm_dup");
    uint32_t ctx;
    int rc;
    if (comm->remote) {
        rc = inter_dup(comm, newcomm);
    } else {
        rc = agree_ctx(comm, &ctx);
        if (rc == MPI_SUCCESS) {
            grp_retain(comm->group);
            rc = comm_make(comm->group, ctx, comm, newcomm);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = comm_dup_extras(comm, newcomm);
    return err_raise(comm, rc, "MPI_Comm_dup");
}

/* Task context, collective over comm. HAZARD: not overlapped: the duplicate is made
 * before the call returns (a blocking MPI_Comm_dup) and *request is already complete. A
 * program that makes a member's entry into MPI_Comm_idup wait for another member's later
 * communication (legal with a truly non-blocking idup) deadlocks here. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    if (!request)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Comm_idup");
    MPI_Request r = req_alloc();
    if (!r)
        return err_raise(comm, MPI_ERR_NO_MEM, "MPI_Comm_idup");
    int rc = MPI_Comm_dup(comm, newcomm);
    if (rc != MPI_SUCCESS) {
        req_discard(r);
        return rc;
    }
    r->kind = REQ_SEND; /* a request with nothing left to do: done, no status to fill */
    r->comm = comm;
    r->e.done = 1;
    *request = r;
    return MPI_SUCCESS;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info;
    return MPI_Comm_dup(comm, newcomm);
}

/* Sort helper for Comm_split: (key, parent rank) of the members of one color. */
struct split_ent {
    int key, rank;
};

static int split_cmp(const void *a, const void *b)
{
    const struct split_ent *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Task context; see mpi_impl.h. */
int comm_split_group(const int *all, MPI_Group from, int color, MPI_Group *out)
{
    int n = from->size, m = 0;
    struct split_ent *ents = malloc(sizeof *ents * (size_t)n + 1);
    if (!ents)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        if (all[2 * i] == color)
            ents[m++] = (struct split_ent){all[2 * i + 1], i};
    qsort(ents, (size_t)m, sizeof *ents, split_cmp);
    MPI_Group g = m > 0 ? grp_new(m) : NULL;
    for (int i = 0; g && i < m; i++)
        g->world[i] = from->world[ents[i].rank];
    free(ents);
    *out = g;
    return m > 0 && !g ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    if (!mpi_ready("MPI_Comm_split"))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_split");
    SPANS(comm, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return err_raise(comm, MPI_ERR_ARG, "MPI_Comm_split");
    if (comm->remote)
        return err_raise(comm, inter_split(comm, color, key, newcomm), "MPI_Comm_split");
    int n = comm->size, mine[2] = {color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)n);
    uint32_t ctx;
    int rc = all ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = coll_allgather_ints(mine, 2, all, comm);
    if (rc == MPI_SUCCESS)
        rc = agree_ctx(comm, &ctx); /* one id for every color: the groups are disjoint */
    if (rc == MPI_SUCCESS && color == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
    } else if (rc == MPI_SUCCESS) {
        MPI_Group g;
        rc = comm_split_group(all, comm->group, color, &g);
        if (rc == MPI_SUCCESS)
            rc = comm_make(g, ctx, comm, newcomm);
    }
    free(all);
    return err_raise(comm, rc, "MPI_Comm_split");
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    if (!mpi_ready("MPI_Comm_create"))
        return MPI_ERR_OTHER;
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_create");
    SPANS(comm, "MPI_Comm_create");
    if (!group)
        return err_raise(comm, MPI_ERR_GROUP, "MPI_Comm_create");
    for (int i = 0; i < group->size; i++)
        if (grp_rank_of(comm->group, group->world[i]) == MPI_UNDEFINED)
            return err_raise(comm, MPI_ERR_GROUP, "MPI_Comm_create");
    if (comm->remote) {
        /* Each side names a subgroup of its own group: a split with one color, ordered
         * as that subgroup orders its members. */
        int r = grp_rank_of(group, mpi_comm_world_.rank);
        return err_raise(comm,
                         inter_split(comm, r == MPI_UNDEFINED ? MPI_UNDEFINED : 0, r, newcomm),
                         "MPI_Comm_create");
    }
    uint32_t ctx;
    int rc = agree_ctx(comm, &ctx);
    if (rc == MPI_SUCCESS) {
        grp_retain(group);
        rc = comm_make(group, ctx, comm, newcomm);
    }
    return err_raise(comm, rc, "MPI_Comm_create");
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if (!comm || !comm_valid(*comm) || (*comm)->predefined)
        return err_raise(comm ? *comm : 0, MPI_ERR_COMM, "MPI_Comm_free");
    MPI_Comm c = *comm;
    int rc = attr_delete_all(c); /* MPI: the delete callbacks run at MPI_Comm_free */
    if (rc != MPI_SUCCESS)
        return err_raise(c, rc, "MPI_Comm_free");
    if (--c->refs == 0) {
        topo_free(c->topo);
        if (c->remote)
            grp_release(c->remote);
        if (c->local)
            MPI_Comm_free(&c->local);
        grp_release(c->group);
        err_release(c->errh);
        free(c->clients);
        free(c);
    }
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_group");
    grp_retain(comm->group);
    *group = comm->group;
    return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    if (!comm_valid(comm1) || !comm_valid(comm2))
        return err_raise(comm_valid(comm1) ? comm2 : comm1, MPI_ERR_COMM, "MPI_Comm_compare");
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int g;
    MPI_Group_compare(comm1->group, comm2->group, &g);
    *result = g == MPI_IDENT ? MPI_CONGRUENT : g == MPI_SIMILAR ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_set_name");
    strncpy(comm->name, name, sizeof comm->name - 1);
    comm->name[sizeof comm->name - 1] = 0;
    return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    if (!comm_valid(comm))
        return err_raise(comm, MPI_ERR_COMM, "MPI_Comm_get_name");
    strcpy(name, comm->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
