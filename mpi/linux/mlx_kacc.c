/*
 * mlx_kacc.c: a Linux node's non-blocking collectives run by /dev/kacc (host-kmod/kacc,
 * kacc_uapi.h), the seed's KACC on Linux. UKMPI_KACC chooses it:
 *   off   every graph runs in the library (mpe_cad.c: progressed by the network thread's
 *         "interrupt" and inside the rank's MPI calls), as before;
 *   auto  (default) /dev/kacc when it opens, /dev/o2g is in use (mlx_o2g.c) and every peer
 *         node set up its kacc connection with us; else as off;
 *   on    the same, or the job fails at start.
 *
 * Design. kacc's SEND nodes write whole native messages on a socket from a kernel worker;
 * the library writes its own stream (sequence numbers, credits, corked batches) on its
 * node-pair sockets, and a kernel writer there would cut into it (kacc_net.c's hazard).
 * So each node pair gets a second TCP connection at start-up, the kacc connection: the
 * library never writes on it; it is attached to /dev/o2g like the node-pair sockets (o2g
 * parses what arrives and matches it against kacc's RECVs, posted as kernel receives of
 * our o2g file) and handed to kacc with KACC_IOC_CONN as the socket SENDs to that peer go
 * out on. Both ends' SENDs go out on their own connection, so each direction of a pair
 * has exactly one writer. The lower node connects to the higher one's port plus
 * MLX_KACC_PORT_OFF and says who it is (struct hello); the higher one accepts.
 *
 * What goes to kacc: mpe_cad.c offers every graph the engine admitted (mpe_cadoff, the
 * engine's platform-neutral seam). A graph goes to kacc when its communicator's ranks are
 * the world's in order (kacc names a peer's connection by the graph's peer rank). Any
 * other graph runs in the library, as with UKMPI_KACC=off.
 *
 * User-defined ops: kacc runs the graph and offers each ready user-op CALC in the user-op
 * page (struct kacc_user, mapped with the status page) and wakes our poll. The network
 * thread, woken, wakes the rank (rank_task); the rank's MPI_Test and MPI_Wait of the
 * collective (mpe_cadoff.test) return the node, the library runs the op on it (the
 * node of its own copy of the graph, its own addresses: mpi/lib's poll_run) and
 * mpe_cadoff.done answers KACC_IOC_USER_DONE, after which the graph goes on in kacc.
 *
 * One decision for all ranks (the argument). The two paths do not meet on the wire: a
 * kacc RECV is posted in o2g and takes what arrives on either connection only if it was
 * posted first (the library feeds a collective message without receive to its engine,
 * whose sequence numbers and credits kacc does not keep), and kacc's SENDs arrive on the
 * kacc connection, which the library's receives never look at. So a peer's kacc RECV
 * waits forever for a message this rank sends from the library, and the other way round:
 * every rank of a collective must choose the same path. The choice above depends only on
 * the communicator, which every rank of the collective has alike (user ops run in kacc's
 * graphs too); nothing a rank knows alone enters it:
 *   - message sizes (a v-collective's counts differ per rank and no rank knows them
 *     all): kacc cuts messages longer than the eager limit into eager pieces
 *     (kacc_net.c), both ends alike since their o2g files have the same limit
 *     (MLX_KACC_EAGER), so every size runs in kacc;
 *   - kacc's answer to the issue: a refusal for a full table (EBUSY) or memory
 *     (ENOMEM: RLIMIT_MEMLOCK, pinned by our graphs and receives in flight; EDQUOT: the
 *     kernel memory kacc allows a file, held by our graphs in flight) does not send
 *     the graph to the library: it waits in `pend`, in issue order (o2g matches kacc's
 *     RECVs in posting order, so a later graph must not overtake it), and is issued
 *     again when one of ours is released (the network thread's reap), in the owner's
 *     MPI_Test and MPI_Wait of it (the rank wakes itself so that MPI_Wait polls), and
 *     every MLX_KACC_RETRY_MS by the network thread (a rank blocked in another call,
 *     MPI_Recv, would otherwise leave it waiting while its peers wait for it). Its
 *     peers' RECVs wait, its messages stay in their o2g until then: a delay, not a
 *     different path. A refusal that lasts MLX_KACC_STUCK_NS while none of our graphs
 *     runs in kacc will not end (RLIMIT_MEMLOCK below one graph's buffers): the job ends
 *     with a message that says so. Any other refusal (the validator's: a buffer not
 *     mapped as needed, a buffer over kacc's 256 MiB) ends the job with kacc's message,
 *     which every rank sees; a rank never runs it in the library.
 * UKMPI_KACC_REFUSE=NODE (a test knob) makes node NODE take every other graph's first
 * offer as refused (EBUSY), as a full table would; NODE:always every offer (ENOMEM), as
 * a memory limit below the graph's buffers would.
 *
 * Completion: kacc writes each graph's state to a page we map. The rank's MPI_Test and
 * MPI_Wait look at it (the engine's offloaded runs take the poll policy, so the library's
 * test reaches us) without a system call; the network thread waits on /dev/kacc in its
 * epoll (readable while a finished graph is not released) and completes the request, so
 * a rank sleeping in MPI_Wait is woken. Whoever sees a finished graph first releases it
 * (slot_run's exchange). With kacc's progress=poll (read from sysfs at start) nothing
 * runs the graphs but KACC_IOC_PROGRESS: the rank calls it in each MPI_Test and, not done,
 * wakes itself so that MPI_Wait polls, as a library without asynchronous progress does.
 *
 * Messages that arrive on a kacc connection before kacc's RECV is posted stay in o2g's
 * unexpected queue (mlx_o2g.c leaves their notices alone) until the RECV takes them and
 * frees their records (the connection is attached with O2G_ATTACH_KFREE). o2g's eager limit is raised to MLX_KACC_EAGER for that (kacc's piece size: every node
 * sets the same) and its dump area grown by MLX_KACC_DUMP per peer.
 */
