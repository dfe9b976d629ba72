// SPDX-License-Identifier: GPL-2.0
/*
 * kacc_run.c: progress of issued graphs (KACC's balancing, seed 000).
 *
 * An event for a graph (its issue, a KACC_IOC_KICK, a SEND or RECV completion: kacc_net.c)
 * puts the graph on one CPU's run list and schedules that CPU's tasklet, which runs the
 * graph's ready nodes (kacc_step). Which CPU is the progress= policy:
 *   tasklet  the CPU the event happened on ("local" if it is not the graph's home CPU,
 *            "home" if it is);
 *   ipi      always the home CPU (the one that issued the graph): from another CPU the
 *            home CPU's tasklet is scheduled by an IPI (smp_call_function_single_async,
 *            one csd per CPU; "ipi");
 *   poll     nothing: the graph advances only in KACC_IOC_PROGRESS, the baseline.
 * A graph is on at most one list at a time (KACC_QUEUED): an event for a queued graph
 * changes nothing, the queued run will see the new ready nodes.
 *
 * Lifetime: KACC_QUEUED is the tasklet's hold on the graph (and its file): the release
 * path waits for the bit to clear and for the graph's lock (kacc_unqueue) before unpinning
 * or freeing anything; the tasklet clears the bit under that lock, its last use of it.
 * CPU hotplug: an event for a graph whose home CPU is offline runs it where it happened;
 * a graph queued on a CPU that then goes offline is not moved (not handled).
 */
#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/smp.h>
#include <linux/percpu.h>
#include <linux/delay.h>
#include <asm/fpu/api.h>

#include "kacc.h"

#define KACC_BUDGET 16		 /* slices per graph per tasklet run: a long graph yields */
#define KACC_SLICE (64ULL << 10) /* bytes of each CALC buffer per slice */

struct kacc_cpu {
	spinlock_t lock;       /* list */
	struct list_head list; /* graphs to run on this CPU */
	struct tasklet_struct tasklet;
	call_single_data_t csd; /* this CPU's IPI, sent by the others */
	atomic_t ipi_pending;	/* csd in flight: a second send would be refused */
};

static DEFINE_PER_CPU(struct kacc_cpu, kacc_cpus);

/* Any context, gr->lock held: copy the run state to the status page; the run state is
 * stored last, with release order, so a process that sees DONE sees every result (the
 * CALC stores happened before, through the same physical pages).
 */
void kacc_publish(struct kacc_graph *gr)
{
	struct kacc_status *s = &gr->f->status[gr->slot];
	u32 run = cad_query(gr->g);

	WRITE_ONCE(s->ndone, gr->g->ndone);
	WRITE_ONCE(s->error, gr->error);
	/* release: the results and the fields above before the state (see above) */
	smp_store_release(&s->run, run);
	if (run >= CAD_Q_DONE && !gr->counted) {
		gr->counted = true;
		kacc_stat_add(run == CAD_Q_DONE ? ST_FINISHED : ST_CANCELLED, 1);
		wake_up_interruptible(&gr->f->wq);
	}
}

/* Any context, gr->lock held: offer the next deferred user-op CALC to the process unless
 * one is offered already: its node in the user-op page (release: after what the graph
 * wrote before it), and a wake-up for poll(). The node is ACTIVE until
 * KACC_IOC_USER_DONE or a cancel completes it.
 */
void kacc_offer_user(struct kacc_graph *gr)
{
	struct kacc_user *u = &gr->f->user[gr->slot];

	if (gr->user >= 0 || cad_query(gr->g) != CAD_Q_RUNNING)
		return;
	gr->user = cad_next_deferred(gr->g);
	if (gr->user < 0)
		return;
	WRITE_ONCE(u->offers, u->offers + 1);
	/* release: the graph's results so far, then the node (the process acquires it) */
	smp_store_release(&u->node, gr->user);
	wake_up_interruptible(&gr->f->wq);
}

/* Softirq or process context (bottom halves off), gr->lock held, FPU usable: the next
 * slice of CALC node i, from element gr->calc_off on (a node of many megabytes would
 * otherwise hold the CPU in softirq for as long). The slice is a copy of the node with
 * count, bytes and addresses narrowed, run by mpi/cad's cad_calc_run unchanged.
 * 1: the node is done; 0: slices are left (gr->partial); negative CAD_E*: a node the
 * module should have refused (only CALC nodes with predefined ops are accepted).
 */
