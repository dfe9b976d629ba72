/*
 * coll_call.h: one collective call as a value, for the programs that make many of them in
 * varied ways (icolls.c, icolls_inplace.c, colls_big.c). call_init sets the call up on
 * the current communicator (colls_common.h's C, R, S, CN): kind, root, count, element
 * type, blocking or not, MPI_IN_PLACE or not; it fills the buffers. call_start makes the
 * MPI call, call_complete completes a non-blocking one in one of NHOW ways, call_check
 * compares every element of the receive buffer with what MPI defines (sentinels past the
 * end and in the gaps of the v-layouts included) and the send buffer with what it held
 * (a collective must not write it). A call keeps its own communicator, layouts and
 * request, so several can be outstanding at once, on one communicator or several.
 * Buffers that are not significant on a rank are NULL there (MPI allows it).
 * Include after colls_common.h.
 */
#ifndef COLL_CALL_H
#define COLL_CALL_H

enum kind {
    K_BARRIER,
    K_BCAST,
    K_REDUCE,
    K_ALLREDUCE,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALL,
    K_ALLTOALLV,
    K_REDUCE_SCATTER,
    K_REDUCE_SCATTER_BLOCK,
    K_SCAN,
    K_EXSCAN,
    NKINDS
};
static const char *const kname[NKINDS] = {"Barrier",        "Bcast",
                                          "Reduce",         "Allreduce",
                                          "Gather",         "Gatherv",
                                          "Scatter",        "Scatterv",
                                          "Allgather",      "Allgatherv",
                                          "Alltoall",       "Alltoallv",
                                          "Reduce_scatter", "Reduce_scatter_block",
                                          "Scan",           "Exscan"};

/* The MPI name of a kind, blocking or not ("Allgatherv", "Iallgatherv"). */
static const char *mpi_name(int kind, int nb)
{
    static char b[2][32];
    const char *k = kname[kind];
    snprintf(b[nb != 0], sizeof b[0], "%s%c%s", nb ? "I" : "", nb ? k[0] - 'A' + 'a' : k[0], k + 1);
    return b[nb != 0];
}

static inline int rooted(int k)
{
    return k == K_BCAST || k == K_REDUCE || (k >= K_GATHER && k <= K_SCATTERV);
}
/* Kinds whose count is that of one block of S (gather, scatter, alltoall, ...). */
static inline int blocked(int k)
{
    return k >= K_GATHER && k <= K_REDUCE_SCATTER_BLOCK;
}

/* call_init's flags. Elements are MPI_INT unless CALL_BYTE (MPI_BYTE: only for the kinds
 * that do not reduce) or CALL_DOUBLE (MPI_DOUBLE); reductions are MPI_SUM. */
enum { CALL_NB = 1, CALL_IP = 2, CALL_BYTE = 4, CALL_DOUBLE = 8, CALL_PERSIST = 16 };

struct call {
    int kind, flags, root, n, salt;
    MPI_Comm comm;
    int rank, size; /* in comm */
    const char *cname;
    MPI_Datatype dt;
    char *sb, *rb;          /* NULL where not significant (or MPI_IN_PLACE) */
    int sn, rn;             /* their lengths in elements; a sentinel follows each */
    int *sc, *sd, *rc, *rd; /* counts and displacements of the v-variants */
    int off;                /* Reduce_scatter: this rank's first element of the result */
    MPI_Request req;
};

/* Element j of rank r's contribution: colls_common.h's v(), exact in every type (bytes
 * never 255, the byte sentinel; doubles are quarters, so sums of them are exact). */
