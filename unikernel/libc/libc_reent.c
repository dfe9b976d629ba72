/*
 * libc_reent.c: newlib's per-thread state, one per CPU.
 *
 * newlib keeps errno, the strtok/rand/asctime state and the stdio streams in a struct
 * _reent. Our newlib is built with __DYNAMIC_REENT__, so every _REENT (and so every errno)
 * goes through __getreent(). With one global struct, two CPUs would overwrite each other's
 * errno between a failing call and the caller's check. CPU 0 uses newlib's global struct
 * (_impure_ptr), the others get their own here.
 *
 * The three standard streams stay shared: every CPU's stdin/stdout/stderr point at the
 * global struct's FILEs, so there is one stdout buffer (protected by its FILE lock, see
 * libc_lock.c) and exit() flushes it (newlib's cleanup only walks the global struct).
 *
 * Later, PVAS tasks get one struct each; then __getreent() returns the current task's.
 */
#include <stdio.h>
#include <sys/reent.h>
#include <uk/cpu.h>
#include <uk/libc.h>
#include <memlayout.h>

/* newlib's internal stdio initialiser (findfp.c); not in its public headers. */
void __sinit(struct _reent *s);

static struct _reent libc_reent_cpu[MAX_CPUS];
/* Written only by the owning CPU, read only by it: no lock. 1 = struct initialised. */
static volatile char libc_reent_ready[MAX_CPUS];

/* Owning CPU, task context: build this CPU's struct and share the global std streams. */
static struct _reent *libc_reent_setup(int cpu)
{
    struct _reent *r = &libc_reent_cpu[cpu];

    _REENT_INIT_PTR(r);
    /* Mark it usable before __sinit: initialising the streams takes locks, and anything
     * those paths do that touches errno comes straight back here. */
    libc_reent_ready[cpu] = 1;
    __sinit(_GLOBAL_REENT);
    r->_stdin = _GLOBAL_REENT->_stdin;
    r->_stdout = _GLOBAL_REENT->_stdout;
    r->_stderr = _GLOBAL_REENT->_stderr;
    /* Keeps newlib from giving this struct streams of its own. */
    r->__sdidinit = 1;
    return r;
}

/* Any context (errno is touched everywhere); returns the calling CPU's state. Never
 * allocates. Calls from an interrupt handler only get errno-style use out of it. */
struct _reent *__getreent(void)
{
    int cpu = cpu_id();

    if (cpu <= 0 || cpu >= MAX_CPUS)
        return _impure_ptr;
    if (libc_reent_ready[cpu])
        return &libc_reent_cpu[cpu];
    return libc_reent_setup(cpu);
}
