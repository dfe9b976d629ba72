/*
 * cad_alg_int.h: what the collective builders (mpi/cad/cad_alg*.c) share and nobody else
 * needs: the build context and the per-algorithm builders cad_alg.c dispatches to.
 *
 * One context serves two jobs. cad_alg_plan must return capacities and scratch that are
 * enough, and the one way to be exact without a second copy of every algorithm as
 * formulas is to run the very builder that will build the graph, counting instead of
 * writing (g == NULL). For that, a builder decides everything from the description alone
 * (struct cad_coll): never from the graph, the scratch address or earlier return values
 * other than node indices, which are the same in both runs (nodes are numbered in the
 * order they are made, from 2). Buffers are named as (buffer, offset) places, not
 * pointers, so the counting run needs no addresses and local copies can be described to
 * the library (cad_alg.h, "Local copies").
 */
#ifndef MPI_CAD_ALG_INT_H
#define MPI_CAD_ALG_INT_H
#include "cad_alg.h"

/* A place in one of the collective's buffers: CAD_B_* and a byte offset. */
struct cad_loc {
    int buf;
    uint64_t off;
};

/* A piece of a vector's accumulator: the bytes [o, o + len) of the vector live at `at`. */
struct cad_seg {
    struct cad_loc at;
    uint64_t len;
};

/* The builder (cad_alg_builder.c): one rank's graph being counted (plan) or built. */
struct cad_builder {
    struct cad_graph *g;      /* NULL: plan (count only) */
    const struct cad_coll *c; /* alg already chosen */
    struct cad_plan *p;       /* plan: the copies go here; build: NULL */
    uint64_t base[4];         /* address of each CAD_B_* buffer (build only) */
    uint64_t esize;           /* reductions: bytes per element (0 for an empty vector) */
    int comm;                 /* reductions: the op is commutative */
    uint32_t nodes, edges;    /* made so far (START and END not counted) */
    uint32_t end_in;          /* edges into END */
    uint64_t tmp;             /* scratch handed out */
    int err;                  /* first error (positive CAD_E*), then every call is a no-op */
    const char *why;
};

static inline struct cad_loc cad_loc(int buf, uint64_t off)
{
    return (struct cad_loc){buf, off};
}
static inline struct cad_loc cad_loc_add(struct cad_loc l, uint64_t d)
{
    l.off += d;
    return l;
}

/* The builder calls (cad_alg_builder.c). Node calls return the node's index, or -1 once the
 * build failed; cad_builder_dep ignores negative indices, so builders need not check each
 * call. `k` is the message's tag offset from cad_coll.tag, below CAD_ALG_TAGS. */
int cad_builder_send(struct cad_builder *b, struct cad_loc at, uint64_t len, int peer, long k);
int cad_builder_recv(struct cad_builder *b, struct cad_loc at, uint64_t len, int peer, long k);
/* A SEND (type CAD_SEND) or RECV on an absolute context and tag, outside the collective's
 * range: the messages other implementations expect (cad_alg_impi*.c only). */
int cad_builder_wire(struct cad_builder *b, int type, struct cad_loc at, uint64_t len, int peer,
                     uint32_t ctx, int32_t tag);
/* inout = in op inout over len bytes (len / esize elements of the collective's type). */
int cad_builder_calc(struct cad_builder *b, struct cad_loc in, struct cad_loc inout, uint64_t len);
/* `to` runs after `from`. */
void cad_builder_dep(struct cad_builder *b, int from, int to);
/* `node` ends this rank's part: connect it to END (nothing for START, see cad_builder_finish). */
void cad_builder_end(struct cad_builder *b, int node);
/* Close the graph: START -> END if nothing leads to END. */
void cad_builder_finish(struct cad_builder *b);
/* `len` bytes of scratch (8-byte aligned), for as long as the graph runs. */
struct cad_loc cad_builder_tmp(struct cad_builder *b, uint64_t len);
/* A local copy the library makes before the graph runs (nothing if empty or in place). */
void cad_builder_copy(struct cad_builder *b, struct cad_loc dst, struct cad_loc src, uint64_t len);
int cad_builder_fail(struct cad_builder *b, int code, const char *why);
static inline int cad_builder_ok(const struct cad_builder *b)
{
    return !b->err;
}

/* Rank arithmetic without overflow for any int size: x mod n in [0, n). */
static inline int cad_alg_mod(long long x, int n)
{
    long long m = x % n;
    return (int)(m < 0 ? m + n : m);
}
/* The lowest set bit of v > 0; for v == 0 the smallest power of two >= n (the root of a
 * binomial tree over n ranks has children below that). */
static inline long long cad_alg_lowbit(long long v, int n)
{
    long long m = 1;
    if (!v) {
        while (m < n)
            m <<= 1;
        return m;
    }
    return v & -v;
}

/* v-variant geometry: rank i's block size and offset (the regular layout when the
 * arrays are NULL: `bytes` each, at i * bytes). */
uint64_t cad_alg_cnt(const struct cad_coll *c, int i);
uint64_t cad_alg_dsp(const struct cad_coll *c, int i);
uint64_t cad_alg_rcnt(const struct cad_coll *c, int i);
uint64_t cad_alg_rdsp(const struct cad_coll *c, int i);
/* REDUCE_SCATTER: rank i's result block (counts[i], or bytes / size when NULL). */
uint64_t cad_alg_rs_cnt(const struct cad_coll *c, int i);

/* The reduction's input on this rank: rbuf when in place, sbuf otherwise. */
struct cad_loc cad_builder_input(const struct cad_builder *b);

/* The bcast chain's segment: CAD_ALG_CHUNK or c->chunk, raised so that the segments of
 * `bytes` fit in CAD_ALG_TAGS tags. */
