/*
 * cad_alg.c: the entry points of the collective builders (cad_alg.h): checking a
 * description, choosing an algorithm for AUTO, planning by a counting run of the builder,
 * building, the local copies, and the names used in messages and UKMPI_COLL_<KIND>.
 *
 * AUTO chooses from what every rank of the collective knows alike (kind, size, `bytes`
 * where it is the same everywhere, counts != NULL, the op's commutativity), never from the
 * rank, the root or in_place, so that all ranks build matching halves of the same
 * algorithm. The one exception is ALLTOALLV, which goes by this rank's own volume: its two
 * algorithms exchange the same messages with the same tags and so match either way.
 *
 *   BARRIER         dissemination
 *   BCAST           chain if size > 2 and bytes >= 128 KiB, else binomial
 *   REDUCE          binomial
 *   ALLREDUCE       ring if commutative, size > 2, bytes > 16 KiB, count >= size (and
 *                   the ring's tags fit), else recursive doubling (composite: on request)
 *   GATHER/SCATTER  binomial for regular blocks of <= 2 KiB on more than 2 ranks, else
 *                   linear
 *   ALLGATHER       recursive doubling for regular blocks on a power of two with
 *                   size * bytes <= 1 MiB (or when the ring's tags do not fit), else ring
 *   ALLTOALL        linear up to 4 ranks or 64 KiB sent per rank, else pairwise
 *   REDUCE_SCATTER  ring if commutative, size > 2, bytes >= 16 KiB and the tags fit,
 *                   else composite
 *   SCAN/EXSCAN     recursive doubling on more than 2 ranks, else linear
 *
 * A description whose `client` map shows more than one IMPI client is the exception to
 * all of this: BARRIER, BCAST, REDUCE and ALLREDUCE take IMPI (LAM's algorithms) and no
 * other, every other kind LAMBASIC (LAM's lam_basic fall-backs) and no other.
 */
#include "cad_alg_int.h"
#include <string.h>

#define BIT(a) (1u << (a))

/* Which algorithms each kind takes, and the reason given when asked for another. */
static const struct {
    uint32_t algs;
    const char *why;
} kinds[CAD_K_COUNT] = {
    [CAD_K_BARRIER] = {BIT(CAD_A_DISSEM) | BIT(CAD_A_IMPI), "barrier takes dissem or impi"},
    [CAD_K_BCAST] = {BIT(CAD_A_BINOMIAL) | BIT(CAD_A_CHAIN) | BIT(CAD_A_IMPI),
                     "bcast takes binomial, chain or impi"},
    [CAD_K_REDUCE] = {BIT(CAD_A_BINOMIAL) | BIT(CAD_A_IMPI), "reduce takes binomial or impi"},
    [CAD_K_ALLREDUCE] = {BIT(CAD_A_RECDBL) | BIT(CAD_A_RING) | BIT(CAD_A_COMPOSITE) |
                             BIT(CAD_A_IMPI),
                         "allreduce takes recdbl, ring, composite or impi"},
    [CAD_K_GATHER] = {BIT(CAD_A_LINEAR) | BIT(CAD_A_BINOMIAL) | BIT(CAD_A_LAMBASIC),
                      "gather takes linear, binomial or lambasic"},
    [CAD_K_SCATTER] = {BIT(CAD_A_LINEAR) | BIT(CAD_A_BINOMIAL) | BIT(CAD_A_LAMBASIC),
                       "scatter takes linear, binomial or lambasic"},
    [CAD_K_ALLGATHER] = {BIT(CAD_A_RING) | BIT(CAD_A_RECDBL) | BIT(CAD_A_LAMBASIC),
                         "allgather takes ring, recdbl or lambasic"},
    [CAD_K_ALLTOALL] = {BIT(CAD_A_LINEAR) | BIT(CAD_A_PAIRWISE) | BIT(CAD_A_LAMBASIC),
                        "alltoall takes linear, pairwise or lambasic"},
    [CAD_K_REDUCE_SCATTER] = {BIT(CAD_A_COMPOSITE) | BIT(CAD_A_RING) | BIT(CAD_A_LAMBASIC),
                              "reduce_scatter takes composite, ring or lambasic"},
    [CAD_K_SCAN] = {BIT(CAD_A_LINEAR) | BIT(CAD_A_RECDBL) | BIT(CAD_A_LAMBASIC),
                    "scan takes linear, recdbl or lambasic"},
    [CAD_K_EXSCAN] = {BIT(CAD_A_LINEAR) | BIT(CAD_A_RECDBL) | BIT(CAD_A_LAMBASIC),
                      "exscan takes linear, recdbl or lambasic"},
};

