/*
 * mlx_plat.c: mpe_plat.h on a Linux process (mlx.h): the rank is the main thread, the
 * "interrupt context" is the network thread (mlx_net.c).
 */
#include "mlx.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

struct mpe_node *mlx_node;

/* The rank's wake-up state: the one task of the process. */
enum { WAKE_NONE, WAKE_PENDING, WAKE_SLEEPING };
static struct mlx_task {
    uint32_t state; /* WAKE_*, a futex word */
} rank_task;

/* The network lock: recursive for its holder (mpe_plat.h), as the unikernel's is for the
 * CPU that holds it (engine code called under it takes it again). */
static pthread_mutex_t net_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __thread int lock_depth;   /* this thread's nesting of net_lock */
static __thread int wake_pending; /* plat_wake under net_lock: the futex wake waits for the
                                   * outermost unlock (the woken rank's first step is often
                                   * to take net_lock: it would sleep on it at once) */

/* Which "CPU" this thread is (mlx.h): the main thread is the rank's; the network thread
 * sets its own. */
static __thread int this_cpu = MLX_CPU_RANK;
static __thread uint64_t irq_ns;

/* The mlx_* functions: the threads mlx.h gives each. */
uint64_t mlx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void mlx_plat_set_cpu(int cpu)
{
    this_cpu = cpu;
}

void mlx_plat_set_irq_time(uint64_t ns)
{
    irq_ns = ns;
}

/* The plat_* functions: the contexts mpe_plat.h gives each. */
struct mpe_node *plat_node(void)
{
    return mlx_node;
}

void *plat_task(void)
{
    return &rank_task;
}

int plat_rank(void)
{
    return mlx_env()->node; /* one rank per node: rank = node id */
}

/* Any thread: the futex system call on a private (this process's) word. */
static long futex(uint32_t *word, int op, uint32_t val)
{
    return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* Any thread: the rank sleeps in plat_block(): wake it. */
static void wake_now(struct mlx_task *t)
{
    futex(&t->state, FUTEX_WAKE_PRIVATE, 1);
}

/* Any thread. The wake-up is a token (WAKE_PENDING) left in the task's word; the exchange
 * is sequentially consistent, so everything the waker wrote before (a request's `done`,
 * an arrival in a queue) is visible to the rank once its plat_block() consumes the token.
 * The futex wake is needed only when the rank said it sleeps (WAKE_SLEEPING); under the
 * network lock it waits for the outermost unlock (plat_net_unlock): the token is already
 * there, so the rank, if not yet asleep, will not sleep, and if asleep, is woken then. */
void plat_wake(void *task)
{
    struct mlx_task *t = task;
    if (t && __atomic_exchange_n(&t->state, WAKE_PENDING, __ATOMIC_SEQ_CST) == WAKE_SLEEPING) {
        if (lock_depth)
            wake_pending = 1; /* there is one task: rank_task */
        else
            wake_now(t);
    }
}

/* Task context (the rank's thread). No wake-up is lost: a token left before we look is
 * consumed by the first exchange; one left after we announced WAKE_SLEEPING (the
 * compare-exchange) changes the word, and FUTEX_WAIT sleeps only while the word still
 * reads WAKE_SLEEPING, checked by the kernel atomically with going to sleep. */
void plat_block(void)
{
    struct mlx_task *t = &rank_task;
    if (mlx_env()->caller) {
        /* Caller mode (mlx.h): no other thread, so every token comes from our own turns
         * (the engine's plat_wake in them); each turn sleeps in epoll only until
         * something arrives. */
        while (__atomic_exchange_n(&t->state, WAKE_NONE, __ATOMIC_SEQ_CST) != WAKE_PENDING)
            mlx_net_turn(1);
        return;
    }
    for (;;) {
        if (__atomic_exchange_n(&t->state, WAKE_NONE, __ATOMIC_SEQ_CST) == WAKE_PENDING)
            return;
        uint32_t none = WAKE_NONE;
        if (!__atomic_compare_exchange_n(&t->state, &none, WAKE_SLEEPING, 0, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST))
            continue; /* woken between the two: consume the token */
        futex(&t->state, FUTEX_WAIT_PRIVATE, WAKE_SLEEPING);
    }
}

/* Task context, no engine call under way; see mpe_plat.h. */
void plat_poll(void)
{
    if (mlx_env()->caller)
        mlx_net_turn(0);
}

void plat_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void *plat_alloc(size_t n)
{
    return calloc(1, n);
}

void plat_free(void *p)
{
    free(p);
}

int plat_net_lock(void)
{
    pthread_mutex_lock(&net_lock);
    lock_depth++;
    return 0;
}

/* The outermost unlock sends what the engine queued meanwhile (mlx_net_uncork), and then,
 * the lock released, wakes the rank if plat_wake said so meanwhile. */
void plat_net_unlock(int token)
{
    (void)token;
    if (lock_depth == 1)
        mlx_net_uncork();
    lock_depth--;
    pthread_mutex_unlock(&net_lock);
    if (!lock_depth && wake_pending) {
        wake_pending = 0;
        wake_now(&rank_task);
    }
}

int plat_cpu(void)
{
    return this_cpu;
}

int plat_task_cpu(void *task)
{
    (void)task;
    return MLX_CPU_RANK;
}

/* The network thread never runs a task, as a CPU that only takes interrupts: progress
 * found there may run there (mpe_cad.c's pick_cpu). */
int plat_cpu_idle(void)
{
    return this_cpu == MLX_CPU_NET;
}

void plat_cad_ipi(int cpu)
{
    mlx_net_kick(cpu);
}

/* The engine's "TSC" is CLOCK_MONOTONIC in ns: no x86 here, the same clock everywhere. */
uint64_t plat_tsc(void)
{
    return mlx_now_ns();
}

uint64_t plat_tsc_hz(void)
{
    return NS_PER_S;
}

uint64_t plat_irq_tsc(void)
{
    return irq_ns;
}

/* The rank's buffers may be anywhere in the process. */
void plat_partition(uint64_t *base, uint64_t *size)
{
    *base = 0;
    *size = UINT64_MAX;
}

/* Any thread, the network lock perhaps held: nothing of the job can go on, so the
 * process ends at once (_exit: no exit handlers, which would wait for peers); the other
 * nodes see their connections to this one close and end too. */
void plat_fatal(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "mpi: node %d: %s: ending the job\n", mlx_node ? mpe_node_id(mlx_node) : -1,
            buf);
    fflush(stderr);
    _exit(MLX_EXIT_FATAL);
}
