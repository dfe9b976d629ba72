/*
 * wmpi_king.c: collectives on a universe, the "King" model of h3-Open-UTIL/MP (spec 9):
 * inside each PB the PB's own MPI (on a dup of its MPI_COMM_WORLD), between PBs WaitIO
 * only, and only between the Kings (rank 0 of each PB, universe rank king[pb]). PB blocks
 * are contiguous in universe rank order, so every PB's part of a gathered or scattered
 * buffer is one contiguous block at the King. Not copied from spec 9.3: MAX and MIN start
 * from the first contribution, every function returns a status.
 * Called from wmpi_coll.c (and the King bench) with arguments already checked.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "wmpi_int.h"

/* Tag of the layer's point-to-point messages on the local communicator (a dup only this
 * layer uses, and in the same collective order on every process, so one tag suffices). */
#define WMPI_LOCAL_TAG 0

/* Where the root is: its PB and its rank inside that PB. */
struct wmpi_root {
    int pb, lrank;
    int here;   /* this process is in the root's PB */
    int isroot; /* this process is the root */
};

static struct wmpi_root wmpi_root_of(const struct wmpi_comm *c, int root)
{
    struct wmpi_root w;

    w.pb = wmpi_pb_of(c, root);
    w.lrank = root - c->king[w.pb];
    w.here = w.pb == c->pbid;
    w.isroot = c->rank == root;
    return w;
}

/* Local MPI point-to-point of bytes (the root and its King). */
static int wmpi_lsend(const char *call, struct wmpi_comm *c, const void *buf, size_t bytes, int dst)
{
    if (bytes > INT_MAX)
        return wmpi_err(call, "%zu bytes exceed the local MPI's int count", bytes);
    return wmpi_mpi_ok(call, "MPI_Send",
                       MPI_Send((void *)buf, (int)bytes, MPI_BYTE, dst, WMPI_LOCAL_TAG, c->local));
}

static int wmpi_lrecv(const char *call, struct wmpi_comm *c, void *buf, size_t bytes, int src)
{
    if (bytes > INT_MAX)
        return wmpi_err(call, "%zu bytes exceed the local MPI's int count", bytes);
    return wmpi_mpi_ok(
        call, "MPI_Recv",
        MPI_Recv(buf, (int)bytes, MPI_BYTE, src, WMPI_LOCAL_TAG, c->local, MPI_STATUS_IGNORE));
}

/* The root's King (or PB 0's King in a barrier): posts one transfer per other King j, to
 * or from base + off[j], off[j + 1] - off[j] bytes (off NULL: base and len for every
 * King); *n counts the posted ones, which the caller waits for even after an error. */
static int wmpi_king_fan(const char *call, struct wmpi_comm *c, int send, char *base,
                         const size_t *off, size_t len, waitio_tag_t tag, waitio_req_t *reqs,
                         int *n)
{
    *n = 0;
    for (int j = 0; j < c->npb; j++) {
        if (j == c->pbid)
            continue;
        if (wmpi_post(call, send, c->group, c->king[j], off ? base + off[j] : base,
                      off ? off[j + 1] - off[j] : len, tag, &reqs[*n]))
            return 1;
        (*n)++;
    }
    return 0;
}

/* Allocations of the collectives: malloc that never returns NULL for size 0. */
static void *wmpi_alloc(size_t n)
{
    return malloc(n ? n : 1);
}

/* bcast: root -> its King (local MPI) -> every other King (WaitIO) -> each PB (MPI_Bcast).
 * Every step runs even after an earlier error, so no process of a PB is left waiting in
 * a local collective. */