static const char *const kind_names[CAD_K_COUNT] = {
    [CAD_K_BARRIER] = "barrier",
    [CAD_K_BCAST] = "bcast",
    [CAD_K_REDUCE] = "reduce",
    [CAD_K_ALLREDUCE] = "allreduce",
    [CAD_K_GATHER] = "gather",
    [CAD_K_SCATTER] = "scatter",
    [CAD_K_ALLGATHER] = "allgather",
    [CAD_K_ALLTOALL] = "alltoall",
    [CAD_K_REDUCE_SCATTER] = "reduce_scatter",
    [CAD_K_SCAN] = "scan",
    [CAD_K_EXSCAN] = "exscan",
};

static const char *const alg_names[CAD_A_COUNT] = {
    [CAD_A_AUTO] = "auto",     [CAD_A_LINEAR] = "linear",     [CAD_A_BINOMIAL] = "binomial",
    [CAD_A_CHAIN] = "chain",   [CAD_A_RECDBL] = "recdbl",     [CAD_A_RING] = "ring",
    [CAD_A_DISSEM] = "dissem", [CAD_A_PAIRWISE] = "pairwise", [CAD_A_COMPOSITE] = "composite",
    [CAD_A_IMPI] = "impi",     [CAD_A_LAMBASIC] = "lambasic",
};

static int is_reduction(int kind)
{
    return kind == CAD_K_REDUCE || kind == CAD_K_ALLREDUCE || kind == CAD_K_REDUCE_SCATTER ||
           kind == CAD_K_SCAN || kind == CAD_K_EXSCAN;
}

static int is_rooted(int kind)
{
    return kind == CAD_K_BCAST || kind == CAD_K_REDUCE || kind == CAD_K_GATHER ||
           kind == CAD_K_SCATTER;
}

static int pow2(int n)
{
    return !(n & (n - 1));
}

static int commutative(const struct cad_coll *c)
{
    return c->op != CAD_OP_USER || c->commutative;
}

/* The op, type, count and bytes of a reduction agree (and REDUCE_SCATTER's blocks). */
static const char *check_reduction(const struct cad_coll *c)
{
    uint64_t size = cad_type_size(c->dtype), want;
    if (c->op <= 0 || c->op >= CAD_OP_COUNT)
        return "unknown op";
    if (c->dtype <= 0 || c->dtype >= CAD_T_COUNT)
        return "unknown element type";
    if (c->op != CAD_OP_USER && !cad_op_defined(c->op, c->dtype))
        return "op not defined on the element type";
    if (size) {
        if (__builtin_mul_overflow(c->count, size, &want) || want != c->bytes)
            return "bytes is not count elements of the type";
    } else if (c->count ? c->bytes % c->count : c->bytes) {
        return "bytes is not a multiple of count";
    }
    if (c->kind != CAD_K_REDUCE_SCATTER)
        return 0;
    uint64_t esize = c->count ? c->bytes / c->count : 0, sum = 0;
    if (!c->counts) {
        if (c->bytes % (uint64_t)c->size || (esize && (c->bytes / (uint64_t)c->size) % esize))
            return "reduce_scatter block: bytes is not size whole blocks of elements";
        return 0;
    }
    for (int i = 0; i < c->size; i++) {
        if (esize ? c->counts[i] % esize : c->counts[i])
            return "reduce_scatter: counts[i] is not whole elements";
        if (__builtin_add_overflow(sum, c->counts[i], &sum))
            return "reduce_scatter: counts overflow";
    }
    return sum == c->bytes ? 0 : "reduce_scatter: counts do not add up to bytes";
}

