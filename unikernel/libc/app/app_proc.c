/* app_proc.c: the process calls newlib makes, for a task: its pid, signals to itself, and
 * the end (newlib's exit() flushes stdio, then _exit()). */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <uk/abi.h>

extern const struct uk_abi *uk_abi;

/* Task context. */
pid_t getpid(void)
{
    return uk_abi->getpid();
}

/* Task context (abort(), raise()): a signal to itself ends the task with 128 + signal, as a
 * shell would report it; a non-zero exit ends the job. */
int kill(pid_t pid, int sig)
{
    if (pid != uk_abi->getpid()) {
        errno = ESRCH;
        return -1;
    }
    if (sig == 0)
        return 0;
    uk_abi->exit(128 + sig);
}

/* Task context. */
void _exit(int code)
{
    uk_abi->exit(code);
}
