// SPDX-License-Identifier: GPL-2.0
/*
 * o2g_kern.c: o2g's interface to other modules (o2g_kern.h): kacc posts the RECV nodes of
 * its graphs here as receives of the process's o2g file and learns their completion from
 * the hook, and finds the sockets its SEND nodes go out on.
 *
 * A kernel receive (o2g_req.kern) lives on f->reqs like the process's and is matched by
 * the same engine, so MPI's order holds over both. Differences: its pages belong to the
 * poster (o2g neither pins nor unpins them); its completion is the hook instead of a ring
 * entry (the entry promised at post is given back then, o2g_kern_done); the process's
 * O2G_IOC_CANCEL does not see it. The poster holds a reference to the o2g file from
 * o2g_kget on, so the file outlives its receives; it must have them all completed or
 * cancelled before it drops that reference.
 */
#include <linux/module.h>
#include <linux/file.h>
#include <linux/net.h>
#include <linux/slab.h>

#include "o2g.h"
#include "o2g_kern.h"

static o2g_cad_hook_t o2g_cad_hook;

/* Module init/exit of the hook's owner: set (or clear, NULL) the completion hook. */
void o2g_set_cad_hook(o2g_cad_hook_t hook)
{
	WRITE_ONCE(o2g_cad_hook, hook);
}
EXPORT_SYMBOL_GPL(o2g_set_cad_hook);

/* Process context: the o2g file open as fd in this process, set up, serving this
 * process, with a reference the caller drops with fput(); or an ERR_PTR.
 */
struct file *o2g_kget(int fd)
{
	struct file *file = fget(fd);
	struct o2g_file *f;

	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op != &o2g_fops) {
		fput(file);
		return ERR_PTR(-EINVAL);
	}
	f = file->private_data;
	/* Acquire: the state o2g_setup published with ready is whole. */
	if (!smp_load_acquire(&f->ready) || f->mm != current->mm) {
		fput(file);
		return ERR_PTR(-EINVAL);
	}
	return file;
}
EXPORT_SYMBOL_GPL(o2g_kget);

/* Any context: the eager limit the file was set up with. */
u64 o2g_kmax_eager(struct file *file)
{
	struct o2g_file *f = file->private_data;

	return f->max_eager;
}
EXPORT_SYMBOL_GPL(o2g_kmax_eager);

/* Any context, under f->lock: a kernel receive is done; called instead of its ring
 * entry by o2g_req_complete. The entry promised for it is given back; r is freed.
 */
void o2g_kern_done(struct o2g_file *f, struct o2g_req *r, int status, u64 len)
{
	o2g_cad_hook_t hook = READ_ONCE(o2g_cad_hook);

	o2g_req_unlist(f, r);
	f->promised--;
	if (hook)
		hook(r->cookie, status, len);
	kfree(r);
}

/* Any context, under f->lock: the file had connections to peer and every one failed, so
 * no message from it can come any more (none yet: it may still be attached).
 */
static bool o2g_peer_lost(struct o2g_file *f, s32 peer)
{
	bool had = false;
	int i;

	for (i = 0; i < O2G_MAX_CONNS; i++) {
		struct o2g_conn *c = f->conns[i];

		if (c && c->peer == peer) {
			if (!c->dead)
				return false;
			had = true;
		}
	}
	return had;
}

/* Any context, under f->lock, the ring having room: o2g_kpost's work. 1: r is the
 * file's now (queued or deferred); otherwise o2g_kpost's status, r still the caller's.
 */
static int o2g_kpost_locked(struct o2g_file *f, struct o2g_req *r, struct o2g_kpost *p)
{
	struct o2g_msg *m;
	int res = o2g_post_locked(f, r, &m);

	if (res == O2G_POST_QUEUED && o2g_peer_lost(f, p->src)) {
		/* Hazard: o2g_conn_fail fails the receives queued when the connection
		 * fails; one queued after it would wait forever (a graph's RECV that
		 * became ready later, and its process's release waiting for it).
		 */
		match_cancel(f->eng, &r->me);
		o2g_req_unlist(f, r);
		f->promised--;
		o2g_stat_add(ST_POSTED, -1);
		return -ECONNRESET;
	}
	if (res != O2G_POST_UNEXP)
		return 1; /* queued or deferred: the hook reports it */
	if (m->rts)
		return -EPROTO; /* no rendezvous for the kernel: the graph fails */
	o2g_copy_pages(p->pages, p->first_off, f->dump_pages, o2g_msg_pos(f, m),
		       min(m->len, p->len));
	p->got = m->len;
	o2g_stat_add(ST_MATCHED_POST, 1);
	/* Nobody else frees it (O2G_ATTACH_KFREE): without this a connection only kernel
	 * receives read from fills the dump area for good.
	 */
	if (m->conn < O2G_MAX_CONNS && f->conns[m->conn] && f->conns[m->conn]->kfree) {
		o2g_dump_free(f, m);
		o2g_kick_later(f);
	}
	return m->len > p->len ? -EMSGSIZE : 0;
}

