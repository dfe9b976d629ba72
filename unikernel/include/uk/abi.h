/*
 * abi.h: how an application calls the kernel.
 *
 * Applications run in ring 0 in their own PVAS partition (docs/architecture.md §3.1-§3.2):
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
struct uk_net_abi;
struct uk_fs_abi;

#define UK_ABI_VERSION 6

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
    /* Version 3: kernel TCP sockets for application libraries (libwaitio), below. */
    const struct uk_net_abi *net;
    /* Version 4: the job's files (qemu/ukrun --file/--dir/--output), below. */
    const struct uk_fs_abi *fs;
    /* Version 5: how many ranks of this job share this task's CPU (1: it has the CPU to
     * itself). A wait that polls there only delays the rank that would answer. */
    int (*cpu_ranks)(void);
    /* Version 6: how long a wait of this task polls before it sleeps (the default of
     * UKMPI_SPIN_NS, mpi/lib/init.c), where the platform knows better than the library's
     * own rule; NULL, or 0 returned: the library's rule. */
    uint64_t (*wait_poll_ns)(void);
};

/*
 * Kernel TCP sockets for libraries linked into an application (libwaitio's transport):
 * the ksock API (uk/ksock.h) and the task's sleep/wake-up, for code that does its own
 * receive processing in the NIC interrupt as the MPI engine does.
 *
 * Hazard: the ksock callbacks (struct ksock_ops, the accept function) are the
 * application's code, and the kernel runs them in interrupt context under the network
 * lock, usually on the CPU the NIC interrupted: they must obey ksock.h's rules (short, no
 * sleeping, no newlib stdio or malloc) and may touch only memory of their own partition.
 * Every socket opened for a task (and every one its listeners accept) is aborted when the
 * task ends, so no callback ever runs for a finished task.
 */
struct ksock;
struct ksock_ops;
struct uk_net_abi {
    /* This node's IPv4 address (host byte order). */
    uint32_t (*local_ip)(void);
    /* "a.b.c.d" to an address (host byte order): 0, or -1 (no name service here). */
    int (*parse_ip)(const char *s, uint32_t *ip);
    /* Any context: listen/connect as ksock does, the socket owned by `owner`, a token
     * from task_self() (in the NIC interrupt the running task may be another one). */
    struct ksock *(*listen)(uint16_t port,
                            void (*accept)(struct ksock *l, void *arg, struct ksock *s), void *arg,
                            void *owner);
    struct ksock *(*connect)(uint32_t ip, uint16_t port, const struct ksock_ops *ops, void *arg,
                             void *owner);
    void (*set_ops)(struct ksock *s, const struct ksock_ops *ops, void *arg);
    long (*send)(struct ksock *s, const void *data, size_t len);
    int (*close)(struct ksock *s);
    void (*abort)(struct ksock *s);
    int (*connected)(struct ksock *s); /* 1 once connected, until closed or failed */
    int (*error)(struct ksock *s);
    uint32_t (*peer_ip)(struct ksock *s);
    const char *(*strerror)(int err);
    /* The network lock (recursive on the CPU that holds it; masks interrupts). */
    int (*lock)(void);
    void (*unlock)(int token);
    /* The calling task as a token; sleep until task_wake (returns at once if a wake-up
     * is pending: no wake-up is lost between a check and the sleep); wake a token's task
     * from any context. */
    void *(*task_self)(void);
    void (*task_block)(void);
    void (*task_wake)(void *task);
};

/*
 * The job's files (unikernel/kernel/files.h): a read-only input tree and write-only output
 * files streamed to the host. Paths are canonical (uk/fspath.h): the application runtime
 * resolves what a program passes to open(); the kernel checks them again on its own copy.
 * Buffers must lie in the calling task's partition. Errors are negative errno values.
 */
struct uk_fs_abi {
    /* What `path` names: 0 nothing, 1 an input file (its handle and size), 2 a directory. */
    int (*lookup)(const char *path, int *handle, uint64_t *size);
    /* Up to len bytes of input file `handle` at offset off: the bytes copied (0: end). */
    long (*pread)(int handle, uint64_t off, void *buf, size_t len);
    /* Create (trunc: and truncate) an output file: its id, owned by the calling task. */
    int (*out_open)(const char *path, int trunc);
    /* len bytes at offset off of the caller's output file id: len, or a negative errno. */
    long (*out_pwrite)(int id, uint64_t off, const void *buf, size_t len);
    void (*out_close)(int id);
    /* 1 if the job may create output files (ukrun --output), else 0. */
    int (*writable)(void);
};

#endif