int wmpi_king_bcast(const char *call, struct wmpi_comm *c, void *buf, size_t bytes, int root,
                    waitio_tag_t tag)
{
    struct wmpi_root w = wmpi_root_of(c, root);
    waitio_req_t *reqs = NULL;
    int n = 0, rc = 0;

    if (bytes > INT_MAX)
        return wmpi_err(call, "%zu bytes exceed the local MPI's int count", bytes);
    if (w.here && w.lrank != 0) {
        if (w.isroot)
            rc |= wmpi_lsend(call, c, buf, bytes, 0);
        else if (c->lrank == 0)
            rc |= wmpi_lrecv(call, c, buf, bytes, w.lrank);
    }
    if (c->lrank == 0 && c->npb > 1) {
        if (w.here) {
            reqs = wmpi_alloc(c->npb * sizeof(*reqs));
            if (!reqs)
                return wmpi_err(call, "out of memory");
            rc |= wmpi_king_fan(call, c, 1, buf, NULL, bytes, tag, reqs, &n);
        } else {
            rc |= wmpi_wrecv(call, c->group, c->king[w.pb], buf, bytes, tag);
        }
    }
    /* The root King's WaitIO sends only read buf, so the local broadcast overlaps them. */
    if (c->lsize > 1)
        rc |= wmpi_mpi_ok(call, "MPI_Bcast", MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, c->local));
    if (reqs) {
        rc |= wmpi_wait_each(call, reqs, n);
        free(reqs);
    }
    return rc;
}

/* reduce: MPI_Reduce to each King, the Kings' partial results to the root's King over
 * WaitIO, combined there in PB order (so every run gives the same rounding), then handed
 * to the root by local MPI. sbuf is only read; rbuf is written at the root only. */
int wmpi_king_reduce(const char *call, struct wmpi_comm *c, const void *sbuf, void *rbuf, int count,
                     WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, int root, waitio_tag_t tag)
{
    struct wmpi_root w = wmpi_root_of(c, root);
    MPI_Datatype mdt;
    MPI_Op mop;
    size_t bytes, *off = NULL;
    waitio_req_t *reqs = NULL;
    char *all = NULL;
    int n = 0, rc = 0;

    if (wmpi_op_check(call, dt, op, &mdt, &mop) || wmpi_bytes(call, count, dt, &bytes))
        return 1;
    if (bytes && (size_t)c->npb > SIZE_MAX / bytes)
        return wmpi_err(call, "%d x %zu bytes overflow", c->npb, bytes);
    if (c->lrank == 0) {
        /* The root's King holds one partial result per PB, PB j's at off[j]. */
        all = wmpi_alloc(w.here ? bytes * c->npb : bytes);
        off = wmpi_alloc((c->npb + 1) * sizeof(*off));
        reqs = wmpi_alloc(c->npb * sizeof(*reqs));
        if (!all || !off || !reqs) {
            free(all), free(off), free(reqs);
            return wmpi_err(call, "out of memory");
        }
        for (int j = 0; j <= c->npb; j++)
            off[j] = w.here ? bytes * j : 0;
    }
    /* sbuf: MPI-2 headers take a non-const send buffer; it is only read. */
    rc |= wmpi_mpi_ok(
        call, "MPI_Reduce",
        MPI_Reduce((void *)sbuf, all ? all + off[c->pbid] : NULL, count, mdt, mop, 0, c->local));
    if (c->lrank == 0) {
        if (w.here) {
            rc |= wmpi_king_fan(call, c, 0, all, off, 0, tag, reqs, &n);
            rc |= wmpi_wait_each(call, reqs, n);
            for (int j = 1; j < c->npb; j++)
                wmpi_op_apply(dt, op, all, all + off[j], count);
            if (w.lrank == 0)
                memcpy(rbuf, all, bytes);
            else
                rc |= wmpi_lsend(call, c, all, bytes, w.lrank);
        } else {
            rc |= wmpi_wsend(call, c->group, c->king[w.pb], all, bytes, tag);
        }
    } else if (w.isroot) {
        rc |= wmpi_lrecv(call, c, rbuf, bytes, 0);
    }
    free(all);
    free(off);
    free(reqs);
    return rc;
}

