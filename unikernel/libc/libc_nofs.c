/*
 * libc_nofs.c: the kernel has no files (an application's runtime has, app_file.c): the
 * calls on paths fail with the errno a caller can act on, and fds above 2 do not exist.
 * Compiled into the kernel only (not into libukapp.a).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uk/libc.h>

/* Any task context; no file system. */
int open(const char *path, int flags, ...)
{
    errno = ENOSYS;
    return -1;
}

/* Any task context; no file system. */
int stat(const char *restrict path, struct stat *restrict st)
{
    errno = ENOENT;
    return -1;
}

/* Any task context; no file system. */
int link(const char *old, const char *new)
{
    errno = ENOSYS;
    return -1;
}

/* Any task context; no file system. */
int unlink(const char *path)
{
    errno = ENOENT;
    return -1;
}

/* Any task context; no file system. */
int mkdir(const char *path, mode_t mode)
{
    errno = ENOSYS;
    return -1;
}

/* Any task context; only the console fds exist and they have no flags to change. */
int fcntl(int fd, int cmd, ...)
{
    errno = ENOSYS;
    return -1;
}

/* Task context (libc_io.c): fds above 2 are never open in the kernel. */
long libc_file_read(int fd, void *buf, size_t len)
{
    errno = EBADF;
    return -1;
}

long libc_file_write(int fd, const void *buf, size_t len)
{
    errno = EBADF;
    return -1;
}

int libc_file_close(int fd)
{
    errno = EBADF;
    return -1;
}

off_t libc_file_lseek(int fd, off_t off, int whence)
{
    errno = EBADF;
    return -1;
}

int libc_file_fstat(int fd, struct stat *st)
{
    errno = EBADF;
    return -1;
}
