/*
 * coll_nbv.c: the collectives whose buffers hold one block per rank (gather, scatter,
 * allgather, alltoall and their v-variants), as packed descriptions for coll_run.c; see
 * coll_nb.c for the buffer rules. A v-variant's blocks sit at displs[i] elements (of the
 * type's extent) in the user's buffer and at displs[i] * size bytes in the packed one, so
 * gaps between blocks are never written.
 */
#include "coll_impl.h"
#include <stdlib.h>
#include <string.h>

/* n blocks of a typed buffer: block i has counts[i] elements at displs[i] (or, with counts
 * NULL, `count` elements at i * count). */
struct blocks {
    void *buf;
    int n;
    const int *counts, *displs;
    int count;
    MPI_Datatype dt;
};

static int bcount(const struct blocks *b, int i)
{
    return b->counts ? b->counts[i] : b->count;
}

static long bdispl(const struct blocks *b, int i)
{
    return b->counts ? b->displs[i] : (long)i * b->count;
}

static size_t span(const struct blocks *b)
{
    long end = 0;
    for (int i = 0; i < b->n; i++)
        if (bcount(b, i) > 0 && bdispl(b, i) + bcount(b, i) > end)
            end = bdispl(b, i) + bcount(b, i);
    return end ? (size_t)end * dt_size(b->dt) : 0;
}

static size_t temp_need(const struct blocks *b)
{
    return b->buf && b->buf != MPI_IN_PLACE && !dt_contig(b->dt) ? (span(b) + 63) & ~(size_t)63 : 0;
}

#define IN_NONE (-2)
#define IN_ALL  (-1)

/* Each block's bytes and displacement in the packed form, into c[n] and d[n]. Made before
 * the plan: the algorithms read them (v-variants are told apart by them, too). */
static void layout(const struct blocks *b, uint64_t *c, uint64_t *d)
{
    /* Where the blocks are not significant (a gather's receive side off the root), the
     * type is not either: it may be MPI_DATATYPE_NULL, and every count is 0. */
    size_t sz = b->counts || b->count ? dt_size(b->dt) : 0;
    for (int i = 0; i < b->n; i++) {
        c[i] = (uint64_t)bcount(b, i) * sz;
        d[i] = (uint64_t)bdispl(b, i) * sz;
    }
}

/* The packed form of b (block i at d[i]): its base. The graph reads block `in` (IN_ALL:
 * all of them, IN_NONE: none; packed at each start), and with `out` writes them all
 * (unpacked after completion). One move per block read or written. */
static char *packed(struct coll_req *q, const struct blocks *b, const uint64_t *d, int in, int out)
{
    if (!b->buf || b->buf == MPI_IN_PLACE)
        return 0;
    if (dt_contig(b->dt))
        return (char *)b->buf + dt_lb(b->dt);
    size_t sz = dt_size(b->dt), ext = (size_t)dt_extent(b->dt);
    char *t = coll_temp(q, span(b));
    for (int i = 0; i < b->n; i++) {
        int k = bcount(b, i);
        if (k <= 0)
            continue;
        char *u = (char *)b->buf + bdispl(b, i) * (long)ext;
        if (in == IN_ALL || in == i)
            coll_pack_at_start(q, u, k, b->dt, t + d[i]);
        if (out)
            coll_unpack_later(q, t + d[i], (size_t)k * sz, u, k, b->dt);
    }
    return t;
}

/* `k` arrays of n byte counts, owned by the request once it exists. */
static uint64_t *arrays(int k, int n)
{
    return malloc(sizeof(uint64_t) * (size_t)k * (size_t)(n ? n : 1));
}

/* Gather (gather=1) or scatter (0), regular or v (counts/displs, read at the root only).
 * `many` is the root's buffer of blocks, `one` the rank's own block (sbuf for gather,
 * rbuf for scatter). */
int coll_igs(int gather, int v, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
             int rcount, const int *counts, const int *displs, MPI_Datatype rdt,
             MPI_Datatype manydt, int root, MPI_Comm c, MPI_Request *req)
{
    int n = c->size, is_root = c->rank == root;
    if (!is_root) /* not significant here (maybe NULL); the zero blocks still say "v" */
        counts = displs = 0;
    struct cad_coll d = {.kind = gather ? CAD_K_GATHER : CAD_K_SCATTER, .root = root};
    const void *one = gather ? sbuf : rbuf;
    int onecount = gather ? scount : rcount;
    MPI_Datatype onedt = gather ? sdt : rdt;
    d.in_place = is_root && one == MPI_IN_PLACE;
    struct blocks many = {.buf = is_root ? (gather ? rbuf : (void *)sbuf) : 0,
                          .n = n,
                          .counts = counts,
                          .displs = displs,
                          .count = !is_root ? 0
                                   : gather ? rcount
                                            : scount,
                          .dt = manydt};
    d.bytes =
        d.in_place ? (uint64_t)many.count * dt_size(manydt) : (uint64_t)onecount * dt_size(onedt);
    /* moves: the root's blocks, one of them twice (gather in place), and the rank's own */
    int err = MPI_SUCCESS, nmv = (is_root ? n + 1 : 0) + 1;
    size_t oneb = !d.in_place && onecount > 0 && !dt_contig(onedt)
                      ? ((size_t)onecount * dt_size(onedt) + 63) & ~(size_t)63
                      : 0;
    uint64_t *arr = arrays(2, n);
    if (!arr)
        return MPI_ERR_NO_MEM;
    layout(&many, arr, arr + n);
    if (v) { /* every rank says v, so that all choose the same algorithm */
        d.counts = arr;
        d.displs = arr + n;
    }
    struct coll_req *q = coll_alloc(c, &d, temp_need(&many) + oneb, nmv, &err);
    if (!q) {
        free(arr);
        return err;
    }
    q->owned = arr;
    /* Gather in place: the root's own block is in `many` already and is read from there. */
    int in = !gather ? IN_ALL : d.in_place ? c->rank : IN_NONE;
    char *m = packed(q, &many, arr + n, in, gather);
    void *o = 0;
    if (!d.in_place && onecount > 0) {
        struct blocks ob = {.buf = (void *)one, .n = 1, .count = onecount, .dt = onedt};
        uint64_t zero = 0;
        o = packed(q, &ob, &zero, gather ? IN_ALL : IN_NONE, !gather);
    }
    d.sbuf = gather ? o : m;
    d.rbuf = gather ? (void *)m : o;
    return coll_issue(q, &d, req);
}