/* A King's view of its own PB in a gatherv or scatterv: each member's byte count (lcnt),
 * displacement (ldisp) and the block total B; mine is this process's own count. Local MPI
 * collective (MPI_Gather of the counts) unless uniform. Arrays NULL on non-Kings. */
struct wmpi_block {
    int *lcnt, *ldisp;
    size_t total;
};

static int wmpi_block_counts(const char *call, struct wmpi_comm *c, int uniform, int mine,
                             struct wmpi_block *b)
{
    int rc = 0;

    b->lcnt = b->ldisp = NULL;
    b->total = 0;
    if (c->lrank == 0) {
        b->lcnt = wmpi_alloc(c->lsize * sizeof(int));
        b->ldisp = wmpi_alloc(c->lsize * sizeof(int));
        if (!b->lcnt || !b->ldisp)
            rc = wmpi_err(call, "out of memory");
    }
    if (uniform) {
        for (int i = 0; b->lcnt && i < c->lsize; i++)
            b->lcnt[i] = mine;
    } else {
        rc |= wmpi_mpi_ok(call, "MPI_Gather",
                          MPI_Gather(&mine, 1, MPI_INT, b->lcnt, 1, MPI_INT, 0, c->local));
    }
    for (int i = 0; b->lcnt && b->ldisp && i < c->lsize; i++) {
        b->ldisp[i] = (int)b->total;
        b->total += (size_t)b->lcnt[i];
        if (b->total > INT_MAX)
            rc =
                wmpi_err(call, "PB block of %zu bytes exceeds the local MPI's int count", b->total);
    }
    return rc;
}

/* The root and its King: the root's per-rank byte table (given, or every rank `mine` when
 * uniform), moved from a root that is not the King to the King by local MPI, and turned
 * into per-PB offsets off[0..npb] of the packed buffer (off[npb] = total). */
static int wmpi_root_table(const char *call, struct wmpi_comm *c, const struct wmpi_root *w,
                           int uniform, int mine, const int *given, int **tabp, size_t **offp)
{
    int *tab = wmpi_alloc(c->size * sizeof(int));
    size_t *off = wmpi_alloc((c->npb + 1) * sizeof(size_t)), sum = 0;
    int rc = 0, pb = 0;

    *tabp = tab;
    *offp = off;
    if (!tab || !off)
        return wmpi_err(call, "out of memory");
    for (int r = 0; r < c->size; r++)
        tab[r] = uniform ? mine : w->isroot ? given[r] : 0;
    if (!uniform && w->lrank != 0) {
        if (w->isroot)
            rc |= wmpi_lsend(call, c, tab, c->size * sizeof(int), 0);
        else
            rc |= wmpi_lrecv(call, c, tab, c->size * sizeof(int), w->lrank);
    }
    for (int r = 0; r < c->size; r++) {
        while (pb <= c->npb && c->king[pb] == r)
            off[pb++] = sum;
        if (tab[r] < 0)
            rc = wmpi_err(call, "negative count for rank %d", r);
        else
            sum += (size_t)tab[r];
    }
    while (pb <= c->npb)
        off[pb++] = sum;
    return rc;
}

/* Root only: packed (rank order, tab[r] bytes each) <-> user buffer at displ[r]. */
static void wmpi_unpack(char *user, const char *packed, const int *tab, const size_t *displ,
                        int size, int to_user)
{
    size_t p = 0;

    for (int r = 0; r < size; r++) {
        if (to_user)
            memcpy(user + displ[r], packed + p, tab[r]);
        else
            memcpy((char *)packed + p, user + displ[r], tab[r]);
        p += (size_t)tab[r];
    }
}

/* gatherv: MPI_Gatherv of each PB's block at its King, every King's block to the root's
 * King over WaitIO (PB blocks are contiguous in rank order), then to the root by local
 * MPI, and finally placed at the root's displacements. */