#include "mlx.h"
#include "cad.h"
#include "kacc_uapi.h"
#include "mpe.h"
#include "mpe_transport.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MLX_KACC_PORT_OFF 20000u /* a node's kacc port: its MPI port plus this */
#define MLX_KACC_MAX_PORT 65535u
#define MLX_KACC_WAIT_NS  20000000000ull /* peers reach their kacc set-up within this */
#define MLX_KACC_RETRY_NS 20000000ull    /* between connection attempts */
#define MLX_KACC_MAGIC    0x6b616363u    /* "kacc": a connection is one of ours */
#define MLX_KACC_PROGRESS "/sys/module/kacc/parameters/progress"
#define MLX_KACC_POLICY   16 /* bytes of that file we read */
#define MLX_NS_PER_MS     1000000ull
#define MLX_KACC_RETRY_MS 1              /* the network thread retries waiting graphs this often */
#define MLX_KACC_STUCK_NS 10000000000ull /* refused this long with none of ours running */

static int kfd = -1;                  /* /dev/kacc */
static const struct kacc_status *st;  /* its status page */
static const struct kacc_user *users; /* its user-op page */
static void *rank_task;               /* the rank's token (plat_wake), set at its first issue */
static int must, poll_mode, me, nodes;
static int *kconn;                           /* [nodes]: the kacc connection to each peer, or -1 */
static struct mpe_cad *slot_run[KACC_SLOTS]; /* the run of each slot issued, until reaped */
static const struct mpe_cadoff cadoff;
/* Graphs kacc refused for a while (EBUSY, ENOMEM, EDQUOT), in issue order: pend[pend_head ..
 * pend_head + npend) modulo pend_cap. Under pend_lock (the rank's thread and the network
 * thread issue them). */
static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mpe_cad **pend;
static size_t pend_head, npend, pend_cap;
static int pend_errno;              /* the last refusal's (EBUSY, ENOMEM, EDQUOT) */
static uint64_t pend_stuck_ns;      /* since when refused with none of ours running, or 0 */
#define MLX_KACC_PEND    16         /* first size of pend, grown by doubling */
#define MLX_KACC_WAITING UINT32_MAX /* a run's off_slot while it waits in pend */
static int refuse_test;             /* UKMPI_KACC_REFUSE names this node */
static int refuse_all;              /* ... ":always": every offer, as RLIMIT_MEMLOCK could */
static unsigned offers;             /* graphs offered, for refuse_test */

/* What the connecting node says first on a kacc connection. */
struct hello {
    uint32_t magic, node;
};

/* Start-up: report why kacc is not used; under "on" that ends the job. */
static void give_up(const char *step, int err)
{
    if (must) {
        fprintf(stderr, "mpi: node %d: UKMPI_KACC=on: %s: %s\n", me, step, strerror(err));
        exit(MLX_EXIT_FATAL);
    }
    if (kconn)
        for (int p = 0; p < nodes; p++)
            if (kconn[p] >= 0)
                close(kconn[p]);
    free(kconn);
    kconn = NULL;
    if (kfd >= 0)
        close(kfd);
    kfd = -1;
}

