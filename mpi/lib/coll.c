/*
 * coll.c: the blocking collectives, each one simple algorithm over point-to-point on the
 * communicator's collective context (ctx + 1), so they never match the program's own
 * messages. Every algorithm is written once, here; the CAD issue turns them into graphs.
 *
 *   Barrier         dissemination (ceil(log2 n) rounds of zero-byte messages)
 *   Bcast           binomial tree from the root
 *   Reduce          binomial tree to rank 0 in rank order (correct for non-commutative
 *                   ops: each step combines a lower block with the next higher one), then
 *                   to the root if it is not 0
 *   Allreduce       Reduce to 0 + Bcast
 *   Gather(v), Scatter(v)   linear at the root
 *   Allgather       Gather to 0 + Bcast;  Allgatherv: ring
 *   Alltoall(v)     all receives posted, then all sends
 *   Reduce_scatter(_block)  Reduce to 0 + Scatterv
 *   Scan, Exscan    chain from rank 0
 *
 * Reductions combine buffers laid out by the datatype (op_apply's contract).
 */
#include "mpi_impl.h"
#include <stdlib.h>
#include <string.h>

enum { T_BARRIER = 1, T_BCAST, T_REDUCE, T_GATHER, T_SCATTER, T_ALLGATHER, T_ALLTOALL, T_SCAN };

static int csend(const void *b, int n, MPI_Datatype dt, int to, int tag, MPI_Comm c)
{
    MPI_Request r;
    int rc = p2p_isend(b, n, dt, to, tag, c, 1, 0, &r);
    return rc != MPI_SUCCESS ? rc : req_wait(&r, MPI_STATUS_IGNORE);
}

static int crecv(void *b, int n, MPI_Datatype dt, int from, int tag, MPI_Comm c)
{
    MPI_Request r;
    int rc = p2p_irecv(b, n, dt, from, tag, c, 1, &r);
    return rc != MPI_SUCCESS ? rc : req_wait(&r, MPI_STATUS_IGNORE);
}

