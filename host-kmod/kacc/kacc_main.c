// SPDX-License-Identifier: GPL-2.0
/*
 * kacc: CAD graphs run by Linux's kernel (seed 000). The interface is in
 * kacc_uapi.h; progress (tasklets, IPIs, polling) in kacc_run.c. This file: the device,
 * issue (copy, validate, pin), cancel, release.
 *
 * Ownership:
 *   - The graph block: the module's own copy (kvmalloc), validated by mpi/cad's validator
 *     compiled in unchanged after the copy, so the process cannot change it afterwards.
 *     Its CALC addresses are then rewritten to the kernel mappings of the pinned pages:
 *     the tasklet runs in whatever process is current, so user addresses mean nothing
 *     there.
 *   - Buffers: every range a node names is pinned (o2g_pin_user, FOLL_LONGTERM: a held
 *     graph may keep them indefinitely; anonymous memory, shmem and private file
 *     mappings only, o2g_pin.h says why) and charged to the opener's RLIMIT_MEMLOCK as
 *     o2g does, from issue to release; unpinned dirty where the graph writes.
 *     Overlapping ranges are pinned and charged once per node naming them.
 *   - Kernel memory of a file (its graphs' copies, their xfer and page arrays): allocated
 *     with __GFP_ACCOUNT (the opener's memory cgroup pays) and bounded per file by the
 *     kmem_per_file parameter: an issue beyond it fails with EDQUOT until the file's
 *     graphs are released. Pinned pages are RLIMIT_MEMLOCK's, not counted here.
 *   - Status and user-op pages: vmalloc_user, written by the module under the graph's
 *     lock, mapped read-only by the process; freed at release (no mapping left by then).
 *
 * SEND and RECV (kacc_net.c, over the o2g file given with KACC_IOC_O2G):
 *   - RECV: posted to o2g when the node becomes ready, not at issue (the design first
 *     said at issue): a RECV's buffer may still be read by a SEND it depends on (a
 *     pipelined chain reuses its buffers), and MPI's matching order between the RECVs of
 *     one graph then follows the graph's order. o2g fills the pinned pages in its
 *     data_ready softirq and calls the hook kacc registers at load (o2g_set_cad_hook,
 *     o2g does not depend on kacc); the hook takes no graph lock (o2g holds its own,
 *     which kacc_step holds inside the graph's while posting): it hands the node back
 *     through the graph's done list and makes an event (tasklet here, IPI to the home
 *     CPU, or nothing under progress=poll).
 *   - SEND: TCP transmit may sleep, so a ready SEND goes on the queue of its peer's
 *     connection (the o2g connection's socket), written by a work item on the file's
 *     home CPU with kernel_sendmsg and MSG_DONTWAIT, resumed from sk_write_space. It
 *     completes once its last byte is in the socket, as MPI's buffered send.
 *   - Cancel and release: RECVs still queued in o2g and SENDs not begun are stopped at
 *     once; the others are waited for (kacc_settle). A peer decides when they end (a
 *     SEND it does not read, a message it stops sending halfway that a RECV is bound
 *     to), so release waits KACC_SETTLE_MS at most, then aborts them: the file's
 *     connections are shut down (the workers fail the SENDs) and o2g ends every RECV
 *     (o2g_kabort fails the connection a bound one is reading), and their ends, which
 *     no longer depend on a peer, are waited for.
 *   - User-op CALCs run in the process, as in the unikernel: kacc_step defers a ready
 *     one (cad_defer), kacc_offer_user names it in the user-op page and wakes poll();
 *     the process runs the op in its MPI calls and answers KACC_IOC_USER_DONE, whose
 *     slot and node are checked against the one offered (the process's word is not
 *     trusted: any other node, a graph cancelled meanwhile, is refused with EINVAL).
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include <linux/poll.h>
#include <linux/delay.h>
#include <linux/file.h>

#include "kacc.h"
#include "cad_internal.h"
#include "o2g_kern.h"
#include "o2g_pin.h"

#define KACC_SETTLE_MS 2000	  /* a dying file waits this long for its SENDs and RECVs to end */
#define KACC_SETTLE_WARN_MS 10000 /* ... and says so if they have not ended this long after */
#define KACC_SETTLE_MIN_US 1000	  /* its poll interval meanwhile */
#define KACC_SETTLE_MAX_US 2000
/* KACC_IOC_PROGRESS runs at most this many slices (or node starts) of a graph per hold of
 * its lock (bottom halves off), then lets the CPU go: budget 0 means "all there is", which
 * may be a whole graph of 256 MiB CALCs.
 */
