/* sched.c: see sched.h. Lock order: a CPU's run-queue lock is a leaf (nothing else is taken
 * while holding it), always with interrupts masked. */
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "uk/spinlock.h"
#include "uk/console.h"
#include "uk/power.h"
#include "uk/cpu.h"
#include "uk/time.h"
#include "memlayout.h"

#define SLICE_HZ 100 /* preemption tick when a CPU has more than one runnable task */

struct cpu_sched {
    spinlock_t lock; /* the run queue and the state of the tasks pinned here */
    struct task *head, *tail;
    int nqueued;
    uint64_t sched_rsp; /* the scheduler context, while a task runs */
    uint64_t cr3_loads, switches;
    uint64_t in_ns; /* time_ns() when the running task (percpu's current) was switched in */
    volatile int need_resched;
    int ticking;
} __attribute__((aligned(64)));

static struct cpu_sched cs[MAX_CPUS];
int (*sched_is_app_address)(uint64_t rip);

void swtch(uint64_t *save_rsp, uint64_t load_rsp);
extern char task_first_entry[];
void task_run_first(struct task *t);

static void enqueue(struct cpu_sched *c, struct task *t)
{
    t->next = 0;
    if (c->tail)
        c->tail->next = t;
    else
        c->head = t;
    c->tail = t;
    c->nqueued++;
}

static struct task *dequeue(struct cpu_sched *c)
{
    struct task *t = c->head;
    if (t) {
        c->head = t->next;
        if (!c->head)
            c->tail = 0;
        c->nqueued--;
    }
    return t;
}

static void sched_tick(int cpu)
{
    struct cpu_sched *c = &cs[cpu];
    if (percpu[cpu].current && c->nqueued > 0)
        c->need_resched = 1;
}

/* Boot only. */
void sched_init(void)
{
    timer_add_hook(sched_tick);
}

/* Task or boot context; see sched.h. The first swtch into the task pops this frame (in
 * swtch.S's order, lowest address first). */
void task_init_frame(struct task *t, uint64_t stack_top, uint64_t frame[TASK_FRAME_WORDS])
{
    frame[0] = 0x037f00001f80ULL;          /* MXCSR default, x87 control word default */
    frame[1] = 0;                          /* r15 */
    frame[2] = 0;                          /* r14 */
    frame[3] = 0;                          /* r13 */
    frame[4] = (uint64_t)t;                /* r12: task_first_entry's argument */
    frame[5] = 0;                          /* rbx */
    frame[6] = 0;                          /* rbp */
    frame[7] = (uint64_t)task_first_entry; /* return address of swtch */
    /* The return address sits at top-8 of a 16-aligned top: after the ret, rsp is aligned
     * as task_first_entry's call needs. */
    t->rsp = (stack_top & ~15ULL) - TASK_FRAME_WORDS * 8;
    t->state = TASK_NEW;
}

/* Task or boot context; see sched.h. */
void task_init(struct task *t, uint64_t stack_top)
{
    uint64_t frame[TASK_FRAME_WORDS];
    task_init_frame(t, stack_top, frame);
    for (int i = 0; i < TASK_FRAME_WORDS; i++)
        ((uint64_t *)t->rsp)[i] = frame[i];
}

/* The first code a task runs (task_first_entry), interrupts still off from the switch. */
void task_run_first(struct task *t)
{
    irq_enable();
    t->entry(t->arg);
    task_exit(0);
}

/* Any context. */
void task_start(struct task *t)
{
    struct cpu_sched *c = &cs[t->cpu];
    uint64_t f = spin_lock_irqsave(&c->lock);
    t->state = TASK_READY;
    enqueue(c, t);
    spin_unlock_irqrestore(&c->lock, f);
    if (t->cpu != cpu_id())
        ipi_send(t->cpu, VEC_IPI_WAKE);
}

/* Interrupts off, on the task's stack: back to this CPU's scheduler context. */
static void to_scheduler(struct task *t)
{
    swtch(&t->rsp, cs[cpu_id()].sched_rsp);
}

/* Task context (or an interrupt that preempts application code). */
void task_yield(void)
{
    uint64_t f = irq_save();
    to_scheduler(task_current());
    irq_restore(f);
}

