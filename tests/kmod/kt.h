/*
 * kt.h: what the module test programs (o2gtest.c, kacctest.c) share: a case's reason for
 * failing, and running a case in a child process. Static test programs for the guests;
 * include once, from the program's one C file.
 */
#ifndef TESTS_KMOD_KT_H
#define TESTS_KMOD_KT_H
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The hostile user: nobody, and the group the devices are granted to in the guests
 * (tests/kmod/guest/kmodlib.sh's KMOD_GID; host-kmod/60-ukmpi.rules's ukmpi on a node). */
#define KT_UID_NOBODY 65534
#define KT_GID_NOBODY 65534
#define KT_GID        4242

static char why[256];

/* Record why the case fails; returns 1 so that `return fail(...)` fails the case. */
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return 1;
}

/* In a case's child, as root: become nobody, a member of the devices' group when
 * `granted` (a user the administrator let in), of no group otherwise. Returns 1 with the
 * reason in `why` if the identity did not take, so the case cannot pass as root. */
static inline int kt_as_user(int granted)
{
    gid_t g = KT_GID;
    if (setgroups(granted ? 1 : 0, &g) || setgid(KT_GID_NOBODY) || setuid(KT_UID_NOBODY))
        return fail("cannot become nobody");
    if (geteuid() != KT_UID_NOBODY || setuid(0) == 0)
        return fail("still root after dropping to nobody");
    return 0;
}

/* Case `name` (fn) in a child process, so that a crash of the case is its failure, not
 * the program's: prints "FAIL name: why" (or the signal) and returns 1 if it failed. The
 * caller then checks what the module still holds. */
static int kt_child(const char *name, int (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = fn();
        if (bad)
            printf("FAIL %s: %s\n", name, why);
        fflush(stdout);
        _exit(bad);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        printf("FAIL %s: cannot run it in a child\n", name);
        return 1;
    }
    if (!WIFEXITED(st)) {
        printf("FAIL %s: died of signal %d\n", name, WTERMSIG(st));
        return 1;
    }
    return WEXITSTATUS(st) != 0;
}

#ifdef O2G_IOC_STATS
/* o2g's module-wide counters (zero where they cannot be read: they are root's). */
static inline struct o2g_stats kt_o2g_stats(void)
{
    struct o2g_stats s = {0};
    int fd = open(O2G_DEV, O_RDWR);
    if (fd >= 0) {
        ioctl(fd, O2G_IOC_STATS, &s);
        close(fd);
    }
    return s;
}
#endif

#ifdef KACC_IOC_STATS
/* kacc's module-wide counters (zero where they cannot be read: they are root's). */
static inline struct kacc_stats kt_kacc_stats(void)
{
    struct kacc_stats s = {0};
    int fd = open(KACC_DEV, O_RDWR);
    if (fd >= 0) {
        ioctl(fd, KACC_IOC_STATS, &s);
        close(fd);
    }
    return s;
}
#endif

#define KT_USER_TOP4 0x7ffffffff000ull   /* TASK_SIZE with 4-level paging */
#define KT_USER_TOP5 0xfffffffffff000ull /* ... with 5-level paging (a CPU with la57) */

/* The top of user space (kacc gives a graph all of it as its partition): TASK_SIZE,
 * which depends on the paging mode the guest's CPU offers. */
static inline uint64_t kt_user_top(void)
{
    char line[4096];
    int la57 = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5) && strstr(line, " la57"))
            la57 = 1;
    if (f)
        fclose(f);
    return la57 ? KT_USER_TOP5 : KT_USER_TOP4;
}

#endif
