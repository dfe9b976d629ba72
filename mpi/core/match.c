/* match.c: see match.h. */
#include "match.h"

static unsigned bucket(const struct match_key *k)
{
    uint32_t h = k->comm * 0x9e3779b1u;
    h ^= (uint32_t)k->src * 0x85ebca6bu;
    h ^= (uint32_t)k->tag * 0xc2b2ae35u;
    h ^= h >> 15;
    return h & (MATCH_BUCKETS - 1);
}

static int same_key(const struct match_key *a, const struct match_key *b)
{
    return a->comm == b->comm && a->src == b->src && a->tag == b->tag;
}

/* Does a receive with key r take a message with key m? */
static int matches(const struct match_key *r, const struct match_key *m)
{
    return r->comm == m->comm && (r->src == MATCH_ANY_SOURCE || r->src == m->src) &&
           (r->tag == MATCH_ANY_TAG || r->tag == m->tag);
}

static void push_tail(struct match_list *l, struct match_entry *e, size_t off)
{
    struct match_link *ln = (struct match_link *)((char *)e + off);
    ln->next = 0;
    ln->prev = l->tail;
    if (l->tail)
        ((struct match_link *)((char *)l->tail + off))->next = e;
    else
        l->head = e;
    l->tail = e;
}

static void unlink(struct match_list *l, struct match_entry *e, size_t off)
{
    struct match_link *ln = (struct match_link *)((char *)e + off);
    if (ln->prev)
        ((struct match_link *)((char *)ln->prev + off))->next = ln->next;
    else
        l->head = ln->next;
    if (ln->next)
        ((struct match_link *)((char *)ln->next + off))->prev = ln->prev;
    else
        l->tail = ln->prev;
    ln->prev = ln->next = 0;
}

#define CHAIN offsetof(struct match_entry, chain)
#define ORDER offsetof(struct match_entry, order)

void match_init(struct match_engine *e)
{
    char *p = (char *)e;
    for (size_t i = 0; i < sizeof *e; i++)
        p[i] = 0;
}

/* The first entry of a bucket with exactly key k (buckets hold colliding keys too). */
static struct match_entry *first_with_key(struct match_list *l, const struct match_key *k)
{
    for (struct match_entry *x = l->head; x; x = x->chain.next)
        if (same_key(&x->key, k))
            return x;
    return 0;
}

static void remove_posted(struct match_engine *e, struct match_entry *r)
{
    unlink(r->wild ? &e->posted_wild : &e->posted[bucket(&r->key)], r, CHAIN);
    r->queued = 0;
    e->nposted--;
}

/* See match.h. */
struct match_entry *match_arrive(struct match_engine *e, struct match_entry *msg)
{
    struct match_entry *exact = first_with_key(&e->posted[bucket(&msg->key)], &msg->key);
    struct match_entry *wild = 0;
    for (struct match_entry *x = e->posted_wild.head; x; x = x->chain.next) {
        if (exact && x->seq > exact->seq)
            break; /* posted later than the exact candidate: cannot win */
        if (matches(&x->key, &msg->key)) {
            wild = x;
            break;
        }
    }
    struct match_entry *r = wild && (!exact || wild->seq < exact->seq) ? wild : exact;
    if (r) {
        remove_posted(e, r);
        return r;
    }
    msg->seq = ++e->seq;
    msg->queued = 2;
    push_tail(&e->unexp[bucket(&msg->key)], msg, CHAIN);
    push_tail(&e->unexp_order, msg, ORDER);
    e->nunexp++;
    return 0;
}

/* Inlined into match_post (mpi_impl.h's MPI_HOT says why). */
static inline __attribute__((always_inline)) struct match_entry *
find_unexpected(struct match_engine *e, const struct match_key *k)
{
    if (k->src != MATCH_ANY_SOURCE && k->tag != MATCH_ANY_TAG)
        return first_with_key(&e->unexp[bucket(k)], k);
    for (struct match_entry *x = e->unexp_order.head; x; x = x->order.next)
        if (matches(k, &x->key))
            return x;
    return 0;
}

/* See match.h. */
void match_take(struct match_engine *e, struct match_entry *msg)
{
    unlink(&e->unexp[bucket(&msg->key)], msg, CHAIN);
    unlink(&e->unexp_order, msg, ORDER);
    msg->queued = 0;
    e->nunexp--;
}

/* See match.h. */
struct match_entry *match_post(struct match_engine *e, struct match_entry *recv)
{
    struct match_entry *m = find_unexpected(e, &recv->key);
    if (m) {
        match_take(e, m);
        return m;
    }
    recv->seq = ++e->seq;
    recv->queued = 1;
    recv->wild = recv->key.src == MATCH_ANY_SOURCE || recv->key.tag == MATCH_ANY_TAG;
    push_tail(recv->wild ? &e->posted_wild : &e->posted[bucket(&recv->key)], recv, CHAIN);
    e->nposted++;
    return 0;
}

/* See match.h. */
struct match_entry *match_probe(struct match_engine *e, const struct match_key *k)
{
    return find_unexpected(e, k);
}

/* See match.h. */
int match_cancel(struct match_engine *e, struct match_entry *recv)
{
    if (recv->queued != 1)
        return 0;
    remove_posted(e, recv);
    return 1;
}