/* Process context or softirq (gfp says which): post a kernel receive. 1: queued, the
 * hook reports it (also when it was bound to a message still arriving); otherwise it is
 * done now with that status (0: an unexpected message was copied into the buffer, p->got
 * its bytes; the record stays the process's, announced by its UNEXP entry, until it
 * frees it, unless its connection is O2G_ATTACH_KFREE: then it is freed here) or
 * refused (-ENOSPC: ring full, -EEXIST, -ENOMEM, -EPROTO: an RTS, -ECONNRESET: every
 * connection to its peer failed, and nothing that came before matched).
 */
int o2g_kpost(struct file *file, struct o2g_kpost *p, gfp_t gfp)
{
	struct o2g_file *f = file->private_data;
	struct o2g_req *r;
	int ret;

	r = kzalloc(sizeof(*r), gfp);
	if (!r)
		return -ENOMEM;
	INIT_LIST_HEAD(&r->node);
	INIT_HLIST_NODE(&r->by_cookie);
	r->kern = true;
	r->cookie = p->cookie;
	r->len = p->len;
	r->pages = p->pages;
	r->first_off = p->first_off;
	r->me.key.comm = p->ctx;
	r->me.key.src = p->src;
	r->me.key.tag = p->tag;
	spin_lock_bh(&f->lock);
	if (o2g_req_find(f, p->cookie, true))
		ret = -EEXIST;
	else if (!o2g_ring_free(f))
		ret = -ENOSPC;
	else
		ret = o2g_kpost_locked(f, r, p);
	spin_unlock_bh(&f->lock);
	if (ret != 1)
		kfree(r);
	return ret;
}
EXPORT_SYMBOL_GPL(o2g_kpost);

/* Any context, under f->lock: take kernel receive r out of matching and free it if it is
 * still queued (no hook follows); false if it is filled or bound to an arriving message.
 */
static bool o2g_kdrop(struct o2g_file *f, struct o2g_req *r)
{
	if (r->state != REQ_QUEUED || !match_cancel(f->eng, &r->me))
		return false;
	o2g_req_unlist(f, r);
	f->promised--;
	o2g_stat_add(ST_POSTED, -1);
	kfree(r);
	return true;
}

/* Any context: cancel a queued kernel receive. 0: cancelled, no hook follows; -EBUSY:
 * being filled or bound to an arriving message, the hook follows; -ENOENT: done.
 */
int o2g_kcancel(struct file *file, u64 cookie)
{
	struct o2g_file *f = file->private_data;
	struct o2g_req *r;
	int err = 0;

	spin_lock_bh(&f->lock);
	r = o2g_req_find(f, cookie, true);
	if (!r)
		err = -ENOENT;
	else if (!o2g_kdrop(f, r))
		err = -EBUSY;
	spin_unlock_bh(&f->lock);
	return err;
}
EXPORT_SYMBOL_GPL(o2g_kcancel);

/* Any context, under f->lock: the live connection reading the message kernel receive r
 * is bound to (filling r itself, or a dump record r claimed), or NULL.
 */
static struct o2g_conn *o2g_kbound_conn(struct o2g_file *f, struct o2g_req *r)
{
	int i;

	for (i = 0; i < O2G_MAX_CONNS; i++) {
		struct o2g_conn *c = f->conns[i];

		if (c && !c->dead && c->placed && (c->req == r || (c->msg && c->msg->claim == r)))
			return c;
	}
	return NULL;
}

/* Any context, no lock the hook takes held: end a kernel receive now, whatever its state.
 * Queued: cancelled, no hook follows (0). Bound to a message still arriving: the
 * connection carrying it fails (-ECONNABORTED: a message abandoned halfway leaves the
 * stream without framing), which completes the receive through the hook before this
 * returns (1). -ENOENT: done already. For a poster that cannot wait for a peer (the
 * release of a file whose peer stopped sending halfway).
 */
int o2g_kabort(struct file *file, u64 cookie)
{
	struct o2g_file *f = file->private_data;
	struct o2g_conn *c;
	struct o2g_req *r;
	int err = 0;

	spin_lock_bh(&f->lock);
	r = o2g_req_find(f, cookie, true);
	if (!r) {
		err = -ENOENT;
	} else if (!o2g_kdrop(f, r)) {
		c = o2g_kbound_conn(f, r);
		if (c)
			o2g_conn_fail(c, -ECONNABORTED);
		err = c ? 1 : -EBUSY; /* no state leaves a kernel receive here: a WARN below */
	}
	spin_unlock_bh(&f->lock);
	WARN_ON_ONCE(err == -EBUSY);
	return err;
}
EXPORT_SYMBOL_GPL(o2g_kabort);

/* Process context: the socket of the file's live connection to peer, with a reference
 * (its file's: drop it with sockfd_put), or NULL.
 */
struct socket *o2g_kpeer(struct file *file, s32 peer)
{
	struct o2g_file *f = file->private_data;
	struct socket *sock = NULL;
	int i;

	mutex_lock(&f->mutex);
	for (i = 0; i < O2G_MAX_CONNS && !sock; i++) {
		struct o2g_conn *c = f->conns[i];

		if (c && c->peer == peer && !READ_ONCE(c->dead)) {
			sock = c->sock;
			get_file(sock->file);
		}
	}
	mutex_unlock(&f->mutex);
	return sock;
}
EXPORT_SYMBOL_GPL(o2g_kpeer);
