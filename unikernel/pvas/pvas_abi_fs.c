/*
 * pvas_abi_fs.c: the kernel side of struct uk_fs_abi (uk/abi.h): the job's files
 * (kernel/files.h) for applications.
 *
 * What comes from the application is checked on the kernel's side of the call: a path is
 * copied into a buffer of the kernel's and checked canonical there (the task could change
 * its own copy meanwhile), and every buffer must lie inside the calling task's partition.
 * Output files belong to the task that opened them and close when it ends.
 */
#include "pvas/pvas_fs.h"
#include "pvas/pvas_task.h"
#include "pvas/pvas.h"
#include "kernel/files.h"
#include "kernel/range.h"
#include "uk/abi.h"
#include "uk/fspath.h"
#include "memlayout.h"
#include <errno.h>
#include <string.h>

/* Task context: does [p, p + len) lie in the calling task's partition? */
static int in_partition(const void *p, size_t len)
{
    return range_in((uint64_t)p, len, pvas_current()->base, PART_SIZE);
}

/* Task context: the application's path into kpath[FS_PATH_MAX], checked. 0 or -errno. */
static int copy_path(const char *path, char kpath[FS_PATH_MAX])
{
    uint64_t base = pvas_current()->base, p = (uint64_t)path;
    if (p < base || p - base >= PART_SIZE)
        return -EFAULT;
    /* Up to the partition's end, at most FS_PATH_MAX bytes. */
    size_t room = PART_SIZE - (p - base);
    size_t n = room < FS_PATH_MAX ? room : FS_PATH_MAX;
    size_t len = strnlen(path, n);
    if (len == n)
        return -ENAMETOOLONG;
    memcpy(kpath, path, len + 1);
    kpath[len] = 0; /* the task may have changed its copy since strnlen */
    return fs_path_canonical(kpath, FS_PATH_MAX) ? 0 : -EINVAL;
}

static int fs_abi_lookup(const char *path, int *handle, uint64_t *size)
{
    char kp[FS_PATH_MAX];
    int h = -1, rc = copy_path(path, kp);
    uint64_t sz = 0;
    if (rc)
        return rc;
    if (!in_partition(handle, sizeof *handle) || !in_partition(size, sizeof *size))
        return -EFAULT;
    enum files_kind k = files_lookup(kp, &h, &sz);
    *handle = h;
    *size = sz;
    return k == FILES_FILE ? 1 : k == FILES_DIR ? 2 : 0;
}

static long fs_abi_pread(int handle, uint64_t off, void *buf, size_t len)
{
    if (!in_partition(buf, len))
        return -EFAULT;
    long n = files_pread(handle, off, buf, len);
    return n < 0 ? -EBADF : n;
}

static int fs_abi_out_open(const char *path, int trunc)
{
    char kp[FS_PATH_MAX];
    int rc = copy_path(path, kp);
    return rc ? rc : files_out_open(kp, trunc, pvas_current());
}

static long fs_abi_out_pwrite(int id, uint64_t off, const void *buf, size_t len)
{
    if (!in_partition(buf, len) || len > INT64_MAX)
        return -EFAULT;
    int rc = files_out_write(id, pvas_current(), off, buf, len);
    return rc ? rc : (long)len;
}

static void fs_abi_out_close(int id)
{
    files_out_close(id, pvas_current());
}

const struct uk_fs_abi pvas_fs_abi = {
    .lookup = fs_abi_lookup,
    .pread = fs_abi_pread,
    .out_open = fs_abi_out_open,
    .out_pwrite = fs_abi_out_pwrite,
    .out_close = fs_abi_out_close,
    .writable = files_writable,
};

/* Scheduler context; see pvas_fs.h. */
void pvas_fs_task_exited(struct pvas_task *t)
{
    files_out_task_exited(t);
}