/* Task context (start-up, from mlx_o2g_start); see mlx.h. */
int mlx_kacc_open(const struct mlx_env *e, int o2g)
{
    const char *mode = getenv("UKMPI_KACC");
    if (!mode || !*mode)
        mode = "auto";
    me = e->node;
    nodes = e->nodes;
    must = !strcmp(mode, "on");
    if (!must && strcmp(mode, "auto") && strcmp(mode, "off")) {
        fprintf(stderr, "mpi: node %d: UKMPI_KACC=%s: not auto, on or off\n", me, mode);
        exit(MLX_EXIT_FATAL);
    }
    if (!strcmp(mode, "off") || e->nodes < 2) /* one node: no peer to send to */
        return 0;
    if (!o2g) {
        give_up("kacc needs /dev/o2g (UKMPI_O2G)", ENODEV);
        return 0;
    }
    kfd = open(KACC_DEV, O_RDWR | O_CLOEXEC);
    if (kfd < 0) {
        give_up("open " KACC_DEV, errno);
        return 0;
    }
    st = mmap(NULL, KACC_MAP_BYTES, PROT_READ, MAP_SHARED, kfd, 0);
    if (st == MAP_FAILED) {
        give_up("mmap the status page", errno);
        return 0;
    }
    users = (const struct kacc_user *)((const char *)st + KACC_USER_OFF);
    char pol[MLX_KACC_POLICY] = "";
    int pf = open(MLX_KACC_PROGRESS, O_RDONLY | O_CLOEXEC);
    if (pf >= 0) {
        ssize_t n = read(pf, pol, sizeof pol - 1);
        pol[n > 0 ? n : 0] = 0;
        close(pf);
    }
    poll_mode = !strncmp(pol, "poll", strlen("poll"));
    const char *refuse = getenv("UKMPI_KACC_REFUSE");
    refuse_test = refuse && *refuse && atoi(refuse) == me;
    refuse_all = refuse_test && strstr(refuse, ":always");
    return 1;
}

/* Start-up: a listening socket on our kacc port, or -1. */
static int listen_kacc(const struct mlx_env *e)
{
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)(e->peer[me].port + MLX_KACC_PORT_OFF)),
                            .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, e->nodes) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Start-up: the kacc connection to lower node p (retrying while it starts), or -1. */
static int connect_kacc(const struct mlx_env *e, int p, uint64_t deadline)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)(e->peer[p].port + MLX_KACC_PORT_OFF)),
                            .sin_addr.s_addr = e->peer[p].ip};
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            struct hello h = {MLX_KACC_MAGIC, (uint32_t)me};
            if (write(fd, &h, sizeof h) == (ssize_t)sizeof h)
                return fd;
            close(fd);
            return -1;
        }
        int err = errno;
        close(fd);
        if (mlx_now_ns() > deadline || (err != ECONNREFUSED && err != EINTR)) {
            errno = err;
            return -1;
        }
        struct timespec ts = {0, MLX_KACC_RETRY_NS};
        nanosleep(&ts, NULL);
    }
}

