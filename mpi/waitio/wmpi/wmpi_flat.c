/*
 * wmpi_flat.c: collectives over WaitIO only, for groups that are not a universe (pbhead,
 * groups the program built): the root talks to every other member directly, posting all
 * transfers before waiting for any, so their progress overlaps inside waitio_wait.
 * Called from wmpi_coll.c (and the King bench) with arguments already checked.
 */
#include <stdlib.h>
#include <string.h>

#include "wmpi_int.h"

/* Posts one transfer per member other than the root, to or from the buffer part of member
 * r (its byte count cnt(r) at offset off(r) of base), then waits for all of them. */
static int wmpi_flat_fan(const char *call, struct wmpi_comm *c, int send, char *base,
                         const int *cnts, int uniform_cnt, const size_t *offs, int root,
                         waitio_tag_t tag)
{
    waitio_req_t *reqs = malloc(c->size * sizeof(*reqs));
    size_t packed = 0;
    int n = 0, rc = 0;

    if (!reqs)
        return wmpi_err(call, "out of memory");
    for (int r = 0; r < c->size; r++) {
        size_t cnt = cnts ? (size_t)cnts[r] : (size_t)uniform_cnt;
        size_t off = offs ? offs[r] : packed;

        packed += cnt;
        if (r == root)
            continue;
        if (wmpi_post(call, send, c->group, r, base + off, cnt, tag, &reqs[n])) {
            rc = 1;
            break;
        }
        n++;
    }
    if (wmpi_wait_each(call, reqs, n))
        rc = 1;
    free(reqs);
    return rc;
}

/* bcast: the root sends bytes of buf to every member. */
int wmpi_flat_bcast(const char *call, struct wmpi_comm *c, void *buf, size_t bytes, int root,
                    waitio_tag_t tag)
{
    waitio_req_t *reqs;
    int n = 0, rc = 0;

    if (c->rank != root)
        return wmpi_wrecv(call, c->group, root, buf, bytes, tag);
    reqs = malloc(c->size * sizeof(*reqs));
    if (!reqs)
        return wmpi_err(call, "out of memory");
    for (int r = 0; r < c->size && !rc; r++)
        if (r != root && !(rc = wmpi_post(call, 1, c->group, r, buf, bytes, tag, &reqs[n])))
            n++;
    if (wmpi_wait_each(call, reqs, n))
        rc = 1;
    free(reqs);
    return rc;
}

/* reduce: the root receives every member's count elements into a size x count table and
 * combines them in rank order into rbuf; sbuf is only read. */
int wmpi_flat_reduce(const char *call, struct wmpi_comm *c, const void *sbuf, void *rbuf, int count,
                     WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, int root, waitio_tag_t tag)
{
    size_t bytes;
    char *all;
    int rc;

    if (wmpi_bytes(call, count, dt, &bytes))
        return 1;
    if (c->rank != root)
        return wmpi_wsend(call, c->group, root, sbuf, bytes, tag);
    if (bytes && (size_t)c->size > SIZE_MAX / bytes)
        return wmpi_err(call, "%d x %zu bytes overflow", c->size, bytes);
    all = malloc(bytes * c->size + 1);
    if (!all)
        return wmpi_err(call, "out of memory");
    memcpy(all + bytes * root, sbuf, bytes);
    rc = wmpi_flat_fan(call, c, 0, all, NULL, (int)bytes, NULL, root, tag);
    if (!rc) {
        for (int r = 1; r < c->size; r++)
            wmpi_op_apply(dt, op, all, all + bytes * r, count);
        memcpy(rbuf, all, bytes);
    }
    free(all);
    return rc;
}

/* Offset of member r's part: displ[r], or the sum of the counts before it (packed). */
static size_t wmpi_part_off(const int *cnts, int uniform_cnt, const size_t *displ, int r)
{
    size_t off = 0;

    if (displ)
        return displ[r];
    for (int i = 0; i < r; i++)
        off += cnts ? (size_t)cnts[i] : (size_t)uniform_cnt;
    return off;
}

/* gatherv: every member sends sbytes of sbuf; the root places member r's part at its
 * displacement in rbuf (its own part by copy). */
int wmpi_flat_gatherv(const char *call, struct wmpi_comm *c, const void *sbuf, int sbytes,
                      void *rbuf, int uniform, const int *rbytes, const size_t *rdispl, int root,
                      waitio_tag_t tag)
{
    const int *cnts = uniform ? NULL : rbytes;
    int mine;

    if (c->rank != root)
        return wmpi_wsend(call, c->group, root, sbuf, sbytes, tag);
    mine = cnts ? cnts[root] : sbytes;
    if (mine != sbytes)
        return wmpi_err(call, "root sends %d bytes but expects %d from itself", sbytes, mine);
    memmove((char *)rbuf + wmpi_part_off(cnts, sbytes, rdispl, root), sbuf, sbytes);
    return wmpi_flat_fan(call, c, 0, rbuf, cnts, sbytes, rdispl, root, tag);
}

/* scatterv: the root sends member r its part of sbuf; every member receives rbytes into
 * rbuf (the root by copy). */
int wmpi_flat_scatterv(const char *call, struct wmpi_comm *c, const void *sbuf, int uniform,
                       const int *sbytes, const size_t *sdispl, void *rbuf, int rbytes, int root,
                       waitio_tag_t tag)
{
    const int *cnts = uniform ? NULL : sbytes;
    int mine;

    if (c->rank != root)
        return wmpi_wrecv(call, c->group, root, rbuf, rbytes, tag);
    mine = cnts ? cnts[root] : rbytes;
    if (mine != rbytes)
        return wmpi_err(call, "root sends itself %d bytes but receives %d", mine, rbytes);
    memmove(rbuf, (const char *)sbuf + wmpi_part_off(cnts, rbytes, sdispl, root), rbytes);
    /* The fan only reads the root's send buffer. */
    return wmpi_flat_fan(call, c, 1, (char *)sbuf, cnts, rbytes, sdispl, root, tag);
}

/* barrier: every member reports to rank 0 with an empty message, then rank 0 releases
 * them all; the two directions keep the one tag apart. */
int wmpi_flat_barrier(const char *call, struct wmpi_comm *c, waitio_tag_t tag)
{
    char none[1] = {0};

    if (c->rank != 0)
        return wmpi_wsend(call, c->group, 0, none, 0, tag) ||
               wmpi_wrecv(call, c->group, 0, none, 0, tag);
    return wmpi_flat_fan(call, c, 0, none, NULL, 0, NULL, 0, tag) ||
           wmpi_flat_fan(call, c, 1, none, NULL, 0, NULL, 0, tag);
}
