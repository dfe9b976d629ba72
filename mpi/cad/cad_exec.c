/*
 * cad_exec.c: the ready-set logic of a running graph (the paper's IssueCAD and QueryCAD,
 * and the progress engine's bookkeeping). The executor that posts SEND/RECV to the MPI
 * engine and runs CALC nodes sits on top of this; everything here is callable from the NIC
 * interrupt: O(successors) per completion, no allocation, no recursion.
 *
 * Nodes whose predecessors have all completed wait in a FIFO threaded through the nodes'
 * `link` field, rather than being handed to a callback: a callback that completed its node
 * at once (an intra-node copy, a CALC) would re-enter cad_complete and nest as deep as the
 * graph is long. With the queue, the executor loops (cad_next_ready, start, maybe
 * cad_complete) at constant stack depth, and can stop after a budget of steps and resume
 * later (docs/architecture.md §3.6) because the queue lives in the graph.
 *
 * Every call here assumes the caller serialises the run-side calls of one graph (cad.h).
 * `run` is also read without that lock by cad_query: it is stored with release order after
 * the last node completed, so a waiter that sees CAD_Q_DONE also sees every result the
 * executor wrote before its last cad_complete.
 */
#include "cad_internal.h"

static int usable(const struct cad_graph *g)
{
    return g && g->magic == CAD_MAGIC;
}

static void set_run(struct cad_graph *g, uint32_t run)
{
    __atomic_store_n(&g->run, run, __ATOMIC_RELEASE);
}

static void push(struct cad_node *n, uint16_t *head, uint16_t *tail, uint32_t i)
{
    n[i].link = CAD_NIL;
    if (*tail == CAD_NIL)
        *head = (uint16_t)i;
    else
        n[*tail].link = (uint16_t)i;
    *tail = (uint16_t)i;
}

static int pop(struct cad_node *n, uint16_t *head, uint16_t *tail)
{
    uint32_t i = *head;
    if (i == CAD_NIL)
        return -1;
    *head = n[i].link;
    if (*head == CAD_NIL)
        *tail = CAD_NIL;
    n[i].link = CAD_NIL;
    return (int)i;
}

/* Node u is done: count down its successors; the ones left with nothing pending become
 * ready, except END, which has nothing to do and completes the graph on the spot. In a
 * validated graph END becomes ready only after every other node completed, since each
 * reaches it. */
static int node_done(struct cad_graph *g, uint32_t u)
{
    struct cad_node *n = cad_nodes(g);
    const uint16_t *succ = cad_succ(g);
    int finished = 0;
    n[u].state = CAD_NS_DONE;
    g->ndone++;
    for (uint32_t k = 0; k < n[u].nsucc; k++) {
        uint32_t v = succ[n[u].first_succ + k];
        if (--n[v].pending)
            continue;
        if (v == CAD_NODE_END) {
            n[v].state = CAD_NS_DONE;
            g->ndone++;
            set_run(g, CAD_Q_DONE);
            finished = CAD_FINISHED;
        } else {
            n[v].state = CAD_NS_READY;
            push(n, &g->ready_head, &g->ready_tail, v);
        }
    }
    return finished;
}

/* Under the graph's lock, any context (usually the owning rank's task). IssueCAD. O(nodes):
 * the counters are rebuilt so that a finished graph can be issued again (persistent
 * collectives) without being rebuilt or revalidated. */
int cad_issue(struct cad_graph *g)
{
    if (!usable(g))
        return -CAD_EINVAL;
    if (g->run == CAD_Q_RUNNING || g->run == CAD_Q_CANCELLING || !(g->flags & CAD_F_VALID))
        return -CAD_ESTATE;
    struct cad_node *n = cad_nodes(g);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        n[i].state = CAD_NS_IDLE;
        n[i].pending = n[i].npred;
        n[i].link = CAD_NIL;
    }
    g->ready_head = g->ready_tail = CAD_NIL;
    g->defer_head = g->defer_tail = CAD_NIL;
    g->ndone = g->nactive = 0;
    g->issues++;
    set_run(g, CAD_Q_RUNNING);
    return node_done(g, CAD_NODE_START);
}