/* The kinds LAM does the IMPI way across clients; it runs the others through lam_basic. */
static int impi_way(int kind)
{
    return kind == CAD_K_BARRIER || kind == CAD_K_BCAST || kind == CAD_K_REDUCE ||
           kind == CAD_K_ALLREDUCE;
}

/* Everything the algorithm does not decide. */
static const char *check_common(const struct cad_coll *c)
{
    int k = c->kind;
    if (k <= 0 || k >= CAD_K_COUNT)
        return "unknown collective kind";
    if (c->size < 1)
        return "communicator size below 1";
    if (c->rank < 0 || c->rank >= c->size)
        return "rank not in the communicator";
    if (is_rooted(k) && (c->root < 0 || c->root >= c->size))
        return "root not in the communicator";
    if (c->tag < 0 || c->tag > INT32_MAX - CAD_ALG_TAGS)
        return "tag range [tag, tag + CAD_ALG_TAGS) not in 0 .. INT32_MAX";
    if (c->alg < 0 || c->alg >= CAD_A_COUNT)
        return "unknown algorithm";
    if (c->in_place && (k == CAD_K_BCAST || k == CAD_K_ALLTOALL))
        return k == CAD_K_BCAST ? "in_place does not apply to bcast"
                                : "in_place does not apply to alltoall (copy the input first)";
    if (k == CAD_K_ALLTOALL &&
        (!c->counts != !c->displs || !c->counts != !c->rcounts || !c->counts != !c->rdispls))
        return "alltoall: counts, displs, rcounts, rdispls come all or none";
    if ((k == CAD_K_GATHER || k == CAD_K_SCATTER) && c->rank == c->root && c->counts && !c->displs)
        return "v-variant without displs at the root";
    if (k == CAD_K_ALLGATHER && !c->counts != !c->displs)
        return "allgather: counts and displs come both or none";
    return is_reduction(k) ? check_reduction(c) : 0;
}

/* Alg fits kind and data. */
static const char *check_alg(const struct cad_coll *c)
{
    int k = c->kind, a = c->alg, n = c->size;
    if (!(kinds[k].algs & BIT(a)))
        return kinds[k].why;
    if (a == CAD_A_RING && is_reduction(k) && !commutative(c))
        return "ring needs a commutative op";
    if (a == CAD_A_RING && (k == CAD_K_ALLREDUCE ? 2ll * (n - 1) : n - 1ll) > CAD_ALG_TAGS)
        return "ring on this many ranks needs more than CAD_ALG_TAGS tags";
    if (a == CAD_A_BINOMIAL && (k == CAD_K_GATHER || k == CAD_K_SCATTER) && c->counts)
        return "binomial gather/scatter needs regular blocks (counts NULL)";
    if (a == CAD_A_RECDBL && k == CAD_K_ALLGATHER && (c->counts || !pow2(n)))
        return "recdbl allgather needs regular blocks on a power of two ranks";
    if ((a == CAD_A_IMPI || (a == CAD_A_LAMBASIC && k == CAD_K_REDUCE_SCATTER)) &&
        is_reduction(k) && !c->ctx)
        return "impi reduce travels on ctx - 1: ctx must be at least 1";
    return 0;
}

static uint64_t total_sent(const struct cad_coll *c)
{
    uint64_t sum = 0;
    for (int i = 0; i < c->size; i++)
        sum += cad_alg_cnt(c, i);
    return sum;
}

