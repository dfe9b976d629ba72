/*
 * mpe_impi_pool.c: buffers for the payloads of IMPI messages that arrive before their
 * receive is posted (mpe_impi.h). They are taken in the receive callback, where nothing
 * may allocate, so the pool is made once at set-up and handed out from free lists: small
 * payloads get a small buffer, the rest one of `maxlen` bytes (a first packet is never
 * longer: a long message's rest waits for its receive).
 *
 * Why a fixed pool suffices, and what happens when it does not: IMPI peers hold back only
 * at `hiwater` unacknowledged packets per proc pair, and we acknowledge as packets arrive
 * (mpe_impi.h: a peer's single send queue must never wait on us), so the bytes parked
 * here are bounded only by what the program leaves unreceived. A pool that runs out ends
 * the job with a message naming the limit (UKMPI_IMPI_BUFFER), never a silent loss.
 *
 * Everything here runs under the network lock.
 */
#include "mpe_impi.h"

#define IPOOL_SMALL      4096 /* bytes of a small buffer */
#define IPOOL_SMALL_FRAC 8    /* a 1/8 share of the pool's bytes goes to small buffers */

struct ibuf {
    struct ibuf *next;
};

struct mpe_ipool {
    struct ibuf *free[2]; /* small, big */
    uint32_t size[2];
    uint8_t *lo[2], *hi[2]; /* each class's block, to tell where a buffer belongs */
    uint64_t bytes;
};

static void carve(struct mpe_ipool *p, int k, uint8_t *block, uint64_t n)
{
    p->lo[k] = block;
    p->hi[k] = block + n * p->size[k];
    for (uint64_t i = n; i-- > 0;) {
        struct ibuf *b = (struct ibuf *)(block + i * p->size[k]);
        b->next = p->free[k];
        p->free[k] = b;
    }
}

/* Task context (set-up); see mpe_impi.h. */
struct mpe_ipool *mpe_ipool_create(uint64_t bytes, uint32_t maxlen)
{
    struct mpe_ipool *p = plat_alloc(sizeof *p);
    if (!p)
        return 0;
    p->size[0] = IPOOL_SMALL < maxlen ? IPOOL_SMALL : maxlen;
    p->size[1] = (maxlen + 7u) & ~7u;
    uint64_t nsmall = bytes / IPOOL_SMALL_FRAC / p->size[0];
    uint64_t nbig = (bytes - nsmall * p->size[0]) / p->size[1];
    if (!nsmall || !nbig)
        return 0;
    uint8_t *s = plat_alloc(nsmall * p->size[0]), *b = plat_alloc(nbig * p->size[1]);
    if (!s || !b)
        return 0;
    carve(p, 0, s, nsmall);
    carve(p, 1, b, nbig);
    p->bytes = nsmall * p->size[0] + nbig * p->size[1];
    return p;
}

/* Under the network lock; see mpe_impi.h. */
void *mpe_ipool_get(struct mpe_ipool *p, uint64_t len)
{
    for (int k = len <= p->size[0] ? 0 : 1; k < 2; k++) {
        struct ibuf *b = p->free[k];
        if (b && len <= p->size[k]) {
            p->free[k] = b->next;
            return b;
        }
    }
    return 0;
}

/* Under the network lock; see mpe_impi.h. */
void mpe_ipool_put(struct mpe_ipool *p, void *buf)
{
    struct ibuf *b = buf;
    int k = (uint8_t *)buf >= p->lo[0] && (uint8_t *)buf < p->hi[0] ? 0 : 1;
    b->next = p->free[k];
    p->free[k] = b;
}

/* Any context. */
uint64_t mpe_ipool_bytes(const struct mpe_ipool *p)
{
    return p->bytes;
}
