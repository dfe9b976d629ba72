/*
 * mpe_uk.c: the MPI engine on the unikernel: mpe_plat.h on tasks, newlib's malloc and
 * ksock, and the node-pair connections of a job (mpe_job.h).
 *
 * Address spaces: the NIC interrupt runs on CPU 0 with whatever page table that CPU had
 * (another job's, in tests that make several). Engine code called from a ksock callback
 * touches rank memory (requests, user buffers), so the callbacks switch to the job's page
 * table for their duration and back; task-context calls already run in it.
 */
#include "mpi/mpe_job.h"
#include "mpi/impi_uk.h"
#include "mpe_plat.h"
#include "mpe_transport.h"
#include "arch/x86_64/io.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/trap.h"
#include "kernel/smp.h"
#include "kernel/fmt.h"
#include "kernel/sched.h"
#include "pvas/pvas.h"
#include "pvas/pvas_task.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/ksock.h"
#include "uk/net.h"
#include "uk/net_prof.h"
#include "uk/power.h"
#include "uk/time.h"
#include <stdarg.h>
#include <stdlib.h>

/* The engine keeps per-CPU state for MPE_MAX_CPUS CPUs: a board with more must raise it. */
_Static_assert(MAX_CPUS <= MPE_MAX_CPUS, "the board's MAX_CPUS exceeds the engine's MPE_MAX_CPUS");

#define MPE_PORT       7101
#define MPE_CONNECT_NS 60000000000ull /* peers boot within a minute of each other */
#define MPE_BYE_NS     30000000000ull
#define MPE_RETRY_US   100000        /* between connection attempts while a peer boots */
#define MPE_DRAIN_NS   1000000000ull /* the last ACKs leaving the NIC before power-off */

static uint64_t job_cr3;
static struct ksock *listener;
struct mpe_node *mpe_uk_node; /* this node's engine, once the job has one */
static int job_nodes;         /* ... and the job's node count */
static uint64_t impi_buffer;  /* an IMPI job's buffer for unexpected messages */

void *plat_task(void)
{
    return task_current();
}

void plat_wake(void *task)
{
    net_prof_mark(NP_WAKE, 0);
    if (task)
        task_wake(task);
}

void plat_block(void)
{
    task_block();
    net_prof_mark(NP_RESUMED, 0);
}

void plat_relax(void)
{
    cpu_relax();
}

void *plat_alloc(size_t n)
{
    return calloc(1, n);
}

void plat_free(void *p)
{
    free(p);
}

int plat_net_lock(void)
{
    return ksock_lock();
}

void plat_net_unlock(int token)
{
    ksock_unlock(token);
}

long plat_net_send(void *transport, const void *data, size_t len)
{
    return ksock_send(transport, data, len);
}

int plat_task_cpu(void *task)
{
    return ((struct task *)task)->cpu;
}

int plat_cpu_idle(void)
{
    return task_current() == 0;
}

void plat_cad_ipi(int cpu)
{
    ipi_send(cpu, VEC_IPI_CAD);
}

uint64_t plat_tsc(void)
{
    return rdtsc();
}

uint64_t plat_tsc_hz(void)
{
    return tsc_hz;
}

uint64_t plat_irq_tsc(void)
{
    return net_rx_irq_entry();
}

void plat_partition(uint64_t *base, uint64_t *size)
{
    struct pvas_task *t = pvas_current();
    *base = t ? t->base : 0;
    *size = t ? PART_SIZE : 0;
}

void plat_fatal(const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    kvformat(buf, sizeof buf, fmt, ap);
    va_end(ap);
    machine_stop_others();
    kprintf("mpi: node %d: %s: ending the job\n", mpe_uk_node ? mpe_node_id(mpe_uk_node) : -1, buf);
    machine_exit(EXIT_MPI);
}

/* ksock callbacks: NIC interrupt (or a task inside ksock), lwIP lock held. */
/* Any context; see impi_uk.h. */
uint64_t mpe_uk_enter(void)
{
    uint64_t old = read_cr3();
    if (old != job_cr3)
        write_cr3(job_cr3);
    return old;
}

void mpe_uk_leave(uint64_t old)
{
    if (old != job_cr3)
        write_cr3(old);
}

static void conn_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)s;
    uint64_t old = mpe_uk_enter();
    net_prof_mark(NP_ENGINE, 0);
    mpe_net_rx(arg, data, len);
    net_prof_mark(NP_ENG_DONE, 0);
    mpe_uk_leave(old);
}

static void conn_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    struct mpe_conn *c = arg;
    uint64_t old = mpe_uk_enter();
    switch (ev) {
    case KSOCK_EV_CONNECTED:
        mpe_conn_attach(c, s);
        break;
    case KSOCK_EV_SENT:
        mpe_net_sent(c);
        break;
    case KSOCK_EV_EOF:
        mpe_net_failed(c, "peer closed the connection");
        break;
    case KSOCK_EV_ERROR:
        if (mpe_conn_transport(c) == s)
            mpe_net_failed(c, ksock_strerror(err));
        break;
    }
    mpe_uk_leave(old);
}

static const struct ksock_ops conn_ops = {.recv = conn_recv, .event = conn_event};

/* Interrupt context, after the NIC interrupt (or a timer tick) ran lwIP and released its
 * lock, and the CAD IPI: progress the graphs kicked to this CPU (mpe_cad.c). */
static void cad_flush_irq(void)
{
    if (!mpe_uk_node)
        return;
    uint64_t old = mpe_uk_enter();
    mpe_cad_flush(1);
    mpe_uk_leave(old);
}

static void on_cad_ipi(struct trapframe *tf)
{
    (void)tf;
    cad_flush_irq();
}

