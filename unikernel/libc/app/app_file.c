/*
 * app_file.c: files for a rank (uk/abi.h's struct uk_fs_abi, kernel/files.h): open()
 * and what newlib's stdio and a POSIX program call on paths and on fds above 2.
 *
 * The tree: read-only input files (qemu/ukrun --file/--dir) and, with ukrun --output,
 * write-only output files created anywhere that is not an input file or directory. The
 * working directory starts at the root, "/", and chdir() moves it between directories of
 * the tree. What is not there fails with the errno POSIX gives: ENOENT, EROFS for writes
 * without --output or to an input file, EACCES for reading an output file back, EISDIR.
 *
 * Each rank has its own fd table (a rank is one PVAS partition with its own copy of this
 * file's data) and its own file offsets; output files written from several ranks should
 * be distinct files, or disjoint ranges of one opened without O_TRUNC.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uk/abi.h>
#include <uk/fspath.h>
#include <uk/libc.h>

#define APP_FD_FIRST 3 /* 0-2 are the console (libc_io.c) */
#define APP_FD_MAX   64
#define APP_BLKSIZE  4096 /* st_blksize: what stdio buffers per call */

extern const struct uk_abi *uk_abi;
/* newlib declares lstat() only for some targets; programs written for Linux call it. */
int lstat(const char *restrict path, struct stat *restrict st);

enum app_fd_kind { FD_FREE, FD_INPUT, FD_OUTPUT };

struct app_fd {
    enum app_fd_kind kind;
    int handle;    /* the input file's handle, or the output file's id */
    uint64_t pos;  /* the file offset */
    uint64_t size; /* input: the file's size; output: the end of what was written */
    int append;    /* O_APPEND: every write at the end */
};

static struct app_fd fds[APP_FD_MAX];
static char cwd[FS_PATH_MAX]; /* canonical; "" is the root */

/* Task context: `path` as the program gave it, resolved against the working directory,
 * into out[FS_PATH_MAX]. 0, or -1 with errno set. */
