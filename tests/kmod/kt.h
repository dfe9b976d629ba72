/*
 * kt.h: what the module test programs (o2gtest.c, kacctest.c) share: a case's reason for
 * failing, and running a case in a child process. Static test programs for the guests;
 * include once, from the program's one C file.
 */
#ifndef TESTS_KMOD_KT_H
#define TESTS_KMOD_KT_H
#include <stdarg.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

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

#endif
