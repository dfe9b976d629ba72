/*
 * ukfiles: rebuild a job's output files from its nodes' streams (qemu/ukrun --output).
 *
 *   ukfiles DIR STREAM...
 *
 * Each STREAM is what one node wrote on its second serial port (unikernel/kernel/files.h).
 * Streams are applied one after the other, each in its own order; files are created under
 * DIR (which must exist), with the directories their paths name. Paths were checked
 * canonical by the parser, so nothing is written outside DIR; a symbolic link already in
 * DIR is not followed for the file itself. Exit 0, or 1 after saying which stream broke
 * where (what came before that point is written).
 */
#include "ukf.h"
#include "uk/fspath.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define UKF_MODE_FILE 0644
#define UKF_MODE_DIR  0755

struct out {
    int dir;         /* DIR, opened */
    int fd[UKF_IDS]; /* each open id's file */
    const char *why; /* the last system error, for the report */
};

/* Create the directories of `path` (canonical, relative) under o->dir. */
static int make_parents(struct out *o, const char *path)
{
    char p[FS_PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        if (mkdirat(o->dir, p, UKF_MODE_DIR) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return 0;
}

static int sink_open(void *ctx, int id, int trunc, const char *path)
{
    struct out *o = ctx;
    if (make_parents(o, path) != 0) {
        o->why = strerror(errno);
        return -1;
    }
    o->fd[id] =
        openat(o->dir, path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (trunc ? O_TRUNC : 0),
               UKF_MODE_FILE);
    if (o->fd[id] < 0) {
        o->why = strerror(errno);
        return -1;
    }
    return 0;
}

static int sink_write(void *ctx, int id, uint64_t off, const void *data, size_t len)
{
    struct out *o = ctx;
    const char *p = data;
    while (len > 0) {
        ssize_t n = pwrite(o->fd[id], p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            o->why = n < 0 ? strerror(errno) : "no progress";
            return -1;
        }
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

static void sink_close(void *ctx, int id)
{
    struct out *o = ctx;
    close(o->fd[id]);
    o->fd[id] = -1;
}

static const struct ukf_sink sink = {sink_open, sink_write, sink_close};

/* One stream: 0, or 1 after saying why. */
static int apply(struct out *o, const char *name)
{
    char err[UKF_ERR_MAX];
    struct stat st;
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "ukfiles: %s: %s\n", name, strerror(errno));
        return 1;
    }
    if (st.st_size == 0) { /* the node never opened its stream: no output files */
        close(fd);
        return 0;
    }
    const uint8_t *buf = mmap(0, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "ukfiles: %s: %s\n", name, strerror(errno));
        return 1;
    }
    o->why = 0;
    int rc = ukf_parse(buf, (size_t)st.st_size, &sink, o, err);
    munmap((void *)buf, (size_t)st.st_size);
    if (rc != 0) {
        fprintf(stderr, "ukfiles: %s: %s%s%s\n", name, err, o->why ? ": " : "",
                o->why ? o->why : "");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct out o;
    int rc = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: ukfiles DIR STREAM...\n");
        return 2;
    }
    o.dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (o.dir < 0) {
        fprintf(stderr, "ukfiles: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    for (int i = 2; i < argc; i++)
        rc |= apply(&o, argv[i]);
    return rc;
}