#define KACC_PROGRESS_HOLD 64
#define KACC_KMEM_DEFAULT (64UL << 20) /* kmem_per_file's default: bytes of kernel memory */

atomic64_t kacc_stats[ST_N];
int kacc_progress = KACC_TASKLET;

static const char *const kacc_policies[] = { "tasklet", "ipi", "poll" };

static int kacc_progress_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(kacc_policies, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(kacc_progress, i);
	return 0;
}

static int kacc_progress_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", kacc_policies[READ_ONCE(kacc_progress)]);
}

static const struct kernel_param_ops kacc_progress_ops = {
	.set = kacc_progress_set,
	.get = kacc_progress_get,
};

module_param_cb(progress, &kacc_progress_ops, NULL, 0644);
MODULE_PARM_DESC(progress, "tasklet (event's CPU), ipi (home CPU), poll (KACC_IOC_PROGRESS)");

static unsigned long kacc_kmem_per_file = KACC_KMEM_DEFAULT;
module_param_named(kmem_per_file, kacc_kmem_per_file, ulong, 0644);
MODULE_PARM_DESC(kmem_per_file, "kernel memory bytes of one file's graphs (beyond: EDQUOT)");

/* Process context, f->mutex held: charge bytes of kernel memory to gr (and its file)
 * before allocating them. 0, or -EDQUOT: the file would hold more than kmem_per_file.
 */
int kacc_kmem_charge(struct kacc_graph *gr, size_t bytes)
{
	unsigned long limit = READ_ONCE(kacc_kmem_per_file); /* root may change it */
	struct kacc_file *f = gr->f;

	if (bytes > limit || f->kmem > limit - bytes)
		return -EDQUOT;
	f->kmem += bytes;
	gr->kmem += bytes;
	return 0;
}

/* Process context: unpin and unmap a graph's buffers, give back the charge. */
static void kacc_unpin(struct kacc_file *f, struct kacc_graph *gr)
{
	unsigned int i;

	for (i = 0; i < gr->nbufs; i++) {
		struct kacc_buf *b = &gr->bufs[i];

		if (b->map)
			vunmap(b->map);
		if (b->npages)
			unpin_user_pages_dirty_lock(b->pages, b->npages, b->write);
		kvfree(b->pages);
	}
	if (gr->npinned) {
		account_locked_vm(f->mm, gr->npinned, false);
		kacc_stat_add(ST_PINNED, -(long)gr->npinned);
	}
	kvfree(gr->bufs);
}

/* Process context, f->mutex held: free a graph no tasklet holds any more. */
static void kacc_free(struct kacc_file *f, struct kacc_graph *gr)
{
	kacc_unpin(f, gr);
	kacc_xfer_free(gr);
	kvfree(gr->g);
	f->kmem -= gr->kmem;
	kfree(gr);
	kacc_stat_add(ST_GRAPHS, -1);
}

/* Process context (issue), f->mutex held: pin [addr, addr + len), map it, return the
 * kernel address through *kaddr. 0, or -EFAULT (not mapped as needed), -EOPNOTSUPP (a
 * shared file mapping: o2g_pin.h), -ENOMEM (memlock, memory) or -EDQUOT (kmem_per_file).
 */
