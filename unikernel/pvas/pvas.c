/*
 * pvas.c: address spaces, partitions and tasks (see pvas.h).
 *
 * Ownership: an address space owns its page table and, through it, every private frame of
 * its partitions (found again by walking the table at pvas_destroy: nothing is tracked
 * twice); shared read-only frames are marked VM_SHARED and belong to the image. Each task's
 * struct lives until pvas_destroy(), so its exit code can be read after it exits.
 */
#include "pvas/pvas_image.h"
#include "pvas/pvas_task.h"
#include "pvas/pvas_net.h"
#include "pvas/pvas_fs.h"
#include "kernel/pmm.h"
#include "kernel/vmm.h"
#include "kernel/smp.h"
#include "kernel/fmt.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/percpu.h"
#include "uk/spinlock.h"
#include "uk/cpu.h"
#include "uk/time.h"
#include <stdlib.h>
#include <string.h>

struct pvas_as {
    uint64_t pml4;
    spinlock_t lock; /* tasks list, live count, first_error */
    struct pvas_task *tasks;
    int ntasks, live;
    int first_error;
    struct task *waiter; /* blocked in pvas_wait() */
    int rank_base, size, first_cpu;
    int local; /* tasks the job will start here (pvas_set_local), 0: unknown */
    enum mempol mempol;
    void (*exit_hook)(struct pvas_task *t);
};

static spinlock_t part_lock = SPINLOCK_INIT;
static uint8_t part_used[PART_MAX];
static volatile int next_pid = 1;

static int is_app_address(uint64_t rip)
{
    return rip >= PART_BASE && rip < PART_BASE + (uint64_t)PART_MAX * PART_SIZE;
}

/* Boot only. */
void pvas_init(void)
{
    sched_is_app_address = is_app_address;
    pvas_fault_init();
}

static int part_alloc(void)
{
    uint64_t f = spin_lock_irqsave(&part_lock);
    int p = -1;
    for (int i = 0; i < PART_MAX; i++)
        if (!part_used[i]) {
            part_used[i] = 1;
            p = i;
            break;
        }
    spin_unlock_irqrestore(&part_lock, f);
    return p;
}

static void part_free(int p)
{
    uint64_t f = spin_lock_irqsave(&part_lock);
    part_used[p] = 0;
    spin_unlock_irqrestore(&part_lock, f);
}

/* Task context; see pvas.h. */
struct pvas_as *pvas_create(void)
{
    struct pvas_as *as = calloc(1, sizeof *as);
    if (!as)
        return 0;
    as->pml4 = pmm_alloc_zeroed();
    if (!as->pml4) {
        free(as);
        return 0;
    }
    /* The kernel half: the same PDPTs as the kernel's table (created once by vmm_init). */
    uint64_t *top = phys_ptr(as->pml4), *k = phys_ptr(kernel_pml4);
    for (int i = 256; i < 512; i++)
        top[i] = k[i];
    as->lock = (spinlock_t)SPINLOCK_INIT;
    as->size = 0;
    return as;
}

/* Task context. */
void pvas_set_placement(struct pvas_as *as, int rank_base, int size, int first_cpu)
{
    as->rank_base = rank_base;
    as->size = size;
    as->first_cpu = first_cpu;
}

/* Task context, before the first pvas_spawn; see pvas.h. */
void pvas_set_mempol(struct pvas_as *as, enum mempol p)
{
    as->mempol = p;
}

/* Task context, before the first pvas_spawn; see pvas.h. */
void pvas_set_local(struct pvas_as *as, int count)
{
    as->local = count;
}

/* Any context; see pvas.h. Placement is round-robin over the slots of smp_place_cpu() from
 * first_cpu (pvas_spawn), so the count follows from the number of tasks alone, whether or
 * not they have started yet. */
int pvas_cpu_tasks(struct pvas_as *as, int cpu)
{
    int n = as->local > 0 ? as->local : as->ntasks, on = 0;
    for (int i = 0; i < n; i++)
        on += smp_place_cpu(as->first_cpu + i) == cpu;
    return on;
}

/* Scheduler context of the CPU the task exited on (struct task.on_exit). */
static void task_exited(struct task *tk)
{
    struct pvas_task *t = (struct pvas_task *)tk;
    struct pvas_as *as = t->as;
    pvas_net_task_exited(t);
    pvas_fs_task_exited(t);
    if (as->exit_hook)
        as->exit_hook(t);
    uint64_t f = spin_lock_irqsave(&as->lock);
    if (tk->exit_code && !as->first_error)
        as->first_error = tk->exit_code;
    as->live--;
    struct task *w = as->live == 0 ? as->waiter : 0;
    spin_unlock_irqrestore(&as->lock, f);
    if (w)
        task_wake(w);
}

#define MAX_STRINGS 256

/* Copy a string vector (at most MAX_STRINGS) to the top of the task's stack; returns the
 * array's address. */
static uint64_t push_strings(struct pvas_task *t, uint64_t *sp, char *const v[], int *count)
{
    int n = 0;
    while (v && v[n] && n < MAX_STRINGS)
        n++;
    uint64_t ptrs[MAX_STRINGS + 1];
    for (int i = n - 1; i >= 0; i--) {
        size_t len = strlen(v[i]) + 1;
        *sp -= len;
        pvas_copy_out(t->as, *sp, v[i], len);
        ptrs[i] = *sp;
    }
    ptrs[n] = 0;
    *sp = (*sp - (uint64_t)(n + 1) * sizeof ptrs[0]) & ~15ULL;
    pvas_copy_out(t->as, *sp, ptrs, (size_t)(n + 1) * sizeof ptrs[0]);
    if (count)
        *count = n;
    return *sp;
}

