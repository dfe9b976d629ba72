/*
 * cad_alg.h: the collective algorithms, each written once as a CAD graph builder (issue 6;
 * ARCHITECTURE.md decision 9). The MPI library (mpi/lib/coll_*.c) describes one rank's part
 * of a collective in bytes (struct cad_coll), asks for a plan (graph capacity and scratch
 * size, and which algorithm when the caller left it to us), gives the memory, and builds.
 * Blocking and non-blocking collectives both come here: a blocking one is a graph + wait.
 *
 * Data is always packed bytes: the library packs non-contiguous datatypes before and
 * unpacks after, and maps a reduction's datatype to a CAD_T_* element type (or CAD_OP_USER
 * with CAD_T_DERIVED when no predefined op/type fits).
 *
 * Messages: every SEND/RECV goes on context `ctx` with a tag in [tag, tag + CAD_ALG_TAGS);
 * two messages between the same pair of ranks in one collective never share a tag, so they
 * match correctly whatever order they are posted in. Concurrent collectives on one
 * communicator get disjoint tag ranges from the library (MPI orders collectives per
 * communicator, so every rank numbers them alike).
 *
 * Reductions: a CALC computes inout[i] = in[i] op inout[i] (MPI's operand order: `in` is
 * the lower ranks' part). Every builder combines in rank order, so non-commutative ops
 * give x_0 op x_1 op ... op x_{n-1}, parenthesised as the algorithm likes (MPI allows any
 * association, never reordering), unless the plan says `needs_commutative`.
 *
 * Freestanding C (cad.h's rules): no allocation, no libc beyond <string.h>.
 */
#ifndef MPI_CAD_ALG_H
#define MPI_CAD_ALG_H
#include "cad.h"

#define CAD_ALG_TAGS 4096 /* tags one collective may use, from cad_coll.tag */

/* Collective kinds (cad_coll.kind). */
enum cad_kind {
    CAD_K_BARRIER = 1,
    CAD_K_BCAST,
    CAD_K_REDUCE,
    CAD_K_ALLREDUCE,
    CAD_K_GATHER,  /* counts/displs NULL: regular blocks of `bytes` at rank * bytes */
    CAD_K_SCATTER, /* ditto */
    CAD_K_ALLGATHER,
    CAD_K_ALLTOALL,
    CAD_K_REDUCE_SCATTER, /* counts[i]: rank i's result bytes (block variant: all equal) */
    CAD_K_SCAN,
    CAD_K_EXSCAN,
    CAD_K_COUNT
};

/* Algorithms (cad_coll.alg). Not every algorithm fits every kind; cad_alg_plan says. */
enum cad_alg {
    CAD_A_AUTO = 0,   /* let cad_alg_plan choose by size and communicator size */
    CAD_A_LINEAR,     /* root talks to everyone (gather/scatter/...), or all pairs at once */
    CAD_A_BINOMIAL,   /* binomial tree (bcast, reduce, gather, scatter) */
    CAD_A_CHAIN,      /* pipelined chain in rank order from the root, chunked (KACC fig. 1) */
    CAD_A_RECDBL,     /* recursive doubling (allreduce, allgather, scan) */
    CAD_A_RING,       /* ring (allgather; allreduce as reduce-scatter + allgather) */
    CAD_A_DISSEM,     /* dissemination (barrier) */
    CAD_A_PAIRWISE,   /* pairwise exchange, one partner per step (alltoall) */
    CAD_A_COMPOSITE,  /* made of two simpler ones (e.g. allreduce = reduce + bcast) */
    CAD_A_COUNT
};

/* One rank's part of a collective, in bytes. Fields a kind does not use are ignored. */
struct cad_coll {
    int kind;       /* CAD_K_* */
    int alg;        /* CAD_A_*; cad_alg_plan replaces AUTO with its choice */
    int rank, size; /* in the communicator; peers in the graph are communicator ranks */
    int root;
    uint32_t ctx;
    int32_t tag; /* first of CAD_ALG_TAGS tags */
    /*
     * Buffers (packed). `bytes` is: BCAST the message; GATHER/SCATTER/ALLGATHER/ALLTOALL
     * one rank's block; REDUCE/ALLREDUCE/SCAN/EXSCAN the vector (count elements);
     * REDUCE_SCATTER the whole input vector. v-variants give counts[]/displs[] (bytes, per
     * communicator rank) for the side that has many blocks: GATHER's root rbuf, SCATTER's
     * root sbuf, ALLGATHER's rbuf, ALLTOALL's sbuf (with rcounts/rdispls for rbuf),
     * REDUCE_SCATTER's result blocks (displs ignored: blocks follow each other).
     */
    const void *sbuf;
    void *rbuf;
    uint64_t bytes;
    const uint64_t *counts, *displs;
    const uint64_t *rcounts, *rdispls;
    /*
     * In place, MPI's meaning per kind: REDUCE (root) and ALLREDUCE, SCAN, EXSCAN,
     * REDUCE_SCATTER take their input from rbuf; GATHER's root finds its own block already
     * at its place in rbuf; SCATTER's root keeps its block in sbuf (no rbuf); ALLGATHER
     * finds each rank's block at its place in rbuf. ALLTOALL and BCAST: not allowed
     * (the library copies ALLTOALL's input first).
     */
    int in_place;
    /* Reductions: `count` elements of `dtype` combined with `op` (CAD_OP_*). */
    int op, dtype;
    uint64_t count;
    uint16_t user_op; /* CAD_OP_USER: index into the owner's user-op table */
    int commutative;  /* 0 for non-commutative user ops */
    uint64_t chunk;   /* CHAIN/RING pipeline segment bytes; 0: CAD_ALG_CHUNK */
};

#define CAD_ALG_CHUNK (16u << 10) /* default pipeline segment */

/* What a build needs, from cad_alg_plan. */
struct cad_plan {
    int alg;            /* the algorithm chosen (never AUTO) */
    uint32_t node_cap;  /* for cad_init: enough for the build, START and END included */
    uint32_t edge_cap;
    uint64_t tmp_bytes; /* scratch the caller provides (in the owner's partition), or 0 */
};

/* Any context. Check the description (ranks, root, counts, alg fits the kind, in-place
 * allowed), choose the algorithm if AUTO (and write it to c->alg), and size the build.
 * 0, or -CAD_EINVAL with `why` (if given) pointing at a static reason. */
int cad_alg_plan(struct cad_coll *c, struct cad_plan *p, const char **why);

/* Task context of the owner. Add this rank's part of the collective to `g` (made by
 * cad_init with the plan's capacities, empty), using `tmp` (plan.tmp_bytes, 8-byte
 * aligned) as scratch. The caller then calls cad_finalize. 0 or negative CAD_E*. */
int cad_alg_build(struct cad_graph *g, const struct cad_coll *c, void *tmp);

/* Any context: names for messages and for the UKMPI_COLL_<KIND> environment variables
 * ("binomial", "chain", ...; "bcast", "allreduce", ...), and the way back (0 = AUTO for
 * "auto", -1 for an unknown name). */
const char *cad_alg_name(int alg);
const char *cad_kind_name(int kind);
int cad_alg_by_name(const char *name);

#endif