/* The choice for AUTO (see the table at the top). */
static int choose(const struct cad_coll *c)
{
    int n = c->size, comm = commutative(c);
    switch (c->kind) {
    case CAD_K_BARRIER:
        return CAD_A_DISSEM;
    case CAD_K_BCAST:
        return n > 2 && c->bytes >= (128u << 10) ? CAD_A_CHAIN : CAD_A_BINOMIAL;
    case CAD_K_REDUCE:
        return CAD_A_BINOMIAL;
    case CAD_K_ALLREDUCE:
        return comm && n > 2 && c->bytes > (16u << 10) && c->count >= (uint64_t)n &&
                       2ll * (n - 1) <= CAD_ALG_TAGS
                   ? CAD_A_RING
                   : CAD_A_RECDBL;
    case CAD_K_GATHER:
    case CAD_K_SCATTER:
        return !c->counts && n > 2 && c->bytes <= 2048 ? CAD_A_BINOMIAL : CAD_A_LINEAR;
    case CAD_K_ALLGATHER:
        if (!c->counts && pow2(n) && ((uint64_t)n * c->bytes <= (1u << 20) || n - 1 > CAD_ALG_TAGS))
            return CAD_A_RECDBL;
        return CAD_A_RING;
    case CAD_K_ALLTOALL:
        return n <= 4 || total_sent(c) <= (64u << 10) ? CAD_A_LINEAR : CAD_A_PAIRWISE;
    case CAD_K_REDUCE_SCATTER:
        return comm && n > 2 && c->bytes >= (16u << 10) && n - 1 <= CAD_ALG_TAGS ? CAD_A_RING
                                                                                 : CAD_A_COMPOSITE;
    default: /* SCAN, EXSCAN */
        return n > 2 ? CAD_A_RECDBL : CAD_A_LINEAR;
    }
}

/* Check and choose: the part of planning that building repeats. */
static const char *prepare(struct cad_coll *c)
{
    const char *why = check_common(c);
    if (why)
        return why;
    if (cad_impi_spans(c)) { /* other clients listen: LAM's way or not at all */
        int lam = impi_way(c->kind) ? CAD_A_IMPI : CAD_A_LAMBASIC;
        if (c->alg == CAD_A_AUTO)
            c->alg = lam;
        if (c->alg != lam)
            return lam == CAD_A_IMPI
                       ? "across IMPI clients only the impi algorithm talks to the other clients"
                       : "across IMPI clients only the lambasic algorithm talks to the other "
                         "clients";
    }
    if (c->alg == CAD_A_AUTO)
        c->alg = choose(c);
    return check_alg(c);
}

static void dispatch(struct cad_builder *b)
{
    const struct cad_coll *c = b->c;
    int a = c->alg;
    if (a == CAD_A_LAMBASIC) {
        cad_alg_lambasic(b);
        cad_builder_finish(b);
        return;
    }
    switch (c->kind) {
    case CAD_K_BARRIER:
        if (a == CAD_A_IMPI)
            cad_alg_impi_barrier(b);
        else
            cad_alg_barrier_dissem(b);
        break;
    case CAD_K_BCAST:
        if (a == CAD_A_IMPI)
            cad_alg_impi_bcast(b);
        else if (a == CAD_A_CHAIN)
            cad_alg_bcast_chain(b);
        else
            cad_alg_bcast_tree(b, c->root, cad_loc(CAD_B_RBUF, 0), c->bytes, 0, CAD_NODE_START);
        break;
    case CAD_K_REDUCE:
        if (a == CAD_A_IMPI)
            cad_alg_impi_reduce(b);
        else
            cad_alg_reduce_binomial(b);
        break;
    case CAD_K_ALLREDUCE:
        if (a == CAD_A_IMPI)
            cad_alg_impi_allreduce(b);
        else if (a == CAD_A_RING)
            cad_alg_allreduce_ring(b);
        else if (a == CAD_A_COMPOSITE)
            cad_alg_allreduce_composite(b);
        else
            cad_alg_allreduce_recdbl(b);
        break;
    case CAD_K_GATHER:
        if (a == CAD_A_BINOMIAL)
            cad_alg_gather_binomial(b);
        else
            cad_alg_gather_linear(b);
        break;
    case CAD_K_SCATTER:
        if (a == CAD_A_BINOMIAL)
            cad_alg_scatter_binomial(b);
        else
            cad_alg_scatter_linear(b);
        break;
    case CAD_K_ALLGATHER:
        if (a == CAD_A_RECDBL)
            cad_alg_allgather_recdbl(b);
        else
            cad_alg_allgather_ring(b);
        break;
    case CAD_K_ALLTOALL:
        cad_alg_alltoall(b);
        break;
    case CAD_K_REDUCE_SCATTER:
        if (a == CAD_A_RING)
            cad_alg_reduce_scatter_ring(b);
        else
            cad_alg_reduce_scatter_composite(b);
        break;
    default:
        if (a == CAD_A_RECDBL)
            cad_alg_scan_recdbl(b);
        else
            cad_alg_scan_linear(b);
    }
    cad_builder_finish(b);
}