static int kacc_calc_slice(struct kacc_graph *gr, int i)
{
	const struct cad_node *n = &cad_nodes(gr->g)[i];
	struct cad_node part = *n;
	u64 size = cad_type_size(n->u.c.dtype);
	u64 elems;
	int err;

	if (n->type != CAD_CALC || !size)
		return -CAD_ENODE;
	elems = min(n->u.c.count - gr->calc_off, max(KACC_SLICE / size, 1ULL));
	part.u.c.count = elems;
	part.u.c.bytes = elems * size;
	part.u.c.in += gr->calc_off * size;
	part.u.c.inout += gr->calc_off * size;
	kernel_fpu_begin();
	err = cad_calc_run(&part);
	kernel_fpu_end();
	kacc_stat_add(ST_SLICES, 1);
	if (err)
		return err < 0 ? err : -CAD_EOP; /* CAD_CALC_DEFERRED: a user op */
	gr->calc_off += elems;
	if (gr->calc_off < n->u.c.count)
		return 0;
	gr->calc_off = 0;
	kacc_stat_add(ST_CALC, 1);
	return 1;
}

/* Softirq (tasklet) or process context (KACC_IOC_PROGRESS): run up to budget slices of
 * ready nodes. True if work is left for a later run (budget spent, or the FPU not usable
 * here). queued (the tasklet's call): otherwise KACC_QUEUED is cleared before the
 * graph's lock is dropped, so that an event completing a node after this run queues the
 * graph again.
 */
bool kacc_step(struct kacc_graph *gr, unsigned int budget, bool queued)
{
	struct cad_graph *g = gr->g;
	bool more = false;
	int i, err;

	spin_lock_bh(&gr->lock);
	kacc_xfer_drain(gr); /* SENDs and RECVs completed since the last run */
	while (cad_query(g) == CAD_Q_RUNNING && (gr->partial >= 0 || g->ready_head != CAD_NIL)) {
		if (!budget--) {
			more = true;
			break;
		}
		i = gr->partial >= 0 ? gr->partial : g->ready_head;
		if (cad_nodes(g)[i].type == CAD_SEND || cad_nodes(g)[i].type == CAD_RECV) {
			cad_next_ready(g);
			kacc_xfer_start(gr, i);
			kacc_xfer_drain(gr); /* a RECV may have found its message already */
			continue;
		}
		/* a user op: application code, the process's to run (kacc_offer_user) */
		if (cad_nodes(g)[i].type == CAD_CALC && cad_nodes(g)[i].u.c.op == CAD_OP_USER) {
			cad_next_ready(g);
			cad_defer(g, i);
			kacc_offer_user(gr);
			continue;
		}
		/* Hazard: a softirq may interrupt a task between its kernel_fpu_begin/end,
		 * where the FPU is not ours to take: try again in a later run.
		 */
		if (!irq_fpu_usable()) {
			more = true;
			break;
		}
		if (gr->partial < 0)
			cad_next_ready(g);
		err = kacc_calc_slice(gr, i);
		gr->partial = err ? -1 : i;
		if (!err)
			continue;
		if (err < 0) { /* a node validation should have refused: stop the graph */
			gr->error = err;
			cad_cancel(g);
			cad_complete(g, i);
			kacc_stop(gr); /* withdraws a user op offered, stops the xfers */
			continue;
		}
		cad_complete(g, i);
		kacc_xfer_drain(gr);
	}
	kacc_publish(gr);
	if (queued && !more) {
		clear_bit_unlock(KACC_QUEUED, &gr->flags);
		/* Hazard: a SEND/RECV completer does not take gr->lock: it adds to gr->done,
		 * then makes an event, which found the bit still set. Full barriers on both
		 * sides (here; llist_add and test_and_set_bit there): either its event
		 * queues the graph, or this sees its completion and queues it (or both).
		 */
		smp_mb__after_atomic();
		if (!llist_empty(&gr->done))
			kacc_event(gr);
	}
	spin_unlock_bh(&gr->lock); /* the tasklet's last touch of gr (kacc_unqueue) */
	return more;
}

/* Any context, gr->lock held: cancel a running graph, or finish cancelling one a failed
 * xfer cancelled (kacc_xfer_drain). What the executor handed out and would not end by
 * itself is settled here: a CALC cut into slices, a user op offered to the process (a
 * dying process never answers it, and its release waits for the graph), the SENDs and
 * RECVs that can be stopped (kacc_xfer_stop). Without others in flight the graph is
 * CANCELLED at once, else once they complete.
 */
void kacc_stop(struct kacc_graph *gr)
{
	int q = cad_query(gr->g);

	if (q != CAD_Q_RUNNING && q != CAD_Q_CANCELLING)
		return;
	if (q == CAD_Q_RUNNING)
		cad_cancel(gr->g);
	if (gr->partial >= 0)
		cad_complete(gr->g, gr->partial);
	gr->partial = -1;
	if (gr->user >= 0) { /* the process's USER_DONE for it is refused from now on */
		cad_complete(gr->g, gr->user);
		/* release: pairs with the process's acquire, the offer is withdrawn */
		smp_store_release(&gr->f->user[gr->slot].node, -1);
	}
	gr->user = -1;
	gr->calc_off = 0;
	kacc_xfer_stop(gr);
	kacc_xfer_drain(gr);
}

