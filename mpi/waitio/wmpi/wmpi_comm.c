/*
 * wmpi_comm.c: the communicators the layer knows (universe, pbhead, any other group seen
 * by a collective), the two universe constructors, collective tags, and blocking WaitIO
 * transfers. Not thread-safe: like the base API, one thread per process calls the layer.
 */
#include <stdlib.h>
#include <string.h>

#include "wmpi_int.h"

/* Every communicator the layer has seen; a process has few, so a list is enough. */
static struct wmpi_comm **wmpi_comms;
static int wmpi_ncomms;

/* Lookup or NULL. */
static struct wmpi_comm *wmpi_comm_find(waitio_group_t group)
{
    for (int i = 0; i < wmpi_ncomms; i++)
        if (wmpi_comms[i]->group == group)
            return wmpi_comms[i];
    return NULL;
}

/* A new zeroed record for group, kept for the life of the process; NULL if out of
 * memory. */
static struct wmpi_comm *wmpi_comm_add(const char *call, waitio_group_t group)
{
    struct wmpi_comm *c = calloc(1, sizeof(*c));
    struct wmpi_comm **grown = realloc(wmpi_comms, (wmpi_ncomms + 1) * sizeof(*grown));

    if (!c || !grown) {
        free(c);
        if (grown)
            wmpi_comms = grown;
        wmpi_err(call, "out of memory");
        return NULL;
    }
    wmpi_comms = grown;
    c->group = group;
    c->local = MPI_COMM_NULL;
    wmpi_comms[wmpi_ncomms++] = c;
    return c;
}

/* Rank and size of group for this process; error unless it is a member. */
static int wmpi_group_place(const char *call, waitio_group_t group, int *rank, int *size)
{
    if (waitio_group_rank(group, rank) || waitio_group_size(group, size))
        return wmpi_err(call, "not a WaitIO group this process belongs to");
    if (*size < 1 || *rank < 0 || *rank >= *size)
        return wmpi_err(call, "rank %d outside group of size %d", *rank, *size);
    return 0;
}

/* Every entry point: the record of group; groups built by the program itself (or pbhead)
 * become flat records on first use. */
struct wmpi_comm *wmpi_comm_get(const char *call, waitio_group_t group)
{
    struct wmpi_comm *c;
    int rank, size;

    if (!group) {
        wmpi_err(call, "NULL communicator");
        return NULL;
    }
    c = wmpi_comm_find(group);
    if (c)
        return c;
    if (wmpi_group_place(call, group, &rank, &size))
        return NULL;
    c = wmpi_comm_add(call, group);
    if (!c)
        return NULL;
    c->kind = WMPI_FLAT;
    c->rank = rank;
    c->size = size;
    return c;
}

/* Collective entry points, on every member in the same order: a tag no user message and
 * no other collective phase uses. */
waitio_tag_t wmpi_next_tag(struct wmpi_comm *c)
{
    return WMPI_COLL_TAG_BIT | (c->seq++ & WMPI_COLL_SEQ_MASK);
}

/* Universe collectives: the PB of universe rank r (0 <= r < size). */
int wmpi_pb_of(const struct wmpi_comm *c, int r)
{
    int pb = 0;

    while (pb + 1 < c->npb && c->king[pb + 1] <= r)
        pb++;
    return pb;
}

/* Collectives: isend + wait. */
int wmpi_wsend(const char *call, waitio_group_t g, int dst, const void *buf, size_t len,
               waitio_tag_t tag)
{
    waitio_req_t req;

    /* waitio_isend takes a char * but only reads a send buffer. */
    if (waitio_isend(g, dst, (char *)buf, len, tag, &req) || waitio_wait(&req))
        return wmpi_err(call, "WaitIO send of %zu bytes to rank %d failed", len, dst);
    return 0;
}

/* Collectives: irecv + wait. */
int wmpi_wrecv(const char *call, waitio_group_t g, int src, void *buf, size_t len, waitio_tag_t tag)
{
    waitio_req_t req;

    if (waitio_irecv(g, src, buf, len, tag, &req) || waitio_wait(&req))
        return wmpi_err(call, "WaitIO receive of %zu bytes from rank %d failed", len, src);
    return 0;
}

/* Collectives: posts one transfer; buf is the caller's until the request completes. */
int wmpi_post(const char *call, int send, waitio_group_t g, int peer, void *buf, size_t len,
              waitio_tag_t tag, waitio_req_t *req)
{
    int rc = send ? waitio_isend(g, peer, buf, len, tag, req)
                  : waitio_irecv(g, peer, buf, len, tag, req);

    if (rc)
        return wmpi_err(call, "posting a WaitIO %s of %zu bytes with rank %d failed",
                        send ? "send" : "receive", len, peer);
    return 0;
}

/* Collectives: completes n requests the caller posted (all of them, whatever fails). */
int wmpi_wait_each(const char *call, waitio_req_t *reqs, int n)
{
    int failed = 0;

    for (int i = 0; i < n; i++)
        if (waitio_wait(&reqs[i]))
            failed++;
    if (failed)
        return wmpi_err(call, "%d of %d WaitIO transfers failed", failed, n);
    return 0;
}

/* Any caller of the local MPI: error naming the MPI call unless rc is MPI_SUCCESS. */
int wmpi_mpi_ok(const char *call, const char *what, int rc)
{
    if (rc != MPI_SUCCESS)
        return wmpi_err(call, "local %s failed (%d)", what, rc);
    return 0;
}

