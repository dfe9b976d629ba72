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

/* After completion: `bytes` packed at `packed` are unpacked to count elements at `user`. */
struct coll_unpack {
    const void *packed;
    size_t bytes;
    void *user;
    int count;
    MPI_Datatype dt;
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
    struct coll_unpack *un;
    int nun, nun_cap;
    char *temps; /* packed copies of non-contiguous buffers */
    size_t temps_used, temps_cap;
    MPI_Op op;       /* a user op (or a predefined one on a type without a kernel here) ... */
    MPI_Datatype dt; /* ... applied to elements of this type, in the rank's context */
    int err;         /* an error of such an op */
    void *owned;     /* the description's count arrays (malloc), freed with the request */
    /* IMPI (coll_run.c, "One at a time"): in comm->impi_q; not handed to the engine yet;
     * refused by the engine when its turn came (complete, with err set). */
    int impi, deferred, failed;
    struct coll_req *impi_next;
};

struct coll_req *coll_alloc(MPI_Comm comm, struct cad_coll *d, size_t temp_bytes, int nunpack,
                            int *err);
void *coll_temp(struct coll_req *q, size_t bytes);
void coll_unpack_later(struct coll_req *q, const void *packed, size_t bytes, void *user, int count,
                       MPI_Datatype dt);
void coll_free(struct coll_req *q);
int coll_issue(struct coll_req *q, struct cad_coll *d, MPI_Request *req);
int coll_issue_graph(struct coll_req *q, struct cad_graph *g, MPI_Request *req);

#endif
