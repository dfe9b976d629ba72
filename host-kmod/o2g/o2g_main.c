// SPDX-License-Identifier: GPL-2.0
/*
 * o2g: MPI message matching inside TCP's receive path (seed 004).
 * The interface is documented in o2g_uapi.h; this comment says who owns what, when.
 *
 * Ownership of buffers and pages:
 *   - Dump area (process memory): pinned once by O2G_IOC_SETUP (FOLL_LONGTERM), unpinned
 *     (and marked dirty) at release. A record (run of chunks) is the module's from its
 *     allocation in softirq until its completion entry is published in the ring; then the
 *     process's until O2G_IOC_FREE; a record claimed by a DEFERRED receive is never the
 *     process's: the module frees it itself after copying it out.
 *   - Receive buffer of a POST: pinned by the ioctl before the receive is visible to
 *     softirq; written only by the softirq that owns the receive (removed from the match
 *     engine under f->lock); once its completion is published the module no longer
 *     touches its contents, and the pages are unpinned (dirty) by the next ioctl of the
 *     file or by release (process context: unpinning dirty may sleep).
 *   - Ring: vmalloc_user memory mapped by the process; the module writes entries and head,
 *     the process writes tail (memory order argued in o2g_uapi.h). Freed at release, which
 *     runs only once no mapping is left.
 *   - struct o2g_req, o2g_msg, o2g_conn and the match engine: the module's, under f->lock
 *     (a BH spinlock: softirq and ioctl both take it). Structure changes (setup, attach,
 *     detach, release) also hold f->mutex.
 *   - Sockets: the file holds a reference (sockfd_lookup) from ATTACH to DETACH/release;
 *     our callbacks are installed and removed under sk_callback_lock, and every use of
 *     the connection from a callback happens under its read side.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include <linux/bitmap.h>
#include <linux/hash.h>
#include <linux/poll.h>
#include <linux/net.h>
#include <net/tcp.h>

#include "o2g.h"
#include "o2g_pin.h"

#define O2G_MAX_CHUNKS 65536	   /* dump area of 64 MiB at most */
#define O2G_MAX_RECV (256UL << 20) /* bytes of one receive buffer */
#define O2G_RING_SPARE 1024	   /* ring entries beyond one per chunk and connection */
#define O2G_COOKIE_LOAD_SHIFT 2	   /* at most 4 live receives per cookie bucket on average */

/* Every allocation a process causes is charged to its memory cgroup (GFP_KERNEL_ACCOUNT);
 * the ring (vmalloc_user, which takes no flags) is bounded by the dump area's limit.
 */

atomic64_t o2g_stats[ST_N];

/* Process context: charge (inc) or give back npages pinned pages against the process's
 * RLIMIT_MEMLOCK, as vfio does: /dev/o2g is open to every member of the ukmpi group, none
 * of them trusted, and a pinned page cannot be reclaimed, so pinning is locking memory.
 */
static int o2g_charge(struct o2g_file *f, unsigned long npages, bool inc)
{
	return npages ? account_locked_vm(f->mm, npages, inc) : 0;
}

/* Process context: unpin a receive's pages (dirty: the module wrote them) and free it.
 * A kernel receive's pages are its poster's: only the request is freed.
 */
static void o2g_req_free(struct o2g_file *f, struct o2g_req *r)
{
	if (r->kern) {
		kfree(r);
		return;
	}
	if (r->npages) {
		unpin_user_pages_dirty_lock(r->pages, r->npages, true);
		o2g_charge(f, r->npages, false);
		o2g_stat_add(ST_PINNED, -(long)r->npages);
	}
	kvfree(r->pages);
	kfree(r);
}

/* Process context, f->mutex held: unpin finished receives, restart stalled reads.
 * Every ioctl starts with it.
 */
static void o2g_kick(struct o2g_file *f)
{
	struct o2g_req *r, *tmp;
	LIST_HEAD(done);
	int i;

	spin_lock_bh(&f->lock);
	list_splice_init(&f->reap, &done);
	spin_unlock_bh(&f->lock);
	list_for_each_entry_safe(r, tmp, &done, node)
		o2g_req_free(f, r);
	for (i = 0; i < O2G_MAX_CONNS; i++) {
		struct o2g_conn *c = f->conns[i];

		if (c && READ_ONCE(c->stalled) && !READ_ONCE(c->dead))
			o2g_resume(c);
	}
}

