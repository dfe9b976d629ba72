/*
 * libc.h: what the kernel's newlib glue (unikernel/libc/) adds to newlib's headers.
 *
 * newlib's stdio and malloc are for task context only: they take recursive spinlocks
 * (libc_lock.c) that an interrupt handler could find held by the code it interrupted, and
 * malloc may grow the heap. Interrupt and fault handlers use kprintf() and pools instead.
 */
#ifndef UK_LIBC_H
#define UK_LIBC_H
#include <time.h>
#include <sys/reent.h>
#include <sys/stat.h>
#include <sys/types.h>

/* newlib declares clock_gettime() only for targets it knows to have POSIX timers; ours
 * does (libc_time.c), with these two clocks. */
#ifndef CLOCK_REALTIME
#define CLOCK_REALTIME ((clockid_t)1)
#endif
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC ((clockid_t)4)
#endif
int clock_gettime(clockid_t clock_id, struct timespec *tp);

/* Task context. newlib's per-thread state (errno, strtok, rand, ...) of the calling CPU;
 * what _REENT means in this kernel (the build defines __DYNAMIC_REENT__). */
struct _reent *__getreent(void);

/* Task context: what libc_io.c's read/write/close/lseek/fstat do for fds above 2, which
 * are files. An application's runtime has them (unikernel/libc/app/app_file.c); the
 * kernel has no files (libc_nofs.c: EBADF). -1 with errno set on failure. */
long libc_file_read(int fd, void *buf, size_t len);
long libc_file_write(int fd, const void *buf, size_t len);
int libc_file_close(int fd);
off_t libc_file_lseek(int fd, off_t off, int whence);
int libc_file_fstat(int fd, struct stat *st);

#endif
