/*
 * mpi_impl.h: what the files of the MPI library (mpi/lib/) share. Not installed; programs
 * include only <mpi.h>.
 *
 * The library runs in the application's partition (it is linked into every rank's image by
 * ukmpicc). Everything here is task context of the calling rank: the interrupt side of
 * MPI lives in the kernel's engine (mpi/core/, reached through the ABI table).
 *
 * Handles: every MPI handle type is a pointer to one of the structs below; predefined
 * handles (MPI_INT, MPI_SUM, MPI_COMM_WORLD, ...) are addresses of library globals, and
 * the NULL handles are (T)0. Objects made at run time come from the rank's own malloc.
 *
 * One section per file, in file-name order, each declaring what that file defines.
 * Module prefixes: attr_ attributes (attr.c), bsend_ buffered sends (bsend.c), coll_
 * collectives (coll_*.c), comm_ communicators (comm.c), dt_ datatypes (dtype*.c), err_
 * error classes and handlers (errh.c), grp_ groups (group.c), mpi_ the link to the engine
 * (init.c), op_ reductions (op.c), p2p_ point-to-point (p2p.c), req_ requests (req.c),
 * topo_ virtual topologies (topo*.c). Files with more to share among themselves have
 * their own header: coll_impl.h, dtype_impl.h, op_impl.h, topo_impl.h.
 */
#ifndef MPI_IMPL_H
#define MPI_IMPL_H
#include "mpe.h"
#include "mpi.h"
#include <stddef.h>
#include <stdint.h>

/* A step of the small-message path, inlined whatever the compiler's size heuristics say:
 * under TCG each return is an indirect jump QEMU looks up, which costs more than the
 * call's own instructions (tests/bench/pathcost.bench.sh counts the calls). */
#define MPI_HOT static inline __attribute__((always_inline))

struct coll_req;
struct attr;
struct topo;

/* attr.c */

/* Task context. MPI_Comm_dup: run the copy callbacks of from's attributes onto to (an
 * MPI error code; on failure the caller frees to). MPI_Comm_free and MPI_Finalize: run
 * the delete callbacks of all of c's attributes (the first error code, or MPI_SUCCESS). */
int attr_copy_all(MPI_Comm from, MPI_Comm to);
int attr_delete_all(MPI_Comm c);
/* The same for datatypes (MPI_Type_dup, MPI_Type_free). Weak references: dtype*.c also
 * build without attr.c (the host unit tests), and a program without attr.c linked in
 * cannot have set a type attribute; callers test the address first. */
int attr_type_copy_all(MPI_Datatype from, MPI_Datatype to) __attribute__((weak));
int attr_type_delete_all(MPI_Datatype t) __attribute__((weak));

/* bsend.c */

/* MPI_Bsend's block in the attached buffer is free again. */
void bsend_release(void *block);
/* Task context (MPI_Start of an MPI_Bsend_init request r): a buffered send of r's
 * arguments; r itself is complete at once (the data is in the buffer). MPI error code. */
int bsend_start(MPI_Request r);

/* coll_api.c */

/* Task context: MPI_Allreduce of one int with MPI_MAX on comm (context agreement). */
int coll_allreduce_max_int(int *v, MPI_Comm comm);
/* Task context: MPI_Allgather of n ints per rank on comm; all[] holds n * size. */
int coll_allgather_ints(const int *mine, int n, int *all, MPI_Comm comm);

/* coll_nb.c */

/* Task context. Start a collective as a CAD graph (arguments checked by the caller):
 * MPI error class, *req the collective's request (REQ_COLL). */
int coll_ibarrier(MPI_Comm c, MPI_Request *req);
int coll_ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c, MPI_Request *req);
int coll_ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm c, MPI_Request *req);
int coll_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                    MPI_Request *req);
int coll_iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int exclusive,
               MPI_Comm c, MPI_Request *req);
