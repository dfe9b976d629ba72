/* match_rank.c: see match_rank.h. */
#include "match_rank.h"

static int try_lock(struct match_rank *mr)
{
    return !__atomic_exchange_n(&mr->lock, 1, __ATOMIC_ACQUIRE);
}

static void lock(struct match_rank *mr)
{
    while (!try_lock(mr))
        while (__atomic_load_n(&mr->lock, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

static void unlock(struct match_rank *mr)
{
    __atomic_store_n(&mr->lock, 0, __ATOMIC_RELEASE);
}

static struct match_entry *arrive_locked(struct match_rank *mr, struct match_entry *msg)
{
    struct match_entry *recv = match_arrive(&mr->eng, msg);
    if (recv)
        mr->deliver(mr, recv, msg);
    return recv;
}

/* Under the lock: take the whole inbox and match it in push order. */
static void drain(struct match_rank *mr)
{
    struct match_entry *l =
        __atomic_exchange_n(&mr->inbox, (struct match_entry *)0, __ATOMIC_ACQUIRE);
    struct match_entry *fifo = 0;
    while (l) { /* the stack is newest first: reverse it */
        struct match_entry *next = l->inbox_next;
        l->inbox_next = fifo;
        fifo = l;
        l = next;
    }
    while (fifo) {
        struct match_entry *next = fifo->inbox_next;
        mr->deferred++;
        arrive_locked(mr, fifo);
        fifo = next;
    }
}

/* Release, and take the lock back for whatever was pushed meanwhile. */
static void release(struct match_rank *mr)
{
    for (;;) {
        unlock(mr);
        if (!__atomic_load_n(&mr->inbox, __ATOMIC_ACQUIRE) || !try_lock(mr))
            return;
        drain(mr);
    }
}

void match_rank_init(struct match_rank *mr, match_deliver_fn deliver, void *owner)
{
    match_init(&mr->eng);
    mr->lock = 0;
    mr->inbox = 0;
    mr->deliver = deliver;
    mr->owner = owner;
    mr->direct = mr->deferred = 0;
}

/* Any context; see match_rank.h. */
void match_rank_arrive(struct match_rank *mr, struct match_entry *msg)
{
    if (try_lock(mr)) {
        drain(mr); /* earlier arrivals first */
        mr->direct++;
        arrive_locked(mr, msg);
        release(mr);
        return;
    }
    struct match_entry *head = __atomic_load_n(&mr->inbox, __ATOMIC_RELAXED);
    do
        msg->inbox_next = head;
    while (!__atomic_compare_exchange_n(&mr->inbox, &head, msg, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
    /* The holder may have released between our try and our push: try once more. */
    if (try_lock(mr)) {
        drain(mr);
        release(mr);
    }
}

/* Task context; see match_rank.h. */
struct match_entry *match_rank_post(struct match_rank *mr, struct match_entry *recv)
{
    lock(mr);
    drain(mr);
    struct match_entry *msg = match_post(&mr->eng, recv);
    if (msg)
        mr->deliver(mr, recv, msg);
    release(mr);
    return msg;
}

/* Task context. */
struct match_entry *match_rank_probe(struct match_rank *mr, const struct match_key *k)
{
    lock(mr);
    drain(mr);
    struct match_entry *m = match_probe(&mr->eng, k);
    release(mr);
    return m;
}

/* Task context. */
int match_rank_cancel(struct match_rank *mr, struct match_entry *recv)
{
    lock(mr);
    drain(mr);
    int r = match_cancel(&mr->eng, recv);
    release(mr);
    return r;
}

/* Task context; see match_rank.h. */
void match_rank_lock(struct match_rank *mr)
{
    lock(mr);
    drain(mr);
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
