/*
 * libc_stubs.c: the POSIX calls newlib's libc.a can reach but neither the kernel nor an
 * application has (no processes, no signals, no entropy source yet). Each fails with the
 * errno a program can act on instead of breaking the link. Files: libc_nofs.c for the
 * kernel, unikernel/libc/app/app_file.c for applications.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Declared here: newlib's headers do not declare these for our target. */
int getentropy(void *buf, size_t len);
void _init(void);
void _fini(void);

/* Any task context; one process, no children. */
pid_t fork(void)
{
    errno = ENOSYS;
    return -1;
}

/* Any task context; one process, no children. */
int execve(const char *path, char *const argv[], char *const envp[])
{
    errno = ENOSYS;
    return -1;
}

/* Any task context; one process, no children. */
pid_t wait(int *status)
{
    errno = ECHILD;
    return -1;
}

/* Any task context; there are no signal handlers to block, so every mask is accepted. */
int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
    if (old)
        *old = 0;
    return 0;
}

/* Any task context. No entropy source yet: fail rather than hand out predictable bytes
 * (newlib's arc4random then aborts, which is the honest outcome). */
int getentropy(void *buf, size_t len)
{
    errno = ENOSYS;
    return -1;
}

/* Boot, once: newlib's __libc_init_array() calls _init() before the constructors. Weak, so
 * a crt file of the kernel can provide its own. */
__attribute__((weak)) void _init(void) {}

/* Shutdown: newlib's __libc_fini_array() calls _fini() after the destructors. Weak. */
__attribute__((weak)) void _fini(void) {}
