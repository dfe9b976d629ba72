/*
 * pvas_abi.c: the kernel side of struct uk_abi (uk/abi.h), and a task's start and output.
 *
 * Every function runs on the calling task's stack in task context and acts on the task
 * running on this CPU. Console output is collected per task and per stream into one line
 * and written with a "[rank] " prefix, so lines of different ranks never mix.
 */
#include "pvas/pvas_task.h"
#include "pvas/pvas_net.h"
#include "pvas/pvas_fs.h"
#include "uk/abi.h"
#include "mpe.h"
#include "kernel/sched.h"
#include "uk/console.h"
#include "uk/time.h"
#include "uk/cpu.h"
#include "memlayout.h"
#include <string.h>

/* Task context of t: write t's pending output of stream s (pvas.h, PVAS_OUT_LINE): with
 * "[rank] " in front unless it continues a line, and ended by a newline unless `full` (the
 * buffer filled up: the line goes on, its next part without a prefix). One console_write,
 * so lines of different CPUs do not interleave. */
static void flush_line(struct pvas_task *t, int s, int full)
{
    char *line = t->out[s] + PVAS_OUT_PREFIX, *p = line;
    size_t n = (size_t)t->outlen[s];
    if (!full && (n == 0 || line[n - 1] != '\n'))
        line[n++] = '\n'; /* the spare byte after the line's room */
    if (!t->outcont[s]) {
        char pre[PVAS_OUT_PREFIX];
        int k = 0;
        pre[k++] = '[';
        for (int r = t->rank, d = 1000000; d; d /= 10) /* the rank, without leading zeros */
            if (r >= d || d == 1 || k > 1)
                pre[k++] = (char)('0' + (r / d) % 10);
        pre[k++] = ']';
        pre[k++] = ' ';
        p -= k;
        memcpy(p, pre, (size_t)k);
        n += (size_t)k;
    }
    console_write(p, n);
    t->outcont[s] = (uint8_t)full;
    t->outlen[s] = 0;
}

static long abi_write(int fd, const void *buf, size_t len)
{
    struct pvas_task *t = pvas_current();
    if (fd != 1 && fd != 2)
        return -1;
    int s = fd - 1;
    const char *p = buf;
    for (size_t i = 0; i < len; i++) {
        t->out[s][PVAS_OUT_PREFIX + t->outlen[s]++] = p[i];
        if (p[i] == '\n')
            flush_line(t, s, 0);
        else if (t->outlen[s] == PVAS_OUT_LINE)
            flush_line(t, s, 1);
    }
    return (long)len;
}

static long abi_read(int fd, void *buf, size_t len)
{
    return fd == 0 ? 0 : -1;
}

static void *abi_sbrk(intptr_t incr)
{
    return pvas_sbrk(pvas_current(), incr);
}

__attribute__((noreturn)) static void abi_exit(int code)
{
    struct pvas_task *t = pvas_current();
    for (int s = 0; s < 2; s++)
        if (t->outlen[s] || t->outcont[s])
            flush_line(t, s, 0);
    task_exit(code);
}

static int abi_getpid(void)
{
    return pvas_current()->task.pid;
}

static int abi_rank(void)
{
    return pvas_current()->rank;
}

static int abi_size(void)
{
    return pvas_current()->size;
}

static void abi_partition(uint64_t *base, uint64_t *size)
{
    *base = pvas_current()->base;
    *size = PART_SIZE;
}

static uint64_t abi_peer_base(int rank)
{
    return pvas_rank_base(pvas_current()->as, rank);
}

static uint64_t abi_cpu_time_ns(void)
{
    return task_cpu_ns(task_current());
}

/* Task context; see uk/abi.h. */
static int abi_cpu_ranks(void)
{
    return pvas_cpu_tasks(pvas_current()->as, cpu_id());
}

static const struct uk_abi abi = {
    .version = UK_ABI_VERSION,
    .size = sizeof(struct uk_abi),
    .write = abi_write,
    .read = abi_read,
    .sbrk = abi_sbrk,
    .exit = abi_exit,
    .time_ns = time_ns,
    .time_realtime_ns = time_realtime_ns,
    .getpid = abi_getpid,
    .yield = task_yield,
    .rank = abi_rank,
    .job_size = abi_size,
    .cpu = cpu_id,
    .partition = abi_partition,
    .peer_base = abi_peer_base,
    .mpi = &mpe_ops,
    .cpu_time_ns = abi_cpu_time_ns,
    .net = &pvas_net_abi,
    .fs = &pvas_fs_abi,
    .cpu_ranks = abi_cpu_ranks,
};

typedef void (*app_entry_t)(const struct uk_abi *abi, int argc, char **argv, char **envp);

/* struct task.entry of PVAS tasks: on the partition's stack, in task context. */
void pvas_task_main(void *arg)
{
    struct pvas_task *t = arg;
    ((app_entry_t)t->entry)(&abi, t->argc, (char **)t->argv, (char **)t->envp);
    abi_exit(0); /* an entry that returns ends the task like exit(0) */
}
