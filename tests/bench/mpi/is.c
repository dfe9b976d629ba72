/*
 * is.c: mpibench's `is` mode, an integer sort in the manner of the NAS Parallel Benchmarks'
 * IS (written here from its description, no NAS code): every rank makes the same number of
 * keys with a fixed seed, and each iteration sorts all of them across the job by buckets:
 *
 *   1. count the local keys per bucket (IS_BUCKETS buckets of equal key ranges);
 *   2. MPI_Allreduce the bucket counts and give each rank a run of whole buckets holding
 *      about 1/nranks of all keys (the keys are bell-shaped, as IS's, so equal key ranges
 *      per rank would not balance);
 *   3. MPI_Alltoall of how many keys each rank sends to each other;
 *   4. MPI_Alltoallv of the keys, packed by bucket;
 *   5. a counting sort of the received keys over the rank's key range.
 *
 * Each iteration is timed between barriers. After the last one the result is verified:
 * every rank's keys are in order, each rank's smallest key is not below the largest key of
 * the ranks before it, and the job holds the same keys as before (count and an
 * order-independent hash of the multiset). Rank 0 prints one line:
 *
 *   is ranks=4 keys=65536 maxkey=524288 iters=10 time_ms=12.30 min_ms=11.90 Mkeys_s=21.3
 *      verified=1
 *
 * (keys: per rank; time: median over iterations of one whole sort; Mkeys_s: all ranks' keys
 * / median time). A failed verification prints verified=0 and makes mpibench exit 3.
 */
#include "mpibench.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IS_MAXKEY_LOG  19 /* keys are 0 .. 2^19 - 1: NAS IS class A's range */
#define IS_MAXKEY      (1 << IS_MAXKEY_LOG)
#define IS_BUCKETS_LOG 10 /* NAS IS's 1024 buckets: bucket = key >> (19 - 10) */
#define IS_BUCKETS     (1 << IS_BUCKETS_LOG)
#define IS_SHIFT       (IS_MAXKEY_LOG - IS_BUCKETS_LOG)
#define IS_SEED        314159265u /* NAS's seed; rank r starts at a stream of its own */
#define IS_FAILED      3          /* mpibench's exit code when the verification fails */

/* One job's sorting state, per rank; every buffer is owned here and freed by is_free(). */
struct is_state {
    int nkeys;        /* keys this rank generated */
    int *keys;        /* nkeys generated keys, never modified */
    int *send;        /* nkeys keys packed by bucket */
    int *recv, nrecv; /* received keys; room for every key of the job */
    int *sorted;      /* nrecv keys in order; as large as recv */
    int *count;       /* counting-sort histogram of this rank's key range */
    int lo, hi;       /* this rank's key range [lo, hi) after step 2 */
    int bcount[IS_BUCKETS], gcount[IS_BUCKETS], bstart[IS_BUCKETS];
    int *scount, *sdispl, *rcount, *rdispl; /* nranks each */
    int *first_bucket;                      /* nranks + 1: rank r sorts buckets [fb[r], fb[r+1]) */
};

/* splitmix64: a full-period generator, small and the same on every libc */
static uint64_t is_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Order-independent hash of one key, summed over the multiset (mod 2^64). */
static uint64_t is_hash(int key)
{
    uint64_t s = (uint64_t)key;
    return is_next(&s);
}

/* Rank `me`'s keys: the mean of four uniform draws, as NAS IS, so the keys are bell-shaped
 * around IS_MAXKEY / 2. */
static void is_generate(int *keys, int n, int me)
{
    uint64_t s = IS_SEED + (uint64_t)me * 0x100000001ull;

    for (int i = 0; i < n; i++) {
        uint64_t sum = 0;
        for (int j = 0; j < 4; j++)
            sum += is_next(&s) >> (64 - IS_MAXKEY_LOG);
        keys[i] = (int)(sum / 4);
    }
}

/* Step 2: rank r gets buckets [fb[r], fb[r+1]), runs of about total / nranks keys. */
static void is_split(struct is_state *st)
{
    long total = 0, acc = 0;
    int r = 0;

    for (int b = 0; b < IS_BUCKETS; b++)
        total += st->gcount[b];
    st->first_bucket[0] = 0;
    for (int b = 0; b < IS_BUCKETS; b++) {
        acc += st->gcount[b];
        /* rank r's share ends once the keys so far reach (r + 1) / nranks of all */
        while (r < nranks - 1 && acc * nranks >= total * (r + 1))
            st->first_bucket[++r] = b + 1;
    }
    while (r < nranks - 1)
        st->first_bucket[++r] = IS_BUCKETS;
    st->first_bucket[nranks] = IS_BUCKETS;
}