static int csendrecv(const void *sb, int sn, MPI_Datatype sdt, int to, void *rb, int rn,
                     MPI_Datatype rdt, int from, int tag, MPI_Comm c)
{
    MPI_Request r[2];
    int rc = p2p_irecv(rb, rn, rdt, from, tag, c, 1, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = p2p_isend(sb, sn, sdt, to, tag, c, 1, 0, &r[1]);
    if (rc != MPI_SUCCESS) {
        req_wait(&r[0], MPI_STATUS_IGNORE);
        return rc;
    }
    return req_waitall(2, r);
}

/* A buffer for `count` elements of dt laid out as in a user buffer; free with tfree. */
static void *talloc(int count, MPI_Datatype dt)
{
    size_t ext = (size_t)dt_extent(dt), sz = dt_size(dt);
    size_t bytes = (size_t)count * (ext > sz ? ext : sz) + 16;
    char *raw = malloc(bytes);
    return raw ? raw - dt_lb(dt) : 0;
}

static void tfree(void *p, MPI_Datatype dt)
{
    if (p)
        free((char *)p + dt_lb(dt));
}

/* Copy count elements between two typed buffers of the same signature. */
static int local_copy(const void *src, int scount, MPI_Datatype sdt, void *dst, int rcount,
                      MPI_Datatype rdt)
{
    size_t sb = (size_t)scount * dt_size(sdt), rb = (size_t)rcount * dt_size(rdt);
    if (sb > rb)
        return MPI_ERR_TRUNCATE;
    if (!sb)
        return MPI_SUCCESS;
    void *tmp = malloc(sb);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    dt_pack(src, scount, sdt, tmp);
    dt_unpack(tmp, sb, dst, rcount, rdt);
    free(tmp);
    return MPI_SUCCESS;
}

static char *at(const void *buf, size_t index, int count, MPI_Datatype dt)
{
    return (char *)buf + (MPI_Aint)index * count * dt_extent(dt);
}

static char *atd(const void *buf, int displ, MPI_Datatype dt)
{
    return (char *)buf + (MPI_Aint)displ * dt_extent(dt);
}

int coll_barrier(MPI_Comm c)
{
    int n = c->size, r = c->rank, rc = MPI_SUCCESS;
    for (int k = 1; k < n && rc == MPI_SUCCESS; k <<= 1)
        rc = csendrecv(0, 0, MPI_BYTE, (r + k) % n, 0, 0, MPI_BYTE, (r - k + n) % n, T_BARRIER, c);
    return rc;
}

int coll_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm c)
{
    int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc = MPI_SUCCESS;
    while (mask < n) {
        if (vr & mask) {
            rc = crecv(buf, count, dt, (vr - mask + root) % n, T_BCAST, c);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (vr + mask < n)
            rc = csend(buf, count, dt, (vr + mask + root) % n, T_BCAST, c);
    return rc;
}

/* Reduce `mine` to rank 0 (result in *out at rank 0, a talloc buffer the caller frees). */
static int reduce_to0(const void *mine, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c,
                      void **out)
{
    int n = c->size, r = c->rank, rc;
    void *acc = talloc(count, dt), *tmp = talloc(count, dt);
    if (!acc || !tmp) {
        tfree(acc, dt);
        tfree(tmp, dt);
        return MPI_ERR_NO_MEM;
    }
    rc = local_copy(mine, count, dt, acc, count, dt);
    for (int mask = 1; mask < n && rc == MPI_SUCCESS; mask <<= 1) {
        if (r & mask) { /* hand [r, r+mask) down to r - mask */
            rc = csend(acc, count, dt, r - mask, T_REDUCE, c);
            break;
        }
        if (r + mask < n) { /* acc = [r, r+mask) op [r+mask, r+2mask) */
            rc = crecv(tmp, count, dt, r + mask, T_REDUCE, c);
            if (rc == MPI_SUCCESS)
                rc = op_apply(op, acc, tmp, count, dt);
            void *t = acc;
            acc = tmp;
            tmp = t;
        }
    }
    tfree(tmp, dt);
    if (r == 0 && rc == MPI_SUCCESS) {
        *out = acc;
    } else {
        tfree(acc, dt);
        *out = 0;
    }
    return rc;
}

int coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm c)
{
    int rc = op_check(op, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *res = 0;
    rc = reduce_to0(mine, count, dt, op, c, &res);
    if (rc == MPI_SUCCESS && c->rank == 0 && root == 0)
        rc = local_copy(res, count, dt, rbuf, count, dt);
    else if (rc == MPI_SUCCESS && c->rank == 0)
        rc = csend(res, count, dt, root, T_REDUCE, c);
    else if (rc == MPI_SUCCESS && c->rank == root)
        rc = crecv(rbuf, count, dt, 0, T_REDUCE, c);
    tfree(res, dt);
    return rc;
}

int coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm c)
{
    int rc = coll_reduce(sbuf, rbuf, count, dt, op, 0, c);
    return rc != MPI_SUCCESS ? rc : coll_bcast(rbuf, count, dt, 0, c);
}

int coll_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int *rcounts,
                 const int *displs, MPI_Datatype rdt, int root, MPI_Comm c)
{
    if (c->rank != root)
        return csend(sbuf, scount, sdt, root, T_GATHER, c);
    int n = c->size, rc = MPI_SUCCESS;
    MPI_Request *r = malloc(sizeof *r * (size_t)n);
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        r[i] = MPI_REQUEST_NULL;
        if (i == root) {
            if (sbuf != MPI_IN_PLACE)
                rc = local_copy(sbuf, scount, sdt, atd(rbuf, displs[i], rdt), rcounts[i], rdt);
        } else if (rc == MPI_SUCCESS) {
            rc = p2p_irecv(atd(rbuf, displs[i], rdt), rcounts[i], rdt, i, T_GATHER, c, 1, &r[i]);
        }
    }
    int rc2 = req_waitall(n, r);
    free(r);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* Regular counts as the v-variant's arrays. */
