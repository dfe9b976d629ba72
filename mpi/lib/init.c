/*
 * init.c: MPI_Init and friends, the environment queries, and the link to the node's
 * engine (the kernel's ABI table: uk_abi->mpi).
 */
#include "mpi_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ukapp.h>

const struct mpe_ops *mpi_engine;
static int initialized, finalized;
/* How long a wait polls before it sleeps (UKMPI_SPIN_NS, default 50 us). Sleeping costs
 * the waker an IPI and us a halt/resume (~15 us each under TCG, a few us on hardware);
 * a peer that answers within the window is seen without either. The window is short
 * enough that a long wait still costs almost no CPU.
 * Under QEMU a longer window pays across nodes only if the vCPU threads run below QEMU's
 * I/O threads (qemu/uknodes --vcpu-nice, tests/bench/crossnode.md); at equal priority a
 * 200 us poll holds the host core the frame's next hop needs (0 B: 82-93 -> 150-169 us).
 * Chosen per CPU: a rank that shares its CPU with other ranks never polls (MPI_Init), as
 * the rank that would answer can only run once this one sleeps; sleeping there switches
 * to it at once, with no halt and no IPI. A platform may choose otherwise
 * (uk_abi->wait_poll_ns: the Linux build's process alone on its CPU polls longer). */
static uint64_t spin_ns = 50000;

/* Looks between two readings of the clock while polling. A look is one load; reading the
 * clock is an ABI call, and it and PAUSE each leave QEMU's translated code (tests/bench:
 * a flag ping-pong that pauses or reads the clock between looks sees the flag 2-4x
 * later). Polling MPI_IDLE_LOOKS looks first keeps that out of a short wait; the window
 * is still measured in time. */
#define MPI_IDLE_LOOKS 32

/* Task context: one step of a wait loop. */
void mpi_idle(struct mpi_wait *w)
{
    if (spin_ns && ++w->looks % MPI_IDLE_LOOKS)
        return;
    uint64_t now = uk_abi->time_ns();
    if (!w->since)
        w->since = now;
    if (now - w->since < spin_ns) {
        mpi_poll(); /* the Linux library without a network thread reads its sockets */
        __builtin_ia32_pause();
    } else {
        mpi_engine->block();
    }
}

int mpi_live;

/* Task context: mpi_ready's report (mpi_impl.h). */
int mpi_not_ready(const char *fn)
{
    fprintf(stderr, "MPI error in %s: called %s MPI_Init\n", fn,
            finalized ? "after MPI_Finalize, not before" : "before");
    mpi_abort_hook(1);
    return 0;
}

/* newlib's exit() (a return from main included), before it flushes stdio. A rank that
 * leaves with status 0 after MPI_Init but before MPI_Finalize leaves its peers waiting for
 * it for ever (in a collective or a receive it will never join): end the job with a
 * failing code and say why, as Open MPI's mpirun does. A non-zero status ends the job
 * anyway (the kernel reports it); MPI_Abort and abort() do not come here. */
static void check_finalized(int status, void *arg)
{
    (void)arg;
    if (status != 0 || finalized)
        return;
    fprintf(stderr,
            "MPI error: rank %d called MPI_Init but exited without calling MPI_Finalize "
            "(returned from main or called exit(0)): ending the job\n",
            uk_rank());
    mpi_abort_hook(1);
}

int MPI_Init(int *argc, char ***argv)
{
    int provided;
    return MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

/* A rank is one task with one thread: every level up to SERIALIZED holds trivially. The
 * engine is not reentrant per rank, so MULTIPLE is not offered. */
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (initialized) {
        fprintf(stderr, "MPI error in MPI_Init: called twice\n");
        mpi_abort_hook(1);
    }
    if (uk_abi->version < 2 || !uk_abi->mpi || uk_abi->mpi->size < sizeof(struct mpe_ops)) {
        fprintf(stderr, "MPI_Init: this kernel has no MPI engine (ABI %u)\n", uk_abi->version);
        uk_abi->exit(1);
    }
    mpi_engine = uk_abi->mpi;
    if (mpi_engine->init() != 0) {
        fprintf(stderr, "MPI_Init: a node of the job cannot be reached\n");
        uk_abi->exit(1);
    }
    world_init(uk_size());
    if (comm_init_world(uk_rank(), uk_size()) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init: out of memory\n");
        uk_abi->exit(1);
    }
    const char *spin = getenv("UKMPI_SPIN_NS");
    uint64_t plat = uk_abi->version >= 6 && uk_abi->wait_poll_ns ? uk_abi->wait_poll_ns() : 0;
    if (spin)
        spin_ns = strtoull(spin, 0, 10);
    else if (plat)
        spin_ns = plat;
    else if (uk_abi->version >= 5 && uk_abi->cpu_ranks && uk_abi->cpu_ranks() > 1)
        spin_ns = 0;
    coll_init_env();
    initialized = 1;
    mpi_live = 1;
    on_exit(check_finalized, 0);
    if (provided)
        *provided = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
    return MPI_SUCCESS;
}

/* Every rank's messages are delivered before anyone leaves: the barrier makes sure each
 * rank got here, so every message it was sent has been matched (MPI requires programs to
 * complete their communication before MPI_Finalize). */
int MPI_Finalize(void)
{
    if (!mpi_ready("MPI_Finalize"))
        return MPI_ERR_OTHER;
    /* MPI-3.1 8.7.1: first, as if MPI_COMM_SELF were freed (libraries hook their clean-up
     * on its delete callbacks); WORLD's attributes go too. */
    int arc = attr_delete_all(MPI_COMM_SELF);
    if (arc == MPI_SUCCESS)
        arc = attr_delete_all(MPI_COMM_WORLD);
    req_finalize();
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    fflush(stdout);
    fflush(stderr);
    finalized = 1;
    mpi_live = 0;
    return arc != MPI_SUCCESS ? arc : rc;
}

int MPI_Initialized(int *flag)
{
    *flag = initialized;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    *flag = finalized;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    *provided = MPI_THREAD_SERIALIZED;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
    *flag = 1;
    return MPI_SUCCESS;
}

/* Ends this rank with `code`; the kernel ends the node's job on a non-zero exit and the
 * other nodes see their connections to this one fail, so the whole job stops. */
void mpi_abort_hook(int code)
{
    fflush(stdout);
    fflush(stderr);
    uk_abi->exit(code ? code : 1);
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm;
    fprintf(stderr, "MPI_Abort: rank %d aborts the job with code %d\n", uk_rank(), errorcode);
    mpi_abort_hook(errorcode & 0xff);
    return MPI_SUCCESS;
}

double MPI_Wtime(void)
{
    return (double)uk_abi->time_ns() * 1e-9;
}

double MPI_Wtick(void)
{
    return 1e-9;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    const char *node = getenv("UK_NODE");
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "uk-node%s", node ? node : "0");
    *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    const char *v = "ukmpi 0.1 (unikernel: PVAS intra-node, lwIP TCP inter-node)";
    strncpy(version, v, MPI_MAX_LIBRARY_VERSION_STRING - 1);
    version[MPI_MAX_LIBRARY_VERSION_STRING - 1] = 0;
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}