int coll_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm c, MPI_Request *req);
/* coll_api.c: the block variant of coll_ireduce_scatter, `rc` elements to every rank. */
int coll_ireduce_scatter_block(const void *sbuf, void *rbuf, int rc, MPI_Datatype dt, MPI_Op op,
                               MPI_Comm c, MPI_Request *req);

/* coll_nbv.c */

/* Task context, like coll_nb.c's. coll_igs: gather (1) or scatter (0), regular (v 0:
 * `rcount`/`scount` per rank) or v; `manydt` is the type of the root's many blocks. */
int coll_igs(int gather, int v, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
             int rcount, const int *counts, const int *displs, MPI_Datatype rdt,
             MPI_Datatype manydt, int root, MPI_Comm c, MPI_Request *req);
int coll_iallgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                    const int *counts, const int *displs, MPI_Datatype rdt, MPI_Comm c,
                    MPI_Request *req);
int coll_ialltoall(const void *sbuf, int scount, const int *scounts, const int *sdispls,
                   MPI_Datatype sdt, void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                   MPI_Datatype rdt, MPI_Comm c, MPI_Request *req);

/* coll_run.c */

/* Task context: run what the rank must run for a REQ_COLL (user ops); 1 once complete.
 * coll_finish then unpacks and frees it: MPI error class. */
int coll_poll(MPI_Request r);
int coll_finish(MPI_Request r);
/* Task context: MPI_Start of an inactive persistent collective (MPI error class); its
 * MPI_Request_free (it is freed). */
int coll_start(MPI_Request r);
void coll_discard(MPI_Request r);
/* Non-zero while coll_persist.c builds a persistent collective: built, not started. */
extern int coll_persistent;
/* From MPI_Init: UKMPI_CAD_PROGRESS, UKMPI_COLL_<KIND>, UKMPI_COLL_CHUNK. */
void coll_init_env(void);
/* Task context, in a collective call on comm: the first of its CAD_ALG_TAGS (4096) tags
 * on comm's collective context (ctx + 1), for collectives that are not CAD graphs. */
int coll_tag_block(MPI_Comm comm);

/* comm.c */

struct mpi_comm_s {
    int rank, size;    /* this rank's rank in the communicator, and its size */
    MPI_Group group;   /* group->world[i]: world rank of comm rank i */
    uint32_t ctx;      /* context id of point-to-point traffic; ctx + 1: collectives */
    uint32_t coll_seq; /* collectives started on it: each gets its own tags (coll_run.c) */
    uint8_t *clients;  /* IMPI client of each rank when it spans several (world.c), else NULL */
    struct coll_req *impi_q; /* its IMPI collectives not known complete, in order (coll_run.c) */
    MPI_Errhandler errh;
    struct attr *attrs; /* cached attributes (attr.c) */
    struct topo *topo;  /* virtual topology (topo_*.c), NULL if none */
    MPI_Group remote;   /* intercommunicator: the remote group (intercomm.c); else NULL */
    MPI_Comm local;     /* intercommunicator: an intracommunicator of the local group */
    int refs;
    int predefined; /* MPI_COMM_WORLD, MPI_COMM_SELF: never freed */
    char name[MPI_MAX_OBJECT_NAME];
};

/* Task context, from MPI_Init: MPI_COMM_WORLD and MPI_COMM_SELF for rank `rank` of `size`. */
int comm_init_world(int rank, int size);
/* Any context. 1 if comm is a live communicator (not NULL, not freed). */
static inline int comm_valid(MPI_Comm comm)
{
    return comm && comm->refs > 0;
}
/* Task context. A communicator of group g (taken over; MPI_COMM_NULL if this rank is not
 * in it) with context id ctx and parent's error handler. MPI error code. */
int comm_new(MPI_Group g, uint32_t ctx, MPI_Comm parent, MPI_Comm *out);
/* Task context. This rank's next free context id, and: ctx is taken (by an agreement the
 * caller made), move past it. */