/* Start-up: accept the kacc connections of the higher nodes on lfd. 0, or -1. */
static int accept_kacc(int lfd, uint64_t deadline)
{
    for (int left = nodes - 1 - me; left > 0;) {
        uint64_t now = mlx_now_ns();
        struct pollfd pf = {.fd = lfd, .events = POLLIN};
        if (now > deadline || poll(&pf, 1, (int)((deadline - now) / MLX_NS_PER_MS) + 1) < 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (!(pf.revents & POLLIN))
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return -1;
        struct hello h;
        /* Exactly the hello: kacc's messages may follow it, for o2g to read. */
        if (recv(fd, &h, sizeof h, MSG_WAITALL) != (ssize_t)sizeof h || h.magic != MLX_KACC_MAGIC ||
            h.node <= (uint32_t)me || h.node >= (uint32_t)nodes || kconn[h.node] >= 0) {
            close(fd); /* not one of ours: someone else's connection */
            continue;
        }
        kconn[h.node] = fd;
        left--;
    }
    return 0;
}

/* Task context (MPI_Init, every peer's HELLO in); see mlx.h. */
void mlx_kacc_start(const struct mlx_env *e, int o2g_fd)
{
    if (kfd < 0)
        return;
    kconn = malloc((size_t)nodes * sizeof *kconn);
    if (!kconn) {
        give_up("kacc connections", ENOMEM);
        return;
    }
    for (int p = 0; p < nodes; p++)
        kconn[p] = -1;
    if (e->peer[me].port > MLX_KACC_MAX_PORT - MLX_KACC_PORT_OFF) {
        give_up("no kacc port above the MPI port", ERANGE);
        return;
    }
    int lfd = me < nodes - 1 ? listen_kacc(e) : -1;
    if (me < nodes - 1 && lfd < 0) {
        give_up("listen on the kacc port", errno);
        return;
    }
    uint64_t deadline = mlx_now_ns() + MLX_KACC_WAIT_NS;
    for (int p = 0; p < me; p++) {
        kconn[p] = connect_kacc(e, p, deadline);
        if (kconn[p] < 0) {
            int err = errno;
            if (lfd >= 0)
                close(lfd);
            give_up("connect to a peer's kacc port", err);
            return;
        }
    }
    int rc = lfd >= 0 ? accept_kacc(lfd, deadline) : 0, err = errno;
    if (lfd >= 0)
        close(lfd);
    if (rc != 0) {
        give_up("accept the peers' kacc connections", err);
        return;
    }
    if (ioctl(kfd, KACC_IOC_O2G, o2g_fd) != 0) {
        give_up("KACC_IOC_O2G", errno);
        return;
    }
    for (int p = 0; p < nodes; p++) {
        if (p == me)
            continue;
        int one = 1;
        setsockopt(kconn[p], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct kacc_conn_arg a = {.fd = kconn[p], .peer = p};
        int t = plat_net_lock();
        rc = mlx_o2g_attach_kacc(kconn[p], p);
        plat_net_unlock(t);
        if (rc != 0 || ioctl(kfd, KACC_IOC_CONN, &a) != 0) {
            /* Hazard: under auto a peer may already send on its side; its messages stay
             * unexpected in o2g. Only a module refusing a fresh socket gets here. */
            give_up("hand the kacc connection over", errno);
            return;
        }
    }
    mlx_net_watch_kacc(kfd);
    mpe_node_set_cadoff(mlx_node, &cadoff);
}

/* Task context of the owner: may kacc run c's admitted graph? Only what every rank of the
 * collective has alike decides (see the top of the file). */
static int kacc_can_run(const struct mpe_cad *c)
{
    struct cad_graph *g = c->copy;
    for (int32_t i = 0; i < g->own.comm_size; i++)
        if (c->copy_world[i] != i) /* kacc's peers are connections by rank */
            return 0;
    const struct cad_node *n = cad_nodes(g);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        /* Hazard: a peer without kacc connection is the same on every node (start-up
         * gives up on all of them together) only if no node gave up after its peers
         * finished theirs (mlx_kacc_start's KACC_IOC_CONN). */
        if ((n[i].type == CAD_SEND || n[i].type == CAD_RECV) &&
            (n[i].u.x.peer < 0 || n[i].u.x.peer >= nodes || kconn[n[i].u.x.peer] < 0))
            return 0;
    }
    return 1;
}

/* Any thread, pend_lock held: issue c to kacc. 0: issued; 1: refused for now (EBUSY,
 * ENOMEM, EDQUOT: our graphs in flight hold the table, RLIMIT_MEMLOCK or the file's kernel
 * memory; try again later). Any other refusal ends the job. first: c's first offer. */
static int try_issue(struct mpe_cad *c, int first)
{
    struct kacc_issue is = {.graph = (uintptr_t)c->copy, .bytes = c->copy->bytes};
    if (refuse_all) {
        pend_errno = ENOMEM; /* the test knob: as a memory limit below the graph's */
        return 1;
    }
    if (first && refuse_test && !(offers++ & 1))
        return 1; /* the test knob: as a full table */
    if (ioctl(kfd, KACC_IOC_ISSUE, &is) != 0 || is.slot >= KACC_SLOTS) {
        if (errno == EBUSY || errno == ENOMEM || errno == EDQUOT) {
            pend_errno = errno;
            return 1;
        }
        if (errno == EINVAL)
            plat_fatal("kacc refused a collective's graph: node %d: %s", is.err_node, is.err_msg);
        plat_fatal("kacc: issue of a collective's graph: %s", strerror(errno));
    }
    /* Release: the owner's off_test finds the slot whole (c waited, MLX_KACC_WAITING). */
    __atomic_store_n(&c->off_slot, is.slot, __ATOMIC_RELEASE);
    /* Release: the run is whole before the network thread may reap it. */
    __atomic_store_n(&slot_run[is.slot], c, __ATOMIC_RELEASE);
    return 0;
}

/* Any thread, pend_lock held: issue the waiting graphs in order, while kacc takes them. */
static void issue_pending(void)
{
    while (npend && try_issue(pend[pend_head], 0) == 0) {
        pend_head = (pend_head + 1) % pend_cap;
        npend--;
    }
}

/* Task context of the owner, pend_lock held: c waits behind the graphs refused before. */
static void pend_add(struct mpe_cad *c)
{
    if (npend == pend_cap) {
        size_t cap = pend_cap ? 2 * pend_cap : MLX_KACC_PEND;
        struct mpe_cad **p = malloc(cap * sizeof *p);
        if (!p)
            plat_fatal("kacc: out of memory for graphs waiting for kacc");
        for (size_t i = 0; i < npend; i++)
            p[i] = pend[(pend_head + i) % pend_cap];
        free(pend);
        pend = p;
        pend_head = 0;
        pend_cap = cap;
    }
    pend[(pend_head + npend++) % pend_cap] = c;
}

/* Any thread: issue the waiting graphs kacc takes now. */
static void retry_waiting(void)
{
    pthread_mutex_lock(&pend_lock);
    issue_pending();
    pthread_mutex_unlock(&pend_lock);
}

/* Task context of the owner: is c still waiting for kacc (no lock: MPI_Test's path)? */
static int waiting(const struct mpe_cad *c)
{
    return __atomic_load_n(&c->off_slot, __ATOMIC_ACQUIRE) == MLX_KACC_WAITING;
}

/* Any thread: if slot's graph finished, complete its run (once: whoever takes it from
 * slot_run). 1 if the slot holds no running graph of ours any more. */
static int reap(uint32_t slot)
{
    struct mpe_cad *c = __atomic_load_n(&slot_run[slot], __ATOMIC_ACQUIRE);
    if (!c)
        return 1;
    /* Acquire pairs with kacc's release of run: the graph's results are in memory. */
    uint32_t run = __atomic_load_n(&st[slot].run, __ATOMIC_ACQUIRE);
    if (run < KACC_Q_DONE)
        return 0;
    if (!__atomic_compare_exchange_n(&slot_run[slot], &c, NULL, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return 1; /* the other thread took it */
    int32_t err = st[slot].error;
    if (ioctl(kfd, KACC_IOC_RELEASE, (unsigned long)slot) != 0)
        plat_fatal("kacc: release of slot %u: %s", (unsigned)slot, strerror(errno));
    int mpe_err = MPE_OK;
    if (run != KACC_Q_DONE || err)
        mpe_err = err <= -KACC_EXFER ? MPE_EPEER : MPE_EINVAL;
    mpe_cad_offload_done(c, mpe_err);
    retry_waiting(); /* a slot and its pinned pages are free again */
    return 1;
}

/* Task context of the owner (mpe_cadoff.issue). Once kacc may run c, c is kacc's on
 * every rank alike: a refusal only delays it (see the top of the file). */
static int off_issue(struct mpe_cad *c)
{
    if (!kacc_can_run(c))
        return -1;
    __atomic_store_n(&rank_task, plat_task(), __ATOMIC_RELEASE);
    pthread_mutex_lock(&pend_lock);
    issue_pending();
    /* behind the graphs still waiting: o2g matches RECVs in posting order */
    if (npend || try_issue(c, 1) != 0) {
        __atomic_store_n(&c->off_slot, MLX_KACC_WAITING, __ATOMIC_RELAXED);
        int first = !npend;
        pend_add(c);
        /* Hazard: the network thread may sleep with no timeout, computed while no graph
         * waited (mlx_kacc_retry_ms); without this wake-up nothing may end that sleep,
         * and neither the retries nor the MLX_KACC_STUCK_NS verdict ever come: the rank
         * spins in MPI_Wait and its peers hang (kacc_mpi.sh's `stuck` case). */
        if (first)
            mlx_net_wake();
    }
    pthread_mutex_unlock(&pend_lock);
    return 0;
}

/* Task context of the owner (mpe_cadoff.test: its MPI_Test and MPI_Wait): a user-op
 * node kacc offers for c, or -1. */
static int off_test(struct mpe_cad *c)
{
    if (waiting(c)) {
        retry_waiting();
        if (waiting(c)) {
            plat_wake(plat_task()); /* MPI_Wait polls: nothing else may issue it */
            return -1;
        }
    }
    uint32_t slot = c->off_slot;
    if (poll_mode && ioctl(kfd, KACC_IOC_PROGRESS, 0UL) != 0)
        plat_fatal("kacc: progress: %s", strerror(errno));
    /* Acquire pairs with kacc's release of the node: what the graph wrote before is in
     * memory. The slot is c's until reaped, and a graph with a node offered is running. */
    int32_t node = __atomic_load_n(&users[slot].node, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot_run[slot], __ATOMIC_ACQUIRE) == c && node >= 0 &&
        (uint32_t)node < c->copy->nnodes)
        return node;
    if (!reap(slot) && poll_mode)
        plat_wake(plat_task()); /* MPI_Wait polls: nothing else runs the graph */
    return -1;
}

/* Task context of the owner (mpe_cadoff.done): it ran node's user op; the graph goes on. */
static void off_done(struct mpe_cad *c, int node)
{
    struct kacc_user_done d = {.slot = c->off_slot, .node = node};
    if (ioctl(kfd, KACC_IOC_USER_DONE, &d) != 0)
        plat_fatal("kacc: user op of node %d of slot %u: %s", node, (unsigned)d.slot,
                   strerror(errno));
}

static const struct mpe_cadoff cadoff = {.issue = off_issue, .test = off_test, .done = off_done};

/* Network thread: the epoll timeout (ms) its retries of waiting graphs need, or -1. A
 * relaxed read: a graph that starts waiting after it also wakes the thread (off_issue). */
int mlx_kacc_retry_ms(void)
{
    return __atomic_load_n(&npend, __ATOMIC_RELAXED) ? MLX_KACC_RETRY_MS : -1;
}

/* Network thread, each turn: issue the graphs kacc refused, if it takes them now. One
 * refused for MLX_KACC_STUCK_NS while none of ours runs in kacc never will be: the job
 * ends with why (every rank's peers then see this node fail). */
void mlx_kacc_retry(void)
{
    if (!__atomic_load_n(&npend, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&pend_lock);
    issue_pending();
    int running = 0;
    for (uint32_t s = 0; s < KACC_SLOTS && !running; s++)
        running = __atomic_load_n(&slot_run[s], __ATOMIC_ACQUIRE) != NULL;
    uint64_t now = mlx_now_ns();
    if (!npend || running)
        pend_stuck_ns = 0;
    else if (!pend_stuck_ns)
        pend_stuck_ns = now;
    else if (now - pend_stuck_ns > MLX_KACC_STUCK_NS)
        plat_fatal("kacc refused a collective's graph for %llu s with none of ours running "
                   "(%s%s); set UKMPI_KACC=off for the whole job",
                   (unsigned long long)(MLX_KACC_STUCK_NS / 1000000000ull), strerror(pend_errno),
                   pend_errno == ENOMEM ? ": RLIMIT_MEMLOCK below the graph's buffers?" : "");
    pthread_mutex_unlock(&pend_lock);
}

/* Network thread: /dev/kacc became readable (a graph finished, or a user op is offered:
 * the rank runs it in its MPI calls, so it is woken, asleep in MPI_Wait or not). */
void mlx_kacc_run(void)
{
    int offered = 0;
    for (uint32_t s = 0; s < KACC_SLOTS; s++) {
        if (!__atomic_load_n(&slot_run[s], __ATOMIC_RELAXED))
            continue;
        offered |= __atomic_load_n(&users[s].node, __ATOMIC_ACQUIRE) >= 0;
        reap(s);
    }
    void *t = __atomic_load_n(&rank_task, __ATOMIC_ACQUIRE);
    if (offered && t)
        plat_wake(t);
}

/* Task context (job end, the network thread stopped): kacc lets go of its graphs and
 * sockets before o2g does. */
void mlx_kacc_stop(void)
{
    if (kfd < 0)
        return;
    close(kfd);
    kfd = -1;
    for (int p = 0; kconn && p < nodes; p++)
        if (kconn[p] >= 0)
            close(kconn[p]);
}
