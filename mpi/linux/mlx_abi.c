/*
 * mlx_abi.c: the table through which mpi/lib reaches "the kernel" (uk/abi.h), filled with
 * Linux functions, so that mpi/lib builds unchanged with the host's compiler and C
 * library. The engine's entry points are the engine's own (mpe_ops), except init, which
 * first starts this process's part of the job (mlx_job.c).
 */
#include "mlx.h"
#include "mpe.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uk/abi.h>
#include <unistd.h>

#define MLX_OWN_CPU_POLL_NS 10000000ull /* 10 ms: abi_wait_poll_ns */

static struct mpe_ops ops;

/* Before main (the loader): the engine's table with our init. */
__attribute__((constructor)) static void ops_fill(void)
{
    ops = mpe_ops;
    ops.init = mlx_job_init;
}

/* The functions below: the calling thread, as uk/abi.h says of each. */
static long abi_write(int fd, const void *buf, size_t len)
{
    return write(fd, buf, len);
}

static long abi_read(int fd, void *buf, size_t len)
{
    return read(fd, buf, len);
}

static void *abi_sbrk(intptr_t incr)
{
    return sbrk(incr);
}

/* A failing code ends the process at once, stdio flushed: the exit handlers would wait
 * for the peers (mlx_job.c), and this may be called from one (MPI_Init's check that the
 * rank called MPI_Finalize). */
__attribute__((noreturn)) static void abi_exit(int code)
{
    fflush(stdout);
    fflush(stderr);
    if (code)
        _exit(code);
    exit(0);
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t abi_time_ns(void)
{
    return mlx_now_ns();
}

static uint64_t abi_time_realtime_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

static uint64_t abi_cpu_time_ns(void)
{
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static int abi_getpid(void)
{
    return getpid();
}

static void abi_yield(void)
{
    sched_yield();
}

static int abi_rank(void)
{
    return mlx_env()->node;
}

static int abi_job_size(void)
{
    return mlx_env()->size;
}

static int abi_cpu(void)
{
    return MLX_CPU_RANK;
}

/* The whole address space, as plat_partition. */
static void abi_partition(uint64_t *base, uint64_t *size)
{
    *base = 0;
    *size = UINT64_MAX;
}

/* No other rank shares this process. */
static uint64_t abi_peer_base(int rank)
{
    (void)rank;
    return 0;
}

/* Any thread: one rank per process, on a CPU the host's scheduler shares as it likes. */
static int abi_cpu_ranks(void)
{
    return 1;
}

/* Any thread: a process alone on its CPU (mlx_env.c) polls MLX_OWN_CPU_POLL_NS before it
 * sleeps, as mpirun's ranks poll without end; other processes follow mpi/lib's rule.
 * Measured in Linux guests of one vCPU under TCG (tests/bench/ompi/run.sh --mpi ours 2x1,
 * alternating runs, 0 B half round trip): sleeping after 50 us 205-290 us, polling 10 ms
 * 130-145, Open MPI 105-160. Waking a halted vCPU and the guest's idle path cost the
 * difference. A window shorter than the wait costs both the poll and the wake-up (2 ms:
 * 64 KiB 3.9-4.3 ms against 2.4-3.4 after 50 us and 2.7-4.1 after 10 ms). */
static uint64_t abi_wait_poll_ns(void)
{
    return mlx_env()->own_cpu ? MLX_OWN_CPU_POLL_NS : 0;
}

static const struct uk_abi abi = {
    .version = UK_ABI_VERSION,
    .size = sizeof(struct uk_abi),
    .write = abi_write,
    .read = abi_read,
    .sbrk = abi_sbrk,
    .exit = abi_exit,
    .time_ns = abi_time_ns,
    .time_realtime_ns = abi_time_realtime_ns,
    .getpid = abi_getpid,
    .yield = abi_yield,
    .rank = abi_rank,
    .job_size = abi_job_size,
    .cpu = abi_cpu,
    .partition = abi_partition,
    .peer_base = abi_peer_base,
    .mpi = &ops,
    .cpu_time_ns = abi_cpu_time_ns,
    .net = NULL, /* no kernel sockets for libwaitio here */
    .cpu_ranks = abi_cpu_ranks,
    .wait_poll_ns = abi_wait_poll_ns,
};

const struct uk_abi *uk_abi = &abi;
