/*
 * mlx.h: the MPI engine on Linux (docs/architecture.md §3.10, §3.15): one Linux process
 * is one node of a job with exactly one rank, speaking the native protocol (mpe_wire.h)
 * to its peers over one TCP connection per node pair, so that it can be a node of a job
 * next to unikernel nodes. Two nodes of a job on the same host (ukmpirun's) use a pair of
 * shared-memory rings instead of the TCP connection (mlx_shm.c, mlx_ring.h).
 *
 * Threads: the rank is the process's main thread ("CPU 1", task context). One network
 * thread per process ("CPU 0") plays the unikernel's NIC interrupt: it waits in epoll on
 * the node-pair sockets and an eventfd (kicks), and runs the engine's receive path under
 * the network lock, so matching and copies into posted buffers happen there.
 * In caller mode (UKMPI_PROGRESS, the default on one CPU) there is no network thread: the
 * rank takes its turns (mlx_net_turn, as "CPU 0") where it would sleep (plat_block) and
 * in the tests that find nothing done (plat_poll). A message to a rank asleep in a wait
 * then wakes that rank alone, where the thread woke first itself and then the rank: two
 * thread switches on one CPU. The price: nothing arrives while the rank computes (as in
 * Open MPI and MPICH over TCP). The files:
 *
 *   mlx_env.c   the job's layout from the environment (UKMPI_NODE, UKMPI_NODES, ...)
 *   mlx_plat.c  mpe_plat.h: wake-ups, the network lock, CPUs, time, fatal errors
 *   mlx_net.c   the network thread, the node-pair sockets, plat_net_send
 *   mlx_net_shm.c  the network thread's side of same-host pairs (mlx_net.h)
 *   mlx_shm.c   same-host node pairs: setting up the shared segment and its doorbell
 *   mlx_ring.c  the shared-memory byte ring and its wake-up protocol
 *   mlx_job.c   job start (listen, connect, HELLOs) and end (BYE, flush)
 *   mlx_abi.c   the uk_abi table mpi/lib calls, filled with Linux functions
 *   mlx_o2g.c   the receive path through /dev/o2g when the module is there (UKMPI_O2G)
 *   mlx_kacc.c  non-blocking collectives run by /dev/kacc when it is there (UKMPI_KACC)
 */
#ifndef MPI_LINUX_MLX_H
#define MPI_LINUX_MLX_H
#include <stdint.h>

struct mpe_conn;
struct mpe_node;

/* The "CPUs" of mpe_plat.h: the network thread and the rank's thread. */
#define MLX_CPU_NET  0
#define MLX_CPU_RANK 1
#define MLX_NCPUS    2

/* The port of a node whose address names none: the unikernel's (mpe_uk.c). */
#define MLX_DEFAULT_PORT 7101
/* Exit code of a job the engine found broken (a peer died, bad input): the unikernel's
 * EXIT_MPI (uk/power.h), so launchers read both alike. */
#define MLX_EXIT_FATAL   73

/* The job's layout (mlx_env.c). */
struct mlx_peer {
    uint32_t ip;   /* IPv4, network byte order */
    uint16_t port; /* host byte order */
};
struct mlx_env {
    int node, nodes, size; /* this node, the job's nodes and ranks (one rank per node) */
    struct mlx_peer *peer; /* [nodes] */
    const char *job;       /* UKMPI_JOB: the job's name on this host, or NULL */
    int shm;               /* UKMPI_SHM: same-host nodes use shared memory (1, the default) */
    uint64_t spin_ns;      /* UKMPI_SHM_SPIN_NS: the network thread polls the rings this long */
    int caller;            /* UKMPI_PROGRESS: 1: no network thread, the rank takes turns */
    int own_cpu;           /* caller, on one CPU (its affinity), taken as its own */
};

/* Any thread: the layout, parsed from the environment on the first call; a bad value
 * prints why and ends the process with MLX_EXIT_FATAL. */
const struct mlx_env *mlx_env(void);

/* mlx_plat.c. Any thread: the node's engine once the job started (mpe_plat.h). */
extern struct mpe_node *mlx_node;
/* Network thread: it runs as "CPU 0"; while it flushes CAD work for another CPU (the
 * platform's IPI, see mlx_net.c), as that CPU. */
void mlx_plat_set_cpu(int cpu);
/* Network thread: the time the current batch of socket events began (plat_irq_tsc), 0
 * outside one. */
void mlx_plat_set_irq_time(uint64_t ns);
/* Any thread: CLOCK_MONOTONIC in ns. */
uint64_t mlx_now_ns(void);

/* mlx_net.c. Task context (job start): sockets, epoll, the network thread. 0, or -1 with
 * a message printed. */
int mlx_net_start(const struct mlx_env *e);
/* Task context (job end): every peer said BYE, and every byte we sent reached it (acked);
 * the same as mpe_job_end's wait for the unikernel (1 when done). */
