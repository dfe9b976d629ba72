/*
 * ukperm.c: the ukload suite's perm case (tests/kmod/ukload-init): a hostile unprivileged
 * user against /dev/ukload with its mode opened up (the guest makes it 0666 first). Static
 * for the guest (tests/kmod/ukload.sh).
 *
 * Usage: ukperm IMAGE CPU. As nobody, in a group of its own and in the devices' group
 * (kt.h), LOAD of IMAGE, BOOT of root's loaded IMAGE and STOP of root's running one must
 * each fail with EPERM and change nothing; STATUS works (the device's mode decides who
 * watches). Root's LOAD, BOOT and STOP around them must work. One "ok perm-..." or
 * "FAIL perm-...: why" line per case; exit 0 if all passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "kt.h"
#include "ukload_uapi.h"

#define DEV "/dev/ukload"

static struct ukload_load img; /* the image, read by root before the cases fork */
static unsigned long req;      /* the ioctl the current case tries */
static int granted;            /* ... as nobody in the devices' group */

/* The whole file into img; 0, or 1 with the reason in why. */
static int slurp(const char *path)
{
    struct stat st;
    int f = open(path, O_RDONLY);
    if (f < 0 || fstat(f, &st) < 0)
        return fail("%s: %s", path, strerror(errno));
    char *buf = malloc((size_t)st.st_size);
    if (!buf || read(f, buf, (size_t)st.st_size) != st.st_size)
        return fail("%s: cannot read it", path);
    close(f);
    img.elf = (uintptr_t)buf;
    img.elf_len = (uint64_t)st.st_size;
    return 0;
}

/* The device's state (UKLOAD_IDLE..UKLOAD_RUNNING), or -1. */
static int state(void)
{
    struct ukload_status s;
    int fd = open(DEV, O_RDONLY);
    int r = fd >= 0 && ioctl(fd, UKLOAD_STATUS, &s) == 0 ? (int)s.state : -1;
    if (fd >= 0)
        close(fd);
    return r;
}

/* Root: cmd on the device; 0, or 1 with the reason in why. */
static int as_root(unsigned long cmd, const char *name)
{
    int fd = open(DEV, O_RDWR);
    if (fd < 0)
        return fail("root: %s: %s", DEV, strerror(errno));
    int r = ioctl(fd, cmd, &img);
    int e = errno;
    close(fd);
    return r ? fail("root's %s: %s", name, strerror(e)) : 0;
}

/* A case's child: as nobody, req on the opened-up device must fail with EPERM, and
 * STATUS must still work. */
static int hostile(void)
{
    if (kt_as_user(granted))
        return 1;
    int fd = open(DEV, O_RDWR);
    if (fd < 0)
        return fail("open as nobody: %s (is the mode 0666?)", strerror(errno));
    errno = 0;
    int r = ioctl(fd, req, &img);
    if (r == 0)
        return fail("allowed to an unprivileged user");
    if (errno != EPERM)
        return fail("refused with %s, want EPERM", strerror(errno));
    struct ukload_status s;
    if (ioctl(fd, UKLOAD_STATUS, &s) != 0)
        return fail("STATUS refused: %s", strerror(errno));
    return 0;
}

/* Case name: req as nobody (in the devices' group if g); the state must stay want. */
static int check(const char *name, unsigned long r, int g, int want)
{
    req = r, granted = g;
    int bad = kt_child(name, hostile);
    int st = state();
    if (st != want) {
        printf("FAIL %s: the module's state is %d after it, want %d\n", name, st, want);
        return 1;
    }
    if (!bad)
        printf("ok %s\n", name);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ukperm IMAGE CPU\n");
        return 2;
    }
    static const char cmdline[] = "test=libc_printf";
    img.cmdline = (uintptr_t)cmdline;
    img.cmdline_len = sizeof cmdline - 1;
    img.cpu = (uint32_t)atoi(argv[2]);
    img.cpus = 1ull << img.cpu;
    if (slurp(argv[1]) || state() != UKLOAD_IDLE) {
        printf("FAIL perm: %s\n", why[0] ? why : "the module is not idle");
        return 1;
    }
    int bad = 0;
    bad |= check("perm-load", UKLOAD_LOAD, 0, UKLOAD_IDLE);
    bad |= check("perm-load-granted", UKLOAD_LOAD, 1, UKLOAD_IDLE);
    if (as_root(UKLOAD_LOAD, "LOAD")) {
        printf("FAIL perm-root: %s\n", why);
        return 1;
    }
    bad |= check("perm-boot", UKLOAD_BOOT, 1, UKLOAD_LOADED);
    if (as_root(UKLOAD_BOOT, "BOOT")) {
        printf("FAIL perm-root: %s\n", why);
        return 1;
    }
    bad |= check("perm-stop", UKLOAD_STOP, 1, UKLOAD_RUNNING);
    if (as_root(UKLOAD_STOP, "STOP")) {
        printf("FAIL perm-root: %s\n", why);
        return 1;
    }
    printf("ok perm-root (LOAD, BOOT, STOP)\n");
    return bad;
}