/* Filters of the two constructors, with the published (PB id, MPI rank) arguments. */
static int wmpi_filter_all(int pbid, int n)
{
    return 1;
}

static int wmpi_filter_head(int pbid, int n)
{
    return n == 0;
}

/* Both constructors: WaitIO must be up. waitio_create_universe initialises it itself
 * (test-mpi.c never calls waitio_init), but a program may have called waitio_init first
 * (the Fortran WMPI_Init does): the PB count is only known after a successful init, so
 * its absence means "not initialised yet". */
static int wmpi_ensure_init(const char *call)
{
    int flag = 0, npb = 0;

    if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag)
        return wmpi_err(call, "MPI_Init must come first");
    if (waitio_pb_size(&npb) == 0 && npb > 0)
        return 0;
    if (waitio_init(WMPI_INIT_TIMEOUT_S))
        return wmpi_err(call, "waitio_init failed");
    return 0;
}

/* Both constructors: a group of every PB, members chosen by filter, PB blocks in PB id
 * order, in *gp (NULL if the base library refused it, or gives non-members NULL).
 * Non-zero only when WaitIO could not be started or memory ran out. */
static int wmpi_build_group(const char *call, waitio_filter_func_t filter, int *npbp,
                            waitio_group_t *gp)
{
    waitio_filter_func_t *func;
    int *order, npb = 0, rc = 1;

    *gp = NULL;
    if (wmpi_ensure_init(call))
        return 1;
    if (waitio_pb_size(&npb) || npb < 1)
        return wmpi_err(call, "waitio_pb_size failed");
    func = calloc(npb, sizeof(*func));
    order = calloc(npb, sizeof(*order));
    if (func && order) {
        for (int i = 0; i < npb; i++) {
            func[i] = filter;
            order[i] = i + 1; /* order[] values rank the PBs, 1-based as the examples do */
        }
        *gp = waitio_create_group(0, func, order);
        rc = 0;
    } else {
        wmpi_err(call, "out of memory");
    }
    free(func);
    free(order);
    *npbp = npb;
    return rc;
}

/* Fills the King tables of a universe record: PB sizes, King ranks (prefix sums), and the
 * local communicator; checks the base library numbered ranks as PB blocks. */
static int wmpi_universe_setup(const char *call, struct wmpi_comm *c, int npb)
{
    int *sizes = calloc(npb, sizeof(*sizes));
    int rc = 1;

    c->king = calloc(npb + 1, sizeof(*c->king));
    if (!sizes || !c->king) {
        wmpi_err(call, "out of memory");
        goto out;
    }
    if (waitio_get_nprocs(sizes) != npb || waitio_pb_rank(&c->pbid)) {
        wmpi_err(call, "waitio_get_nprocs/waitio_pb_rank failed");
        goto out;
    }
    c->npb = npb;
    for (int i = 0; i < npb; i++)
        c->king[i + 1] = c->king[i] + sizes[i];
    if (wmpi_mpi_ok(call, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &c->local)))
        goto out;
    MPI_Comm_rank(c->local, &c->lrank);
    MPI_Comm_size(c->local, &c->lsize);
    if (c->king[npb] != c->size || c->lsize != sizes[c->pbid] ||
        c->rank != c->king[c->pbid] + c->lrank) {
        wmpi_err(call, "universe rank %d of %d does not match PB %d rank %d of %d", c->rank,
                 c->size, c->pbid, c->lrank, c->lsize);
        goto out;
    }
    c->kind = WMPI_UNIVERSE;
    rc = 0;
out:
    free(sizes);
    return rc;
}

/* waitio_create_universe: collective over every process of every PB, after MPI_Init;
 * *commp is NULL after a failure. */
int waitio_create_universe(WAITIO_MPI_Comm *commp)
{
    static const char call[] = "waitio_create_universe";
    struct wmpi_comm *c;
    waitio_group_t g;
    int npb = 0;

    if (!commp)
        return wmpi_err(call, "NULL communicator pointer");
    *commp = NULL; /* what the published test-mpi.c checks for failure */
    if (wmpi_build_group(call, wmpi_filter_all, &npb, &g))
        return 1;
    if (!g)
        return wmpi_err(call, "waitio_create_group failed");
    c = wmpi_comm_get(call, g);
    if (!c || wmpi_universe_setup(call, c, npb))
        return 1;
    *commp = g;
    return 0;
}

/* waitio_create_universe_pbhead: collective; rank 0 of each PB becomes group rank PB id.
 * Other processes get what the base library gives non-members (possibly NULL) and 0: in
 * the published SYStest every rank calls this but only rank 0 uses the result. */
int waitio_create_universe_pbhead(WAITIO_MPI_Comm *commp)
{
    static const char call[] = "waitio_create_universe_pbhead";
    waitio_group_t g;
    int npb = 0, lrank = 0;

    if (!commp)
        return wmpi_err(call, "NULL communicator pointer");
    *commp = NULL; /* what the published test-mpi.c checks for failure */
    if (wmpi_build_group(call, wmpi_filter_head, &npb, &g))
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &lrank);
    if (lrank == 0) {
        struct wmpi_comm *c;
        int pbid = -1;

        if (!g)
            return wmpi_err(call, "waitio_create_group failed");
        c = wmpi_comm_get(call, g);
        if (!c || waitio_pb_rank(&pbid) || c->rank != pbid || c->size != npb)
            return wmpi_err(call, "head of PB %d did not get group rank %d of %d", pbid, pbid, npb);
    }
    *commp = g;
    return 0;
}
