/*
 * match.h: MPI message matching for one rank: the posted-receive queue and the
 * unexpected-message queue, with MPI's rules.
 *
 *  - A message matches a posted receive if the communicators are equal and the receive's
 *    source and tag are equal to the message's or are wildcards (MATCH_ANY_SOURCE,
 *    MATCH_ANY_TAG; only receives carry wildcards).
 *  - An arriving message takes the earliest-posted receive it matches; a posted receive
 *    takes the earliest-arrived message it matches. With arrivals from one source in order,
 *    this is MPI's non-overtaking rule.
 *
 * Fast with many outstanding entries: entries with a complete key (communicator, source,
 * tag) are found through a hash of the key; posted receives with a wildcard sit in one
 * list in posting order and are compared with the hashed candidate by sequence number, so
 * wildcard order stays exact. Unexpected messages are also kept in arrival order for
 * wildcard receives.
 *
 * Freestanding, no allocation: entries live in the caller's objects (requests, message
 * descriptors) and the engine only links them. Not thread-safe by itself: the rank's
 * engine lock (match_rank.h) serialises every call.
 */
#ifndef MPI_MATCH_H
#define MPI_MATCH_H
#include "lockfree.h"
#include <stdint.h>
#include <stddef.h>

#define MATCH_ANY_SOURCE (-1)
#define MATCH_ANY_TAG    (-2)
#define MATCH_BUCKETS    1024 /* power of two */

struct match_key {
    uint32_t comm; /* context id */
    int32_t src;   /* rank in comm, or MATCH_ANY_SOURCE (posted receives only) */
    int32_t tag;   /* >= 0, or MATCH_ANY_TAG (posted receives only) */
};

struct match_link {
    struct match_entry *prev, *next;
};

struct match_entry {
    struct match_key key;
    uint64_t seq;            /* order of posting / arrival */
    struct match_link chain; /* hash bucket, or the posted wildcard list */
    struct match_link order; /* unexpected messages: arrival order */
    struct lf_link inbox;    /* match_rank.h's inbox */
    uint8_t queued;          /* 0 none, 1 posted, 2 unexpected */
    uint8_t wild;            /* posted with a wildcard */
};

struct match_list {
    struct match_entry *head, *tail;
};

struct match_engine {
    struct match_list posted[MATCH_BUCKETS];
    struct match_list posted_wild;
    struct match_list unexp[MATCH_BUCKETS];
    struct match_list unexp_order;
    uint64_t seq;
    uint64_t nposted, nunexp;
};

/* Any context, under the rank's engine lock (true for everything below). */
void match_init(struct match_engine *e);

/* A message arrived with the complete key msg->key. Returns the posted receive it matches
 * (removed from the posted queue), or NULL after queueing msg as unexpected. */
struct match_entry *match_arrive(struct match_engine *e, struct match_entry *msg);

/* A receive is posted with recv->key (wildcards allowed). Returns the unexpected message it
 * matches (removed), or NULL after queueing recv as posted. */
struct match_entry *match_post(struct match_engine *e, struct match_entry *recv);

/* MPI_Probe/Iprobe: the unexpected message a receive with key `k` would take, left
 * queued; NULL if none. */
struct match_entry *match_probe(struct match_engine *e, const struct match_key *k);

/* MPI_Cancel of a receive: 1 if it was still posted (now removed), 0 if it was not. */
int match_cancel(struct match_engine *e, struct match_entry *recv);

/* Remove a specific unexpected message (e.g. after match_probe + a matched receive). */
void match_take(struct match_engine *e, struct match_entry *msg);

#endif