static int kacc_pin(struct kacc_file *f, struct kacc_graph *gr, u64 addr, u64 len, bool write,
		    u64 *kaddr)
{
	struct kacc_buf *b = &gr->bufs[gr->nbufs];
	unsigned long start = addr & PAGE_MASK;
	unsigned long n = (PAGE_ALIGN(addr + len) - start) >> PAGE_SHIFT;
	long got;
	int err;

	b->write = write;
	err = kacc_kmem_charge(gr, array_size(n, sizeof(*b->pages)));
	if (err)
		return err;
	b->pages = kvmalloc_array(n, sizeof(*b->pages), GFP_KERNEL_ACCOUNT);
	if (!b->pages)
		return -ENOMEM;
	gr->nbufs++; /* from here on kacc_unpin cleans b up */
	err = account_locked_vm(f->mm, n, true);
	if (err)
		return err;
	got = o2g_pin_user(start, n, FOLL_LONGTERM | (write ? FOLL_WRITE : 0), b->pages);
	if (got > 0) {
		b->npages = got;
		gr->npinned += got;
		kacc_stat_add(ST_PINNED, got);
	}
	/* charge exactly what is pinned: the rest of the charge is given back */
	if (got < (long)n)
		account_locked_vm(f->mm, n - max(got, 0L), false);
	if (got == -EOPNOTSUPP)
		return got;
	if (got < (long)n)
		return -EFAULT;
	b->map = vmap(b->pages, n, VM_MAP, PAGE_KERNEL);
	if (!b->map)
		return -ENOMEM;
	*kaddr = (u64)(uintptr_t)b->map + offset_in_page(addr);
	return 0;
}

/* Process context: refusal message in the validator's format ("node N (TYPE): ..."). */
int kacc_refuse(struct cad_error *err, int code, int node, int type, const char *why)
{
	cad_fail(err, code, node, type);
	cad_msg_str(err, why);
	return -code;
}

/* Process context, after validation: the nodes the module can run, their buffers pinned
 * and rewritten. Negative CAD_E* (or -KACC_ENEEDO2G) with err filled, or a negative errno
 * (-ENOMEM) with err untouched.
 */
static int kacc_prepare(struct kacc_file *f, struct kacc_graph *gr, struct cad_error *err)
{
	static const char unmapped[] = "buffer not mapped (writable, for inout) in the process";
	static const char shared[] = "buffer in a shared file mapping (not anonymous or shmem)";
	struct cad_node *n = cad_nodes(gr->g);
	bool xfers = false;
	unsigned int i;
	int ret;

	for (i = 0; i < gr->g->nnodes; i++) {
		if ((n[i].type == CAD_SEND || n[i].type == CAD_RECV) && !f->o2g)
			return kacc_refuse(err, KACC_ENEEDO2G, i, n[i].type,
					   "needs o2g: no /dev/o2g file given (KACC_IOC_O2G)");
		if (n[i].type == CAD_SEND || n[i].type == CAD_RECV)
			xfers = true;
	}
	if (xfers) {
		ret = kacc_net_prepare(f, gr, err);
		if (ret)
			return ret;
	}
	ret = kacc_kmem_charge(gr, array3_size(2, gr->g->nnodes, sizeof(*gr->bufs)));
	if (ret)
		return ret;
	gr->bufs = kvcalloc(2 * gr->g->nnodes, sizeof(*gr->bufs), GFP_KERNEL_ACCOUNT);
	if (!gr->bufs)
		return -ENOMEM;
	for (i = 0; i < gr->g->nnodes; i++) {
		struct cad_calcop *c = &n[i].u.c;
		struct cad_xfer *x = &n[i].u.x;
		u64 kaddr;

		if ((n[i].type == CAD_SEND || n[i].type == CAD_RECV) && x->bytes) {
			if (x->bytes > KACC_MAX_RANGE)
				return kacc_refuse(err, CAD_EBUF, i, n[i].type,
						   "buffer larger than 256 MiB");
			ret = kacc_pin(f, gr, x->addr, x->bytes, n[i].type == CAD_RECV, &kaddr);
			if (ret == -EFAULT)
				return kacc_refuse(err, CAD_EBUF, i, n[i].type, unmapped);
			if (ret == -EOPNOTSUPP)
				return kacc_refuse(err, CAD_EBUF, i, n[i].type, shared);
			if (ret)
				return ret;
			/* the node keeps its user address: o2g writes the pages */
			gr->xfers[i].kaddr = (void *)(uintptr_t)kaddr;
			gr->xfers[i].buf = &gr->bufs[gr->nbufs - 1];
			continue;
		}
		if (n[i].type != CAD_CALC || !c->bytes)
			continue;
		if (c->bytes > KACC_MAX_RANGE)
			return kacc_refuse(err, CAD_EBUF, i, CAD_CALC,
					   "buffer larger than 256 MiB");
		ret = kacc_pin(f, gr, c->in, c->bytes, false, &c->in);
		if (!ret)
			ret = kacc_pin(f, gr, c->inout, c->bytes, true, &c->inout);
		if (ret == -EFAULT)
			return kacc_refuse(err, CAD_EBUF, i, CAD_CALC, unmapped);
		if (ret == -EOPNOTSUPP)
			return kacc_refuse(err, CAD_EBUF, i, CAD_CALC, shared);
		if (ret)
			return ret;
	}
	return 0;
}