/* Task context. */
void task_block(void)
{
    uint64_t f = irq_save();
    struct task *t = task_current();
    struct cpu_sched *c = &cs[t->cpu];
    spin_lock(&c->lock);
    if (t->wakeups > 0) {
        t->wakeups--;
        spin_unlock(&c->lock);
        irq_restore(f);
        return;
    }
    t->state = TASK_BLOCKED;
    spin_unlock(&c->lock);
    to_scheduler(t);
    irq_restore(f);
}

/* Any context. */
void task_wake(struct task *t)
{
    struct cpu_sched *c = &cs[t->cpu];
    int kick = 0;
    uint64_t f = spin_lock_irqsave(&c->lock);
    if (t->state == TASK_BLOCKED) {
        t->state = TASK_READY;
        enqueue(c, t);
        kick = 1;
    } else {
        t->wakeups++;
    }
    spin_unlock_irqrestore(&c->lock, f);
    /* Only a task that was blocked needs its CPU woken: a running or ready one will see
     * the pending wake-up in task_block() (an IPI costs ~14 us under TCG). */
    if (kick && t->cpu != cpu_id())
        ipi_send(t->cpu, VEC_IPI_WAKE);
}

/* Any context; see sched.h. */
uint64_t task_cpu_ns(struct task *t)
{
    struct cpu_sched *c = &cs[t->cpu];
    uint64_t ns = t->run_ns;
    if (t == task_current())
        ns += time_ns() - c->in_ns;
    return ns;
}

/* Task context; see uk/time.h. */
uint64_t time_task_cpu_ns(void)
{
    struct task *t = task_current();
    return t ? task_cpu_ns(t) : 0;
}

/* Any context; see sched.h. */
void task_poke(struct task *t)
{
    task_wake(t);
    if (t->cpu != cpu_id())
        ipi_send(t->cpu, VEC_IPI_WAKE);
}

/* Task context. The scheduler context runs t->on_exit (which may free this stack). */
void task_exit(int code)
{
    irq_disable();
    struct task *t = task_current();
    t->exit_code = code;
    t->state = TASK_EXITED;
    to_scheduler(t);
    panic("exited task %d was switched back in", t->pid);
}

/* Interrupt context; see sched.h. */
void sched_preempt_check(struct trapframe *tf)
{
    struct cpu_sched *c = &cs[cpu_id()];
    struct task *t = task_current();
    if (!t || !sched_is_app_address || !sched_is_app_address(tf->rip))
        return;
    if (t->killed)
        task_exit(TASK_KILLED_CODE); /* the frame below is abandoned with the task */
    if (!c->need_resched)
        return;
    c->need_resched = 0;
    task_yield();
}

/* Scheduler context of each CPU; see sched.h. */
void sched_loop(void)
{
    struct cpu_sched *c = &cs[cpu_id()];
    for (;;) {
        irq_disable();
        if (smp_mailbox_poll())
            continue;
        spin_lock(&c->lock);
        struct task *t = dequeue(c);
        if (t)
            t->state = TASK_RUNNING;
        int more = c->nqueued > 0;
        spin_unlock(&c->lock);
        if (!t) {
            __asm__ volatile("sti; hlt" ::: "memory"); /* see smp.h: no lost wake-up */
            continue;
        }
        if (t->killed) { /* it is not in the middle of anything we need: never run it */
            t->exit_code = TASK_KILLED_CODE;
            t->state = TASK_EXITED;
            if (t->on_exit)
                t->on_exit(t);
            continue;
        }
        if (more && !c->ticking) { /* time slices only where tasks share a CPU */
            timer_start_periodic(SLICE_HZ);
            c->ticking = 1;
        }
        if (t->cr3 && read_cr3() != t->cr3) {
            write_cr3(t->cr3);
            c->cr3_loads++;
        }
        this_cpu()->current = t;
        c->switches++;
        t->switches++;
        c->need_resched = 0;
        c->in_ns = time_ns();
        swtch(&c->sched_rsp, t->rsp);
        t->run_ns += time_ns() - c->in_ns;
        this_cpu()->current = 0;
        spin_lock(&c->lock);
        if (t->state == TASK_RUNNING) { /* yielded or preempted: to the back of the queue */
            t->state = TASK_READY;
            enqueue(c, t);
        }
        spin_unlock(&c->lock);
        if (t->state == TASK_EXITED && t->on_exit)
            t->on_exit(t);
    }
}

uint64_t sched_cr3_loads(int cpu)
{
    return cs[cpu].cr3_loads;
}

uint64_t sched_switches(int cpu)
{
    return cs[cpu].switches;
}