/* One whole sort of st->keys across MPI_COMM_WORLD (steps 1-5); collective. */
static void is_sort(struct is_state *st)
{
    memset(st->bcount, 0, sizeof st->bcount);
    for (int i = 0; i < st->nkeys; i++)
        st->bcount[st->keys[i] >> IS_SHIFT]++;
    MPI_Allreduce(st->bcount, st->gcount, IS_BUCKETS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    is_split(st);

    /* pack by bucket: buckets of rank r are contiguous, so rank r's keys are too */
    int at = 0;
    for (int r = 0; r < nranks; r++) {
        st->sdispl[r] = at;
        for (int b = st->first_bucket[r]; b < st->first_bucket[r + 1]; b++) {
            st->bstart[b] = at;
            at += st->bcount[b];
        }
        st->scount[r] = at - st->sdispl[r];
    }
    for (int i = 0; i < st->nkeys; i++)
        st->send[st->bstart[st->keys[i] >> IS_SHIFT]++] = st->keys[i];

    MPI_Alltoall(st->scount, 1, MPI_INT, st->rcount, 1, MPI_INT, MPI_COMM_WORLD);
    int n = 0;
    for (int r = 0; r < nranks; r++) {
        st->rdispl[r] = n;
        n += st->rcount[r];
    }
    st->nrecv = n; /* at most nkeys * nranks: recv and sorted are that large */
    MPI_Alltoallv(st->send, st->scount, st->sdispl, MPI_INT, st->recv, st->rcount, st->rdispl,
                  MPI_INT, MPI_COMM_WORLD);

    /* step 5: counting sort over this rank's key range */
    st->lo = st->first_bucket[rank] << IS_SHIFT;
    st->hi = st->first_bucket[rank + 1] << IS_SHIFT;
    int range = st->hi - st->lo;
    memset(st->count, 0, sizeof(int) * (size_t)(range + 1));
    for (int i = 0; i < n; i++)
        st->count[st->recv[i] - st->lo + 1]++;
    for (int k = 1; k <= range; k++)
        st->count[k] += st->count[k - 1];
    for (int i = 0; i < n; i++)
        st->sorted[st->count[st->recv[i] - st->lo]++] = st->recv[i];
}

/* The checks after the last sort; collective. Returns 1 when the job's keys are sorted
 * and are the keys generated. */
static int is_verify(const struct is_state *st)
{
    int bad = 0;
    uint64_t h[2] = {0, 0}, gh[2];
    long cnt[2] = {st->nkeys, st->nrecv}, gcnt[2];

    for (int i = 0; i < st->nkeys; i++)
        h[0] += is_hash(st->keys[i]);
    for (int i = 0; i < st->nrecv; i++) {
        h[1] += is_hash(st->sorted[i]);
        if (i > 0 && st->sorted[i - 1] > st->sorted[i])
            bad = 1;
        if (st->sorted[i] < st->lo || st->sorted[i] >= st->hi)
            bad = 1;
    }
    /* across ranks: (min, max) of each non-empty rank, in rank order */
    int mm[2] = {st->nrecv ? st->sorted[0] : -1, st->nrecv ? st->sorted[st->nrecv - 1] : -1};
    int *all = malloc(sizeof(int) * 2 * (size_t)nranks);
    MPI_Allgather(mm, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    int prev = -1;
    for (int r = 0; r < nranks; r++) {
        if (all[2 * r] < 0)
            continue;
        if (all[2 * r] < prev)
            bad = 1;
        prev = all[2 * r + 1];
    }
    free(all);
    MPI_Allreduce(h, gh, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(cnt, gcnt, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (gh[0] != gh[1] || gcnt[0] != gcnt[1])
        bad = 1;
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !anybad;
}

/* Frees st's buffers; any rank, after the last use. */
static void is_free(struct is_state *st)
{
    free(st->keys);
    free(st->send);
    free(st->recv);
    free(st->sorted);
    free(st->count);
    free(st->scount);
    free(st->sdispl);
    free(st->rcount);
    free(st->rdispl);
    free(st->first_bucket);
}

/* mpibench's `is` mode: collective over MPI_COMM_WORLD, rank 0 prints. Returns 0, or
 * IS_FAILED when the verification (or an allocation) failed on any rank. Owns nothing
 * after it returns. */
int bench_is(int nkeys, int iters)
{
    struct is_state st;
    double *t = malloc(sizeof(double) * (size_t)iters);
    int ok = 1;

    memset(&st, 0, sizeof st);
    st.nkeys = nkeys;
    st.keys = malloc(sizeof(int) * (size_t)nkeys);
    st.send = malloc(sizeof(int) * (size_t)nkeys);
    /* the worst split sends every key of the job to one rank */
    st.recv = malloc(sizeof(int) * (size_t)nkeys * (size_t)nranks);
    st.sorted = malloc(sizeof(int) * (size_t)nkeys * (size_t)nranks);
    /* a rank's range can be every key: IS_MAXKEY + 1 prefix sums */
    st.count = malloc(sizeof(int) * (IS_MAXKEY + 1));
    st.scount = malloc(sizeof(int) * (size_t)nranks);
    st.sdispl = malloc(sizeof(int) * (size_t)nranks);
    st.rcount = malloc(sizeof(int) * (size_t)nranks);
    st.rdispl = malloc(sizeof(int) * (size_t)nranks);
    st.first_bucket = malloc(sizeof(int) * ((size_t)nranks + 1));
    if (!t || !st.keys || !st.send || !st.recv || !st.sorted || !st.count || !st.scount ||
        !st.sdispl || !st.rcount || !st.rdispl || !st.first_bucket)
        ok = 0;
    else
        is_generate(st.keys, nkeys, rank);
    int allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ok = allok;

    for (int i = -1; i < iters && ok; i++) { /* i = -1: warm-up, connections made */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        is_sort(&st);
        MPI_Barrier(MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) * 1e3;
    }
    if (ok)
        ok = is_verify(&st);
    if (rank == 0) {
        double med = ok ? median(t, iters) : 0;
        printf("is ranks=%d keys=%d maxkey=%d iters=%d time_ms=%.2f min_ms=%.2f Mkeys_s=%.2f "
               "verified=%d\n",
               nranks, nkeys, IS_MAXKEY, iters, med, ok ? t[0] : 0,
               med > 0 ? (double)nkeys * nranks / med * 1e-3 : 0, ok);
        fflush(stdout);
    }
    is_free(&st);
    free(t);
    return ok ? 0 : IS_FAILED;
}
