/*
 * mlx_env.c: the layout of a job of Linux processes, from the environment. One process is
 * one node with one rank (rank = node id), so a job of N processes has N ranks.
 *
 *   UKMPI_NODE   this process's node id, 0 .. UKMPI_NODES - 1 (default 0)
 *   UKMPI_NODES  the job's node count, 1 or more (default 1: a job of this process alone,
 *                as a program run without a launcher)
 *   UKMPI_SIZE   the job's rank count (optional): must equal UKMPI_NODES
 *   UKMPI_PEERS  every node's address, comma-separated in node order: "ip[:port]" with a
 *                dotted IPv4 address and a port 1..65535 (default 7101, the unikernel's);
 *                needed when UKMPI_NODES > 1. A node listens on its own entry's port (any
 *                local address) and connects to the lower-numbered nodes.
 *   UKMPI_JOB    the job's name, unique on this host (letters, digits, '.', '-', '_'; up
 *                to 64): nodes with the same address in UKMPI_PEERS are then on one host
 *                and talk through shared memory (mlx_shm.c) instead of TCP. Unset: TCP.
 *   UKMPI_SHM    0 forces TCP between same-host nodes too (default 1)
 *   UKMPI_SHM_SPIN_NS  how long the network thread polls the shared-memory rings after
 *                the last byte before it sleeps (default 0: on this 2-CPU VM host a polling
 *                network thread took the CPU from the ranks and halved the ping-pong)
 *
 *   UKMPI_PROGRESS  thread|caller|auto: who reads the sockets (mlx.h). thread: the
 *                network thread, also while the rank computes; caller: the rank itself,
 *                in its MPI calls (no second thread: on one CPU a message then costs one
 *                thread switch, not two); auto (the default): caller when the process may
 *                run on one CPU only (its affinity), else thread. Such a process is taken
 *                to have that CPU to itself (ukmpirun binds each to its own), and its
 *                waits poll for 10 ms before they sleep (mlx_abi.c; a launcher that
 *                puts several on one CPU sets mpi/lib's UKMPI_SPIN_NS, as ukmpirun does)
 *   UKMPI_O2G    auto|on|off: the receive path through /dev/o2g (mlx_o2g.c; default auto)
 *   UKMPI_KACC   auto|on|off: non-blocking collectives run by /dev/kacc, which needs
 *                /dev/o2g (mlx_kacc.c; default auto: when both open and every peer set
 *                up its kacc connection; on: or the job fails at start; off: the library
 *                runs them). kacc's own progress= parameter is read from sysfs: under
 *                poll the rank progresses its graphs in MPI_Test and MPI_Wait.
 *   Those two are read where they are used; mpi/lib's (UKMPI_CAD_PROGRESS, UKMPI_COLL_*)
 *   are in mpi/include/mpix.h.
 *
 * mpi/bin/ukmpirun sets them for processes on this host. A bad value is refused with a
 * message naming the variable, and the process ends (MLX_EXIT_FATAL).
 */
#include "mlx.h"
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MLX_MAX_PORT 65535
#define MLX_MAX_JOB  64 /* UKMPI_JOB's length: it names an abstract unix socket */

static struct mlx_env env;
static int parsed;

/* Start-up, main thread: report a bad variable and end the process. */
__attribute__((noreturn, format(printf, 1, 2))) static void refuse(const char *fmt, ...);

static void refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mpi: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(MLX_EXIT_FATAL);
}

/* Start-up: the decimal integer in variable `name` (or `def` when unset), lo..hi. */
static int int_var(const char *name, int def, int lo, int hi)
{
    const char *s = getenv(name);
    if (!s)
        return def;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno == ERANGE || v < lo || v > hi)
        refuse("%s=\"%s\": not a whole number from %d to %d", name, s, lo, hi);
    return (int)v;
}

/* Start-up: one "ip[:port]" entry of UKMPI_PEERS (the text from s, `len` bytes) for node
 * i into *p. */