static double pat(const struct call *c, int r, int j)
{
    int x = v(r, j, c->salt);
    return c->flags & CALL_BYTE ? (x + 1000) % 251 : c->flags & CALL_DOUBLE ? x / 4.0 : x;
}
static double sentinel(const struct call *c)
{
    return c->flags & CALL_BYTE ? 255 : SENT;
}
static double get(const struct call *c, const char *b, int i)
{
    return c->flags & CALL_BYTE     ? ((const unsigned char *)b)[i]
           : c->flags & CALL_DOUBLE ? ((const double *)b)[i]
                                    : ((const int *)b)[i];
}
static void put(const struct call *c, char *b, int i, double x)
{
    if (c->flags & CALL_BYTE)
        ((unsigned char *)b)[i] = (unsigned char)x;
    else if (c->flags & CALL_DOUBLE)
        ((double *)b)[i] = x;
    else
        ((int *)b)[i] = (int)x;
}
/* Sum of the contributions of ranks lo..hi-1 to element j. */
static double sum(const struct call *c, int lo, int hi, int j)
{
    double s = 0;
    for (int r = lo; r < hi; r++)
        s += pat(c, r, j);
    return s;
}
/* The block of a v-layout holding element i (-1 in a gap); *j: its index in the block. */
static int block_of(const struct call *c, const int *cnt, const int *dis, int i, int *j)
{
    for (int r = 0; r < c->size; r++)
        if (i >= dis[r] && i < dis[r] + cnt[r])
            return *j = i - dis[r], r;
    return -1;
}

/* Element i of the send buffer, before and after the call. */
static double want_sb(const struct call *c, int i)
{
    int n = c->n, b, j = 0;
    switch (c->kind) {
    case K_SCATTER:
        return pat(c, i / n, i % n);
    case K_SCATTERV:
        return (b = block_of(c, c->sc, c->sd, i, &j)) < 0 ? sentinel(c) : pat(c, b, j);
    case K_ALLTOALLV:
        b = block_of(c, c->sc, c->sd, i, &j);
        return b < 0 ? sentinel(c) : pat(c, c->rank, b * 4 * n + j);
    default: /* Alltoall's block d is pat(rank, d * n + j): pat(rank, i) */
        return pat(c, c->rank, i);
    }
}
/* Element i of the receive buffer before the call: the input where MPI_IN_PLACE takes it
 * from there, the root's data for Bcast, sentinels elsewhere. */
static double init_rb(const struct call *c, int i)
{
    int R_ = c->rank, n = c->n, b, j = 0;
    if (c->kind == K_BCAST && R_ == c->root && i < n)
        return pat(c, R_, i);
    if (!(c->flags & CALL_IP) || i >= c->rn)
        return sentinel(c);
    switch (c->kind) {
    case K_GATHER:
    case K_ALLGATHER:
        return i / n == R_ ? pat(c, R_, i % n) : sentinel(c);
    case K_GATHERV:
    case K_ALLGATHERV:
        return block_of(c, c->rc, c->rd, i, &j) == R_ ? pat(c, R_, j) : sentinel(c);
    case K_ALLTOALLV:
        b = block_of(c, c->rc, c->rd, i, &j);
        return b < 0 ? sentinel(c) : pat(c, R_, b * 4 * n + j);
    default: /* the reductions' input; Alltoall's send buffer */
        return pat(c, R_, i);
    }
}
/* Element i of the receive buffer after the call; returns 0 where MPI leaves it undefined. */
static int want_rb(const struct call *c, int i, double *w)
{
    int R_ = c->rank, n = c->n, b, j = 0;
    *w = sentinel(c);
    if (i >= c->rn)
        return 1;
    switch (c->kind) {
    case K_BCAST:
        *w = pat(c, c->root, i);
        break;
    case K_REDUCE:
    case K_ALLREDUCE:
        *w = sum(c, 0, c->size, i);
        break;
    case K_SCAN:
        *w = sum(c, 0, R_ + 1, i);
        break;
    case K_EXSCAN:
        *w = sum(c, 0, R_, i);
        return R_ > 0;
    case K_GATHER:
    case K_ALLGATHER:
        *w = pat(c, i / n, i % n);
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
        if ((b = block_of(c, c->rc, c->rd, i, &j)) >= 0)
            *w = pat(c, b, j);
        break;
    case K_SCATTER:
    case K_SCATTERV:
        *w = pat(c, R_, i);
        break;
    case K_ALLTOALL:
        *w = pat(c, i / n, R_ * n + i % n);
        break;
    case K_ALLTOALLV:
        if ((b = block_of(c, c->rc, c->rd, i, &j)) >= 0)
            *w = pat(c, b, R_ * 4 * n + j);
        break;
    case K_REDUCE_SCATTER:
    case K_REDUCE_SCATTER_BLOCK: /* in place, past this rank's block is undefined */
        *w = sum(c, 0, c->size, c->off + i);
        return i < c->rc[R_];
    }
    return 1;
}

