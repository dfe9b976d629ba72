/*
 * match_rank.h: one rank's matching engine with the concurrency rule of docs/architecture.md
 * §3.7: interrupt context never waits for the engine lock.
 *
 *   match_rank_arrive()  (interrupt context, or any context): try-lock; if the lock is busy,
 *                        push the message onto a lock-free inbox and leave.
 *   match_rank_post(), match_rank_probe(), match_rank_cancel()  (task context): take the
 *                        lock, waiting if need be.
 *
 * Whoever holds the lock drains the inbox right after taking it (so arrivals are matched
 * in the order each producer pushed them, before anything newer) and looks at the inbox
 * again after releasing it, taking the lock back if something came in meanwhile. Every
 * pushed message is therefore drained by the next successful taker, and there always is
 * one: a pusher that sees the lock free after its push tries to take it. The lock and the
 * inbox are an lf_box (lockfree.h), whose release is the full-barrier handshake that makes
 * "the holder looks again" true on x86.
 *
 * Matches are handed to the rank's `deliver` callback under the lock, in match order.
 */
#ifndef MPI_MATCH_RANK_H
#define MPI_MATCH_RANK_H
#include "match.h"

struct match_rank;
/* Called under the engine lock: `recv` (posted) and `msg` (arrived) matched. */
typedef void (*match_deliver_fn)(struct match_rank *mr, struct match_entry *recv,
                                 struct match_entry *msg);

struct match_rank {
    struct match_engine eng;
    struct lf_box box; /* the engine lock and the inbox (match_entry.inbox) */
    match_deliver_fn deliver;
    void *owner;
    uint64_t direct, deferred; /* arrivals matched at once / through the inbox */
};

void match_rank_init(struct match_rank *mr, match_deliver_fn deliver, void *owner);

/* Any context (interrupt included). `msg` belongs to the engine until delivered or taken. */
void match_rank_arrive(struct match_rank *mr, struct match_entry *msg);
/* Task context. */
struct match_entry *match_rank_probe(struct match_rank *mr, const struct match_key *k);
int match_rank_cancel(struct match_rank *mr, struct match_entry *recv);

/* Under the lock: match every message of the inbox, in push order (match_rank.c). */
void match_rank_drain(struct match_rank *mr);

/* Task context: a critical section of the rank's engine for callers that need several
 * steps under one lock (e.g. the intra-node sender: arrive, then decide whether to buffer
 * the data). lock() drains the inbox; unlock() drains what came in meanwhile: the release
 * is lf_box_unlock's full-barrier handshake (lockfree.h), looked at again until it finds
 * the inbox empty. Inline: the intra-node send's path (mpi_impl.h's MPI_HOT says why). */
static inline void match_rank_lock(struct match_rank *mr)
{
    lf_box_lock(&mr->box);
    if (!lf_empty(&mr->box.inbox)) /* a push this load misses sees the box held */
        match_rank_drain(mr);
}

static inline void match_rank_unlock(struct match_rank *mr)
{
    while (lf_box_unlock(&mr->box))
        match_rank_drain(mr);
}

/* Under the lock: match_arrive + deliver; returns the matched receive or NULL (msg now
 * queued as unexpected). Counts nothing (the inbox's drain counts `deferred`). */
static inline struct match_entry *match_rank_match(struct match_rank *mr, struct match_entry *msg)
{
    struct match_entry *recv = match_arrive(&mr->eng, msg);
    if (recv)
        mr->deliver(mr, recv, msg);
    return recv;
}

/* Under match_rank_lock(): an arrival matched at once (counted `direct`); see
 * match_rank_match. */
static inline struct match_entry *match_rank_arrive_held(struct match_rank *mr,
                                                         struct match_entry *msg)
{
    mr->direct++;
    return match_rank_match(mr, msg);
}

/* Task context. Returns the matched message (already passed to deliver), or NULL if recv
 * is now posted. The lock drains first: earlier arrivals match first. Inline: every
 * receive's path. */
static inline struct match_entry *match_rank_post(struct match_rank *mr, struct match_entry *recv)
{
    match_rank_lock(mr);
    struct match_entry *msg = match_post(&mr->eng, recv);
    if (msg)
        mr->deliver(mr, recv, msg);
    match_rank_unlock(mr);
    return msg;
}

#endif
