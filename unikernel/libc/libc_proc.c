/*
 * libc_proc.c: the process calls newlib makes. The kernel is one process.
 *
 * exit(code) is newlib's own: it runs the atexit handlers, flushes and closes the stdio
 * streams (the shared stdout buffer included), then calls _exit() below, which ends the
 * VM with `code` as the job's exit code. abort() arrives here as kill(getpid(), SIGABRT).
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <uk/console.h>
#include <uk/power.h>

#define LIBC_PID 1

/* Any context; the whole kernel is process 1. */
pid_t getpid(void)
{
    return LIBC_PID;
}

/* Task context (abort(), raise()); a signal to ourselves ends the job like a shell would
 * report it: exit code 128 + signal. No handlers run: stdio may be in any state. */
int kill(pid_t pid, int sig)
{
    if (pid != LIBC_PID) {
        errno = ESRCH;
        return -1;
    }
    if (sig == 0)
        return 0;
    kprintf("libc: killed by signal %d\n", sig);
    machine_exit(128 + sig);
}

/* Task context, from newlib's exit() after stdio is flushed (or directly, skipping it). */
void _exit(int code)
{
    machine_exit(code);
}
