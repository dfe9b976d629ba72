/* match_rank.c: see match_rank.h. The lock-free parts are lockfree.h's lf_box. */
#include "match_rank.h"

/* Under the lock; see match_rank.h. A push this load misses saw the box held
 * (lf_box_push), so the holder's lf_box_unlock sees it. */
void match_rank_drain(struct match_rank *mr)
{
    if (lf_empty(&mr->box.inbox))
        return;
    struct lf_link *l = lf_take_all(&mr->box.inbox);
    while (l) {
        struct lf_link *next = l->next; /* l may be delivered, and reused, below */
        mr->deferred++;
        match_rank_match(mr, container_of(l, struct match_entry, inbox));
        l = next;
    }
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
        match_rank_drain(mr); /* earlier arrivals first */
        match_rank_arrive_held(mr, msg);
        match_rank_unlock(mr);
        return;
    }
    /* The holder sees msg when it releases; if it released before our push, we take
     * the lock ourselves (lockfree.h: lf_box_push). */
    if (lf_box_push(&mr->box, &msg->inbox) && lf_box_trylock(&mr->box)) {
        match_rank_drain(mr);
        match_rank_unlock(mr);
    }
}

/* Task context. */
struct match_entry *match_rank_probe(struct match_rank *mr, const struct match_key *k)
{
    match_rank_lock(mr);
    struct match_entry *m = match_probe(&mr->eng, k);
    match_rank_unlock(mr);
    return m;
}

/* Task context. */
int match_rank_cancel(struct match_rank *mr, struct match_entry *recv)
{
    match_rank_lock(mr);
    int r = match_cancel(&mr->eng, recv);
    match_rank_unlock(mr);
    return r;
}
