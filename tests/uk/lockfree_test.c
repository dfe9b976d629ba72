/*
 * lockfree_test.c: the store-buffer litmus test of the engine's inbox handshake inside
 * the unikernel, on every CPU (tests/unit/lockfree_test.c is the host version and explains
 * the hazard; mpi/core/lockfree.h has the argument).
 *
 * Each round: CPU 0 holds a rank's engine lock (a task inside the engine), the other CPUs
 * wait at a barrier; then CPU 0 releases the lock while every other CPU delivers one
 * message to that rank (match_rank_arrive, as the NIC interrupt does). After a second
 * barrier CPU 0 checks, without taking the lock, that no message was left in the inbox of
 * a free engine: such a message would never be matched (a rank sleeping forever).
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "kernel/smp.h"
#include "match_rank.h"
#include <memlayout.h>

#define LF_ROUNDS 3000
#define LF_KEY    7 /* a tag no receive is posted for: messages queue as unexpected */

static struct match_rank lf_rank;
static struct match_entry lf_msgs[MAX_CPUS];
static volatile unsigned lf_arrived, lf_gen;
static volatile int lf_stop;
static int lf_ncpus;

/* Every CPU: a spinning barrier of lf_ncpus (a sleeping one would spread them apart). */
static void lf_barrier(void)
{
    unsigned g = __atomic_load_n(&lf_gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&lf_arrived, 1, __ATOMIC_ACQ_REL) == (unsigned)lf_ncpus) {
        lf_arrived = 0; /* nobody reads it before lf_gen moves */
        __atomic_store_n(&lf_gen, g + 1, __ATOMIC_RELEASE);
    } else {
        while (__atomic_load_n(&lf_gen, __ATOMIC_ACQUIRE) == g)
            cpu_relax();
    }
}

static void lf_deliver(struct match_rank *mr, struct match_entry *r, struct match_entry *m)
{
    (void)mr, (void)r, (void)m;
}

/* CPUs 1..n-1 (smp_post): one arrival per round, like an interrupt on that CPU. */
static void lf_producer(void *arg)
{
    (void)arg;
    struct match_entry *e = &lf_msgs[cpu_id()];
    for (;;) {
        lf_barrier();
        if (lf_stop)
            return;
        match_rank_arrive(&lf_rank, e);
        lf_barrier();
    }
}

KTEST(lockfree_smp)
{
    lf_ncpus = smp_ncpus();
    if (lf_ncpus < 2) {
        kprintf("lockfree: needs 2 CPUs or more\n");
        return 1;
    }
    match_rank_init(&lf_rank, lf_deliver, 0);
    for (int i = 1; i < lf_ncpus; i++) {
        lf_msgs[i].key = (struct match_key){1, i, LF_KEY};
        smp_post(i, lf_producer, 0);
    }
    long stranded = 0;
    for (int round = 0; round < LF_ROUNDS; round++) {
        match_rank_lock(&lf_rank);
        lf_barrier();
        match_rank_unlock(&lf_rank); /* races with every producer's arrival */
        lf_barrier();
        if (!lf_empty(&lf_rank.box.inbox) && !__atomic_load_n(&lf_rank.box.lock, __ATOMIC_SEQ_CST))
            stranded++;
        match_rank_lock(&lf_rank); /* drain, and take this round's messages out again */
        for (int i = 1; i < lf_ncpus; i++)
            match_take(&lf_rank.eng, &lf_msgs[i]);
        match_rank_unlock(&lf_rank);
    }
    lf_stop = 1;
    lf_barrier();
    for (int i = 1; i < lf_ncpus; i++)
        smp_wait(i);
    int ok = stranded == 0 && lf_rank.eng.nunexp == 0;
    kprintf("lockfree: %d CPUs x %d rounds: %ld messages stranded in a free engine's inbox %s\n",
            lf_ncpus, LF_ROUNDS, stranded, ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}