/* Process context, f->mutex held: KACC_IOC_ISSUE. */
static int kacc_issue(struct kacc_file *f, struct kacc_issue __user *uarg)
{
	struct cad_error cerr = { .node = -1 };
	struct kacc_issue a;
	struct kacc_graph *gr;
	unsigned long limit;
	unsigned int slot;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.bytes < CAD_HDR_SIZE || a.bytes > KACC_MAX_GRAPH || a.flags & ~KACC_ISSUE_HOLD)
		return -EINVAL;
	for (slot = 0; slot < KACC_SLOTS && f->slots[slot]; slot++)
		;
	if (slot == KACC_SLOTS)
		return -EBUSY;
	limit = READ_ONCE(kacc_kmem_per_file);
	if (sizeof(*gr) + a.bytes > limit || f->kmem > limit - sizeof(*gr) - a.bytes)
		return -EDQUOT;
	gr = kzalloc(sizeof(*gr), GFP_KERNEL_ACCOUNT);
	if (!gr)
		return -ENOMEM;
	spin_lock_init(&gr->lock);
	INIT_LIST_HEAD(&gr->run_node);
	init_llist_head(&gr->done);
	atomic_set(&gr->active, 0);
	gr->partial = -1;
	gr->user = -1;
	gr->f = f;
	gr->slot = slot;
	gr->bytes = a.bytes;
	kacc_stat_add(ST_GRAPHS, 1);
	kacc_kmem_charge(gr, sizeof(*gr) + a.bytes); /* checked above */
	gr->g = kvmalloc(a.bytes, GFP_KERNEL_ACCOUNT);
	if (!gr->g) {
		ret = -ENOMEM;
		goto fail;
	}
	if (copy_from_user(gr->g, u64_to_user_ptr(a.graph), a.bytes)) {
		ret = -EFAULT;
		goto fail;
	}
	/* The process is the rank: its partition is its whole address space. */
	gr->g->own.part_base = 0;
	gr->g->own.part_size = TASK_SIZE;
	ret = cad_validate(gr->g, a.bytes, &cerr);
	if (!ret)
		ret = kacc_prepare(f, gr, &cerr);
	if (ret && !cerr.code)
		goto fail; /* an errno (memory, memlock), not a refusal */
	if (ret) {
		a.err_node = cerr.node;
		a.err_code = cerr.code;
		memcpy(a.err_msg, cerr.msg, sizeof(a.err_msg));
		a.err_msg[KACC_MSG_LEN - 1] = 0;
		kacc_stat_add(ST_REFUSED, 1);
		ret = copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : -EINVAL;
		goto fail;
	}
	gr->home = raw_smp_processor_id();
	f->slots[slot] = gr;
	spin_lock_bh(&gr->lock);
	f->status[slot].issues++;
	/* release: pairs with the process's acquire of node (no offer in a new graph) */
	smp_store_release(&f->user[slot].node, -1);
	cad_issue(gr->g);
	kacc_publish(gr);
	spin_unlock_bh(&gr->lock);
	kacc_stat_add(ST_ISSUED, 1);
	if (!(a.flags & KACC_ISSUE_HOLD))
		kacc_event(gr);
	return put_user(slot, &uarg->slot);
