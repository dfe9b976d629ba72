/*
 * match_test.c: the matching engine against a reference model that states MPI's rules in
 * the most direct way (lists in order, linear search), over long random sequences of
 * posts, arrivals, probes and cancels, with few keys so that wildcards and collisions are
 * frequent. Every step must pick the same entry in both.
 */
#include "ut.h"
#include "match.h"
#include <stdlib.h>
#include <string.h>

#define N 4096

struct ref {
    struct match_entry *posted[N], *unexp[N];
    int np, nu;
};

static int ref_matches(const struct match_key *r, const struct match_key *m)
{
    return r->comm == m->comm && (r->src == MATCH_ANY_SOURCE || r->src == m->src) &&
           (r->tag == MATCH_ANY_TAG || r->tag == m->tag);
}

static void del(struct match_entry **v, int *n, int i)
{
    memmove(v + i, v + i + 1, (size_t)(*n - i - 1) * sizeof *v);
    (*n)--;
}

static struct match_entry *ref_arrive(struct ref *R, struct match_entry *m)
{
    for (int i = 0; i < R->np; i++)
        if (ref_matches(&R->posted[i]->key, &m->key)) {
            struct match_entry *r = R->posted[i];
            del(R->posted, &R->np, i);
            return r;
        }
    R->unexp[R->nu++] = m;
    return 0;
}

static struct match_entry *ref_find(struct ref *R, const struct match_key *k, int take)
{
    for (int i = 0; i < R->nu; i++)
        if (ref_matches(k, &R->unexp[i]->key)) {
            struct match_entry *m = R->unexp[i];
            if (take)
                del(R->unexp, &R->nu, i);
            return m;
        }
    return 0;
}

static struct match_entry *ref_post(struct ref *R, struct match_entry *r)
{
    struct match_entry *m = ref_find(R, &r->key, 1);
    if (!m)
        R->posted[R->np++] = r;
    return m;
}

static int ref_cancel(struct ref *R, struct match_entry *r)
{
    for (int i = 0; i < R->np; i++)
        if (R->posted[i] == r) {
            del(R->posted, &R->np, i);
            return 1;
        }
    return 0;
}

static void run(unsigned seed, int steps, int ncomm, int nsrc, int ntag, int wild_pct)
{
    static struct match_engine e;
    static struct ref R;
    static struct match_entry pool[2 * N];
    int used = 0;
    srand(seed);
    match_init(&e);
    memset(&R, 0, sizeof R);
    for (int s = 0; s < steps && used < 2 * N - 1; s++) {
        int op = rand() % 10;
        struct match_key k = {(uint32_t)(rand() % ncomm), rand() % nsrc, rand() % ntag};
        if (op < 4 && R.nu < N - 1) { /* a message arrives */
            struct match_entry *m = &pool[used++];
            memset(m, 0, sizeof *m);
            m->key = k;
            UT_ASSERT(match_arrive(&e, m) == ref_arrive(&R, m));
        } else if (op < 8 && R.np < N - 1) { /* a receive is posted */
            if (rand() % 100 < wild_pct)
                k.src = MATCH_ANY_SOURCE;
            if (rand() % 100 < wild_pct)
                k.tag = MATCH_ANY_TAG;
            struct match_entry *r = &pool[used++];
            memset(r, 0, sizeof *r);
            r->key = k;
            UT_ASSERT(match_post(&e, r) == ref_post(&R, r));
        } else if (op == 8) { /* probe */
            if (rand() % 2)
                k.src = MATCH_ANY_SOURCE;
            UT_ASSERT(match_probe(&e, &k) == ref_find(&R, &k, 0));
        } else if (R.np) { /* cancel a random posted receive, or one already matched */
            struct match_entry *r = rand() % 4 ? R.posted[rand() % R.np] : &pool[rand() % used];
            int was_posted = r->queued == 1;
            int got = match_cancel(&e, r);
            UT_EQ(got, ref_cancel(&R, r) && was_posted);
        }
        UT_EQ(e.nposted, R.np);
        UT_EQ(e.nunexp, R.nu);
    }
}

UT_TEST(match_random_few_keys)
{
    for (unsigned seed = 1; seed <= 20; seed++)
        run(seed, 3000, 2, 3, 3, 30);
}

UT_TEST(match_random_many_keys)
{
    for (unsigned seed = 100; seed <= 110; seed++)
        run(seed, 3000, 5, 16, 64, 10);
}

UT_TEST(match_random_all_wildcards)
{
    run(7, 3000, 1, 2, 2, 100);
}

/* The non-overtaking rule on a concrete case: two messages from one source with one tag
 * are taken in arrival order, by an exact and by a wildcard receive alike. */
UT_TEST(match_non_overtaking)
{
    static struct match_engine e;
    struct match_entry m1 = {.key = {0, 1, 5}}, m2 = {.key = {0, 1, 5}};
    struct match_entry r1 = {.key = {0, MATCH_ANY_SOURCE, 5}}, r2 = {.key = {0, 1, 5}};
    match_init(&e);
    UT_ASSERT(!match_arrive(&e, &m1));
    UT_ASSERT(!match_arrive(&e, &m2));
    UT_ASSERT(match_post(&e, &r1) == &m1);
    UT_ASSERT(match_post(&e, &r2) == &m2);
}

/* An arrival takes the earliest posted receive even when that one is a wildcard and a
 * later exact receive sits in the hash table. */
UT_TEST(match_wildcard_posted_first_wins)
{
    static struct match_engine e;
    struct match_entry w = {.key = {3, MATCH_ANY_SOURCE, MATCH_ANY_TAG}};
    struct match_entry x = {.key = {3, 2, 9}}, m = {.key = {3, 2, 9}};
    match_init(&e);
    UT_ASSERT(!match_post(&e, &w));
    UT_ASSERT(!match_post(&e, &x));
    UT_ASSERT(match_arrive(&e, &m) == &w);
    UT_EQ(match_cancel(&e, &x), 1);
    UT_EQ(match_cancel(&e, &w), 0);
}