/* Workqueue: o2g_kick for a file whose dump area got room outside an ioctl. */
static void o2g_kick_work(struct work_struct *w)
{
	struct o2g_file *f = container_of(w, struct o2g_file, kick);

	mutex_lock(&f->mutex);
	o2g_kick(f);
	mutex_unlock(&f->mutex);
}

/* Any context, under f->lock: a kernel receive freed a record; stalled reads resume
 * from a worker (o2g_resume sleeps on the socket's lock).
 */
void o2g_kick_later(struct o2g_file *f)
{
	int i;

	for (i = 0; i < O2G_MAX_CONNS; i++) {
		if (f->conns[i] && READ_ONCE(f->conns[i]->stalled)) {
			schedule_work(&f->kick);
			return;
		}
	}
}

/* Process context, f->mutex held: give the socket its callbacks back and drop it. */
static void o2g_detach(struct o2g_file *f, struct o2g_conn *c)
{
	o2g_sock_release(c->sock->sk);
	spin_lock_bh(&f->lock);
	/* A detach ends the connection as a failure would (its promise is spent on the
	 * O2G_CQE_CONN entry): a message half read cannot be finished by anyone.
	 */
	o2g_conn_fail(c, -ECONNABORTED);
	f->conns[c->id] = NULL;
	spin_unlock_bh(&f->lock);
	o2g_stat_add(ST_ATTACHED, -1);
	sockfd_put(c->sock);
	kfree(c);
}

static int o2g_setup(struct o2g_file *f, struct o2g_setup __user *arg)
{
	struct o2g_setup s;
	unsigned long addr;
	size_t bytes;
	int n, err;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	if (f->ready)
		return -EBUSY;
	if (!s.dump_len || s.dump_len % O2G_DUMP_CHUNK || s.dump_len % PAGE_SIZE ||
	    s.dump_addr % PAGE_SIZE || s.dump_len / O2G_DUMP_CHUNK > O2G_MAX_CHUNKS ||
	    s.max_eager < O2G_MIN_EAGER || s.max_eager > O2G_MAX_EAGER)
		return -EINVAL;
	addr = s.dump_addr;
	f->nchunks = s.dump_len / O2G_DUMP_CHUNK;
	f->dump_len = s.dump_len;
	f->dump_npages = s.dump_len / PAGE_SIZE;
	f->max_eager = s.max_eager;
	f->entries = roundup_pow_of_two(f->nchunks + O2G_MAX_CONNS + O2G_RING_SPARE);
	f->ring_bytes = PAGE_ALIGN(O2G_RING_CQE_OFF + f->entries * sizeof(struct o2g_cqe));
	f->cookie_bits = ilog2(f->entries) - O2G_COOKIE_LOAD_SHIFT;
	err = -ENOMEM;
	f->eng = kvzalloc(sizeof(*f->eng), GFP_KERNEL_ACCOUNT);
	f->dump_pages = kvcalloc(f->dump_npages, sizeof(struct page *), GFP_KERNEL_ACCOUNT);
	f->chunk_map = bitmap_zalloc(f->nchunks, GFP_KERNEL_ACCOUNT);
	f->msgs = kvcalloc(f->nchunks, sizeof(struct o2g_msg), GFP_KERNEL_ACCOUNT);
	f->cookies = kvcalloc(1U << f->cookie_bits, sizeof(*f->cookies), GFP_KERNEL_ACCOUNT);
	f->ring = vmalloc_user(f->ring_bytes);
	if (!f->eng || !f->dump_pages || !f->chunk_map || !f->msgs || !f->cookies || !f->ring)
		goto fail;
	match_init(f->eng);
	f->cqe = (struct o2g_cqe *)((u8 *)f->ring + O2G_RING_CQE_OFF);
	/* FOLL_LONGTERM: held until close, so the pages are migrated out of CMA/movable
	 * zones first; FOLL_WRITE: softirq writes them through the kernel mapping, which
	 * must be the page the process sees (copy-on-write broken now, not later).
	 */
	err = o2g_charge(f, f->dump_npages, true);
	if (err)
		goto fail;
	n = o2g_pin_user(addr, f->dump_npages, FOLL_WRITE | FOLL_LONGTERM, f->dump_pages);
	if (n != f->dump_npages) {
		if (n > 0)
			unpin_user_pages(f->dump_pages, n);
		o2g_charge(f, f->dump_npages, false);
		err = n < 0 ? n : -EFAULT;
		goto fail;
	}
	o2g_stat_add(ST_PINNED, n);
	s.entries = f->entries;
	s.ring_bytes = f->ring_bytes;
	bytes = offsetof(struct o2g_setup, entries);
	if (copy_to_user((u8 __user *)arg + bytes, (u8 *)&s + bytes, sizeof(s) - bytes)) {
		unpin_user_pages(f->dump_pages, n);
		o2g_charge(f, n, false);
		o2g_stat_add(ST_PINNED, -n);
		err = -EFAULT;
		goto fail;
	}
	/* Publishes the file's state: pairs with the acquire of o2g_poll, o2g_mmap, o2g_kget. */
	smp_store_release(&f->ready, true);
	return 0;
fail:
	kvfree(f->eng);
	kvfree(f->dump_pages);
	bitmap_free(f->chunk_map);
	kvfree(f->msgs);
	kvfree(f->cookies);
	vfree(f->ring);
	f->eng = NULL;
	f->dump_pages = NULL;
	f->chunk_map = NULL;
	f->msgs = NULL;
	f->cookies = NULL;
	f->ring = NULL;
	return err;
}