static char *buf(const struct call *c, int len)
{
    size_t es = c->flags & CALL_BYTE ? 1 : c->flags & CALL_DOUBLE ? sizeof(double) : sizeof(int);
    return malloc((len + 1) * es);
}

/* Fills c's buffers (and sentinels) with the data of `salt`: what they hold before the
 * call. A persistent call is filled again before each start. */
static void call_fill(struct call *c, int salt)
{
    c->salt = salt;
    for (int i = 0; c->sb && i <= c->sn; i++)
        put(c, c->sb, i, i < c->sn ? want_sb(c, i) : sentinel(c));
    for (int i = 0; c->rb && i <= c->rn; i++)
        put(c, c->rb, i, init_rb(c, i));
}

/* Sets c up on the current communicator (C, R, S, CN). Counts: Bcast, the reductions and
 * scans have n elements; Gather, Scatter, Allgather, Alltoall n per block; the v-variants
 * colls_common.h's layouts with n; Reduce_scatter r % 3 * n for rank r, _block n each. */
static void call_init(struct call *c, int kind, int root, int n, int salt, int flags)
{
    int ip = flags & CALL_IP, at_root = R == root, sn = -1, rn = -1, total = 0, slen;
    memset(c, 0, sizeof *c);
    c->kind = kind, c->flags = flags, c->root = root, c->n = n, c->salt = salt;
    c->comm = C, c->rank = R, c->size = S, c->cname = CN;
    c->dt = flags & CALL_BYTE ? MPI_BYTE : flags & CALL_DOUBLE ? MPI_DOUBLE : MPI_INT;
    c->req = MPI_REQUEST_NULL;
    c->sc = malloc(S * sizeof(int)), c->sd = malloc(S * sizeof(int));
    c->rc = malloc(S * sizeof(int)), c->rd = malloc(S * sizeof(int));
    switch (kind) {
    case K_BARRIER:
        break;
    case K_BCAST:
        rn = n;
        break;
    case K_REDUCE:
        sn = ip && at_root ? -1 : n, rn = at_root ? n : -1;
        break;
    case K_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN:
        sn = ip ? -1 : n, rn = n;
        break;
    case K_GATHER:
    case K_ALLGATHER:
        at_root |= kind == K_ALLGATHER;
        sn = ip && at_root ? -1 : n, rn = at_root ? S * n : -1;
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
        at_root |= kind == K_ALLGATHERV;
        total = vlayout(n, c->rc, c->rd);
        sn = ip && at_root ? -1 : c->rc[R], rn = at_root ? total : -1;
        break;
    case K_SCATTER:
        sn = at_root ? S * n : -1, rn = ip && at_root ? -1 : n;
        break;
    case K_SCATTERV:
        total = vlayout(n, c->sc, c->sd);
        sn = at_root ? total : -1, rn = ip && at_root ? -1 : c->sc[R];
        break;
    case K_ALLTOALL:
        sn = ip ? -1 : S * n, rn = S * n;
        break;
    case K_ALLTOALLV:
        /* No zero counts in place when non-blocking, for the reference: Open MPI 4.1.4's
         * in-place Ialltoallv (libnbc) overwrites its temporary buffer while a send from
         * it is in flight when a count is 0 (sizes 5 and 7, messages past the eager limit:
         * wrong data). The blocking one has zeros in place (colls.c). */
        rn = a2avlayout(n, ip && flags & CALL_NB, c->sc, c->sd, c->rc, c->rd, &slen);
        sn = ip ? -1 : slen;
        break;
    case K_REDUCE_SCATTER:
    case K_REDUCE_SCATTER_BLOCK:
        for (int r = 0; r < S; r++) {
            c->rc[r] = kind == K_REDUCE_SCATTER ? r % 3 * n : n;
            c->off += r < R ? c->rc[r] : 0;
            total += c->rc[r];
        }
        sn = ip ? -1 : total, rn = ip ? total : c->rc[R];
        break;
    }
    c->sn = sn < 0 ? 0 : sn, c->rn = rn < 0 ? 0 : rn;
    c->sb = sn >= 0 ? buf(c, sn) : 0;
    c->rb = rn >= 0 ? buf(c, rn) : 0;
    call_fill(c, salt);
}