static int *regular(int n, int count, int **displs)
{
    int *counts = malloc(sizeof(int) * 2 * (size_t)n);
    if (!counts)
        return 0;
    *displs = counts + n;
    for (int i = 0; i < n; i++) {
        counts[i] = count;
        (*displs)[i] = i * count;
    }
    return counts;
}

int coll_gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                MPI_Datatype rdt, int root, MPI_Comm c)
{
    int *displs, *counts = regular(c->size, rcount, &displs);
    if (!counts)
        return MPI_ERR_NO_MEM;
    int rc = coll_gatherv(sbuf, scount, sdt, rbuf, counts, displs, rdt, root, c);
    free(counts);
    return rc;
}

int coll_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype sdt,
                  void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm c)
{
    if (c->rank != root)
        return crecv(rbuf, rcount, rdt, root, T_SCATTER, c);
    int n = c->size, rc = MPI_SUCCESS;
    MPI_Request *r = malloc(sizeof *r * (size_t)n);
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        r[i] = MPI_REQUEST_NULL;
        if (i == root) {
            if (rbuf != MPI_IN_PLACE)
                rc = local_copy(atd(sbuf, displs[i], sdt), scounts[i], sdt, rbuf, rcount, rdt);
        } else if (rc == MPI_SUCCESS) {
            rc =
                p2p_isend(atd(sbuf, displs[i], sdt), scounts[i], sdt, i, T_SCATTER, c, 1, 0, &r[i]);
        }
    }
    int rc2 = req_waitall(n, r);
    free(r);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int coll_scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                 MPI_Datatype rdt, int root, MPI_Comm c)
{
    int *displs, *counts = regular(c->size, scount, &displs);
    if (!counts)
        return MPI_ERR_NO_MEM;
    int rc = coll_scatterv(sbuf, counts, displs, sdt, rbuf, rcount, rdt, root, c);
    free(counts);
    return rc;
}

int coll_allgather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                   MPI_Datatype rdt, MPI_Comm c)
{
    int rc;
    if (sbuf == MPI_IN_PLACE && c->rank != 0) /* my block already sits in rbuf */
        rc = coll_gather(at(rbuf, (size_t)c->rank, rcount, rdt), rcount, rdt, rbuf, rcount, rdt, 0,
                         c);
    else
        rc = coll_gather(sbuf, scount, sdt, rbuf, rcount, rdt, 0, c);
    return rc != MPI_SUCCESS ? rc : coll_bcast(rbuf, rcount * c->size, rdt, 0, c);
}

int coll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, const int *rcounts,
                    const int *displs, MPI_Datatype rdt, MPI_Comm c)
{
    int n = c->size, r = c->rank, rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        rc = local_copy(sbuf, scount, sdt, atd(rbuf, displs[r], rdt), rcounts[r], rdt);
    for (int s = 0; s < n - 1 && rc == MPI_SUCCESS; s++) {
        int out = (r - s + n) % n, in = (r - s - 1 + n) % n;
        rc = csendrecv(atd(rbuf, displs[out], rdt), rcounts[out], rdt, (r + 1) % n,
                       atd(rbuf, displs[in], rdt), rcounts[in], rdt, (r - 1 + n) % n, T_ALLGATHER,
                       c);
    }
    return rc;
}