fail:
	kacc_free(f, gr);
	return ret;
}

/* Process context, f->mutex held: the graph in slot, or NULL. */
static struct kacc_graph *kacc_slot(struct kacc_file *f, unsigned long slot)
{
	return slot < KACC_SLOTS ? f->slots[slot] : NULL;
}

/* Process context, f->mutex held: stop gr; CANCELLED at once (kacc_stop). */
static void kacc_cancel(struct kacc_graph *gr)
{
	spin_lock_bh(&gr->lock);
	kacc_stop(gr);
	kacc_publish(gr);
	spin_unlock_bh(&gr->lock);
}

/* Process context, f->mutex held: KACC_IOC_RELEASE; EBUSY while the graph runs. */
static int kacc_release_slot(struct kacc_file *f, unsigned long slot)
{
	struct kacc_graph *gr = kacc_slot(f, slot);

	if (!gr)
		return -ENOENT;
	if (cad_query(gr->g) < CAD_Q_DONE)
		return -EBUSY;
	kacc_unqueue(gr);
	f->slots[slot] = NULL;
	/* pairs with the process's acquire load: FREE comes after the graph's end */
	smp_store_release(&f->status[slot].run, KACC_Q_FREE);
	kacc_free(f, gr);
	return 0;
}

/* Process context, f->mutex held: KACC_IOC_USER_DONE, the process ran the op of the
 * user-op CALC its graph offered. Everything in the argument is the process's word: the
 * slot must hold a graph and the node be the one offered (gr->user, under the graph's
 * lock), or nothing happens.
 */
static int kacc_user_done(struct kacc_file *f, struct kacc_user_done __user *arg)
{
	struct kacc_user_done a;
	struct kacc_graph *gr;
	int err = 0;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	gr = kacc_slot(f, a.slot);
	if (!gr)
		return -ENOENT;
	spin_lock_bh(&gr->lock);
	if (gr->user < 0 || a.node != gr->user) {
		err = -EINVAL;
	} else {
		/* release: pairs with the process's acquire, the offer is withdrawn */
		smp_store_release(&f->user[a.slot].node, -1);
		gr->user = -1;
		cad_complete(gr->g, a.node);
		kacc_stat_add(ST_USER, 1);
		kacc_offer_user(gr); /* the next one deferred meanwhile */
		kacc_publish(gr);
	}
	spin_unlock_bh(&gr->lock);
	if (!err)
		kacc_event(gr); /* its successors are ready: run them */
	return err;
}

/* Process context, f->mutex held: KACC_IOC_PROGRESS, the poll policy's engine. budget:
 * slices per graph, 0 for all the work there is; run KACC_PROGRESS_HOLD at a time, so
 * that the graph's lock (bottom halves off) is never held for long. A fatal signal ends
 * the call early (-EINTR; the graphs go on in later calls).
 */
static int kacc_progress_all(struct kacc_file *f, unsigned long budget)
{
	unsigned int i;

	kacc_stat_add(ST_POLLED, 1);
	for (i = 0; i < KACC_SLOTS; i++) {
		unsigned long left = budget ? budget : ULONG_MAX;

		if (!f->slots[i])
			continue;
		for (;;) {
			unsigned int run = min_t(unsigned long, left, KACC_PROGRESS_HOLD);

			if (!kacc_step(f->slots[i], run, false))
				break;
			if (budget)
				left -= run;
			if (!left)
				break;
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
		}
	}
	return 0;
}

/* Process context, f->mutex held: KACC_IOC_O2G, the o2g file RECVs are posted on and
 * whose connections SENDs go out on; once per file. Its CPU is the workers' home.
 */