/* Accept callback (NIC interrupt): a higher-numbered node connects to us. */
static void conn_accept(struct ksock *l, void *arg, struct ksock *s)
{
    (void)l;
    struct mpe_node *n = arg;
    const struct net_node *nn = net_node();
    uint32_t ip = ksock_peer_ip(s);
    int id = mpe_node_id(n);
    for (int p = id + 1; p < job_nodes; p++) {
        struct mpe_conn *c = mpe_node_conn(n, p);
        if (nn->peer_ip[p] == ip && !mpe_conn_transport(c)) {
            ksock_set_ops(s, &conn_ops, c);
            mpe_conn_attach(c, s);
            return;
        }
    }
    kprintf("mpi: node %d: refused a connection from an unknown or duplicate peer\n", id);
    ksock_abort(s);
}

/* Task context: connect to every lower-numbered node, retrying while it boots. */
static int connect_lower(struct mpe_node *n)
{
    const struct net_node *nn = net_node();
    uint64_t deadline = time_ns() + MPE_CONNECT_NS;
    for (int p = 0; p < mpe_node_id(n); p++) {
        struct mpe_conn *c = mpe_node_conn(n, p);
        if (!ksock_connect_wait(nn->peer_ip[p], MPE_PORT, &conn_ops, c, deadline, MPE_RETRY_US)) {
            kprintf("mpi: node %d: cannot connect to node %d\n", mpe_node_id(n), p);
            return -1;
        }
    }
    return 0;
}

/* Task context, from impi_client_start before DONE: the job's layout into the engine,
 * and the engine's links for the dance. */
static int impi_ready(const struct impi_job *job)
{
    const char *why = "the clients' layout does not fit this job";
    struct mpe_impi_cfg c = {
        .maxlen = job->maxlen,
        .ackmark = job->ackmark,
        .hiwater = job->hiwater,
        .nhosts = job->nhosts,
        .self_host = job->self_host,
        .host_first = job->host_first,
        .procs = job->procs,
        .pool_bytes = impi_buffer,
    };
    if (mpe_node_set_clients(mpe_uk_node, job->nclients, job->client_first, job->client) != 0 ||
        mpe_impi_setup(mpe_uk_node, &c, &why) != 0) {
        kprintf("impi: %s\n", why);
        return -1;
    }
    impi_host_tables(mpe_uk_node, job);
    return 0;
}

/* Task context: join the IMPI job (impi_uk.h); our world ranks and the world's size. */
static int impi_start(const struct impi_uk_cfg *cfg, int node, int nodes, int size, int *wfirst,
                      int *wsize)
{
    static struct impi_job job;
    if (!net_up()) {
        kprintf("impi: an IMPI job needs the network\n");
        return -1;
    }
    impi_buffer = cfg->buffer;
    if (impi_host_listen() != 0 ||
        impi_client_start(cfg, node, nodes, size, net_node()->peer_ip, &job, impi_ready) != 0 ||
        impi_host_dance() != 0)
        return -1;
    *wfirst = job.client_first[job.client];
    *wsize = job.client_first[job.nclients];
    return 0;
}

/* Task context; see mpe_job.h. */
int mpe_job_start(struct pvas_as *as, int node, int nodes, int size, int first, int count,
                  const struct impi_uk_cfg *impi, int *wfirst, int *wsize)
{
    job_cr3 = pvas_pml4(as);
    *wfirst = 0;
    *wsize = size;
    struct mpe_node *n = mpe_node_create(node, nodes, size, first, count);
    if (!n) {
        kprintf("mpi: node %d: no memory for the engine of %d ranks\n", node, count);
        return -1;
    }
    mpe_uk_node = n;
    job_nodes = nodes;
    irq_register(VEC_IPI_CAD, on_cad_ipi);
    net_set_rx_tail(cad_flush_irq, mpe_cad_due);
    if (nodes > 1) {
        if (!net_up()) {
            kprintf("mpi: node %d: a job on %d nodes needs the network\n", node, nodes);
            return -1;
        }
        listener = ksock_listen(MPE_PORT, conn_accept, n);
        if (!listener) {
            kprintf("mpi: node %d: cannot listen on port %d\n", node, MPE_PORT);
            return -1;
        }
        if (connect_lower(n) != 0)
            return -1;
    }
    return impi->on ? impi_start(impi, node, nodes, size, wfirst, wsize) : 0;
}

/* Task context, after every local rank exited with 0: tell every peer we are done, wait
 * for theirs, and until what we sent has been acknowledged (else our last messages could
 * die with this VM). */
int mpe_job_end(void)
{
    struct mpe_node *n = mpe_uk_node;
    if (!n || job_nodes == 1)
        return impi_host_end();
    int id = mpe_node_id(n);
    mpe_node_finish(n);
    uint64_t deadline = time_ns() + MPE_BYE_NS;
    for (int p = 0; p < job_nodes; p++) {
        struct mpe_conn *c = mpe_node_conn(n, p);
        if (p == id)
            continue;
        while (
            !(mpe_conn_done(c) && mpe_conn_transport(c) && ksock_flushed(mpe_conn_transport(c)))) {
            if (time_ns() > deadline) {
                kprintf("mpi: node %d: node %d did not finish\n", id, p);
                return -1;
            }
            halt();
        }
    }
    /* Every peer said BYE, so each peer's last bytes (its BYE) are here: acknowledge them
     * now and let the NIC send that before we power off. A delayed ACK would die with
     * this VM, and the peer would wait out its dead-peer timeout for it. */
    for (int p = 0; p < job_nodes; p++)
        if (p != id)
            ksock_ack_now(mpe_conn_transport(mpe_node_conn(n, p)));
    uint64_t drain = time_ns() + MPE_DRAIN_NS;
    while (!net_tx_drained() && time_ns() < drain)
        halt();
    net_prof_print(id);
    return impi_host_end();
}