/* Task context; see pvas.h. */
struct pvas_task *pvas_spawn(struct pvas_as *as, const struct pvas_image *img, char *const argv[],
                             char *const envp[], char *err, size_t errlen)
{
    struct pvas_task *t = calloc(1, sizeof *t);
    if (!t) {
        kformat(err, errlen, "out of memory");
        return 0;
    }
    t->part = part_alloc();
    if (t->part < 0) {
        kformat(err, errlen, "all %d partitions are in use", PART_MAX);
        free(t);
        return 0;
    }
    t->as = as;
    t->img = img;
    t->base = PART_BASE + (uint64_t)t->part * PART_SIZE;
    /* The CPU before the partition is filled: its memory comes from that CPU's node. Tasks
     * of one address space are spawned by one task (the job's), so ntasks is this one's
     * index until it is counted below. */
    t->task.cpu = smp_place_cpu(as->first_cpu + as->ntasks);
    t->mem = mempol_for_cpu(as->mempol, t->task.cpu);
    if (pvas_load_image(t, err, errlen) || pvas_map_stack(t, err, errlen)) {
        /* What was mapped stays in the page table and goes with pvas_destroy(). */
        part_free(t->part);
        free(t);
        return 0;
    }
    uint64_t sp = t->stack_hi;
    t->envp = push_strings(t, &sp, envp, 0);
    t->argv = push_strings(t, &sp, argv, &t->argc);

    uint64_t f = spin_lock_irqsave(&as->lock);
    int index = as->ntasks++;
    as->live++;
    t->as_next = as->tasks;
    as->tasks = t;
    spin_unlock_irqrestore(&as->lock, f);

    t->rank = as->rank_base + index;
    t->size = as->size > index ? as->size : index + 1;
    t->task.pid = __atomic_fetch_add(&next_pid, 1, __ATOMIC_RELAXED);
    t->task.cr3 = as->pml4;
    t->task.entry = pvas_task_main;
    t->task.arg = t;
    t->task.on_exit = task_exited;
    kformat(t->task.name, sizeof t->task.name, "%s.%d", img->name, t->rank);
    uint64_t frame[TASK_FRAME_WORDS];
    task_init_frame(&t->task, sp, frame);
    pvas_copy_out(as, t->task.rsp, frame, sizeof frame);
    task_start(&t->task);
    return t;
}

/* Task context; see pvas.h. */
int pvas_wait(struct pvas_as *as)
{
    for (;;) {
        uint64_t f = spin_lock_irqsave(&as->lock);
        if (as->live == 0) {
            as->waiter = 0;
            spin_unlock_irqrestore(&as->lock, f);
            return as->first_error;
        }
        as->waiter = task_current();
        spin_unlock_irqrestore(&as->lock, f);
        task_block();
    }
}

static void to_kernel_table(void *pml4)
{
    if (read_cr3() == (uint64_t)pml4)
        write_cr3(kernel_pml4);
}

/* Task context; see pvas.h. */
void pvas_destroy(struct pvas_as *as)
{
    /* Kill what still runs. A task notices at its next interrupt in application code
     * (sched_preempt_check) or when its CPU would switch to it; one that is inside the
     * kernel at the IPI is poked again until it is gone. */
    for (struct pvas_task *t = as->tasks; t; t = t->as_next)
        t->task.killed = 1;
    while (pvas_live(as) > 0) {
        for (struct pvas_task *t = as->tasks; t; t = t->as_next)
            if (t->task.state != TASK_EXITED)
                task_poke(&t->task);
        uint64_t t0 = time_ns();
        while (pvas_live(as) > 0 && time_ns() - t0 < 1000000)
            task_yield();
    }
    pvas_wait(as);
    /* No task runs on this table any more, but a CPU may still have it loaded. */
    for (int c = 0; c < smp_ncpus(); c++) {
        if (c == cpu_id())
            to_kernel_table((void *)as->pml4);
        else
            smp_run(c, to_kernel_table, (void *)as->pml4);
    }
    struct pvas_task *t = as->tasks;
    while (t) {
        struct pvas_task *next = t->as_next;
        part_free(t->part);
        free(t);
        t = next;
    }
    vmm_free_lower(as->pml4);
    free(as);
}

/* Any context. */
void pvas_on_task_exit(struct pvas_as *as, void (*fn)(struct pvas_task *t))
{
    as->exit_hook = fn;
}

uint64_t pvas_table_frames(struct pvas_as *as)
{
    return vmm_count_tables(as->pml4, PART_BASE, PART_BASE + (uint64_t)PART_MAX * PART_SIZE);
}

uint64_t pvas_rank_base(struct pvas_as *as, int rank)
{
    uint64_t f = spin_lock_irqsave(&as->lock), base = 0;
    for (struct pvas_task *t = as->tasks; t; t = t->as_next)
        if (t->rank == rank)
            base = t->base;
    spin_unlock_irqrestore(&as->lock, f);
    return base;
}

int pvas_live(struct pvas_as *as)
{
    return as->live;
}

uint64_t pvas_pml4(struct pvas_as *as)
{
    return as->pml4;
}