uint32_t comm_ctx_candidate(void);
void comm_ctx_taken(uint32_t ctx);
/* Task context. MPI_Comm_split's group for `color`: all[2 i], all[2 i + 1] are the color and
 * key of rank i of `from`; members ordered by key, then rank. *out NULL if none has the
 * color. MPI error code. */
int comm_split_group(const int *all, MPI_Group from, int color, MPI_Group *out);

/* dtype.c */

/* Task context. MPI_SUCCESS, or MPI_ERR_TYPE for a null, freed or uncommitted type. */
int dt_check(MPI_Datatype dt);
/* Bytes of data in one element (MPI_Type_size). */
size_t dt_size(MPI_Datatype dt);
/* Extent and lower bound of one element. */
MPI_Aint dt_extent(MPI_Datatype dt);
MPI_Aint dt_lb(MPI_Datatype dt);
/* True lower bound and true extent: the span of the data bytes themselves, from
 * buf + dt_true_lb, for temporary buffers (count elements need
 * dt_true_extent + (count - 1) * dt_extent bytes from there). */
MPI_Aint dt_true_lb(MPI_Datatype dt);
MPI_Aint dt_true_extent(MPI_Datatype dt);
/* 1 if `count` elements starting at buf occupy exactly the bytes
 * [buf + lb, buf + lb + count * size) with no gaps, so they can be sent without packing. */
int dt_contig(MPI_Datatype dt);
/* How `count` elements of a type lie in memory, for a transfer (dt_span). */
struct dt_span {
    size_t bytes; /* count * dt_size */
    MPI_Aint lb;  /* the first byte's offset from the buffer */
    int contig;   /* the bytes are [buf + lb, buf + lb + bytes): no packing needed */
};
/* Task context. dt_check, then *s for `count` (>= 0) elements: the one call a transfer
 * makes. MPI_SUCCESS or MPI_ERR_TYPE. */
int dt_span(MPI_Datatype dt, int count, struct dt_span *s);
/* The basic type every element of dt is made of, if there is exactly one (for the
 * predefined reductions), else MPI_DATATYPE_NULL. */
MPI_Datatype dt_basic(MPI_Datatype dt);
/* Types are reference counted: MPI_Type_free drops the user's reference, a derived type
 * holds one on each inner type, and an operation that outlives its call (a pending
 * request) takes one with dt_retain and drops it with dt_release when done, so the type
 * stays valid even if the user frees it meanwhile. Predefined types ignore both. */
void dt_retain(MPI_Datatype dt);
void dt_release(MPI_Datatype dt);

/* dtype_flat.c */

/* Pack `count` elements from `buf` into `out` (count * dt_size bytes, caller's buffer). */
void dt_pack(const void *buf, int count, MPI_Datatype dt, void *out);
/* Unpack the first `bytes` bytes of packed data `in` into `count` elements at `buf`;
 * bytes <= count * dt_size; a trailing partial basic element is not written. */
void dt_unpack(const void *in, size_t bytes, void *buf, int count, MPI_Datatype dt);

/* errh.c */

/* Report error `code` (not MPI_SUCCESS) raised by MPI function `fn` ("MPI_Send") on `comm`
 * (NULL: the world's handler): MPI_ERRORS_ARE_FATAL prints "MPI error in <fn>: <string>"
 * and aborts the job; MPI_ERRORS_RETURN does nothing; user handlers are called. */
void err_report(MPI_Comm comm, int code, const char *fn);
/* Task context. err_report for an error; returns code, so functions end with
 * `return err_raise(comm, rc, "MPI_X");`. MPI_SUCCESS passes through without a call
 * (every MPI function ends here: see tests/bench/pathcost.bench.sh). */
static inline int err_raise(MPI_Comm comm, int code, const char *fn)
{
    if (code != MPI_SUCCESS)
        err_report(comm, code, fn);
    return code;
}
/* Any context. The MPI error class of engine error `e`: 0 or a positive MPE_E* code (as in
 * mpe_req.err; negate the negative return values of the engine's calls). */
