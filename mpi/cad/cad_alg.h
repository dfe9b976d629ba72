/*
 * cad_alg.h: the collective algorithms, each written once as a CAD graph builder
 * (docs/architecture.md §3.9). The MPI library (mpi/lib/coll_*.c) describes one rank's part
 * of a collective in bytes (struct cad_coll), asks for a plan (graph capacity and scratch
 * size, and which algorithm when the caller left it to us), gives the memory, and builds.
 * Blocking and non-blocking collectives both come here: a blocking one is a graph + wait.
 *
 * Data is always packed bytes: the library packs non-contiguous datatypes before and
 * unpacks after, and maps a reduction's datatype to a CAD_T_* element type (or CAD_OP_USER
 * with CAD_T_DERIVED when no predefined op/type fits).
 *
 * Messages: every SEND/RECV goes on context `ctx` with a tag in [tag, tag + CAD_ALG_TAGS);
 * two messages from one rank to another in one collective never share a tag, so they
 * match correctly whatever order they are posted in (a message and its reply, going the
 * other way, may: receives match by source). Concurrent collectives on one
 * communicator get disjoint tag ranges from the library (MPI orders collectives per
 * communicator, so every rank numbers them alike).
 * The exceptions are CAD_A_IMPI and CAD_A_LAMBASIC: their messages between IMPI clients
 * carry LAM's fixed tags, on ctx or ctx - 1 (IMPI) or on CAD_LAM_CTX (LAMBASIC; see
 * cad_coll.client).
 *
 * Reductions: a CALC computes inout[i] = in[i] op inout[i] (MPI's operand order: `in` is
 * the lower ranks' part). Every builder combines in rank order unless the op commutes, so
 * non-commutative ops give x_0 op x_1 op ... op x_{n-1}, parenthesised as the algorithm
 * likes (MPI allows any association, never reordering). The ring algorithms, which cannot
 * keep rank order, are refused by cad_alg_plan unless the op commutes (every predefined
 * op does; a user op says so in cad_coll.commutative); with an op that commutes, REDUCE
 * roots its tree at its root rather than at the last rank, which saves a hop.
 *
 * Local copies: there is no COPY node. Where a rank's own data must move between its own
 * buffers (the root's own block of a gather, a reduction's input into the buffer it is
 * accumulated in, ...), cad_alg_plan lists the move in cad_plan.copy[] and the library
 * makes it before every cad_issue of the graph (cad_alg_copies does exactly that); the
 * graph assumes it was made. See "Local copies" below for the contract.
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
    CAD_A_AUTO = 0,  /* let cad_alg_plan choose by size and communicator size */
    CAD_A_LINEAR,    /* root talks to everyone (gather/scatter/...), or all pairs at once */
    CAD_A_BINOMIAL,  /* binomial tree (bcast, reduce, gather, scatter) */
    CAD_A_CHAIN,     /* pipelined chain in rank order from the root, chunked (KACC fig. 1) */
    CAD_A_RECDBL,    /* recursive doubling (allreduce, allgather, scan) */
    CAD_A_RING,      /* ring (allgather; allreduce as reduce-scatter + allgather) */
    CAD_A_DISSEM,    /* dissemination (barrier) */
    CAD_A_PAIRWISE,  /* pairwise exchange, one partner per step (alltoall) */
    CAD_A_COMPOSITE, /* made of two simpler ones (e.g. allreduce = reduce + bcast) */
    CAD_A_IMPI,      /* across IMPI clients, LAM/MPI's way (cad_alg_impi.c; needs `client`) */
    CAD_A_LAMBASIC,  /* across IMPI clients, LAM's lam_basic fall-backs (cad_alg_lambasic.c) */
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
     *
     * Which buffer holds what:
     *   BCAST           rbuf on every rank (the root's holds the message); sbuf unused
     *   GATHER(V)       sbuf: this rank's block (`bytes`); root's rbuf: the blocks
     *   SCATTER(V)      root's sbuf: the blocks; rbuf: this rank's block (`bytes`)
     *   ALLGATHER(V)    sbuf: this rank's block; rbuf: every block (own one counts[rank])
     *   ALLTOALL(V)     sbuf: the blocks to send, rbuf: the blocks received
     *   REDUCE          sbuf: the input; root's rbuf: the result
     *   ALLREDUCE, SCAN, EXSCAN   sbuf: the input, rbuf: the result (EXSCAN: rank 0's rbuf
     *                   is left untouched, MPI leaves it undefined)
     *   REDUCE_SCATTER  sbuf: the whole vector (`bytes`), rbuf: this rank's block
     *                   (counts[rank] bytes, at rbuf's start)
     *
     * v-variants are marked by counts != NULL on every rank, also where the arrays are not
     * read (the non-roots of GATHER/SCATTER may pass any non-NULL pointer): AUTO must choose
     * alike everywhere, and binomial gather/scatter apply to regular blocks only. ALLTOALL's
     * four arrays come all or none. REDUCE_SCATTER with counts NULL means equal blocks of
     * bytes / size (MPI_Reduce_scatter_block).
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
     * (the library copies ALLTOALL's input first). The root-only kinds (REDUCE, GATHER,
     * SCATTER) ignore it on the other ranks, as BARRIER does everywhere.
     */
    int in_place;
    /* Reductions: `count` elements of `dtype` combined with `op` (CAD_OP_*). */
    int op, dtype;
    uint64_t count;
    uint16_t user_op; /* CAD_OP_USER: index into the owner's user-op table */
    int commutative;  /* 0 for non-commutative user ops */
    uint64_t chunk;   /* CHAIN pipeline segment bytes; 0: CAD_ALG_CHUNK (RING: unused) */
    /*
     * The IMPI client of each communicator rank (client[r] for r < size, any values: ranks
     * with equal values are one client, in any order), or NULL: the whole communicator is
     * one client. When it shows more than one client, the collective must talk to the
     * other clients (LAM/MPI, GridMPI, ...) as they expect: AUTO picks CAD_A_IMPI for
     * BARRIER, BCAST, REDUCE and ALLREDUCE and CAD_A_LAMBASIC for every other kind (LAM's
     * lam_basic fall-backs), and every other algorithm is refused. Their messages between
     * clients use fixed tags on fixed contexts, not `tag`'s range (cad_alg_impi.c,
     * cad_alg_lambasic.c): `ctx` must be the communicator's collective context, ctx - 1
     * its point-to-point one, and CAD_LAM_CTX is LAM's private one.
     */
    const uint8_t *client;
};

/* The context of LAM's lam_basic collectives across clients (cid -1 on the wire, LAM's
 * flipped collective cid of MPI_COMM_WORLD): the engine maps it to and from the wire
 * (mpe_impi.h's MPE_IMPI_LAM_CTX, the same value). */
#define CAD_LAM_CTX 0xffffffffu

/* Default pipeline segment. A CHAIN bcast raises it when the message would need more than
 * CAD_ALG_TAGS segments (one tag each). */
#define CAD_ALG_CHUNK (16u << 10)

/*
 * Local copies (the contract between the builders and the library). The graph never
 * moves data inside one rank; cad_alg_plan lists the moves this rank's graph assumes were
 * made before it runs, and the library makes them, in list order, each as a memmove (a
 * source and destination in the same buffer may overlap), after the buffers hold the
 * call's input and before every cad_issue of the graph (a graph issued again needs them
 * again). Each names a buffer of the description and a byte offset in it:
 *
 *     memmove(base(dst) + dst_off, base(src) + src_off, bytes)
 *
 * with base(CAD_B_SBUF) = c->sbuf, base(CAD_B_RBUF) = c->rbuf, base(CAD_B_TMP) = the
 * scratch given to cad_alg_build. cad_alg_copies(c, plan, tmp) does it. The list depends
 * on the kind, the algorithm, this rank's place in it and in_place; what it holds, so that
 * nobody is surprised (the list, not this table, is the contract):
 *
 *   GATHER, SCATTER (root)      its own block between sbuf and rbuf, unless in_place
 *   GATHER binomial (inner)     its own block into the scratch it forwards from
 *   ALLGATHER                   its own block into rbuf, unless in_place
 *   ALLTOALL                    its own block from sbuf to rbuf
 *   REDUCE, ALLREDUCE composite the input into the accumulator: rbuf at the rank that ends
 *                               with the result, scratch at other ranks with children
 *   ALLREDUCE recdbl, ring      the input into rbuf (or into scratch: recdbl starts in
 *                               scratch when the number of swaps it makes is odd)
 *   REDUCE_SCATTER              the input into the scratch accumulator and the own
 *                               block's part into rbuf (composite: at rank size-1 only)
 *   SCAN                        the input into rbuf (recdbl: also into scratch)
 *   EXSCAN                      the input into scratch (linear: not on rank 0 and the
 *                               last rank)
 *
 * Nothing is copied after the graph finished: every result lands in rbuf through a RECV
 * or a CALC.
 */
#define CAD_B_NONE 0 /* no buffer (zero-byte messages) */
#define CAD_B_SBUF 1
#define CAD_B_RBUF 2
#define CAD_B_TMP  3

#define CAD_ALG_MAXCOPY 4 /* entries of cad_plan.copy; no algorithm uses more than 2 */

struct cad_alg_copy {
    uint8_t dst, src; /* CAD_B_* */
    uint8_t reserved[6];
    uint64_t dst_off, src_off, bytes;
};

/* What a build needs, from cad_alg_plan. */
struct cad_plan {
    int alg;            /* the algorithm chosen (never AUTO) */
    uint32_t node_cap;  /* for cad_init: exactly what the build uses, START and END included */
    uint32_t edge_cap;  /* ... and the edges, exactly */
    uint64_t tmp_bytes; /* scratch the caller provides (in the owner's partition), or 0 */
    uint32_t ncopies;   /* local copies to make before every issue (see above) */
    struct cad_alg_copy copy[CAD_ALG_MAXCOPY];
};

/*
 * Any context. Check the description (ranks, root, tag range, counts, op and type, alg
 * fits the kind, in-place allowed), choose the algorithm if AUTO (and write it to c->alg;
 * the choice depends only on what every rank knows alike, see cad_alg.c), and size the
 * build by running it without a graph: capacities and scratch are exact, not estimates,
 * and the call costs as much as a build. It reads no buffer address (sbuf and rbuf may be
 * unset), only the arrays of a v-variant. 0, or a negative CAD_E* with `why` (if given)
 * pointing at a static reason: -CAD_EINVAL for a description that is wrong or an algorithm
 * that does not apply, -CAD_ENOSPC when this rank's graph would exceed CAD_MAX_NODES or
 * CAD_MAX_EDGES (e.g. a linear algorithm on a communicator of more than 32k ranks).
 */
int cad_alg_plan(struct cad_coll *c, struct cad_plan *p, const char **why);

/* Task context of the owner. Add this rank's part of the collective to `g` (made by
 * cad_init with the plan's capacities, empty), using `tmp` (plan.tmp_bytes, 8-byte
 * aligned; may be NULL when tmp_bytes is 0) as scratch. `c` must be the description the
 * plan was made from (alg as the plan left it). The caller then calls cad_finalize. 0 or
 * a negative CAD_E* (-CAD_EINVAL for a description the plan would refuse or a graph that
 * is not empty). */
int cad_alg_build(struct cad_graph *g, const struct cad_coll *c, void *tmp);

/* Task context: make the plan's local copies (see above) for the description `c` and
 * scratch `tmp`. Call it before every cad_issue of the graph. */
void cad_alg_copies(const struct cad_coll *c, const struct cad_plan *p, void *tmp);

/* Any context: names for messages and for the UKMPI_COLL_<KIND> environment variables
 * ("binomial", "chain", ...; "bcast", "allreduce", ...), and the way back (0 = AUTO for
 * "auto", -1 for an unknown name). */
const char *cad_alg_name(int alg);
const char *cad_kind_name(int kind);
int cad_alg_by_name(const char *name);

#endif