static int o2g_attach(struct o2g_file *f, struct o2g_attach __user *arg)
{
	struct o2g_attach a;
	struct o2g_conn *c;
	struct socket *sock;
	struct sock *sk;
	int err, id;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~O2G_ATTACH_KFREE)
		return -EINVAL;
	for (id = 0; id < O2G_MAX_CONNS && f->conns[id]; id++)
		;
	if (id == O2G_MAX_CONNS)
		return -EMFILE;
	sock = sockfd_lookup(a.fd, &err);
	if (!sock)
		return err;
	sk = sock->sk;
	err = -ENOMEM;
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		goto put;
	c->f = f;
	c->sock = sock;
	c->id = id;
	c->peer = a.peer;
	c->kfree = a.flags & O2G_ATTACH_KFREE;
	a.conn = id;
	err = -EFAULT;
	if (put_user(a.conn, &arg->conn))
		goto free;
	spin_lock_bh(&f->lock);
	err = o2g_ring_free(f) ? 0 : -ENOSPC;
	if (!err)
		f->promised++; /* the CONN entry this connection may end with */
	spin_unlock_bh(&f->lock);
	if (err)
		goto free;
	c->stalled = true; /* bytes may already wait: o2g_kick reads them */
	spin_lock_bh(&f->lock);
	f->conns[id] = c;
	spin_unlock_bh(&f->lock);
	err = o2g_sock_take(sk, c);
	if (err) {
		spin_lock_bh(&f->lock);
		f->conns[id] = NULL;
		f->promised--;
		spin_unlock_bh(&f->lock);
		goto free;
	}
	o2g_stat_add(ST_ATTACHED, 1);
	/* The peer may have closed before the callbacks were ours. */
	if ((sk->sk_shutdown & RCV_SHUTDOWN) || sk->sk_state == TCP_CLOSE) {
		spin_lock_bh(&f->lock);
		c->closed = true;
		spin_unlock_bh(&f->lock);
	}
	return 0;
free:
	kfree(c);
put:
	sockfd_put(sock);
	return err;
}

/* Any context, under f->lock: the live receive of that cookie, the process's (kern
 * false) or another module's (o2g_kern.c), or NULL. A hash, not a walk of f->reqs: a
 * process may have a receive for every ring entry, and kacc looks receives up in softirq.
 */
struct o2g_req *o2g_req_find(struct o2g_file *f, u64 cookie, bool kern)
{
	struct o2g_req *r;

	hlist_for_each_entry(r, &f->cookies[hash_64(cookie, f->cookie_bits)], by_cookie)
		if (r->cookie == cookie && r->kern == kern)
			return r;
	return NULL;
}

/* Any context, under f->lock: r leaves the live receives for good (freed next). */
void o2g_req_unlist(struct o2g_file *f, struct o2g_req *r)
{
	list_del_init(&r->node);
	hlist_del_init(&r->by_cookie);
}

/* Any context, under f->lock: r is done; its pages are unpinned by the next ioctl. */
void o2g_req_retire(struct o2g_file *f, struct o2g_req *r)
{
	hlist_del_init(&r->by_cookie);
	list_move_tail(&r->node, &f->reap);
}