static int kacc_bind_o2g(struct kacc_file *f, unsigned long fd)
{
	struct file *o2g;

	if (f->o2g)
		return -EBUSY;
	if (fd > INT_MAX)
		return -EBADF;
	o2g = o2g_kget(fd);
	if (IS_ERR(o2g))
		return PTR_ERR(o2g);
	f->o2g = o2g;
	f->home = raw_smp_processor_id();
	return 0;
}

static long kacc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kacc_file *f = file->private_data;
	struct kacc_graph *gr;
	int err = 0;

	if (cmd == KACC_IOC_STATS) {
		struct kacc_stats s;
		u64 *v = (u64 *)&s;
		int i;

		/* The counters are every user's graphs: the administrator's to read. */
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;

		BUILD_BUG_ON(sizeof(s) != ST_N * sizeof(u64));
		for (i = 0; i < ST_N; i++)
			v[i] = atomic64_read(&kacc_stats[i]);
		return copy_to_user((void __user *)arg, &s, sizeof(s)) ? -EFAULT : 0;
	}
	if (current->mm != f->mm)
		return -EPERM;
	mutex_lock(&f->mutex);
	switch (cmd) {
	case KACC_IOC_ISSUE:
		err = kacc_issue(f, (struct kacc_issue __user *)arg);
		break;
	case KACC_IOC_CANCEL:
		gr = kacc_slot(f, arg);
		if (gr)
			kacc_cancel(gr);
		else
			err = -ENOENT;
		break;
	case KACC_IOC_RELEASE:
		err = kacc_release_slot(f, arg);
		break;
	case KACC_IOC_PROGRESS:
		err = kacc_progress_all(f, arg);
		break;
	case KACC_IOC_O2G:
		err = kacc_bind_o2g(f, arg);
		break;
	case KACC_IOC_CONN:
		err = kacc_net_conn(f, (struct kacc_conn_arg __user *)arg);
		break;
	case KACC_IOC_USER_DONE:
		err = kacc_user_done(f, (struct kacc_user_done __user *)arg);
		break;
	case KACC_IOC_KICK:
		gr = kacc_slot(f, arg);
		if (gr)
			kacc_event(gr);
		else
			err = -ENOENT;
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&f->mutex);
	return err;
}

/* Any task: EPOLLIN while a finished graph of the file is not released or a user-op
 * CALC is offered (an edge-triggered watcher sees each offer: each wakes the queue).
 */
static __poll_t kacc_poll(struct file *file, poll_table *wait)
{
	struct kacc_file *f = file->private_data;
	unsigned int i;

	poll_wait(file, &f->wq, wait);
	for (i = 0; i < KACC_SLOTS; i++) {
		/* acquire: pairs with kacc_publish's and kacc_offer_user's releases, as
		 * the process's tests do
		 */
		if (smp_load_acquire(&f->status[i].run) >= KACC_Q_DONE)
			return EPOLLIN | EPOLLRDNORM;
		/* acquire: as above, for kacc_offer_user's release */
		if (smp_load_acquire(&f->user[i].node) >= 0)
			return EPOLLIN | EPOLLRDNORM;
	}
	return 0;
}

static int kacc_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kacc_file *f = file->private_data;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start > KACC_MAP_BYTES ||
	    vma->vm_flags & VM_WRITE)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYWRITE;
	return remap_vmalloc_range(vma, f->status, 0);
}

static int kacc_open(struct inode *inode, struct file *file)
{
	struct kacc_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	unsigned int i;

	BUILD_BUG_ON(KACC_SLOTS * sizeof(struct kacc_status) != KACC_STATUS_BYTES);
	BUILD_BUG_ON(KACC_USER_OFF + KACC_SLOTS * sizeof(struct kacc_user) > KACC_MAP_BYTES);
	BUILD_BUG_ON(KACC_STATUS_BYTES != PAGE_SIZE);
	BUILD_BUG_ON(KACC_MSG_LEN != CAD_MSG_LEN);
	if (!f)
		return -ENOMEM;
	f->status = vmalloc_user(KACC_MAP_BYTES);
	if (!f->status) {
		kfree(f);
		return -ENOMEM;
	}
	f->user = (struct kacc_user *)((u8 *)f->status + KACC_USER_OFF);
	for (i = 0; i < KACC_SLOTS; i++)
		f->user[i].node = -1;
	mutex_init(&f->mutex);
	init_waitqueue_head(&f->wq);
	/* pinned pages are charged to the opener; release may run after its exit_mm() */
	f->mm = current->mm;
	mmgrab(f->mm);
	file->private_data = f;
	return 0;
}