/* Any context: put gr on cpu's list unless it is queued already. True if it was added. */
static bool kacc_enqueue(struct kacc_graph *gr, int cpu)
{
	struct kacc_cpu *pc = per_cpu_ptr(&kacc_cpus, cpu);
	unsigned long irqflags;

	if (test_and_set_bit(KACC_QUEUED, &gr->flags))
		return false;
	spin_lock_irqsave(&pc->lock, irqflags);
	list_add_tail(&gr->run_node, &pc->list);
	spin_unlock_irqrestore(&pc->lock, irqflags);
	return true;
}

/* Any context: something happened to gr on this CPU (issue, kick, a completion). */
void kacc_event(struct kacc_graph *gr)
{
	int policy = READ_ONCE(kacc_progress);
	int me, target;

	if (policy == KACC_POLL)
		return;
	me = get_cpu();
	/* an offline home CPU would take no IPI: the graph runs here instead */
	target = policy == KACC_IPI && cpu_online(gr->home) ? gr->home : me;
	if (kacc_enqueue(gr, target)) {
		struct kacc_cpu *pc = per_cpu_ptr(&kacc_cpus, target);

		if (target != me) {
			kacc_stat_add(ST_IPI, 1);
			if (!atomic_xchg(&pc->ipi_pending, 1))
				smp_call_function_single_async(target, &pc->csd);
		} else {
			kacc_stat_add(me == gr->home ? ST_HOME : ST_LOCAL, 1);
			tasklet_schedule(&pc->tasklet);
		}
	}
	put_cpu();
}

/* Hard interrupt (IPI) on the target CPU: its tasklet takes the list. */
static void kacc_ipi(void *info)
{
	struct kacc_cpu *pc = info;

	atomic_set(&pc->ipi_pending, 0);
	tasklet_schedule(&pc->tasklet);
}

/* Softirq, on the CPU the list belongs to. */
static void kacc_tasklet(struct tasklet_struct *t)
{
	struct kacc_cpu *pc = from_tasklet(pc, t, tasklet);
	struct kacc_graph *gr, *tmp;
	LIST_HEAD(todo);
	bool again = false;

	spin_lock_irq(&pc->lock);
	list_splice_init(&pc->list, &todo);
	spin_unlock_irq(&pc->lock);
	list_for_each_entry_safe(gr, tmp, &todo, run_node) {
		list_del_init(&gr->run_node);
		if (!kacc_step(gr, KACC_BUDGET, true))
			continue;	  /* gr is not ours any more */
		spin_lock_irq(&pc->lock); /* still KACC_QUEUED: back on the list */
		list_add_tail(&gr->run_node, &pc->list);
		spin_unlock_irq(&pc->lock);
		again = true;
	}
	if (again)
		tasklet_schedule(&pc->tasklet);
}

/* Process context (release path), after the graph was cancelled: wait until no tasklet
 * holds gr. A cancelled graph has no ready node, so its queued run ends at once.
 */
void kacc_unqueue(struct kacc_graph *gr)
{
	/* a completer's last touch of gr is its decrement (kacc_xfer_done) */
	while (atomic_read_acquire(&gr->active))
		usleep_range(50, 200);
	while (test_bit_acquire(KACC_QUEUED, &gr->flags))
		usleep_range(50, 200);
	/* the tasklet cleared the bit under the lock: wait until it dropped it */
	spin_lock_bh(&gr->lock);
	spin_unlock_bh(&gr->lock);
}

/* Module init: one CPU's list, tasklet and IPI. */
static void kacc_cpu_setup(struct kacc_cpu *pc)
{
	spin_lock_init(&pc->lock);
	INIT_LIST_HEAD(&pc->list);
	tasklet_setup(&pc->tasklet, kacc_tasklet);
	INIT_CSD(&pc->csd, kacc_ipi, pc);
	atomic_set(&pc->ipi_pending, 0);
}

/* Module init. */
int kacc_run_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) kacc_cpu_setup(per_cpu_ptr(&kacc_cpus, cpu));
	return 0;
}

/* Module exit: no file is open (each holds the module), so no graph and no event is
 * left; a tasklet may still be scheduled with an empty list.
 */
void kacc_run_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) tasklet_kill(&per_cpu_ptr(&kacc_cpus, cpu)->tasklet);
}