/* The blocking or the non-blocking call (whose request c keeps). */
#define BOTH(B, NB, ...) (c->flags & CALL_NB ? NB(__VA_ARGS__, &c->req) : B(__VA_ARGS__))
static void call_start(struct call *c)
{
    int n = c->n, root = c->root, rc = MPI_ERR_OTHER;
    void *sb = c->flags & CALL_IP && !c->sb ? MPI_IN_PLACE : c->sb;
    void *rb = c->flags & CALL_IP && !c->rb && c->rank == root ? MPI_IN_PLACE : c->rb;
    MPI_Datatype t = c->dt;
    MPI_Comm m = c->comm;
    switch (c->kind) {
    case K_BARRIER:
        rc = BOTH(MPI_Barrier, MPI_Ibarrier, m);
        break;
    case K_BCAST:
        rc = BOTH(MPI_Bcast, MPI_Ibcast, c->rb, n, t, root, m);
        break;
    case K_REDUCE:
        rc = BOTH(MPI_Reduce, MPI_Ireduce, sb, c->rb, n, t, MPI_SUM, root, m);
        break;
    case K_ALLREDUCE:
        rc = BOTH(MPI_Allreduce, MPI_Iallreduce, sb, c->rb, n, t, MPI_SUM, m);
        break;
    case K_GATHER:
        rc = BOTH(MPI_Gather, MPI_Igather, sb, n, t, c->rb, n, t, root, m);
        break;
    case K_GATHERV:
        rc =
            BOTH(MPI_Gatherv, MPI_Igatherv, sb, c->rc[c->rank], t, c->rb, c->rc, c->rd, t, root, m);
        break;
    case K_SCATTER:
        rc = BOTH(MPI_Scatter, MPI_Iscatter, c->sb, n, t, rb, n, t, root, m);
        break;
    case K_SCATTERV:
        rc = BOTH(MPI_Scatterv, MPI_Iscatterv, c->sb, c->sc, c->sd, t, rb, c->sc[c->rank], t, root,
                  m);
        break;
    case K_ALLGATHER:
        rc = BOTH(MPI_Allgather, MPI_Iallgather, sb, n, t, c->rb, n, t, m);
        break;
    case K_ALLGATHERV:
        rc =
            BOTH(MPI_Allgatherv, MPI_Iallgatherv, sb, c->rc[c->rank], t, c->rb, c->rc, c->rd, t, m);
        break;
    case K_ALLTOALL:
        rc = BOTH(MPI_Alltoall, MPI_Ialltoall, sb, n, t, c->rb, n, t, m);
        break;
    case K_ALLTOALLV:
        rc = BOTH(MPI_Alltoallv, MPI_Ialltoallv, sb, c->sc, c->sd, t, c->rb, c->rc, c->rd, t, m);
        break;
    case K_REDUCE_SCATTER:
        rc = BOTH(MPI_Reduce_scatter, MPI_Ireduce_scatter, sb, c->rb, c->rc, t, MPI_SUM, m);
        break;
    case K_REDUCE_SCATTER_BLOCK:
        rc = BOTH(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, sb, c->rb, n, t, MPI_SUM, m);
        break;
    case K_SCAN:
        rc = BOTH(MPI_Scan, MPI_Iscan, sb, c->rb, n, t, MPI_SUM, m);
        break;
    case K_EXSCAN:
        rc = BOTH(MPI_Exscan, MPI_Iexscan, sb, c->rb, n, t, MPI_SUM, m);
        break;
    }
    EXPECT(rc == MPI_SUCCESS, "%s on [%s]: returned %d", mpi_name(c->kind, c->flags & CALL_NB),
           c->cname, rc);
}