int mlx_net_flushed(int peer);
/* Task context in caller mode, no engine call under way: one turn of the network thread's
 * loop, taken by the rank as MLX_CPU_NET: what arrived into the engine, then the CAD
 * tail. may_sleep 0: returns at once when nothing is there; 1: waits in epoll until
 * something is. */
void mlx_net_turn(int may_sleep);
/* Task context (job end): stop the network thread and close the sockets. */
void mlx_net_stop(void);
/* Under the network lock, from its outermost unlock: push what plat_net_send corked. */
void mlx_net_uncork(void);
/* Any thread: interrupt "CPU" cpu: the network thread runs mpe_cad_flush(1) for it. */
void mlx_net_kick(int cpu);
/* Any thread: the network thread takes a turn (and so recomputes how long it may sleep). */
void mlx_net_wake(void);

/* mlx_o2g.c. Task context (start-up): /dev/o2g's fd for the network thread's epoll, or
 * -1 when the sockets are read by mlx_net.c. */
int mlx_o2g_start(const struct mlx_env *e);
/* Under the network lock: hand socket `sock` of connection c (to node peer) to the module;
 * seq: the number of the stream's next header. 0, or -1: the caller reads it itself. */
int mlx_o2g_attach(int sock, int peer, struct mpe_conn *c, uint32_t seq);
/* Network thread, no lock held: feed what the module has to the engine. */
void mlx_o2g_run(void);
/* Task context (job end): let go of the device and the sockets. */
void mlx_o2g_stop(void);
/* Task context (start-up): a kacc connection (mlx_kacc.c) to node peer, for o2g to read;
 * under the network lock. 0, or -1. */
int mlx_o2g_attach_kacc(int sock, int peer);

/* mlx_kacc.c. kacc cuts its messages into eager pieces of this many bytes (o2g's eager
 * limit while kacc is in use, the same on every node), and o2g's dump area has this much
 * more room per peer for those that arrive before their receive. */
#define MLX_KACC_EAGER (1u << 20)
#define MLX_KACC_DUMP  (2 * MLX_KACC_EAGER)
/* Task context (start-up, mlx_o2g_start, o2g: /dev/o2g opened and usable): UKMPI_KACC's
 * choice; 1: /dev/kacc is open, o2g is to take messages up to MLX_KACC_EAGER. "on"
 * without o2g or kacc ends the process with MLX_EXIT_FATAL. */
int mlx_kacc_open(const struct mlx_env *e, int o2g);
/* Task context (MPI_Init, after every HELLO): the kacc connections, then graphs go to
 * kacc (or, failing under auto, nothing changes). */
void mlx_kacc_start(const struct mlx_env *e, int o2g_fd);
/* Network thread: /dev/kacc is readable: complete the finished graphs. */
void mlx_kacc_run(void);
/* Network thread: the epoll timeout (ms) mlx_kacc_retry needs, or -1 (no graph waits). */
int mlx_kacc_retry_ms(void);
/* Network thread, each turn: issue again the graphs kacc refused for a while. */
void mlx_kacc_retry(void);
/* Task context (job end, network thread stopped). */
void mlx_kacc_stop(void);
/* mlx_net.c. Task context (start-up): the network thread watches /dev/kacc (mlx_kacc_run). */
void mlx_net_watch_kacc(int fd);
/* mlx_o2g.c. Any thread: /dev/o2g's fd, or -1. */
int mlx_o2g_fd(void);

/* mlx_shm.c. Any thread: does node p share memory with us (same address in UKMPI_PEERS,
 * a job name, shared memory not turned off)? */
int mlx_shm_local(const struct mlx_env *e, int p);
/* Task context (start-up): listen for the higher-numbered same-host nodes. The listening
 * socket (non-blocking), or -1 with a message printed. */
int mlx_shm_listen(const struct mlx_env *e);
/* Task context (start-up): connect to same-host node p (retrying while it starts until
 * `deadline`, mlx_now_ns), make and send the pair's segment. The doorbell socket
 * (non-blocking) and the rings we write (*tx) and read (*rx), or -1 with a message. */
struct mlx_ring;
int mlx_shm_connect(const struct mlx_env *e, int p, uint64_t deadline, struct mlx_ring **tx,
                    struct mlx_ring **rx);
/* Network thread: accept one connection on listener lfd: the doorbell socket, and as
 * above, the peer's node in *peer; -1: none pending; -2: one refused (message printed). */
int mlx_shm_accept(const struct mlx_env *e, int lfd, int *peer, struct mlx_ring **tx,
                   struct mlx_ring **rx);
/* Any thread: ring the peer's doorbell on socket fd. */
void mlx_shm_ring(int fd);

/* mlx_job.c. Task context, from MPI_Init (mpe_ops.init): create the engine, connect the
 * job, wait for every HELLO. 0, or -MPE_EPEER. */
int mlx_job_init(void);

#endif