static void builder_init(struct cad_builder *b, const struct cad_coll *c)
{
    memset(b, 0, sizeof *b);
    b->c = c;
    b->base[CAD_B_SBUF] = (uint64_t)(uintptr_t)c->sbuf;
    b->base[CAD_B_RBUF] = (uint64_t)(uintptr_t)c->rbuf;
    b->esize = is_reduction(c->kind) && c->count ? c->bytes / c->count : 0;
    b->comm = commutative(c);
}

/* Any context. */
int cad_alg_plan(struct cad_coll *c, struct cad_plan *p, const char **why)
{
    const char *w = !c || !p ? "no description or plan" : prepare(c);
    if (w) {
        if (why)
            *why = w;
        return -CAD_EINVAL;
    }
    struct cad_builder b;
    memset(p, 0, sizeof *p);
    builder_init(&b, c);
    b.p = p;
    dispatch(&b);
    if (b.err) {
        if (why)
            *why = b.why;
        memset(p, 0, sizeof *p);
        return -b.err;
    }
    p->alg = c->alg;
    p->node_cap = b.nodes + 2;
    p->edge_cap = b.edges;
    p->tmp_bytes = b.tmp;
    return 0;
}

/* Task context of the owner. */
int cad_alg_build(struct cad_graph *g, const struct cad_coll *c, void *tmp)
{
    if (!g || !c || g->magic != CAD_MAGIC || g->nnodes != 2 || g->nedges)
        return -CAD_EINVAL;
    if (g->own.rank != c->rank || g->own.comm_size != c->size)
        return -CAD_EINVAL; /* a graph made for another rank or communicator */
    struct cad_coll d = *c; /* prepare() writes alg */
    if (prepare(&d))
        return -CAD_EINVAL;
    struct cad_builder b;
    builder_init(&b, &d);
    b.g = g;
    b.base[CAD_B_TMP] = (uint64_t)(uintptr_t)tmp;
    dispatch(&b);
    return b.err ? -b.err : 0;
}

/* Task context. */
void cad_alg_copies(const struct cad_coll *c, const struct cad_plan *p, void *tmp)
{
    char *base[4] = {0, (char *)(uintptr_t)c->sbuf, (char *)c->rbuf, (char *)tmp};
    for (uint32_t i = 0; i < p->ncopies && i < CAD_ALG_MAXCOPY; i++) {
        const struct cad_alg_copy *cp = &p->copy[i];
        if (cp->dst > CAD_B_TMP || cp->src > CAD_B_TMP || !cp->bytes)
            continue;
        memmove(base[cp->dst] + cp->dst_off, base[cp->src] + cp->src_off, cp->bytes);
    }
}

/* --- names --------------------------------------------------------------------------- */

/* Any context. */
const char *cad_alg_name(int alg)
{
    return alg >= 0 && alg < CAD_A_COUNT ? alg_names[alg] : "?";
}

const char *cad_kind_name(int kind)
{
    return kind > 0 && kind < CAD_K_COUNT ? kind_names[kind] : "?";
}

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return 0;
    }
    return !*a && !*b;
}

/* Any context: case does not matter; a few spelled-out aliases are accepted. */
int cad_alg_by_name(const char *name)
{
    static const struct {
        const char *name;
        int alg;
    } aliases[] = {{"recursive_doubling", CAD_A_RECDBL}, {"dissemination", CAD_A_DISSEM}};
    if (!name)
        return -1;
    for (int a = 0; a < CAD_A_COUNT; a++)
        if (same_name(name, alg_names[a]))
            return a;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (same_name(name, aliases[i].name))
            return aliases[i].alg;
    return -1;
}