static int resolve(const char *path, char out[FS_PATH_MAX])
{
    char joined[2 * FS_PATH_MAX + 2];
    size_t n = strlen(path);
    if (n == 0) {
        errno = ENOENT;
        return -1;
    }
    if (n >= FS_PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (path[0] == '/')
        memcpy(joined, path, n + 1);
    else {
        size_t c = strlen(cwd);
        memcpy(joined, cwd, c);
        joined[c] = '/';
        memcpy(joined + c + 1, path, n + 1);
    }
    if (fs_path_norm(joined, out) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Task context: what `path` names (0 none, 1 input file, 2 directory), its canonical
 * form in p[FS_PATH_MAX], and for a file its handle and size; or -1 with errno set (a bad
 * path, or no file tree: an older kernel). */
static int lookup(const char *path, char p[FS_PATH_MAX], int *handle, uint64_t *size)
{
    if (resolve(path, p) != 0)
        return -1;
    if (uk_abi->version < 4 || !uk_abi->fs) {
        errno = ENOSYS;
        return -1;
    }
    int k = uk_abi->fs->lookup(p, handle, size);
    if (k < 0) {
        errno = -k;
        return -1;
    }
    return k;
}

/* Task context: the open fd's entry, or NULL with errno EBADF. */
static struct app_fd *fd_get(int fd)
{
    if (fd < APP_FD_FIRST || fd >= APP_FD_MAX || fds[fd].kind == FD_FREE) {
        errno = EBADF;
        return NULL;
    }
    return &fds[fd];
}

/* Task context: the lowest free fd, or -1 with errno EMFILE. */
static int fd_alloc(void)
{
    for (int fd = APP_FD_FIRST; fd < APP_FD_MAX; fd++)
        if (fds[fd].kind == FD_FREE)
            return fd;
    errno = EMFILE;
    return -1;
}

/* Task context: the input file or output file at `path`; the mode of a created file is
 * ignored (the host's umask decides). */
int open(const char *path, int flags, ...)
{
    char p[FS_PATH_MAX];
    int handle;
    uint64_t size;
    int acc = flags & O_ACCMODE;
    int k = lookup(path, p, &handle, &size);
    if (k < 0)
        return -1;
    int fd = fd_alloc();
    if (fd < 0)
        return -1;
    if (acc == O_RDONLY) {
        if (k == 0) {
            errno = ENOENT;
            return -1;
        }
        if (k == 2 && !(flags & O_DIRECTORY)) {
            errno = EISDIR; /* no readdir(): a directory is not readable as a file */
            return -1;
        }
        if (k == 2) {
            errno = ENOSYS;
            return -1;
        }
        fds[fd] = (struct app_fd){FD_INPUT, handle, 0, size, 0};
        return fd;
    }
    if (acc != O_WRONLY) {
        errno = k == 0 ? EACCES : EROFS; /* output files are write-only */
        return -1;
    }
    if (k == 0 && !(flags & O_CREAT)) {
        errno = ENOENT;
        return -1;
    }
    int id = uk_abi->fs->out_open(p, !!(flags & O_TRUNC));
    if (id < 0) {
        errno = -id;
        return -1;
    }
    fds[fd] = (struct app_fd){FD_OUTPUT, id, 0, 0, !!(flags & O_APPEND)};
    return fd;
}

/* Task context. */
int creat(const char *path, mode_t mode)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* Task context (libc_io.c, fd > 2). */
long libc_file_read(int fd, void *buf, size_t len)
{
    struct app_fd *f = fd_get(fd);
    if (!f)
        return -1;
    if (f->kind != FD_INPUT) {
        errno = EBADF; /* opened write-only */
        return -1;
    }
    long n = uk_abi->fs->pread(f->handle, f->pos, buf, len);
    if (n < 0) {
        errno = (int)-n;
        return -1;
    }
    f->pos += (uint64_t)n;
    return n;
}

/* Task context (libc_io.c, fd > 2). */
long libc_file_write(int fd, const void *buf, size_t len)
{
    struct app_fd *f = fd_get(fd);
    if (!f)
        return -1;
    if (f->kind != FD_OUTPUT) {
        errno = EBADF; /* an input file: opened read-only */
        return -1;
    }
    uint64_t at = f->append ? f->size : f->pos;
    long n = uk_abi->fs->out_pwrite(f->handle, at, buf, len);
    if (n < 0) {
        errno = (int)-n;
        return -1;
    }
    f->pos = at + (uint64_t)n;
    if (f->pos > f->size)
        f->size = f->pos;
    return n;
}

/* Task context (libc_io.c, fd > 2). */
int libc_file_close(int fd)
{
    struct app_fd *f = fd_get(fd);
    if (!f)
        return -1;
    if (f->kind == FD_OUTPUT)
        uk_abi->fs->out_close(f->handle);
    f->kind = FD_FREE;
    return 0;
}

/* Task context (libc_io.c, fd > 2). Seeking past the end of an output file leaves a hole
 * the host fills with zeros. */
off_t libc_file_lseek(int fd, off_t off, int whence)
{
    struct app_fd *f = fd_get(fd);
    if (!f)
        return -1;
    int64_t base = whence == SEEK_SET   ? 0
                   : whence == SEEK_CUR ? (int64_t)f->pos
                   : whence == SEEK_END ? (int64_t)f->size
                                        : -1;
    if (base < 0 || (off < 0 && -(int64_t)off > base) ||
        (off > 0 && (int64_t)off > INT64_MAX - base)) {
        errno = EINVAL;
        return -1;
    }
    f->pos = (uint64_t)(base + off);
    return (off_t)f->pos;
}

/* Task context: a stat of an input file (read-only for everyone), an output file
 * (write-only), or a directory. */
static void fill_stat(struct stat *st, int kind, uint64_t size)
{
    *st = (struct stat){0};
    st->st_mode = kind == 2 ? S_IFDIR | 0555 : kind == 1 ? S_IFREG | 0444 : S_IFREG | 0200;
    st->st_nlink = 1;
    st->st_size = (off_t)size;
    st->st_blksize = APP_BLKSIZE;
    st->st_blocks = (blkcnt_t)((size + 511) / 512);
}

/* Task context (libc_io.c, fd > 2). */
int libc_file_fstat(int fd, struct stat *st)
{
    struct app_fd *f = fd_get(fd);
    if (!f)
        return -1;
    fill_stat(st, f->kind == FD_INPUT ? 1 : 0, f->size);
    return 0;
}

/* Task context: input files and directories; output files are not visible to stat (the
 * tree does not remember them). */
int stat(const char *restrict path, struct stat *restrict st)
{
    char p[FS_PATH_MAX];
    int handle;
    uint64_t size;
    int k = lookup(path, p, &handle, &size);
    if (k <= 0) {
        if (k == 0)
            errno = ENOENT;
        return -1;
    }
    fill_stat(st, k, size);
    return 0;
}

/* Task context: there are no links in the tree. */
int lstat(const char *restrict path, struct stat *restrict st)
{
    return stat(path, st);
}

/* Task context: W_OK holds for no existing name (inputs are read-only); X_OK for
 * directories only. */
int access(const char *path, int mode)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if ((mode & W_OK) || ((mode & X_OK) && !S_ISDIR(st.st_mode))) {
        errno = (mode & W_OK) ? EROFS : EACCES;
        return -1;
    }
    return 0;
}

/* Task context. */
char *getcwd(char *buf, size_t size)
{
    size_t n = strlen(cwd);
    if (!buf || size < n + 2) {
        errno = buf ? ERANGE : EINVAL; /* no allocation for a NULL buf (a glibc extension) */
        return NULL;
    }
    buf[0] = '/';
    memcpy(buf + 1, cwd, n + 1);
    return buf;
}

/* Task context: into a directory of the input tree (output directories are not known to
 * the tree). */
int chdir(const char *path)
{
    char p[FS_PATH_MAX];
    int handle;
    uint64_t size;
    int k = lookup(path, p, &handle, &size);
    if (k != 2) {
        if (k >= 0)
            errno = k == 0 ? ENOENT : ENOTDIR;
        return -1;
    }
    memcpy(cwd, p, strlen(p) + 1);
    return 0;
}

/* Task context: the host creates an output file's directories as it writes the file, so
 * a directory to write into needs no mkdir: it succeeds where files can be created;
 * existing ones answer EEXIST, and without ukrun --output it is EROFS. */
int mkdir(const char *path, mode_t mode)
{
    char p[FS_PATH_MAX];
    int handle;
    uint64_t size;
    int k = lookup(path, p, &handle, &size);
    if (k != 0) {
        if (k > 0)
            errno = EEXIST;
        return -1;
    }
    if (!uk_abi->fs->writable()) {
        errno = EROFS;
        return -1;
    }
    return 0;
}

/* Task context: nothing in the tree can be removed or renamed. */
int unlink(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        errno = EROFS;
    return -1;
}

/* Task context. */
int link(const char *old, const char *new)
{
    errno = EROFS;
    return -1;
}

/* Task context: the flags an fd has; nothing can be changed. */
int fcntl(int fd, int cmd, ...)
{
    if (fd > STDERR_FILENO && !fd_get(fd))
        return -1;
    if (cmd == F_GETFD)
        return 0;
    if (cmd == F_GETFL)
        return fd <= STDERR_FILENO ? O_RDWR : fds[fd].kind == FD_INPUT ? O_RDONLY : O_WRONLY;
    errno = ENOSYS;
    return -1;
}
