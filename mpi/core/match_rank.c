/* match_rank.c: see match_rank.h. The lock-free parts are lockfree.h's lf_box. */
#include "match_rank.h"

static struct match_entry *arrive_locked(struct match_rank *mr, struct match_entry *msg)
{
    struct match_entry *recv = match_arrive(&mr->eng, msg);
    if (recv)
        mr->deliver(mr, recv, msg);
    return recv;
}

/* Under the lock: match the whole inbox in push order. Most find it empty: a load, not the
 * exchange. A push this load misses saw the box held (lf_box_push), so our lf_box_unlock
 * sees it. */
static void drain(struct match_rank *mr)
{
    if (lf_empty(&mr->box.inbox))
        return;
    struct lf_link *l = lf_take_all(&mr->box.inbox);
    while (l) {
        struct lf_link *next = l->next; /* l may be delivered, and reused, below */
        mr->deferred++;
        arrive_locked(mr, container_of(l, struct match_entry, inbox));
        l = next;
    }
}

/* Under the lock: release it, draining whatever was pushed until then. */
/* Inlined: two calls a message otherwise (mpi_impl.h's MPI_HOT says why). */
static inline __attribute__((always_inline)) void release(struct match_rank *mr)
{
    while (lf_box_unlock(&mr->box))
        drain(mr);
}

/* Task context: take the lock and drain (so earlier arrivals match first). */
static void acquire(struct match_rank *mr)
{
    lf_box_lock(&mr->box);
    drain(mr);
}

void match_rank_init(struct match_rank *mr, match_deliver_fn deliver, void *owner)
{
    match_init(&mr->eng);
    mr->box = (struct lf_box){0};
    mr->deliver = deliver;
    mr->owner = owner;
    mr->direct = mr->deferred = 0;
}

/* Any context; see match_rank.h. */
void match_rank_arrive(struct match_rank *mr, struct match_entry *msg)
{
    if (lf_box_trylock(&mr->box)) {
        drain(mr); /* earlier arrivals first */
        mr->direct++;
        arrive_locked(mr, msg);
        release(mr);
        return;
    }
    /* The holder sees msg when it releases; if it released before our push, we take
     * the lock ourselves (lockfree.h: lf_box_push). */
    if (lf_box_push(&mr->box, &msg->inbox) && lf_box_trylock(&mr->box)) {
        drain(mr);
        release(mr);
    }
}

/* Task context; see match_rank.h. */
struct match_entry *match_rank_post(struct match_rank *mr, struct match_entry *recv)
{
    acquire(mr);
    struct match_entry *msg = match_post(&mr->eng, recv);
    if (msg)
        mr->deliver(mr, recv, msg);
    release(mr);
    return msg;
}

/* Task context. */
struct match_entry *match_rank_probe(struct match_rank *mr, const struct match_key *k)
{
    acquire(mr);
    struct match_entry *m = match_probe(&mr->eng, k);
    release(mr);
    return m;
}

/* Task context. */
int match_rank_cancel(struct match_rank *mr, struct match_entry *recv)
{
    acquire(mr);
    int r = match_cancel(&mr->eng, recv);
    release(mr);
    return r;
}

/* Task context; see match_rank.h. */
void match_rank_lock(struct match_rank *mr)
{
    acquire(mr);
}

void match_rank_unlock(struct match_rank *mr)
{
    release(mr);
}

struct match_entry *match_rank_arrive_held(struct match_rank *mr, struct match_entry *msg)
{
    mr->direct++;
    return arrive_locked(mr, msg);
}
