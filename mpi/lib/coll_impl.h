/*
 * coll_impl.h: what the collective files of the library share (coll_run.c: requests and
 * graphs; coll_nb.c: the MPI_I* entry points; coll_api.c: the blocking ones). Task
 * context of the calling rank throughout.
 */
#ifndef MPI_COLL_IMPL_H
#define MPI_COLL_IMPL_H
#include "cad.h"
#include "cad_alg.h"
#include "mpi_impl.h"

/* A move between a user's buffer and its packed copy among the request's temporaries: with
 * `in`, count elements at `user` are packed to `packed` at every start (the graph reads
 * them; with dt NULL, `bytes` are copied); otherwise `bytes` packed at `packed` are
 * unpacked to `user` after completion (the graph wrote them). A persistent collective repeats its moves at each MPI_Start. */
struct coll_move {
    void *packed;
    size_t bytes;
    void *user;
    int count;
    MPI_Datatype dt;
    int in;
};

/* One collective while it runs; everything lives in the one block `raw` (coll_run.c). */
struct coll_req {
    void *raw;
    MPI_Comm comm;
    void *gmem; /* the graph */
    size_t gbytes;
    struct mpe_cad *run;
    void *tmp; /* the algorithm's scratch */
    struct cad_plan plan;
    struct cad_coll d; /* the description, for the local copies at each start (its arrays
                        * are not read after the build) */
    struct coll_move *mv;
    int nmv, nmv_cap;
    char *temps; /* packed copies of non-contiguous buffers */
    size_t temps_used, temps_cap;
    MPI_Op op;       /* a user op (or a predefined one on a type without a kernel here) ... */
    MPI_Datatype dt; /* ... applied to elements of this type, in the rank's context */
    int err;         /* an error of such an op */
    void *owned;     /* the description's count arrays (malloc), freed with the request */
    /* IMPI (coll_run.c, "One at a time"): runs LAM's algorithms one at a time; in
     * comm->impi_q now; not handed to the engine yet; refused by the engine when its turn
     * came (complete, with err set). */
    int lam, impi, deferred, failed;
    struct coll_req *impi_next;
};

struct coll_req *coll_alloc(MPI_Comm comm, struct cad_coll *d, size_t temp_bytes, int nmoves,
                            int *err);
void *coll_temp(struct coll_req *q, size_t bytes);
void coll_pack_at_start(struct coll_req *q, const void *user, int count, MPI_Datatype dt,
                        void *packed);
void coll_copy_at_start(struct coll_req *q, const void *from, size_t bytes, void *to);
void coll_unpack_later(struct coll_req *q, const void *packed, size_t bytes, void *user, int count,
                       MPI_Datatype dt);
void coll_free(struct coll_req *q);
int coll_issue(struct coll_req *q, struct cad_coll *d, MPI_Request *req);
int coll_issue_graph(struct coll_req *q, struct cad_graph *g, MPI_Request *req);

/* coll_check()'s root for the collectives that have none: a value no MPI rank constant
 * (MPI_ROOT, MPI_PROC_NULL, ...) takes, so that a root argument never passes as "none". */
#define NOROOT (-100)

/* The MPI entry points' checks (coll_api.c, coll_persist.c). Checks common to every
 * collective: the library is up, the communicator is live, the root (if any: root !=
 * NOROOT means "check it") names a rank. */
static inline int coll_check(MPI_Comm c, int root, const char *fn)
{
    if (!mpi_ready(fn))
        return MPI_ERR_OTHER;
    if (!comm_valid(c))
        return MPI_ERR_COMM;
    inter_refuse(c, fn);
    if (root != NOROOT && (root < 0 || root >= c->size))
        return MPI_ERR_ROOT;
    return MPI_SUCCESS;
}

static inline int coll_check_buf(int count, MPI_Datatype dt)
{
    return count < 0 ? MPI_ERR_COUNT : dt_check(dt);
}

#define CHECK(c, root, fn)                                                                         \
    do {                                                                                           \
        int rc_ = coll_check(c, root, fn);                                                         \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return err_raise(c, rc_, fn);                                                          \
    } while (0)
#define CHECKB(c, count, dt, fn)                                                                   \
    do {                                                                                           \
        int rc_ = coll_check_buf(count, dt);                                                       \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return err_raise(c, rc_, fn);                                                          \
    } while (0)
#define CHECKOP(c, op, dt, fn)                                                                     \
    do {                                                                                           \
        int rc_ = op_check(op, dt);                                                                \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return err_raise(c, rc_, fn);                                                          \
    } while (0)

/* An MPI_*_init: `call`, a coll_i* start, under coll_persistent: built, not started. */
#define PERSIST(c, fn, call)                                                                       \
    do {                                                                                           \
        coll_persistent = 1;                                                                       \
        int rc_ = (call);                                                                          \
        coll_persistent = 0;                                                                       \
        return err_raise(c, rc_, fn);                                                              \
    } while (0)

#endif