int wmpi_king_gatherv(const char *call, struct wmpi_comm *c, const void *sbuf, int sbytes,
                      void *rbuf, int uniform, const int *rbytes, const size_t *rdispl, int root,
                      waitio_tag_t tag)
{
    struct wmpi_root w = wmpi_root_of(c, root);
    struct wmpi_block b;
    waitio_req_t *reqs = NULL;
    size_t *off = NULL;
    int *tab = NULL, n = 0, rc;
    char *blk = NULL, *all = NULL;

    rc = wmpi_block_counts(call, c, uniform, sbytes, &b);
    if (c->lrank == 0 && !(blk = wmpi_alloc(b.total)))
        rc = wmpi_err(call, "out of memory");
    /* sbuf: MPI-2 headers take a non-const send buffer; it is only read. */
    rc |= wmpi_mpi_ok(
        call, "MPI_Gatherv",
        MPI_Gatherv((void *)sbuf, sbytes, MPI_BYTE, blk, b.lcnt, b.ldisp, MPI_BYTE, 0, c->local));
    if (w.here && (c->lrank == 0 || w.isroot))
        rc |= wmpi_root_table(call, c, &w, uniform, sbytes, rbytes, &tab, &off);
    if (rc) {
        /* Counts disagree or memory ran out: stop before WaitIO sizes go wrong. */
    } else if (c->lrank == 0 && w.here) {
        size_t mine = off[c->pbid + 1] - off[c->pbid];

        /* Packed straight into rbuf when the King is the root and nothing moves. */
        all = (w.isroot && !rdispl) ? rbuf : wmpi_alloc(off[c->npb]);
        reqs = wmpi_alloc(c->npb * sizeof(*reqs));
        if (!all || !reqs)
            rc = wmpi_err(call, "out of memory");
        else if (mine != b.total)
            rc = wmpi_err(call, "root expects %zu bytes from PB %d, its ranks send %zu", mine,
                          c->pbid, b.total);
        if (!rc) {
            memcpy(all + off[c->pbid], blk, b.total);
            rc |= wmpi_king_fan(call, c, 0, all, off, 0, tag, reqs, &n);
            rc |= wmpi_wait_each(call, reqs, n);
            if (!w.isroot)
                rc |= wmpi_lsend(call, c, all, off[c->npb], w.lrank);
            else if (rdispl)
                wmpi_unpack(rbuf, all, tab, rdispl, c->size, 1);
        }
    } else if (c->lrank == 0) {
        rc |= wmpi_wsend(call, c->group, c->king[w.pb], blk, b.total, tag);
    } else if (w.isroot) {
        all = wmpi_alloc(off[c->npb]);
        if (!all)
            rc = wmpi_err(call, "out of memory");
        else if (!(rc |= wmpi_lrecv(call, c, all, off[c->npb], 0))) {
            if (rdispl)
                wmpi_unpack(rbuf, all, tab, rdispl, c->size, 1);
            else
                memcpy(rbuf, all, off[c->npb]);
        }
    }
    if (all != rbuf)
        free(all);
    free(reqs), free(blk), free(tab), free(off), free(b.lcnt), free(b.ldisp);
    return rc;
}

/* scatterv: the root's parts packed in rank order, to the root's King by local MPI, each
 * PB's block to its King over WaitIO, then MPI_Scatterv inside each PB. */