static void parse_peer(const char *s, size_t len, int i, struct mlx_peer *p)
{
    char buf[sizeof "255.255.255.255:65535"];
    if (len == 0 || len >= sizeof buf)
        refuse("UKMPI_PEERS: the address of node %d (\"%.*s\") is not ip[:port]", i, (int)len, s);
    memcpy(buf, s, len);
    buf[len] = 0;
    long port = MLX_DEFAULT_PORT;
    char *colon = strchr(buf, ':');
    if (colon) {
        char *end;
        *colon = 0;
        errno = 0;
        port = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || errno == ERANGE || port < 1 || port > MLX_MAX_PORT)
            refuse("UKMPI_PEERS: node %d: port \"%s\" is not 1 to %d", i, colon + 1, MLX_MAX_PORT);
    }
    struct in_addr a;
    if (inet_pton(AF_INET, buf, &a) != 1)
        refuse("UKMPI_PEERS: node %d: \"%s\" is not a dotted IPv4 address", i, buf);
    p->ip = a.s_addr;
    p->port = (uint16_t)port;
}

/* Start-up: UKMPI_PEERS, exactly env.nodes entries. */
static void parse_peers(void)
{
    const char *s = getenv("UKMPI_PEERS");
    env.peer = calloc((size_t)env.nodes, sizeof *env.peer);
    if (!env.peer)
        refuse("out of memory for %d node addresses", env.nodes);
    if (!s) {
        if (env.nodes > 1)
            refuse("UKMPI_PEERS is not set: a job of %d nodes needs every node's address",
                   env.nodes);
        env.peer[0].ip = htonl(INADDR_LOOPBACK);
        env.peer[0].port = MLX_DEFAULT_PORT;
        return;
    }
    int i = 0;
    for (const char *p = s;; i++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (i >= env.nodes)
            refuse("UKMPI_PEERS has more than UKMPI_NODES=%d addresses", env.nodes);
        parse_peer(p, len, i, &env.peer[i]);
        if (!comma)
            break;
        p = comma + 1;
    }
    if (i + 1 != env.nodes)
        refuse("UKMPI_PEERS has %d addresses, UKMPI_NODES=%d", i + 1, env.nodes);
}

/* Start-up: UKMPI_PROGRESS (above) into env.caller, and env.own_cpu. */
static void progress_var(void)
{
    const char *s = getenv("UKMPI_PROGRESS");
    cpu_set_t cpus;
    int one = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1;
    if (s && strcmp(s, "thread") && strcmp(s, "caller") && strcmp(s, "auto"))
        refuse("UKMPI_PROGRESS=\"%s\": not thread, caller or auto", s);
    env.caller = s && strcmp(s, "auto") ? !strcmp(s, "caller") : one;
    env.own_cpu = env.caller && one;
}

/* Start-up, main thread: everything above into env. Out of line: mlx_env() is on every
 * engine call's path (plat_rank), and this frame (a CPU set among its locals) would cost
 * each of them a stack-protector check. */
static __attribute__((noinline)) void parse(void)
{
    env.nodes = int_var("UKMPI_NODES", 1, 1, INT_MAX);
    env.node = int_var("UKMPI_NODE", 0, 0, env.nodes - 1);
    env.size = int_var("UKMPI_SIZE", env.nodes, 1, INT_MAX);
    if (env.size != env.nodes)
        refuse("UKMPI_SIZE=%d but UKMPI_NODES=%d: a Linux process runs exactly one rank", env.size,
               env.nodes);
    parse_peers();
    env.job = getenv("UKMPI_JOB");
    if (env.job && (!*env.job || strlen(env.job) > MLX_MAX_JOB ||
                    strspn(env.job, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789.-_") != strlen(env.job)))
        refuse("UKMPI_JOB=\"%s\": not 1 to %d letters, digits, '.', '-' or '_'", env.job,
               MLX_MAX_JOB);
    env.shm = int_var("UKMPI_SHM", 1, 0, 1);
    env.spin_ns = (uint64_t)int_var("UKMPI_SHM_SPIN_NS", 0, 0, INT_MAX);
    progress_var();
    parsed = 1;
}

/* Any thread, but first from the main thread (MPI_Init or an earlier uk_abi call). */
const struct mlx_env *mlx_env(void)
{
    if (!parsed)
        parse();
    return &env;
}
