/*
 * libc_io.c: the file-descriptor calls newlib's stdio makes.
 *
 * fds 0-2 are the serial console: fd 1 and 2 write to it; fd 0 reads as end-of-file
 * (there is no console input yet). They report a character device, so newlib makes stdout
 * line buffered (a printf shows up at its '\n') and stderr unbuffered. Higher fds are
 * files: an application's (unikernel/libc/app/app_file.c); the kernel has none
 * (libc_nofs.c).
 *
 * errno: set through newlib's errno, which here is the calling CPU's (libc_reent.c).
 */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uk/console.h>
#include <uk/libc.h>

/* Task context (newlib's stdio); `buf` stays the caller's, copied out before return.
 * For this target newlib declares the result as int (_READ_WRITE_RETURN_TYPE), so a huge
 * write is cut at INT_MAX and the caller loops for the rest. */
_READ_WRITE_RETURN_TYPE write(int fd, const void *buf, size_t len)
{
    if (len > INT_MAX)
        len = INT_MAX;
    if (fd > STDERR_FILENO)
        return (_READ_WRITE_RETURN_TYPE)libc_file_write(fd, buf, len);
    if (fd != STDOUT_FILENO && fd != STDERR_FILENO) {
        errno = EBADF;
        return -1;
    }
    console_write(buf, len);
    return (_READ_WRITE_RETURN_TYPE)len;
}

/* Task context (newlib's stdio); console input does not exist yet: stdin is at EOF. */
_READ_WRITE_RETURN_TYPE read(int fd, void *buf, size_t len)
{
    if (fd > STDERR_FILENO)
        return (_READ_WRITE_RETURN_TYPE)libc_file_read(fd, buf, len > INT_MAX ? INT_MAX : len);
    if (fd != STDIN_FILENO) {
        errno = EBADF;
        return -1;
    }
    return 0;
}

/* Task context; fds 0-2 are character devices. */
int fstat(int fd, struct stat *st)
{
    if (fd > STDERR_FILENO)
        return libc_file_fstat(fd, st);
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    *st = (struct stat){0};
    st->st_mode = S_IFCHR | 0620;
    st->st_blksize = 0; /* 0: let newlib pick its default buffer size */
    return 0;
}

/* Task context; 1 for the console fds 0-2 (this is what makes stdout line buffered). */
int isatty(int fd)
{
    struct stat st;
    if (fd >= 0 && fd <= 2)
        return 1;
    if (fd > STDERR_FILENO && libc_file_fstat(fd, &st) == 0)
        errno = ENOTTY;
    else
        errno = EBADF;
    return 0;
}

/* Task context; closing the console is a no-op (it stays usable by kprintf anyway). */
int close(int fd)
{
    if (fd > STDERR_FILENO)
        return libc_file_close(fd);
    if (fd >= 0)
        return 0;
    errno = EBADF;
    return -1;
}

/* Task context; the console is not seekable. */
off_t lseek(int fd, off_t off, int whence)
{
    if (fd > STDERR_FILENO)
        return libc_file_lseek(fd, off, whence);
    errno = (fd >= 0 && fd <= 2) ? ESPIPE : EBADF;
    return -1;
}