/* f->lock held, room in the ring checked: post receive r into matching. Returns
 * O2G_POST_QUEUED or O2G_POST_DEFERRED (bound to a message still arriving), after which f
 * owns r; or O2G_POST_UNEXP with *mp the unexpected message r matched (taken out of
 * matching), r still the caller's. A process's or a kernel receive alike (o2g_kern.c).
 */
int o2g_post_locked(struct o2g_file *f, struct o2g_req *r, struct o2g_msg **mp)
{
	struct match_entry *me = match_post(f->eng, &r->me);
	struct o2g_msg *m = me ? container_of(me, struct o2g_msg, me) : NULL;

	*mp = m;
	if (m && m->state != MSG_FILLING)
		return O2G_POST_UNEXP;
	list_add_tail(&r->node, &f->reqs);
	hlist_add_head(&r->by_cookie, &f->cookies[hash_64(r->cookie, f->cookie_bits)]);
	if (!m) {
		r->state = REQ_QUEUED;
		f->promised++; /* its RECV entry, or the hook's call (o2g_kern_done) */
		o2g_stat_add(ST_POSTED, 1);
		return O2G_POST_QUEUED;
	}
	r->state = REQ_DEFERRED;
	m->claim = r; /* takes over the record's promise */
	o2g_stat_add(ST_DEFERRED, 1);
	return O2G_POST_DEFERRED;
}

static int o2g_post(struct o2g_file *f, struct o2g_post __user *arg)
{
	struct o2g_post p;
	struct o2g_msg *m;
	struct o2g_req *r;
	unsigned long start;
	int n, err = 0;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	if (p.len > O2G_MAX_RECV || (p.src < 0 && p.src != O2G_ANY_SOURCE) ||
	    (p.tag < 0 && p.tag != O2G_ANY_TAG) || p.buf + p.len < p.buf)
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	INIT_LIST_HEAD(&r->node);
	INIT_HLIST_NODE(&r->by_cookie);
	r->cookie = p.cookie;
	r->len = p.len;
	r->me.key.comm = p.ctx;
	r->me.key.src = p.src;
	r->me.key.tag = p.tag;
	if (p.len) {
		start = p.buf & PAGE_MASK;
		r->first_off = p.buf & ~PAGE_MASK;
		r->npages = DIV_ROUND_UP(r->first_off + p.len, PAGE_SIZE);
		r->pages = kvcalloc(r->npages, sizeof(struct page *), GFP_KERNEL_ACCOUNT);
		if (!r->pages) {
			kfree(r);
			return -ENOMEM;
		}
		/* Pinned before the receive is visible to softirq, which cannot fault pages
		 * in (the seed needed a "dumper thread" for that; pinning removes the case).
		 */
		err = o2g_charge(f, r->npages, true);
		n = err ? err
			: o2g_pin_user(start, r->npages, FOLL_WRITE | FOLL_LONGTERM, r->pages);
		if (n != r->npages) {
			if (n > 0)
				unpin_user_pages(r->pages, n);
			if (!err)
				o2g_charge(f, r->npages, false);
			kvfree(r->pages);
			kfree(r);
			return n < 0 ? n : -EFAULT;
		}
		o2g_stat_add(ST_PINNED, n);
	}
	spin_lock_bh(&f->lock);
	if (o2g_req_find(f, p.cookie, false)) {
		err = -EEXIST;
	} else if (!o2g_ring_free(f)) {
		err = -ENOSPC;
	} else {
		p.result = o2g_post_locked(f, r, &m);
		if (p.result != O2G_POST_UNEXP) {
			r = NULL;
		} else {
			p.result = m->rts ? O2G_POST_RTS : O2G_POST_UNEXP;
			p.off = o2g_msg_pos(f, m);
			p.msg_len = m->len;
			p.msg_src = m->me.key.src;
			p.msg_tag = m->me.key.tag;
			p.msg_conn = m->conn;
			o2g_stat_add(ST_MATCHED_POST, 1);
		}
	}
	spin_unlock_bh(&f->lock);
	if (r) /* not kept: answered from the dump area, or refused */
		o2g_req_free(f, r);
	if (err)
		return err;
	/* Hazard: the receive is live already; a fault here loses only the answer. */
	if (copy_to_user(&arg->result, &p.result, sizeof(p) - offsetof(struct o2g_post, result)))
		return -EFAULT;
	return 0;
}