/* Process context, f->mutex held, gr cancelled: true once its SENDs and RECVs have
 * completed (o2g's hook, the workers) and it is CANCELLED or DONE. Progress=poll makes
 * no event of their completions: they are drained here.
 */
static bool kacc_settled(struct kacc_graph *gr)
{
	spin_lock_bh(&gr->lock);
	kacc_xfer_drain(gr);
	kacc_publish(gr);
	spin_unlock_bh(&gr->lock);
	return cad_query(gr->g) >= CAD_Q_DONE;
}

/* Process context, f->mutex held, every graph cancelled: wait until they are settled.
 * What is left after KACC_SETTLE_MS waits for a peer (a SEND it does not read, a RECV
 * bound to a message it stopped sending): those are aborted (kacc_net_abort), after
 * which o2g and the workers end them at once. The pinned pages stay until then: o2g's
 * softirq may write a bound RECV's pages until its hook ran.
 */
static void kacc_settle(struct kacc_file *f)
{
	unsigned long start = jiffies;
	bool aborted = false, warned = false;
	unsigned int i;

	for (i = 0; i < KACC_SLOTS; i++) {
		while (f->slots[i] && !kacc_settled(f->slots[i])) {
			unsigned long waited = jiffies_to_msecs(jiffies - start);

			if (!aborted && waited >= KACC_SETTLE_MS) {
				kacc_net_abort(f);
				aborted = true;
			}
			if (!warned && waited >= KACC_SETTLE_WARN_MS) {
				pr_warn_ratelimited("kacc: transfers not ended %u ms after close\n",
						    KACC_SETTLE_WARN_MS);
				warned = true;
			}
			usleep_range(KACC_SETTLE_MIN_US, KACC_SETTLE_MAX_US);
		}
	}
}

/* Process context (last close, e.g. the process was killed): cancel every graph, wait
 * for the tasklets, o2g and the workers to let go of it (bounded: kacc_settle), unpin.
 */
static int kacc_release(struct inode *inode, struct file *file)
{
	struct kacc_file *f = file->private_data;
	unsigned int i;

	mutex_lock(&f->mutex);
	for (i = 0; i < KACC_SLOTS; i++)
		if (f->slots[i])
			kacc_cancel(f->slots[i]);
	kacc_settle(f);
	for (i = 0; i < KACC_SLOTS; i++)
		if (f->slots[i])
			kacc_release_slot(f, i);
	kacc_net_release(f);
	mutex_unlock(&f->mutex);
	mmdrop(f->mm);
	vfree(f->status);
	kfree(f);
	return 0;
}

static const struct file_operations kacc_fops = {
	.owner = THIS_MODULE,
	.open = kacc_open,
	.release = kacc_release,
	.unlocked_ioctl = kacc_ioctl,
	.poll = kacc_poll,
	.mmap = kacc_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice kacc_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kacc",
	.fops = &kacc_fops,
	.mode = 0660, /* root and the ukmpi group: host-kmod/60-ukmpi.rules */
};

static int __init kacc_init(void)
{
	int err = kacc_net_init();

	if (err)
		return err;
	kacc_run_init();
	err = misc_register(&kacc_dev);
	if (err) {
		kacc_run_exit();
		kacc_net_exit();
	}
	return err;
}

static void __exit kacc_exit(void)
{
	misc_deregister(&kacc_dev);
	kacc_run_exit();
	kacc_net_exit();
}

module_init(kacc_init);
module_exit(kacc_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KACC: CAD graphs (non-blocking collectives) run by the kernel");