/* Allgather(v): every rank's rbuf gets every block; its own comes from sbuf (or is in
 * place). */
int coll_iallgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                    const int *counts, const int *displs, MPI_Datatype rdt, MPI_Comm c,
                    MPI_Request *req)
{
    int n = c->size;
    struct cad_coll d = {.kind = CAD_K_ALLGATHER, .in_place = sbuf == MPI_IN_PLACE};
    struct blocks many = {
        .buf = rbuf, .n = n, .counts = counts, .displs = displs, .count = rcount, .dt = rdt};
    d.bytes = d.in_place ? (uint64_t)rcount * dt_size(rdt) : (uint64_t)scount * dt_size(sdt);
    size_t oneb = !d.in_place && scount > 0 && !dt_contig(sdt)
                      ? ((size_t)scount * dt_size(sdt) + 63) & ~(size_t)63
                      : 0;
    int err = MPI_SUCCESS;
    uint64_t *arr = arrays(2, n);
    if (!arr)
        return MPI_ERR_NO_MEM;
    layout(&many, arr, arr + n);
    if (counts) {
        d.counts = arr;
        d.displs = arr + n;
    }
    /* moves: every block out, then the own block in (from sbuf, or in place) */
    struct coll_req *q = coll_alloc(c, &d, temp_need(&many) + oneb, n + 1, &err);
    if (!q) {
        free(arr);
        return err;
    }
    q->owned = arr;
    /* In place, our own block is read from rbuf. */
    d.rbuf = packed(q, &many, arr + n, d.in_place ? c->rank : IN_NONE, 1);
    if (!d.in_place) {
        struct blocks ob = {.buf = (void *)sbuf, .n = 1, .count = scount, .dt = sdt};
        uint64_t zero = 0;
        d.sbuf = packed(q, &ob, &zero, IN_ALL, 0);
    }
    return coll_issue(q, &d, req);
}

/* Alltoall(v). In place, the input is rbuf itself: copied (packed) first. */
int coll_ialltoall(const void *sbuf, int scount, const int *scounts, const int *sdispls,
                   MPI_Datatype sdt, void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                   MPI_Datatype rdt, MPI_Comm c, MPI_Request *req)
{
    int n = c->size;
    struct cad_coll d = {.kind = CAD_K_ALLTOALL};
    int in_place = sbuf == MPI_IN_PLACE;
    struct blocks sb = {.buf = (void *)sbuf,
                        .n = n,
                        .counts = scounts,
                        .displs = sdispls,
                        .count = scount,
                        .dt = sdt};
    if (in_place) {
        sb.buf = rbuf;
        sb.counts = rcounts;
        sb.displs = rdispls;
        sb.count = rcount;
        sb.dt = rdt;
    }
    struct blocks rb = {
        .buf = rbuf, .n = n, .counts = rcounts, .displs = rdispls, .count = rcount, .dt = rdt};
    d.bytes = (uint64_t)sb.count * dt_size(sb.dt);
    size_t copy = in_place ? (span(&sb) + 63) & ~(size_t)63 : 0;
    int err = MPI_SUCCESS;
    uint64_t *arr = arrays(4, n);
    if (!arr)
        return MPI_ERR_NO_MEM;
    layout(&sb, arr, arr + n);
    layout(&rb, arr + 2 * n, arr + 3 * n);
    if (scounts || rcounts) {
        d.counts = arr;
        d.displs = arr + n;
        d.rcounts = arr + 2 * n;
        d.rdispls = arr + 3 * n;
    }
    /* moves: every send block in, the in-place copy, every receive block out */
    struct coll_req *q = coll_alloc(c, &d, temp_need(&sb) + temp_need(&rb) + copy, 2 * n + 1, &err);
    if (!q) {
        free(arr);
        return err;
    }
    q->owned = arr;
    char *s = packed(q, &sb, arr + n, IN_ALL, 0);
    if (in_place && s == (char *)rbuf + dt_lb(rdt)) { /* contiguous: a copy of the input */
        char *t = coll_temp(q, span(&sb));
        coll_copy_at_start(q, s, span(&sb), t);
        s = t;
    }
    d.sbuf = s;
    d.rbuf = packed(q, &rb, arr + 3 * n, IN_NONE, 1);
    return coll_issue(q, &d, req);
}