int err_engine_error(int e);
static inline int err_engine_class(int e)
{
    return e == MPE_OK ? MPI_SUCCESS : err_engine_error(e);
}
/* For functions the library does not implement: prints "MPI_X is not implemented" and
 * aborts the job (a silent wrong answer is worse). */
int err_unimplemented(const char *fn) __attribute__((noreturn));
/* An error handler object is reference counted like a type: a communicator holds one on
 * its errh (comm_ takes it with err_retain when it sets or copies errh, drops it with
 * err_release when freeing the communicator); predefined handlers ignore both. A NULL
 * comm->errh counts as MPI_ERRORS_ARE_FATAL. */
void err_retain(MPI_Errhandler h);
void err_release(MPI_Errhandler h);

/* errh_user.c */

/* Task context. 1 if code is one the program added (MPI_Add_error_class/code): *cls its
 * class, *str its string (NULL if none was set); else 0. */
int err_user_code(int code, int *cls, const char **str);
/* The highest error code in use: the MPI_LASTUSEDCODE attribute. */
int err_last_code(void);

/* group.c */

/* MPI_GROUP_EMPTY (size 0) is a predefined group: retain and release ignore it, and group
 * operations with an empty result return it. Another group that is not from grp_new (a
 * static world group, say) must have a reference its owner never drops. MPI_Group_rank
 * answers with mpi_comm_world_.rank, the caller's world rank. */
struct mpi_group_s {
    int size;
    int refs;   /* freed when it drops to 0; predefined groups never are */
    int *world; /* world[i]: MPI_COMM_WORLD rank of the group's rank i */
};
/* A new group of n ranks (world[] left for the caller to fill); NULL if out of memory. */
MPI_Group grp_new(int n);
void grp_retain(MPI_Group g);
void grp_release(MPI_Group g);
/* Rank of world rank w in g, or MPI_UNDEFINED. */
int grp_rank_of(MPI_Group g, int w);

/* init.c */

/* The node's engine (the kernel's, through the ABI table); set by MPI_Init. */
extern const struct mpe_ops *mpi_engine;
/* 1 between MPI_Init and MPI_Finalize (set by them only). */
extern int mpi_live;
/* Task context. Reports `fn` called outside MPI_Init..MPI_Finalize and aborts. */
int mpi_not_ready(const char *fn);
/* Task context. 1 between MPI_Init and MPI_Finalize; else reports `fn` called outside and
 * aborts. Every MPI function starts here: the common case costs no call. */
static inline int mpi_ready(const char *fn)
{
    return mpi_live || mpi_not_ready(fn);
}
/* One wait's state for mpi_idle: zero it (MPI_WAIT_INIT) at the start of each wait. */
struct mpi_wait {
    uint64_t since; /* the clock at the wait's first reading, 0 before */
    uint32_t looks; /* calls of mpi_idle so far */
};
#define MPI_WAIT_INIT                                                                              \
    {                                                                                              \
        0, 0                                                                                       \
    }
/* Task context: one step of a wait loop (poll briefly, then sleep until woken). */
void mpi_idle(struct mpi_wait *w);
/* Task context: a test found nothing done: the platform's turn (mpe_ops.poll: the Linux
 * library without a network thread reads its sockets there; nothing on the unikernel),
 * after which the caller looks once more. */
static inline void mpi_poll(void)
{
    mpi_engine->poll();
}
/* End the whole job with exit code `code` (what MPI_Abort(MPI_COMM_WORLD, code) does).
 * Must not return. Host tests provide a stub. */
void mpi_abort_hook(int code) __attribute__((noreturn));

/* intercomm.c */

/* Task context, collective over both groups of ic: MPI_Comm_dup of an intercommunicator
 * (MPI error code). */
int inter_dup(MPI_Comm ic, MPI_Comm *out);
/* Task context, collective over both groups of ic: MPI_Comm_split of an
 * intercommunicator (color >= 0 or MPI_UNDEFINED, checked). MPI error code. */