static int o2g_cancel(struct o2g_file *f, u64 __user *arg)
{
	struct o2g_req *r;
	u64 cookie;
	int err;

	if (get_user(cookie, arg))
		return -EFAULT;
	spin_lock_bh(&f->lock);
	r = o2g_req_find(f, cookie, false);
	if (!r) {
		err = -ENOENT;
	} else if (r->state != REQ_QUEUED || !match_cancel(f->eng, &r->me)) {
		err = -EBUSY;
	} else {
		o2g_req_retire(f, r);
		r->state = REQ_DONE;
		f->promised--;
		o2g_stat_add(ST_POSTED, -1);
		err = 0;
	}
	spin_unlock_bh(&f->lock);
	return err;
}

static int o2g_free(struct o2g_file *f, u64 __user *arg)
{
	struct o2g_msg *m;
	u64 off;
	int err = -EINVAL;

	if (get_user(off, arg))
		return -EFAULT;
	if (off % O2G_DUMP_CHUNK || off / O2G_DUMP_CHUNK >= f->nchunks)
		return -EINVAL;
	spin_lock_bh(&f->lock);
	m = &f->msgs[off / O2G_DUMP_CHUNK];
	if (m->state == MSG_READY) {
		if (m->me.queued == 2) /* never matched: leaves the unexpected queue */
			match_take(f->eng, &m->me);
		o2g_dump_free(f, m);
		err = 0;
	}
	spin_unlock_bh(&f->lock);
	return err;
}

static bool o2g_ring_nonempty(struct o2g_file *f)
{
	return READ_ONCE(f->ring->tail) != READ_ONCE(f->head);
}

static int o2g_wait(struct o2g_file *f, u32 __user *arg)
{
	long t;
	u32 ms;

	if (get_user(ms, arg))
		return -EFAULT;
	t = wait_event_interruptible_timeout(f->wq, o2g_ring_nonempty(f),
					     ms ? msecs_to_jiffies(ms) : MAX_SCHEDULE_TIMEOUT);
	if (t < 0)
		return t;
	return t ? 0 : -ETIMEDOUT;
}

static int o2g_get_stats(struct o2g_stats __user *arg)
{
	struct o2g_stats s = {
		.pinned_pages = atomic64_read(&o2g_stats[ST_PINNED]),
		.posted = atomic64_read(&o2g_stats[ST_POSTED]),
		.matched_softirq = atomic64_read(&o2g_stats[ST_MATCHED_SOFTIRQ]),
		.unexpected = atomic64_read(&o2g_stats[ST_UNEXPECTED]),
		.matched_post = atomic64_read(&o2g_stats[ST_MATCHED_POST]),
		.deferred = atomic64_read(&o2g_stats[ST_DEFERRED]),
		.control = atomic64_read(&o2g_stats[ST_CONTROL]),
		.stalls = atomic64_read(&o2g_stats[ST_STALLS]),
		.conn_errors = atomic64_read(&o2g_stats[ST_CONN_ERRORS]),
		.attached = atomic64_read(&o2g_stats[ST_ATTACHED]),
		.dropped = atomic64_read(&o2g_stats[ST_DROPPED]),
	};

	return copy_to_user(arg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long o2g_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct o2g_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	u32 id;
	long err;

	/* The counters are every user's traffic: the administrator's to read. */
	if (cmd == O2G_IOC_STATS)
		return capable(CAP_SYS_ADMIN) ? o2g_get_stats(uarg) : -EPERM;
	/* Buffers are addresses in the opener's memory: a forked child opens its own. */
	if (current->mm != f->mm)
		return -EPERM;
	mutex_lock(&f->mutex);
	if (cmd == O2G_IOC_SETUP) {
		err = o2g_setup(f, uarg);
		goto out;
	}
	err = -EINVAL;
	if (!f->ready)
		goto out;
	o2g_kick(f);
	switch (cmd) {
	case O2G_IOC_ATTACH:
		err = o2g_attach(f, uarg);
		if (!err)
			o2g_kick(f);
		break;
	case O2G_IOC_DETACH:
		err = -EFAULT;
		if (get_user(id, (u32 __user *)uarg))
			break;
		err = -EINVAL;
		if (id < O2G_MAX_CONNS && f->conns[id]) {
			o2g_detach(f, f->conns[id]);
			err = 0;
		}
		break;
	case O2G_IOC_POST:
		err = o2g_post(f, uarg);
		break;
	case O2G_IOC_CANCEL:
		err = o2g_cancel(f, uarg);
		break;
	case O2G_IOC_FREE:
		err = o2g_free(f, uarg);
		if (!err)
			o2g_kick(f);
		break;
	case O2G_IOC_WAIT:
		/* Sleeps without the mutex: FREE from another thread must get through. */
		mutex_unlock(&f->mutex);
		return o2g_wait(f, uarg);
	default:
		err = -ENOTTY;
	}
out:
	mutex_unlock(&f->mutex);
	return err;
}

static __poll_t o2g_poll(struct file *file, poll_table *wait)
{
	struct o2g_file *f = file->private_data;

	if (!smp_load_acquire(&f->ready)) /* poll takes no mutex: see o2g_setup */
		return EPOLLERR;
	poll_wait(file, &f->wq, wait);
	return o2g_ring_nonempty(f) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* mmap, mmap_lock write-held: the ring. Hazard: no f->mutex here. An ioctl holds the
 * mutex while it pins and charges pages, which takes mmap_lock: the mutex here would be
 * the other order, a deadlock two threads of one process can make. f->ring and
 * f->ring_bytes never change once ready is published (o2g_setup), and release frees the
 * ring only once no mapping is left.
 */
static int o2g_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct o2g_file *f = file->private_data;

	/* Acquire: the ring o2g_setup published with ready is whole. */
	if (!smp_load_acquire(&f->ready) || vma->vm_pgoff ||
	    vma->vm_end - vma->vm_start > f->ring_bytes)
		return -EINVAL;
	return remap_vmalloc_range(vma, f->ring, 0);
}

static int o2g_open(struct inode *inode, struct file *file)
{
	struct o2g_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->lock);
	mutex_init(&f->mutex);
	init_waitqueue_head(&f->wq);
	INIT_LIST_HEAD(&f->reqs);
	INIT_LIST_HEAD(&f->reap);
	INIT_WORK(&f->kick, o2g_kick_work);
	/* The opener's memory is charged for every page pinned through this file; the mm
	 * is held until release, which may run after the process's exit_mm().
	 */
	f->mm = current->mm;
	mmgrab(f->mm);
	file->private_data = f;
	return 0;
}

