/*
 * sched.h: tasks and the per-CPU scheduler.
 *
 * Each CPU has a run queue and a scheduler context (the CPU's idle stack). By default a
 * task stays on the CPU it was given (pinned); several tasks on one CPU share it by timer
 * preemption. Preemption only ever interrupts application code (an RIP inside a PVAS
 * partition): kernel code runs until it blocks or returns, so no spinlock is ever held by
 * a preempted task.
 */
#ifndef UK_SCHED_H
#define UK_SCHED_H
#include <stdint.h>
#include "uk/cpu.h"

struct trapframe;

#define TASK_KILLED_CODE 137 /* exit code of a task ended by pvas_destroy() (128 + SIGKILL) */

enum task_state { TASK_NEW, TASK_READY, TASK_RUNNING, TASK_BLOCKED, TASK_EXITED };

struct task {
    uint64_t rsp; /* saved by swtch() while not running */
    int pid;
    int cpu; /* the CPU it is pinned to */
    volatile int state;
    volatile int wakeups; /* task_wake()s not yet consumed by task_block() */
    volatile int killed;  /* end it at its next interrupt in application code */
    int exit_code;
    uint64_t cr3; /* page table it runs with */
    void (*entry)(void *);
    void *arg;
    void (*on_exit)(struct task *t); /* called on the task's own stack as it exits */
    struct task *next;               /* run queue */
    uint64_t switches;               /* times it was switched in */
    uint64_t run_ns;                 /* time it ran, up to its last switch out */
    char name[24];
};

/* Boot only (BSP). */
void sched_init(void);

/* Task or boot context. Prepare `t` (zeroed by the caller, name/entry/arg/cr3/cpu set) to
 * start on the stack whose top is `stack_top`; the task exits when entry returns. */
void task_init(struct task *t, uint64_t stack_top);
/* The same for a stack in another address space: fills `frame` with what must be stored
 * at t->rsp (the caller copies it there) instead of writing it. */
#define TASK_FRAME_WORDS 8
void task_init_frame(struct task *t, uint64_t stack_top, uint64_t frame[TASK_FRAME_WORDS]);
/* Any context. Make a new or blocked task runnable on its CPU. */
void task_start(struct task *t);

/* Any context, once percpu_init_this() ran on this CPU: the task running on this CPU,
 * NULL in its scheduler context (and in interrupts taken there). One %gs-relative load,
 * inline: every MPI call asks who its caller is (pvas_current, plat_rank). */
static inline struct task *task_current(void)
{
    struct task *t;
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(t) : "i"(PERCPU_CURRENT_OFFSET));
    return t;
}
/* Task context. */
void task_yield(void);
/* Sleep until task_wake(); returns at once if a wake-up is already pending. The CPU
 * halts while nothing else is runnable. */
void task_block(void);
/* Any context (interrupt and IPI included). */
void task_wake(struct task *t);
/* Any context: interrupt t's CPU (if not this one) even if t is running, so that a killed
 * task is noticed at once (task_wake only IPIs a CPU whose task was blocked). */
void task_poke(struct task *t);
void task_exit(int code) __attribute__((noreturn));

/* The CPU's scheduler loop (boot CPU after start-up, APs from ap_main). Never returns. */
void sched_loop(void) __attribute__((noreturn));
/* Interrupt context, from trap_dispatch after the EOI: preempt if the time slice is over
 * and the interrupted code is application code. */
void sched_preempt_check(struct trapframe *tf);

/* Any context: the CPU time `t` has used (while blocked it uses none: the CPU halts or
 * runs others). Task context for t == task_current() gives the running total. */
uint64_t task_cpu_ns(struct task *t);

/* Statistics. */
uint64_t sched_cr3_loads(int cpu);
uint64_t sched_switches(int cpu);

/* Set by PVAS: is this address application code (inside a partition)? */
extern int (*sched_is_app_address)(uint64_t rip);

#endif