int inter_split(MPI_Comm ic, int color, int key, MPI_Comm *out);
/* Task context: stops the job ("fn on an intercommunicator is not implemented") if comm
 * is an intercommunicator; returns otherwise. */
void inter_refuse(MPI_Comm comm, const char *fn);

/* intercomm_coll.c. Task context, collective over both groups of ic (an
 * intercommunicator; coll_api.c checked the arguments it checks for any communicator):
 * MPI error code. */
int inter_barrier(MPI_Comm ic);
int inter_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm ic);
int inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm ic);
int inter_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm ic);
int inter_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                    MPI_Datatype rdt, MPI_Comm ic);
/* Task context, on ic's collective context: send and receive one message at once with
 * remote rank `peer` (the leaders' swap). MPI error code. */
int inter_swap1(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int peer, int tag, MPI_Comm ic);
/* Task context: MPI's root rules for a rooted collective on ic: 1 at the root (MPI_ROOT),
 * 0 for the root's group's others (MPI_PROC_NULL), -1 in the other group (a valid remote
 * root), or MPI_ERR_ROOT. */
int inter_root_role(int root, MPI_Comm ic);
/* Task context: room for count elements of dt, the pointer to pass as the buffer; free
 * *base. NULL if out of memory. */
void *inter_tmp_alloc(int count, MPI_Datatype dt, void **base);

/* intercomm_blocks.c: the block collectives on intercommunicators (arguments as for
 * intercomm_coll.c's). gather = 1: MPI_Gather(v), 0: MPI_Scatter(v) (counts NULL: the
 * regular form); inter_alltoall with types: MPI_Alltoallw; inter_reduce_scatter with
 * counts NULL: MPI_Reduce_scatter_block. */
int inter_gs(int gather, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
             const int *counts, const int *displs, MPI_Datatype rdt, int root, MPI_Comm ic);
int inter_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int *counts,
                     const int *displs, MPI_Datatype rdt, MPI_Comm ic);
int inter_alltoall(const void *sbuf, int scount, const int *scounts, const int *sdispls,
                   MPI_Datatype sdt, const MPI_Datatype *stypes, void *rbuf, int rcount,
                   const int *rcounts, const int *rdispls, MPI_Datatype rdt,
                   const MPI_Datatype *rtypes, MPI_Comm ic);
int inter_reduce_scatter(const void *sbuf, void *rbuf, int count, const int *counts,
                         MPI_Datatype dt, MPI_Op op, MPI_Comm ic);

/* topo.c */

/* Task context. MPI_Comm_dup: give to a copy of from's topology (MPI error code).
 * MPI_Comm_free: release one (NULL is fine). */
int topo_copy(MPI_Comm from, MPI_Comm to);
void topo_free(struct topo *t);

/* world.c: the IMPI clients MPI_COMM_WORLD is made of (one outside an IMPI job). */
#define WORLD_MAX_CLIENTS 32
void world_init(int size);
void world_set(int n, const int32_t *first, int size);
int world_nclients(void);
int world_client(int world);
/* The IMPI client of each of n world ranks (malloc'd, the caller frees it), or NULL when
 * they are all in one client; *err is MPI_ERR_NO_MEM (else MPI_SUCCESS). */
uint8_t *world_client_map(const int *world, int n, int *err);
/* What a call that LAM cannot do across IMPI clients returns, having said so on stderr:
 * MPI_ERR_UNSUPPORTED_OPERATION. `fn` names the call, `what` the thing refused. */
int world_refuse(const char *fn, const char *what);

/* op.c */

