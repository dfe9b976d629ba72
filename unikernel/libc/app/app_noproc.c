/*
 * app_noproc.c: the process calls a rank cannot make. A job's ranks are its only
 * processes: there is no shell and no program to exec, so each call fails with ENOSYS
 * (ECHILD for the waits: there are no children), as newlib's system() does through
 * fork() (libc_stubs.c). Declared by newlib's <stdio.h>, <unistd.h>, <sys/wait.h>.
 */
#define _GNU_SOURCE /* execvpe */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Task context. */
FILE *popen(const char *command, const char *mode)
{
    errno = ENOSYS;
    return NULL;
}

/* Task context: no stream came from popen(). */
int pclose(FILE *stream)
{
    errno = ECHILD;
    return -1;
}

/* Task context. */
pid_t waitpid(pid_t pid, int *status, int options)
{
    errno = ECHILD;
    return -1;
}

/* Task context. */
int execv(const char *path, char *const argv[])
{
    errno = ENOSYS;
    return -1;
}

/* Task context. */
int execvp(const char *file, char *const argv[])
{
    errno = ENOSYS;
    return -1;
}

/* Task context. */
int execvpe(const char *file, char *const argv[], char *const envp[])
{
    errno = ENOSYS;
    return -1;
}

/* Task context. */
int execl(const char *path, const char *arg, ...)
{
    errno = ENOSYS;
    return -1;
}

/* Task context. */
int execlp(const char *file, const char *arg, ...)
{
    errno = ENOSYS;
    return -1;
}

/* Task context. */
int execle(const char *path, const char *arg, ...)
{
    errno = ENOSYS;
    return -1;
}
