/*
 * lockfree.h: the engine's lock-free building blocks, each written once, with the argument
 * for its memory orders next to it. Every lock-free handshake of mpi/core uses these; none
 * is hand-written elsewhere.
 *
 *   struct lf_stack  an intrusive stack: any number of producers push in any context
 *                    (interrupts included); a consumer takes everything at once, oldest
 *                    first (lf_take_all), or the single owner pops one (lf_pop_owner).
 *   struct lf_box    a try-lock with an inbox (docs/architecture.md §3.7): a producer
 *                    that cannot take the lock leaves its item in the inbox, and whoever
 *                    holds the lock drains the inbox before it lets go for good. The
 *                    release is the "unlock, then look at the inbox" handshake below.
 *   struct lf_nap    the sleep handshake: a waiter that polls costs its wakers a fence
 *                    and a load instead of a wake-up (the same Dekker pattern, below).
 *
 * The one hazard they exist for. x86 (TSO) may let a load pass an earlier store to
 * another location (the store waits in the store buffer). In "unlock, then check the
 * inbox", a plain (release) unlock followed by an (acquire) load of the inbox allows:
 *
 *     holder                          producer (another CPU)
 *     store lock = 0  (buffered)      push item           (locked CAS: full barrier)
 *     load inbox -> empty             try-lock -> held    (sees the old lock value)
 *     leaves                          leaves
 *
 * and the item is stranded: nobody holds the lock, nobody will drain it, and a rank
 * waiting for that message sleeps forever. The fix is the Dekker pattern in C11 terms:
 * both sides do a sequentially consistent store (here an atomic exchange, a locked
 * instruction on x86) and then a sequentially consistent load of the other side's
 * location. All four accesses are then in one total order S consistent with program order:
 * if the producer's look at the lock comes before the holder's unlock in S, its push does
 * too, and so the holder's later look at the inbox sees the item; otherwise the producer's
 * look comes after the unlock and sees the lock free. Either way someone drains.
 * tests/unit/lockfree_test.c shows the release/acquire version stranding items on this
 * machine and these functions stranding none.
 *
 * Freestanding: compiler builtins only (gcc/clang __atomic), plus plat_relax() from
 * the platform header for spinning.
 */
#ifndef MPI_LOCKFREE_H
#define MPI_LOCKFREE_H
#include "mpe_plat.h"
#include <stdint.h>

/* The item that embeds member `f` (of type T) at p. (Linux has the same macro.) */
#ifndef container_of
#define container_of(p, T, f) ((T *)((char *)(p) - __builtin_offsetof(T, f)))
#endif

/* An element of an lf_stack, embedded in the item (container_of gets the item back). */
struct lf_link {
    struct lf_link *next;
};

struct lf_stack {
    struct lf_link *head; /* newest first; NULL when empty */
};

/* Any context, any number of producers at once. The item is the consumer's once pushed.
 * Returns 1 if the stack was empty before this push.
 *
 * Order: the successful CAS is sequentially consistent. It publishes l->next and the
 * item's contents (release part) to whoever takes it with lf_take_all/lf_pop_owner
 * (acquire part), and it is the "store" of the Dekker pattern of lf_box (file comment). */