/* inout[i] = in[i] op inout[i] for `count` elements of dt (MPI's order: `in` is the
 * earlier operand). MPI_SUCCESS, or MPI_ERR_OP when op is not defined on dt.
 * Layout: both buffers are laid out as `count` elements of dt in user memory,
 * exactly as MPI_Reduce_local's, gaps included: for a non-contiguous dt op_apply visits
 * the runs of basic elements the type is made of and leaves the gaps untouched; user
 * functions get the buffers, count and dt unchanged. For data that is packed (as it
 * arrives from the network), use op_apply_packed instead.
 * MPI_REPLACE (copies the data bytes) and MPI_NO_OP work on every type, for one-sided
 * accumulate; op_check rejects them for reductions. */
int op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
/* The same on packed data: both buffers hold count * dt_size(dt) bytes as dt_pack
 * produces them. Predefined ops run directly on the packed basic elements; user ops get
 * the data unpacked into temporaries laid out as dt (malloc; MPI_ERR_NO_MEM if that
 * fails) and the result packed back. */
int op_apply_packed(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
int op_commutative(MPI_Op op);
/* MPI_SUCCESS, or MPI_ERR_OP (null/freed op) / MPI_ERR_TYPE (predefined op, type it is
 * not defined on). Collectives call it before moving any data. */
int op_check(MPI_Op op, MPI_Datatype dt);
/* A pending non-blocking reduction holds its op like dt_retain holds a type (MPI_Op_free
 * may come first). Predefined ops ignore both. */
void op_retain(MPI_Op op);
void op_release(MPI_Op op);

/* p2p.c */
/* Task context: st (if any) becomes MPI's empty status (source MPI_PROC_NULL). */
void p2p_null_status(MPI_Status *st);

/* Task context. Start a send or receive on comm's point-to-point context (ctxoff 0) or
 * its collective context (ctxoff 1). MPI error class, *req set. */
int p2p_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              int ctxoff, int flags, MPI_Request *req);
int p2p_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, int ctxoff,
              MPI_Request *req);
/* Start an inactive persistent request again. */
int p2p_start(MPI_Request r);

/* req.c */

enum req_kind { REQ_SEND = 1, REQ_RECV, REQ_NULL_PROC, REQ_COLL };

struct mpi_req_s {
    struct mpe_req e; /* the engine's part: the engine writes it until e.done */
    uint8_t kind;
    uint8_t persistent; /* MPI_Send_init / MPI_Recv_init */
    uint8_t active;     /* persistent: started and not yet completed by a wait/test */
    uint8_t freed;      /* MPI_Request_free while active: reclaim once done */
    uint8_t pbuffered;  /* MPI_Bsend_init: each start is a buffered send (bsend.c) */
    MPI_Comm comm;
    void *tmp;  /* packed copy of a non-contiguous buffer (ours, malloc) */
    void *ubuf; /* receive: where tmp is unpacked to */
    int ucount;
    MPI_Datatype dt;
    void *bsend; /* MPI_Bsend: its block in the attached buffer */
    /* persistent requests: the arguments to start again with */
    const void *pbuf;
    int pcount, peer, ptag, pflags, pkind;
    MPI_Datatype pdt;
    struct mpi_req_s *next; /* free list / detached list */
    struct coll_req *coll;  /* REQ_COLL: the running collective (coll_run.c) */
};

/* Task context. A zeroed request (recycled or malloc), NULL if out of memory. */
MPI_Request req_alloc(void);
/* Give back a request that was never started. */
void req_discard(MPI_Request r);
/* Task context. Wait for *req, fill st (may be NULL), release it; MPI error class. */
int req_wait(MPI_Request *req, MPI_Status *st);
/* From MPI_Finalize: wait for requests the program freed while they were active. */
void req_finalize(void);
/* Any context. The status of a completed receive e whose MPI error class is rc (st may be
 * MPI_STATUS_IGNORE). */
static inline void req_recv_status(MPI_Status *st, const struct mpe_req *e, int rc)
{
    if (!st)
        return;
    st->MPI_SOURCE = e->src;
    st->MPI_TAG = e->tag;
    st->mpi_count_ = e->count;
    st->mpi_cancelled_ = e->cancelled;
    st->MPI_ERROR = rc;
}

#endif
