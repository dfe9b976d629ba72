/*
 * abi.h: how an application calls the kernel.
 *
 * Applications run in ring 0 in their own PVAS partition (ARCHITECTURE.md decisions 1-2):
 * a "system call" is a plain indirect call through this table, whose address the kernel
 * passes to the application's entry point:
 *
 *     _start(const struct uk_abi *abi, int argc, char **argv, char **envp)
 *
 * The application runtime (unikernel/libc/app/) keeps the pointer and builds newlib's
 * system calls on it. Every function here runs on the calling task's own stack, in task
 * context, and acts on the calling task. Append only; bump UK_ABI_VERSION when changing.
 */
#ifndef UK_ABI_H
#define UK_ABI_H
#include <stddef.h>
#include <stdint.h>

struct mpe_ops;

#define UK_ABI_VERSION 2

struct uk_abi {
    uint32_t version; /* UK_ABI_VERSION */
    uint32_t size;    /* sizeof(struct uk_abi) of the kernel */

    /* fd 1 and 2: the console, each line prefixed with the rank; fd 0: end of file. */
    long (*write)(int fd, const void *buf, size_t len);
    long (*read)(int fd, void *buf, size_t len);
    /* The task's heap inside its partition; (void *)-1 when the partition is full. */
    void *(*sbrk)(intptr_t incr);
    /* Ends the task; a non-zero code ends the job with that code. */
    void (*exit)(int code) __attribute__((noreturn));
    uint64_t (*time_ns)(void);          /* monotonic, since boot */
    uint64_t (*time_realtime_ns)(void); /* since the Unix epoch */
    int (*getpid)(void);
    void (*yield)(void); /* let another task of this CPU run */
    /* Job placement: this task's rank, the job's size, the CPU it runs on. */
    int (*rank)(void);
    int (*job_size)(void);
    int (*cpu)(void);
    /* The partition of this task: base address and size (tests, diagnostics). */
    void (*partition)(uint64_t *base, uint64_t *size);
    /* Base address of the partition of `rank` if that rank shares this address space (the
     * same node), else 0. Its memory is readable with plain loads (PVAS). */
    uint64_t (*peer_base)(int rank);
    /* The MPI engine of this node (mpi/core/mpe.h); the MPI library calls it. */
    const struct mpe_ops *mpi;
    /* CPU time this task has run, in ns (CLOCK_PROCESS_CPUTIME_ID). */
    uint64_t (*cpu_time_ns)(void);
};

#endif