/* The ways of completing a single request: the request must be MPI_REQUEST_NULL after (a
 * persistent one, CALL_PERSIST: still there, inactive). */
#define NHOW 8
static void call_complete(struct call *c, int how)
{
    int flag = 0, idx = 0, outs = 0;
    if (!(c->flags & CALL_NB))
        return;
    switch (how % NHOW) {
    case 0:
        MPI_Wait(&c->req, MPI_STATUS_IGNORE);
        break;
    case 1:
        while (!flag)
            MPI_Test(&c->req, &flag, MPI_STATUS_IGNORE);
        break;
    case 2:
        MPI_Waitall(1, &c->req, MPI_STATUSES_IGNORE);
        break;
    case 3:
        while (!flag)
            MPI_Testall(1, &c->req, &flag, MPI_STATUSES_IGNORE);
        break;
    case 4:
        MPI_Waitany(1, &c->req, &idx, MPI_STATUS_IGNORE);
        break;
    case 5:
        while (!flag)
            MPI_Testany(1, &c->req, &idx, &flag, MPI_STATUS_IGNORE);
        break;
    case 6:
        MPI_Waitsome(1, &c->req, &outs, &idx, MPI_STATUSES_IGNORE);
        break;
    case 7:
        while (!outs)
            MPI_Testsome(1, &c->req, &outs, &idx, MPI_STATUSES_IGNORE);
        break;
    }
    EXPECT(idx == 0 && outs == (how % NHOW >= 6), "completion %d: index %d, outcount %d",
           how % NHOW, idx, outs);
    if (c->flags & CALL_PERSIST)
        EXPECT(c->req != MPI_REQUEST_NULL, "completion %d freed the persistent request",
               how % NHOW);
    else
        EXPECT(c->req == MPI_REQUEST_NULL, "completion %d: the request is not MPI_REQUEST_NULL",
               how % NHOW);
}

static int call_fail(const struct call *c, const char *what, int i, double got, double w)
{
    char root[20] = "";
    if (rooted(c->kind))
        snprintf(root, sizeof root, ", root %d", c->root);
    fail("%s%s%s on [%s]%s, n %d: %s element %d is %g, expected %g",
         mpi_name(c->kind, c->flags & CALL_NB), c->flags & CALL_IP ? " in place" : "",
         c->flags & CALL_BYTE     ? " of bytes"
         : c->flags & CALL_DOUBLE ? " of doubles"
                                  : "",
         c->cname, root, c->n, what, i, got, w);
    return 0;
}
/* Compares both buffers with what they must hold; records the first difference. */
static int call_check(const struct call *c)
{
    double got, w;
    for (int i = 0; c->sb && i <= c->sn; i++)
        if ((got = get(c, c->sb, i)) != (w = i < c->sn ? want_sb(c, i) : sentinel(c)))
            return call_fail(c, "send", i, got, w);
    for (int i = 0; c->rb && i <= c->rn; i++)
        if (want_rb(c, i, &w) && (got = get(c, c->rb, i)) != w)
            return call_fail(c, "receive", i, got, w);
    return 1;
}

static void call_free(struct call *c)
{
    free(c->sb), free(c->rb), free(c->sc), free(c->sd), free(c->rc), free(c->rd);
}

/* All of it, for a call alone; `how` as call_complete's. */
static int call_run(int kind, int root, int n, int salt, int flags, int how)
{
    struct call c;
    call_init(&c, kind, root, n, salt, flags);
    call_start(&c);
    call_complete(&c, how);
    int ok = call_check(&c);
    call_free(&c);
    return ok;
}

#endif