uint64_t cad_alg_chain_chunk(const struct cad_coll *c);

/* --- the algorithms, one rank's part each (the files say how and why) ----------------- */

void cad_alg_barrier_dissem(struct cad_builder *b);
/* Binomial bcast of buf[0, len) from `root`, tags k; starts after `after`. */
void cad_alg_bcast_tree(struct cad_builder *b, int root, struct cad_loc buf, uint64_t len, int k,
                        int after);
void cad_alg_bcast_chain(struct cad_builder *b);
/* Binomial reduce of every rank's vector (c->bytes) to `troot`, whose result ends in the
 * segments acc[0..nacc) (in vector order); tags k. Returns the node after which this
 * rank's part is done (`after` if it has none). */
int cad_alg_reduce_tree(struct cad_builder *b, int troot, struct cad_loc in,
                        const struct cad_seg *acc, int nacc, int k, int after);
void cad_alg_reduce_binomial(struct cad_builder *b);
void cad_alg_allreduce_composite(struct cad_builder *b);
void cad_alg_allreduce_recdbl(struct cad_builder *b);
void cad_alg_allreduce_ring(struct cad_builder *b);
void cad_alg_reduce_scatter_composite(struct cad_builder *b);
void cad_alg_reduce_scatter_ring(struct cad_builder *b);
void cad_alg_scan_linear(struct cad_builder *b);
void cad_alg_scan_recdbl(struct cad_builder *b);
void cad_alg_gather_linear(struct cad_builder *b);
void cad_alg_gather_binomial(struct cad_builder *b);
void cad_alg_scatter_linear(struct cad_builder *b);
void cad_alg_scatter_binomial(struct cad_builder *b);
void cad_alg_allgather_ring(struct cad_builder *b);
void cad_alg_allgather_recdbl(struct cad_builder *b);
void cad_alg_alltoall(struct cad_builder *b);

/* --- across IMPI clients (cad_alg_impi.c, cad_alg_impi_reduce.c) ---------------------- */

#define CAD_IMPI_MAX_CLIENTS 256 /* cad_coll.client holds uint8_t values */

/* Who is whose master. Masters are the lowest rank of each client present, numbered
 * 0 .. nm - 1 in rank order (IMPI's master numbers). ~2 KiB: builders keep it on the stack. */
struct cad_impi {
    const uint8_t *client;            /* cad_coll.client; NULL: one client */
    int n;                            /* communicator size */
    int nm;                           /* masters */
    int master[CAD_IMPI_MAX_CLIENTS]; /* master number -> its rank */
    int num[CAD_IMPI_MAX_CLIENTS];    /* client value -> its master number */
};

/* LAM's constants (share/include/impi.h): the tags of the messages between clients, and
 * the most masters its algorithms still do linearly (IMPI_MAX_LINEAR_*: compile-time; LAM
 * ignores the IMPI_C_COLL_MAXLINEAR label). */
#define CAD_IMPI_TAG_BARRIER   110
#define CAD_IMPI_TAG_BCAST     120
#define CAD_IMPI_TAG_REDUCE    190
#define CAD_IMPI_MAX_LINEAR    4
/* Our own tags inside one client, as offsets from cad_coll.tag: at least 256, so that with
 * the library's tag bases (multiples of CAD_ALG_TAGS) none equals an IMPI tag. Each
 * dissemination barrier takes one per round (at most 31). */
#define CAD_IMPI_K_BARRIER_IN  256
#define CAD_IMPI_K_BARRIER_OUT 320
#define CAD_IMPI_K_BCAST       384
#define CAD_IMPI_K_REDUCE      385

void cad_impi_layout(const struct cad_coll *c, struct cad_impi *l);
/* The ranks of client cl in rank order: how many, the i-th, and the index of rank r. */
int cad_impi_lsize(const struct cad_impi *l, int cl);
int cad_impi_lrank(const struct cad_impi *l, int cl, int i);
int cad_impi_lindex(const struct cad_impi *l, int cl, int r);
/* LAM's lam_cubedim (bits to number n masters) and lam_hibit (v's highest set bit below
 * dim, -1 for none). */
static inline int cad_impi_cubedim(int n)
{
    int d = 0;
    while ((1ll << d) < n)
        d++;
    return d;
}
static inline int cad_impi_hibit(int v, int dim)
{
    for (int i = dim - 1; v > 0 && i >= 0; i--)
        if (v >> i & 1)
            return i;
    return -1;
}
/* The client of rank r (0 when there is no map). */
static inline int cad_impi_client(const struct cad_impi *l, int r)
{
    return l->client ? l->client[r] : 0;
}
/* 1 if c->client shows more than one client (any context; cad_alg.c's choice). */
int cad_impi_spans(const struct cad_coll *c);
/* IMPI bcast of rbuf from `root`, its first nodes after `after` (which it never connects
 * to END itself: the caller does, if the bcast made no node). */
void cad_impi_bcast(struct cad_builder *b, const struct cad_impi *l, int root, int after);
/* This rank's part of an IMPI reduce of `in` to `root`, whose result ends at `racc` (read
 * at the root only); returns the node after which it is done (every other node of it
 * leads there). */
int cad_impi_reduce(struct cad_builder *b, const struct cad_impi *l, int root, struct cad_loc in,
                    struct cad_loc racc);
void cad_alg_impi_barrier(struct cad_builder *b);
void cad_alg_impi_bcast(struct cad_builder *b);
void cad_alg_impi_reduce(struct cad_builder *b);
void cad_alg_impi_allreduce(struct cad_builder *b);
/* Every other kind across clients: LAM's lam_basic fall-backs (cad_alg_lambasic.c). */
void cad_alg_lambasic(struct cad_builder *b);

#endif
