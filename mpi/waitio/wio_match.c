/*
 * wio_match.c: matching (PROTOCOL.md 7): posted receives and unexpected messages, each in
 * a hash on (group key, sender's universe index, tag). A bucket keeps arrival order, so
 * the first entry with the same triple is the oldest: FIFO per triple, no wildcards. With
 * at least WIO_HASH_MIN buckets (more for big instances) a lookup touches only the few
 * entries sharing a bucket, not every outstanding request.
 */
#include "wio_core.h"

/* Any context: the bucket of a triple (a 64-bit mix, then the low bits). */
static uint32_t bucket(const struct wio_core *c, uint64_t group, uint32_t src, uint64_t tag)
{
    uint64_t h = group ^ (tag * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)src << 32 | src);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h & c->hmask;
}

/* Task context, at init: the tables, sized to the instance. 0 or -1 (no memory). */
int wio_match_init(struct wio_core *c)
{
    uint32_t n = WIO_HASH_MIN;
    while (n < c->nprocs * 4 && n < (1u << 20))
        n <<= 1;
    c->hmask = n - 1;
    c->posted = wio_plat_alloc(sizeof *c->posted * n);
    c->ux = wio_plat_alloc(sizeof *c->ux * n);
    return c->posted && c->ux ? 0 : -1;
}

/* Task context, at the end: frees the tables and any unexpected records left. */
void wio_match_free(struct wio_core *c)
{
    for (uint32_t i = 0; c->ux && i <= c->hmask; i++)
        for (struct wio_ux *u = c->ux[i].head, *n; u; u = n) {
            n = u->next;
            wio_plat_free(u);
        }
    wio_plat_free(c->posted);
    wio_plat_free(c->ux);
    c->posted = NULL;
    c->ux = NULL;
}

/* Under the lock: r (a receive; group, src, tag set) waits for its message. */
void wio_posted_add(struct wio_core *c, struct wio_req *r)
{
    wio_list_push(&c->posted[bucket(c, r->group->key, r->src, r->tag)], r);
}

/* Under the lock: unlink a posted receive (it failed). */
void wio_posted_remove(struct wio_core *c, struct wio_req *r)
{
    wio_list_remove(&c->posted[bucket(c, r->group->key, r->src, r->tag)], r);
}

/* Under the lock, any context: the oldest posted receive of the triple, unlinked, or NULL. */
struct wio_req *wio_posted_take(struct wio_core *c, uint64_t group, uint32_t src, uint64_t tag)
{
    struct wio_req_list *l = &c->posted[bucket(c, group, src, tag)];
    for (struct wio_req *r = l->head; r; r = r->next)
        if (r->group->key == group && r->src == src && r->tag == tag) {
            wio_list_remove(l, r);
            return r;
        }
    return NULL;
}

/* Under the lock, any context: u (every field set) waits for its receive. */
void wio_ux_add(struct wio_core *c, struct wio_ux *u)
{
    struct wio_ux_bucket *b = &c->ux[bucket(c, u->group, u->src, u->tag)];
    u->next = NULL;
    if (b->tail)
        b->tail->next = u;
    else
        b->head = u;
    b->tail = u;
}

/* Under the lock: the oldest unexpected message of the triple, unlinked, or NULL. */
struct wio_ux *wio_ux_take(struct wio_core *c, uint64_t group, uint32_t src, uint64_t tag)
{
    struct wio_ux_bucket *b = &c->ux[bucket(c, group, src, tag)];
    for (struct wio_ux *u = b->head, *prev = NULL; u; prev = u, u = u->next)
        if (u->group == group && u->src == src && u->tag == tag) {
            if (prev)
                prev->next = u->next;
            else
                b->head = u->next;
            if (b->tail == u)
                b->tail = prev;
            return u;
        }
    return NULL;
}

/* Under the lock, any context: fail every posted receive from `src` (its peer failed). A
 * scan of every bucket, on this rare path only. */
void wio_posted_fail_peer(struct wio_core *c, uint32_t src, int err)
{
    for (uint32_t i = 0; i <= c->hmask; i++)
        for (struct wio_req *r = c->posted[i].head, *n; r; r = n) {
            n = r->next;
            if (r->src == src) {
                wio_list_remove(&c->posted[i], r);
                wio_req_complete(r, err);
            }
        }
}