int coll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt,
                   void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm c)
{
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    void *copy = 0;
    if (sbuf == MPI_IN_PLACE) { /* send from a copy of rbuf, laid out like it */
        size_t span = 0;
        for (int i = 0; i < n; i++) {
            size_t end = (size_t)(rdispls[i] + rcounts[i]) * (size_t)dt_extent(rdt);
            span = end > span ? end : span;
        }
        copy = malloc(span + 1);
        if (!copy)
            return MPI_ERR_NO_MEM;
        memcpy(copy, rbuf, span);
        sbuf = copy;
        scounts = rcounts;
        sdispls = rdispls;
        sdt = rdt;
    }
    MPI_Request *r = malloc(sizeof *r * 2 * (size_t)n);
    if (!r) {
        free(copy);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < 2 * n; i++)
        r[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        if (i != me)
            rc = p2p_irecv(atd(rbuf, rdispls[i], rdt), rcounts[i], rdt, i, T_ALLTOALL, c, 1, &r[i]);
    for (int k = 1; k < n && rc == MPI_SUCCESS; k++) { /* staggered: not all to rank 0 first */
        int i = (me + k) % n;
        rc = p2p_isend(atd(sbuf, sdispls[i], sdt), scounts[i], sdt, i, T_ALLTOALL, c, 1, 0,
                       &r[n + i]);
    }
    if (rc == MPI_SUCCESS)
        rc = local_copy(atd(sbuf, sdispls[me], sdt), scounts[me], sdt, atd(rbuf, rdispls[me], rdt),
                        rcounts[me], rdt);
    int rc2 = req_waitall(2 * n, r);
    free(r);
    free(copy);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int coll_alltoall(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                  MPI_Datatype rdt, MPI_Comm c)
{
    int *sd, *rd, *sc = regular(c->size, scount, &sd), *rc_ = regular(c->size, rcount, &rd);
    int rc = sc && rc_ ? coll_alltoallv(sbuf, sc, sd, sdt, rbuf, rc_, rd, rdt, c) : MPI_ERR_NO_MEM;
    free(sc);
    free(rc_);
    return rc;
}

int coll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
                        MPI_Op op, MPI_Comm c)
{
    int n = c->size, total = 0;
    int *displs = malloc(sizeof(int) * (size_t)n);
    if (!displs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        displs[i] = total;
        total += rcounts[i];
    }
    int rc = op_check(op, dt);
    void *res = 0;
    if (rc == MPI_SUCCESS)
        rc = reduce_to0(sbuf == MPI_IN_PLACE ? rbuf : sbuf, total, dt, op, c, &res);
    if (rc == MPI_SUCCESS)
        rc = coll_scatterv(res, rcounts, displs, dt, rbuf, rcounts[c->rank], dt, 0, c);
    tfree(res, dt);
    free(displs);
    return rc;
}

/* Inclusive (exclusive = 0) or exclusive prefix reduction along the chain 0 -> n-1. */
int coll_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int exclusive,
              MPI_Comm c)
{
    int rc = op_check(op, dt), r = c->rank;
    if (rc != MPI_SUCCESS)
        return rc;
    void *mine = talloc(count, dt), *prev = talloc(count, dt);
    if (!mine || !prev) {
        tfree(mine, dt);
        tfree(prev, dt);
        return MPI_ERR_NO_MEM;
    }
    rc = local_copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, mine, count, dt);
    if (rc == MPI_SUCCESS && r > 0) {
        rc = crecv(prev, count, dt, r - 1, T_SCAN, c); /* x0 op ... op x(r-1) */
        if (rc == MPI_SUCCESS && exclusive)
            rc = local_copy(prev, count, dt, rbuf, count, dt);
        if (rc == MPI_SUCCESS)
            rc = op_apply(op, prev, mine, count, dt); /* mine = prev op mine */
    }
    if (rc == MPI_SUCCESS && !exclusive)
        rc = local_copy(mine, count, dt, rbuf, count, dt);
    if (rc == MPI_SUCCESS && r + 1 < c->size)
        rc = csend(mine, count, dt, r + 1, T_SCAN, c);
    tfree(mine, dt);
    tfree(prev, dt);
    return rc;
}

/* For comm.c. */
int coll_allreduce_max_int(int *v, MPI_Comm comm)
{
    return coll_allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MAX, comm);
}

int coll_allgather_ints(const int *mine, int n, int *all, MPI_Comm comm)
{
    return coll_allgather(mine, n, MPI_INT, all, n, MPI_INT, comm);
}