/* Process context (last close, e.g. the process was killed): sockets first, so that no
 * softirq can reach the file any more, then every pinned page.
 */
static int o2g_release(struct inode *inode, struct file *file)
{
	struct o2g_file *f = file->private_data;
	struct o2g_req *r, *tmp;
	int i;

	/* No kernel receive is left to queue it again: kacc holds the file while it posts. */
	cancel_work_sync(&f->kick);
	mutex_lock(&f->mutex);
	for (i = 0; i < O2G_MAX_CONNS; i++)
		if (f->conns[i])
			o2g_detach(f, f->conns[i]);
	mutex_unlock(&f->mutex);
	list_splice_init(&f->reap, &f->reqs);
	list_for_each_entry_safe(r, tmp, &f->reqs, node) {
		/* Kernel receives are gone: their poster holds the file until they are. */
		WARN_ON_ONCE(r->kern);
		if (r->state == REQ_QUEUED)
			o2g_stat_add(ST_POSTED, -1);
		o2g_req_free(f, r);
	}
	if (f->ready) {
		unpin_user_pages_dirty_lock(f->dump_pages, f->dump_npages, true);
		o2g_charge(f, f->dump_npages, false);
		o2g_stat_add(ST_PINNED, -(long)f->dump_npages);
	}
	mmdrop(f->mm);
	kvfree(f->eng);
	kvfree(f->dump_pages);
	bitmap_free(f->chunk_map);
	kvfree(f->msgs);
	kvfree(f->cookies);
	vfree(f->ring);
	kfree(f);
	return 0;
}

const struct file_operations o2g_fops = {
	.owner = THIS_MODULE,
	.open = o2g_open,
	.release = o2g_release,
	.unlocked_ioctl = o2g_ioctl,
	.poll = o2g_poll,
	.mmap = o2g_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice o2g_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "o2g",
	.fops = &o2g_fops,
	.mode = 0660, /* root and the ukmpi group: host-kmod/60-ukmpi.rules */
};

static int __init o2g_init(void)
{
	int err = o2g_sock_init();

	return err ? err : misc_register(&o2g_dev);
}

static void __exit o2g_exit(void)
{
	misc_deregister(&o2g_dev);
}

module_init(o2g_init);
module_exit(o2g_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("O2G: MPI message matching in the TCP receive path");
