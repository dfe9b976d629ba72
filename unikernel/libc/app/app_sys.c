/*
 * app_sys.c: what a task can ask about its system: sysconf, the page size, the host name
 * and uname, sched_yield.
 *
 * The host name is the node's, "uk-node<UK_NODE>", the name MPI_Get_processor_name gives
 * (mpi/lib/init.c): the kernel puts UK_NODE in every rank's environment (pvas/job.c).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sys/utsname.h"
#include <time.h>
#include <unistd.h>
#include <uk/abi.h>

#define APP_PAGE_SIZE     4096 /* x86_64 base pages, the unit of the partitions' mappings */
#define APP_OPEN_MAX      3    /* the console fds 0, 1, 2 (libc_io.c) */
#define APP_HOST_NAME_MAX 64

extern const struct uk_abi *uk_abi;

/* Task context: the ranks of this job on this node, the CPUs the program can use (a rank
 * is one task and has no threads, so this counts processors as a program sizing its work by
 * them should see them). At least 1: the caller itself. */
static long ranks_on_node(void)
{
    long n = 0;

    for (int r = 0; r < uk_abi->job_size(); r++)
        n += uk_abi->peer_base(r) != 0;
    return n > 0 ? n : 1;
}

/* Task context; -1 with EINVAL for a name it does not know. */
long sysconf(int name)
{
    switch (name) {
    case _SC_PAGESIZE:
        return APP_PAGE_SIZE;
    case _SC_NPROCESSORS_ONLN:
    case _SC_NPROCESSORS_CONF:
        return ranks_on_node();
    case _SC_CLK_TCK:
        return CLOCKS_PER_SEC; /* the unit of times() (libc_time.c) */
    case _SC_OPEN_MAX:
        return APP_OPEN_MAX;
    case _SC_HOST_NAME_MAX:
        return APP_HOST_NAME_MAX;
    default:
        errno = EINVAL;
        return -1;
    }
}

/* Any context. */
int getpagesize(void)
{
    return APP_PAGE_SIZE;
}

/* Task context; the name is truncated to len (POSIX leaves termination unspecified then). */
int gethostname(char *name, size_t len)
{
    const char *node = getenv("UK_NODE");

    snprintf(name, len, "uk-node%s", node ? node : "0");
    return 0;
}

/* Task context. */
int uname(struct utsname *u)
{
    memset(u, 0, sizeof(*u));
    strcpy(u->sysname, "ukmpi");
    gethostname(u->nodename, sizeof(u->nodename));
    strcpy(u->release, "0.1");
    strcpy(u->version, "unikernel");
    strcpy(u->machine, "x86_64");
    return 0;
}

/* Task context: lets the other tasks of this CPU run. */
int sched_yield(void)
{
    uk_abi->yield();
    return 0;
}