int wmpi_king_scatterv(const char *call, struct wmpi_comm *c, const void *sbuf, int uniform,
                       const int *sbytes, const size_t *sdispl, void *rbuf, int rbytes, int root,
                       waitio_tag_t tag)
{
    struct wmpi_root w = wmpi_root_of(c, root);
    struct wmpi_block b;
    waitio_req_t *reqs = NULL;
    size_t *off = NULL;
    int *tab = NULL, n = 0, rc;
    char *packed = NULL, *blk = NULL;
    int own_packed = 0, own_blk = 0;

    rc = wmpi_block_counts(call, c, uniform, rbytes, &b);
    if (w.here && (c->lrank == 0 || w.isroot))
        rc |= wmpi_root_table(call, c, &w, uniform, rbytes, sbytes, &tab, &off);
    if (!rc && w.isroot) {
        /* The root's parts, packed in rank order (sbuf itself when already packed). */
        if (sdispl) {
            packed = wmpi_alloc(off[c->npb]);
            own_packed = 1;
            if (packed)
                wmpi_unpack((char *)sbuf, packed, tab, sdispl, c->size, 0);
        } else {
            packed = (char *)sbuf; /* only read */
        }
        if (!packed)
            rc = wmpi_err(call, "out of memory");
        else if (c->lrank != 0)
            rc |= wmpi_lsend(call, c, packed, off[c->npb], 0);
    } else if (!rc && c->lrank == 0 && w.here) {
        packed = wmpi_alloc(off[c->npb]);
        own_packed = 1;
        if (!packed)
            rc = wmpi_err(call, "out of memory");
        else
            rc |= wmpi_lrecv(call, c, packed, off[c->npb], w.lrank);
    }
    if (c->lrank == 0 && w.here && !rc) {
        reqs = wmpi_alloc(c->npb * sizeof(*reqs));
        if (!reqs)
            rc = wmpi_err(call, "out of memory");
        else if (off[c->pbid + 1] - off[c->pbid] != b.total)
            rc = wmpi_err(call, "root sends %zu bytes to PB %d, its ranks take %zu",
                          off[c->pbid + 1] - off[c->pbid], c->pbid, b.total);
        else
            rc |= wmpi_king_fan(call, c, 1, packed, off, 0, tag, reqs, &n);
        blk = packed + off[c->pbid];
    } else if (c->lrank == 0 && !w.here) {
        blk = wmpi_alloc(b.total);
        own_blk = 1;
        if (!blk)
            rc = wmpi_err(call, "out of memory");
        else
            rc |= wmpi_wrecv(call, c->group, c->king[w.pb], blk, b.total, tag);
    }
    /* The root King's WaitIO sends only read packed, so the local scatter overlaps them. */
    rc |= wmpi_mpi_ok(
        call, "MPI_Scatterv",
        MPI_Scatterv(blk, b.lcnt, b.ldisp, MPI_BYTE, rbuf, rbytes, MPI_BYTE, 0, c->local));
    rc |= wmpi_wait_each(call, reqs, n);
    if (own_packed)
        free(packed);
    if (own_blk)
        free(blk);
    free(reqs), free(tab), free(off), free(b.lcnt), free(b.ldisp);
    return rc;
}

/* barrier: every PB meets locally, the Kings meet at PB 0's King over WaitIO (empty
 * messages in, then out), and the second local barrier holds each PB until its King is
 * back. */
int wmpi_king_barrier(const char *call, struct wmpi_comm *c, waitio_tag_t tag)
{
    char none[1] = {0};
    waitio_req_t *reqs;
    int n = 0, rc;

    rc = wmpi_mpi_ok(call, "MPI_Barrier", MPI_Barrier(c->local));
    if (c->lrank == 0 && c->npb > 1) {
        if (c->pbid != 0) {
            rc |= wmpi_wsend(call, c->group, c->king[0], none, 0, tag);
            rc |= wmpi_wrecv(call, c->group, c->king[0], none, 0, tag);
        } else if ((reqs = wmpi_alloc(c->npb * sizeof(*reqs)))) {
            rc |= wmpi_king_fan(call, c, 0, none, NULL, 0, tag, reqs, &n);
            rc |= wmpi_wait_each(call, reqs, n);
            rc |= wmpi_king_fan(call, c, 1, none, NULL, 0, tag, reqs, &n);
            rc |= wmpi_wait_each(call, reqs, n);
            free(reqs);
        } else {
            rc = wmpi_err(call, "out of memory");
        }
    }
    rc |= wmpi_mpi_ok(call, "MPI_Barrier", MPI_Barrier(c->local));
    return rc;
}