/* Under the graph's lock, any context (the NIC interrupt included). */
int cad_next_ready(struct cad_graph *g)
{
    if (!usable(g) || g->run != CAD_Q_RUNNING)
        return -1;
    struct cad_node *n = cad_nodes(g);
    int i = pop(n, &g->ready_head, &g->ready_tail);
    if (i >= 0) {
        n[i].state = CAD_NS_ACTIVE;
        g->nactive++;
    }
    return i;
}

/* Under the graph's lock, any context (the NIC interrupt included). The state check makes
 * a second completion of a node, or one of a node never started, an error that changes
 * nothing, instead of a count going wrong. */
int cad_complete(struct cad_graph *g, int node)
{
    if (!usable(g) || node < 0 || (uint32_t)node >= g->nnodes)
        return -CAD_EINVAL;
    struct cad_node *n = cad_nodes(g);
    if (n[node].state != CAD_NS_ACTIVE)
        return -CAD_ESTATE;
    g->nactive--;
    if (g->run == CAD_Q_CANCELLING) { /* settle it; nothing follows a cancelled graph */
        n[node].state = CAD_NS_DONE;
        g->ndone++;
        if (g->nactive)
            return 0;
        set_run(g, CAD_Q_CANCELLED);
        return CAD_FINISHED;
    }
    return node_done(g, (uint32_t)node);
}

/* Under the graph's lock, any context: typically the interrupt that found a user-op CALC
 * ready and may not run application code. */
int cad_defer(struct cad_graph *g, int node)
{
    if (!usable(g) || node < 0 || (uint32_t)node >= g->nnodes)
        return -CAD_EINVAL;
    struct cad_node *n = cad_nodes(g);
    if (n[node].state != CAD_NS_ACTIVE || g->run != CAD_Q_RUNNING)
        return -CAD_ESTATE;
    n[node].state = CAD_NS_DEFERRED;
    push(n, &g->defer_head, &g->defer_tail, (uint32_t)node);
    return 0;
}

/* Under the graph's lock, the owning rank's task context (it runs the user function after
 * dropping the lock, then takes it again for cad_complete). */
int cad_next_deferred(struct cad_graph *g)
{
    if (!usable(g) || g->run != CAD_Q_RUNNING)
        return -1;
    struct cad_node *n = cad_nodes(g);
    int i = pop(n, &g->defer_head, &g->defer_tail);
    if (i >= 0)
        n[i].state = CAD_NS_ACTIVE;
    return i;
}

/* Any context, no lock needed. QueryCAD. */
int cad_query(const struct cad_graph *g)
{
    if (!usable(g))
        return -CAD_EINVAL;
    return (int)__atomic_load_n(&g->run, __ATOMIC_ACQUIRE);
}

/* Task context of the waiter (block() sleeps). Re-checks after every wake-up: block() may
 * return for another reason. */
int cad_wait(const struct cad_graph *g, void (*block)(void *), void *arg)
{
    int q;
    while ((q = cad_query(g)) >= 0 && q < CAD_Q_DONE)
        block(arg);
    return q;
}

/* Under the graph's lock, any context. */
int cad_cancel(struct cad_graph *g)
{
    if (!usable(g))
        return -CAD_EINVAL;
    if (g->run != CAD_Q_RUNNING)
        return -CAD_ESTATE;
    struct cad_node *n = cad_nodes(g);
    int i;
    while ((i = pop(n, &g->ready_head, &g->ready_tail)) >= 0)
        n[i].state = CAD_NS_CANCELLED;
    while ((i = pop(n, &g->defer_head, &g->defer_tail)) >= 0) {
        n[i].state = CAD_NS_CANCELLED; /* the user function never ran: nothing to settle */
        g->nactive--;
    }
    set_run(g, g->nactive ? CAD_Q_CANCELLING : CAD_Q_CANCELLED);
    return (int)g->nactive;
}