static inline int lf_push(struct lf_stack *s, struct lf_link *l)
{
    struct lf_link *head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
    do
        l->next = head;
    while (!__atomic_compare_exchange_n(&s->head, &head, l, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return head == 0;
}

/* Any context: take every pushed item at once; returns them oldest first (linked through
 * next), or NULL. Concurrent takers each get a disjoint batch.
 *
 * Order: the exchange is sequentially consistent: it acquires what the pushers released,
 * and it is a full barrier for the caller's loads that follow. */
static inline struct lf_link *lf_take_all(struct lf_stack *s)
{
    struct lf_link *l = __atomic_exchange_n(&s->head, (struct lf_link *)0, __ATOMIC_SEQ_CST);
    struct lf_link *fifo = 0;
    while (l) { /* the stack is newest first: reverse it */
        struct lf_link *next = l->next;
        l->next = fifo;
        fifo = l;
        l = next;
    }
    return fifo;
}

/* The stack's single owner only (producers may push meanwhile): pop the newest item, or
 * NULL. ABA-free because nobody else pops: between our read of head->next and the CAS,
 * others can only push, which changes head and fails the CAS; head cannot be popped and
 * pushed back. Order: the acquire loads pair with lf_push's release. */
static inline struct lf_link *lf_pop_owner(struct lf_stack *s)
{
    struct lf_link *head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
    while (head && !__atomic_compare_exchange_n(&s->head, &head, head->next, 0, __ATOMIC_ACQUIRE,
                                                __ATOMIC_ACQUIRE))
        ;
    return head;
}

/* Any context: is the stack empty right now? Sequentially consistent: it is the "load"
 * of the Dekker pattern (lf_box_unlock). */
static inline int lf_empty(struct lf_stack *s)
{
    return __atomic_load_n(&s->head, __ATOMIC_SEQ_CST) == 0;
}

/* A try-lock with an inbox (file comment). */
struct lf_box {
    uint32_t lock; /* 1 while held */
    struct lf_stack inbox;
};

/* Any context, never waits: 1 if the caller now holds the box.
 * Order: a sequentially consistent exchange: acquires the previous holder's critical
 * section, and is the producer's "load" of the lock in the Dekker pattern. */
static inline int lf_box_trylock(struct lf_box *b)
{
    return !__atomic_exchange_n(&b->lock, 1, __ATOMIC_SEQ_CST);
}

/* Task context (never from an interrupt: the holder could be the code it interrupted).
 * Spins until the caller holds the box; holders keep it for a bounded time. */
static inline void lf_box_lock(struct lf_box *b)
{
    while (!lf_box_trylock(b))
        while (__atomic_load_n(&b->lock, __ATOMIC_RELAXED))
            plat_relax();
}

/* The holder: release the box, then look at the inbox. Returns 0 when the box is released
 * for good; 1 when something was pushed meanwhile and the caller holds the box again (it
 * must drain and call lf_box_unlock again).
 *
 * Order (the hazard of the file comment): the unlock is an exchange, not a store, so it is
 * a full barrier (a locked instruction on x86) and sequentially consistent: the load of
 * the inbox below cannot be satisfied before the unlock is visible to the other CPUs. */
static inline int lf_box_unlock(struct lf_box *b)
{
    __atomic_exchange_n(&b->lock, 0, __ATOMIC_SEQ_CST);
    return !lf_empty(&b->inbox) && lf_box_trylock(b);
}

/* Any context: leave an item in the box's inbox. Returns 1 if the box was free after the
 * push: then nobody is bound to see the item, and the caller must get it drained (take
 * the box with lf_box_trylock and drain, or have someone else do it). Returns 0 if the
 * box was held: its holder sees the item when it releases (lf_box_unlock).
 * Order: the push (seq_cst CAS) comes before the seq_cst load of the lock: the producer
 * half of the Dekker pattern. */
static inline int lf_box_push(struct lf_box *b, struct lf_link *l)
{
    lf_push(&b->inbox, l);
    return !__atomic_load_n(&b->lock, __ATOMIC_SEQ_CST);
}

/*
 * The sleep handshake. A waiter loops: look at its condition; if unmet, lf_nap_ready(); if
 * that returns 1, sleep, then lf_nap_woke(). A waker first makes the condition true, then
 * wakes the waiter only if lf_nap_wake_needed() says so. While the waiter polls (it has
 * not announced), a waker pays a fence and a load, not a wake-up (on the unikernel a
 * scheduler lock on the waiter's CPU, with interrupts off).
 *
 * Only the waiter writes may_sleep. lf_nap_ready() announces (may_sleep = 1) and returns
 * 0 the first time: the waiter looks once more before it may sleep. The hazard is the one
 * of the file comment: "announce, then look at the condition" against "make it true, then
 * look at the announcement", two stores each followed by a load of the other's location.
 * Both sides put a sequentially consistent fence between their store and their load, so
 * the two fences are ordered in S: if the waker's comes first, the waiter's look after its
 * fence sees the condition true and it does not sleep; if the waiter's comes first, the
 * waker's load sees the announcement and it wakes. A waker that read 0 from the reset in
 * lf_nap_woke() is the first case: the waiter announces again before it may sleep.
 * tests/unit/lockfree_test.c runs it as a litmus test, with a broken copy (no fences).
 */
struct lf_nap {
    uint32_t may_sleep; /* 1: the waiter announced; it may be asleep from its next call on */
};

/* The waiter, after a look that found its condition unmet: 1 if it may sleep now (it
 * announced on an earlier call and has looked since), 0 if it announced now and must
 * look once more first. */
static inline int lf_nap_ready(struct lf_nap *n)
{
    if (__atomic_load_n(&n->may_sleep, __ATOMIC_RELAXED))
        return 1;
    __atomic_store_n(&n->may_sleep, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the store above, then the caller's look */
    return 0;
}

/* The waiter, back from a sleep: polling again (wakers may skip it until it announces). */
static inline void lf_nap_woke(struct lf_nap *n)
{
    __atomic_store_n(&n->may_sleep, 0, __ATOMIC_RELAXED);
}

/* Any context, after the store that makes the waiter's condition true: 1 if the waiter
 * may be asleep, or about to sleep without looking again: wake it. */
static inline int lf_nap_wake_needed(struct lf_nap *n)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the caller's store, then the load below */
    return __atomic_load_n(&n->may_sleep, __ATOMIC_RELAXED) != 0;
}

#endif
