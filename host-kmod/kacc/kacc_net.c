// SPDX-License-Identifier: GPL-2.0
/*
 * kacc_net.c: the SEND and RECV nodes of kacc's graphs, over the opener's o2g file
 * (host-kmod/o2g, o2g_kern.h).
 *
 *   RECV  posted to o2g when the node becomes ready (kacc_step, under the graph's lock)
 *         as a kernel receive of the process's o2g file, its pinned pages as the buffer:
 *         o2g matches it with MPI's rules against the same queues as the process's own
 *         receives and copies the payload in its data_ready softirq, then calls
 *         kacc_recv_done (the hook kacc registers at load, so o2g does not depend on us).
 *   SEND  TCP transmit may sleep, so not in softirq: the node goes on the queue of the
 *         connection to its peer (the socket of the opener's o2g connection), written by
 *         that connection's work item on the file's home CPU with kernel_sendmsg and
 *         MSG_DONTWAIT: the native 48-byte header (mpi/core/mpe_wire.c, EAGER) and the
 *         payload, so the peer's o2g (or any native peer) matches it as an ordinary
 *         message. On EAGAIN the worker stops; the socket's sk_write_space (ours, chained
 *         to the one it replaced) queues it again. A SEND completes once its last byte is
 *         in the socket, as a buffered send.
 *   Pieces. A SEND or RECV longer than o2g's eager limit (gr->piece) is cut into eager
 *         messages of that many bytes (the last shorter), same envelope, so that kacc
 *         runs every size and no rank has to leave a graph to the library because of
 *         its message sizes (which its peers, in a v-collective, cannot know). The RECV
 *         posts all its pieces at once, in order: o2g matches posted receives in posting
 *         order and the sender writes a SEND's pieces back to back, so piece k takes
 *         message k even when another RECV of the graph has the same envelope. Both ends
 *         must cut alike: their o2g files have the same eager limit (mlx_kacc.c's job).
 *         Hazard: pieces that arrive before their RECV fill o2g's dump area; a full dump
 *         area stops reading the connection until a RECV takes a piece (on a connection
 *         attached with O2G_ATTACH_KFREE, o2g frees its record and resumes the reads).
 * Completions (hook, worker) do not take the graph's lock: o2g calls the hook under its
 * own lock, which kacc_step holds inside the graph's (o2g_kpost). They set the status, put
 * the xfer on the graph's done list and make an event (kacc_event: tasklet, IPI or
 * nothing for progress=poll); kacc_xfer_drain, under the graph's lock, completes the
 * nodes. gr->active counts the xfers whose completer may still touch the graph: the
 * release path waits for it to drop to 0 (kacc_unqueue).
 *
 * Hazards: kacc writes whole messages on the process's sockets; the process must not
 * write to a connection it has SENDs in flight on (its bytes would land inside ours).
 * The header's seq is 0: o2g does not check it, mpi/core's mpe_net.c (a unikernel peer)
 * would. There is no rendezvous: long messages go as eager pieces (above).
 */
#include <linux/module.h>
#include <linux/net.h>
#include <linux/in.h>
#include <linux/file.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include <net/tcp_states.h>
#include <net/inet_connection_sock.h>
#include <net/net_namespace.h>

#include "kacc.h"
#include "cad_internal.h"
#include "mpe_wire.h"
#include "o2g_kern.h"
#include "o2g_uapi.h"

static struct workqueue_struct *kacc_wq;
static LIST_HEAD(kacc_conns); /* every file's connections, RCU for sk_write_space */
static DEFINE_SPINLOCK(kacc_conns_lock);
/* TCP's own sk_write_space (sk_stream_write_space, not exported): taken from a kernel
 * socket at init, put back on sockets that inherited ours (kacc_write_space).
 */
static kacc_sk_cb kacc_default_write_space;
static unsigned long kacc_pinned; /* bit 0: the module holds a reference to itself */

/* Any context: run c's worker on its home CPU, or here if that one went offline. */
static void kacc_conn_kick(struct kacc_conn *c)
{
	int cpu = cpu_online(c->home) ? c->home : raw_smp_processor_id();

	queue_work_on(cpu, kacc_wq, &c->work);
}

/* Softirq (o2g's hook) or process context (the worker, a cancel): the xfer is done; the
 * last touch of its graph by whoever completed it.
 */
static void kacc_xfer_done(struct kacc_xfer *x, int status)
{
	struct kacc_graph *gr = x->gr;

	x->status = status;
	llist_add(&x->done, &gr->done);
	kacc_event(gr);
	/* release: the graph may be freed once this is seen at 0 (kacc_unqueue) */
	atomic_dec_return_release(&gr->active);
}

/* Softirq or process context: one piece of RECV x ended (status: 0 or a negative errno);
 * the last one completes x. The decrement is a piece's last touch of x.
 */
static void kacc_piece_done(struct kacc_xfer *x, int status)
{
	if (status)
		atomic_cmpxchg(&x->pstatus, 0, status);
	if (atomic_dec_and_test(&x->left))
		kacc_xfer_done(x, atomic_read(&x->pstatus));
}

/* o2g's hook: softirq (or an ioctl of the o2g file), o2g's file lock held. */
static void kacc_recv_done(u64 cookie, int status, u64 len)
{
	kacc_piece_done(((struct kacc_piece *)(uintptr_t)cookie)->x, status);
}

/* Any context: bytes of piece k of a message of bytes, cut into pieces of piece. */
static u64 kacc_piece_len(u64 bytes, u64 piece, u32 k)
{
	return min(piece, bytes - (u64)k * piece);
}

/* Process context (worker): the header of SEND x's piece of plen bytes, into x->hdr. */
static void kacc_send_hdr(struct kacc_xfer *x, u64 plen)
{
	const struct cad_node *n = &cad_nodes(x->gr->g)[x->node];
	struct mpe_wire w = {
		.type = MPE_W_EAGER,
		.ctx = n->u.x.ctx,
		.src = x->gr->g->own.rank,
		.tag = n->u.x.tag,
		.src_world = x->gr->g->own.rank,
		.dst_world = n->u.x.peer,
		.len = plen,
	};

	mpe_wire_encode(&w, x->hdr);
}

/* Process context (worker): write what is left of x, piece after piece (each a header
 * and its payload; x->sent counts both). 0: all of it is in the socket; -EAGAIN: the
 * socket is full (sk_write_space resumes); another negative errno: failed.
 */
static int kacc_send_some(struct kacc_conn *c, struct kacc_xfer *x)
{
	const struct cad_node *n = &cad_nodes(x->gr->g)[x->node];
	u64 piece = x->gr->piece, stride = MPE_WIRE_HDR + piece;
	u64 total = (u64)x->npieces * MPE_WIRE_HDR + n->u.x.bytes;

	while (x->sent < total) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
		u32 k = div64_u64(x->sent, stride);
		u64 at = x->sent - (u64)k * stride; /* bytes of piece k written */
		u64 plen = n->u.x.bytes ? kacc_piece_len(n->u.x.bytes, piece, k) : 0;
		struct kvec v[2];
		int nv = 0, r;

		if (!at) /* a piece begins: its header (kept while it is written) */
			kacc_send_hdr(x, plen);
		if (at < MPE_WIRE_HDR) {
			v[nv].iov_base = x->hdr + at;
			v[nv++].iov_len = MPE_WIRE_HDR - at;
		}
		if (plen) {
			u64 off = at > MPE_WIRE_HDR ? at - MPE_WIRE_HDR : 0;

			v[nv].iov_base = (u8 *)x->kaddr + (u64)k * piece + off;
			v[nv++].iov_len = plen - off;
		}
		r = kernel_sendmsg(c->sock, &msg, v, nv, MPE_WIRE_HDR + plen - at);
		if (r < 0)
			return r;
		x->sent += r;
	}
	return 0;
}

/* Workqueue, on the file's home CPU: write the connection's queue in order. */
static void kacc_send_work(struct work_struct *w)
{
	struct kacc_conn *c = container_of(w, struct kacc_conn, work);
	struct kacc_xfer *x;
	int err;

	for (;;) {
		spin_lock_bh(&c->lock);
		x = list_first_entry_or_null(&c->sendq, struct kacc_xfer, q);
		if (x)
			x->started = true; /* bytes may go out: no cancel from here on */
		spin_unlock_bh(&c->lock);
		if (!x)
			return;
		err = kacc_send_some(c, x);
		if (err == -EAGAIN)
			return;
		spin_lock_bh(&c->lock);
		list_del(&x->q);
		spin_unlock_bh(&c->lock);
		if (!err)
			kacc_stat_add(ST_SEND_NS, ktime_get_ns() - x->t_ready);
		kacc_xfer_done(x, err);
	}
}

/* sk_write_space: softirq or process context, socket locked (maybe sk_callback_lock
 * read-held by a caller up the stack: not taken here).
 */
static void kacc_write_space(struct sock *sk)
{
	kacc_sk_cb next = NULL;
	struct kacc_conn *c;

	rcu_read_lock();
	list_for_each_entry_rcu(c, &kacc_conns, all) {
		if (c->sock->sk == sk) {
			next = c->saved_write_space;
			kacc_stat_add(ST_WRITE_SPACE, 1);
			kacc_conn_kick(c);
			break;
		}
	}
	rcu_read_unlock();
	if (next) {
		if (next != kacc_write_space)
			next(sk);
		return;
	}
	/* Not a connection of ours: a child of a listener our socket became (a clone
	 * copies the callbacks), or a socket kacc let go of while another layer wrapped
	 * ours. A TCP socket's own callback is TCP's default: put it back if ours is the one
	 * installed (a wrapper stays), and call it, so that its writers wake.
	 */
	cmpxchg(&sk->sk_write_space, kacc_write_space, kacc_default_write_space);
	kacc_default_write_space(sk);
}

/* Process context, f->mutex held: sock (a reference, ours to keep or drop) becomes the
 * connection SENDs to peer go out on. 0, -ENOMEM, -EBUSY (another kacc file sends on
 * it), -ENOTCONN (not an established connection: a listener's children would inherit
 * our callback) or -EOPNOTSUPP (an upper-layer protocol, kTLS or the like, owns its
 * stream and callbacks). sk_user_data is not kacc's: the socket is an o2g connection
 * too (o2g's conn there), so kacc finds its connection by the socket (kacc_conns).
 */
static int kacc_conn_make(struct kacc_file *f, struct socket *sock, s32 peer)
{
	struct kacc_conn *c;
	struct sock *sk;
	int err = 0;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c) {
		sockfd_put(sock);
		return -ENOMEM;
	}
	c->f = f;
	c->sock = sock;
	c->peer = peer;
	c->home = f->home;
	spin_lock_init(&c->lock);
	INIT_LIST_HEAD(&c->sendq);
	INIT_WORK(&c->work, kacc_send_work);
	sk = sock->sk;
	/* the socket's lock: its state and upper-layer protocol change under it */
	lock_sock(sk);
	if (sk->sk_state != TCP_ESTABLISHED)
		err = -ENOTCONN;
	else if (inet_csk_has_ulp(sk))
		err = -EOPNOTSUPP;
	write_lock_bh(&sk->sk_callback_lock);
	if (!err && sk->sk_write_space == kacc_write_space) /* another kacc file sends here */
		err = -EBUSY;
	if (!err) {
		c->saved_write_space = sk->sk_write_space;
		c->backlog = READ_ONCE(sk->sk_max_ack_backlog);
		spin_lock(&kacc_conns_lock);
		list_add_rcu(&c->all, &kacc_conns);
		spin_unlock(&kacc_conns_lock);
		sk->sk_write_space = kacc_write_space;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
	if (err) {
		sockfd_put(sock);
		kfree(c);
		return err;
	}
	f->conns[peer] = c;
	return 0;
}

/* Process context, f->mutex held: the connection to peer, made at its first SEND from
 * the o2g file's connection to it (unless KACC_IOC_CONN gave one).
 */
static int kacc_conn_get(struct kacc_file *f, s32 peer)
{
	struct socket *sock;

	if (f->conns[peer])
		return 0;
	sock = o2g_kpeer(f->o2g, peer);
	if (!sock)
		return -ENOTCONN;
	return kacc_conn_make(f, sock, peer);
}

/* Process context, f->mutex held: KACC_IOC_CONN, SENDs to a.peer go out on socket a.fd
 * (a connected TCP socket of the process, which must be attached to its o2g file too, so
 * that the peer's answers are matched). Before the first SEND to that peer only.
 */
int kacc_net_conn(struct kacc_file *f, struct kacc_conn_arg __user *arg)
{
	struct kacc_conn_arg a;
	struct socket *sock;
	int err;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (!f->o2g)
		return -ENOTCONN;
	if (a.peer < 0 || a.peer >= KACC_PEERS)
		return -EINVAL;
	if (f->conns[a.peer])
		return -EEXIST;
	sock = sockfd_lookup(a.fd, &err);
	if (!sock)
		return err;
	if (sock->type != SOCK_STREAM || !sock->sk || sock->sk->sk_protocol != IPPROTO_TCP ||
	    (sock->sk->sk_family != AF_INET && sock->sk->sk_family != AF_INET6)) {
		sockfd_put(sock);
		return -EINVAL;
	}
	return kacc_conn_make(f, sock, a.peer);
}

/* Process context (issue), f->mutex held, after validation: the xfers of gr's SEND and
 * RECV nodes (their pieces counted), their connections made. 0, a negative KACC_E*
 * refusal with err filled, or a negative errno (-ENOMEM) with err untouched. Buffers are
 * pinned by the caller.
 */
int kacc_net_prepare(struct kacc_file *f, struct kacc_graph *gr, struct cad_error *err)
{
	struct cad_node *n = cad_nodes(gr->g);
	unsigned int i;
	int ret;

	gr->piece = o2g_kmax_eager(f->o2g);
	ret = kacc_kmem_charge(gr, array_size(gr->g->nnodes, sizeof(*gr->xfers)));
	if (ret)
		return ret;
	gr->xfers = kvcalloc(gr->g->nnodes, sizeof(*gr->xfers), GFP_KERNEL_ACCOUNT);
	if (!gr->xfers)
		return -ENOMEM;
	for (i = 0; i < gr->g->nnodes; i++) {
		struct kacc_xfer *x = &gr->xfers[i];

		x->gr = gr;
		x->node = i;
		INIT_LIST_HEAD(&x->q);
		if (n[i].type != CAD_SEND && n[i].type != CAD_RECV)
			continue;
		/* o2g bounds it at setup; checked again: every stride and count below
		 * depends on it
		 */
		if (gr->piece < O2G_MIN_EAGER || gr->piece > O2G_MAX_EAGER)
			return kacc_refuse(err, KACC_EEAGER, i, n[i].type,
					   "o2g's eager limit out of range");
		if (n[i].u.x.bytes > KACC_MAX_RANGE)
			return kacc_refuse(err, CAD_EBUF, i, n[i].type,
					   "buffer larger than 256 MiB");
		x->npieces = n[i].u.x.bytes ? DIV_ROUND_UP_ULL(n[i].u.x.bytes, gr->piece) : 1;
		if (x->npieces > KACC_MAX_PIECES)
			return kacc_refuse(err, CAD_EBUF, i, n[i].type,
					   "more eager pieces than kacc posts for a message");
		x->one.x = x;
		x->pieces = &x->one;
		if (n[i].type == CAD_RECV && x->npieces > 1) {
			unsigned int k;

			ret = kacc_kmem_charge(gr, array_size(x->npieces, sizeof(*x->pieces)));
			if (ret)
				return ret;
			x->pieces = kvcalloc(x->npieces, sizeof(*x->pieces), GFP_KERNEL_ACCOUNT);
			if (!x->pieces) {
				x->pieces = &x->one;
				return -ENOMEM;
			}
			for (k = 0; k < x->npieces; k++)
				x->pieces[k].x = x;
		}
		if (n[i].type != CAD_SEND)
			continue;
		if (n[i].u.x.peer >= KACC_PEERS)
			return kacc_refuse(err, KACC_ENOCONN, i, CAD_SEND,
					   "peer rank beyond kacc's connections");
		ret = kacc_conn_get(f, n[i].u.x.peer);
		if (ret == -ENOMEM)
			return ret;
		if (ret)
			return kacc_refuse(err, KACC_ENOCONN, i, CAD_SEND,
					   ret == -EBUSY ? "socket taken by another kacc file"
							 : "no o2g connection to the peer");
		x->conn = f->conns[n[i].u.x.peer];
	}
	return 0;
}

/* Process context (free): the piece arrays of gr's RECVs, then the xfers. */
void kacc_xfer_free(struct kacc_graph *gr)
{
	unsigned int i;

	for (i = 0; gr->xfers && i < gr->g->nnodes; i++)
		if (gr->xfers[i].pieces != &gr->xfers[i].one)
			kvfree(gr->xfers[i].pieces);
	kvfree(gr->xfers);
	gr->xfers = NULL;
}

/* Softirq or process context, gr->lock held (kacc_step): start ready node i, a SEND or a
 * RECV. It may complete at once (an unexpected message already in o2g's dump area):
 * then it is on gr->done already.
 */
int kacc_xfer_start(struct kacc_graph *gr, int i)
{
	const struct cad_node *n = &cad_nodes(gr->g)[i];
	struct kacc_xfer *x = &gr->xfers[i];
	struct kacc_conn *c = x->conn;
	u32 k;
	int r;

	x->posted = true;
	x->started = false;
	x->sent = 0;
	gr->inflight++;
	atomic_inc(&gr->active);
	if (n->type == CAD_SEND) {
		x->t_ready = ktime_get_ns();
		spin_lock(&c->lock);
		list_add_tail(&x->q, &c->sendq);
		spin_unlock(&c->lock);
		kacc_conn_kick(c);
		return 0;
	}
	atomic_set(&x->pstatus, 0);
	atomic_set(&x->left, x->npieces);
	for (k = 0; k < x->npieces; k++) {
		/* piece k: its bytes from offset k * piece of the buffer */
		u64 at = offset_in_page(n->u.x.addr) + (u64)k * gr->piece;
		struct o2g_kpost p = {
			.cookie = (u64)(uintptr_t)&x->pieces[k],
			.pages = x->buf ? x->buf->pages + (at >> PAGE_SHIFT) : NULL,
			.first_off = offset_in_page(at),
			.len = n->u.x.bytes ? kacc_piece_len(n->u.x.bytes, gr->piece, k) : 0,
			.ctx = n->u.x.ctx,
			.src = n->u.x.peer,
			.tag = n->u.x.tag,
		};

		r = o2g_kpost(gr->f->o2g, &p, GFP_ATOMIC);
		if (r < 0)
			break;
		if (!r)
			kacc_piece_done(x, 0);
	}
	/* A piece not posted fails x; later ones are not posted (they would take the
	 * pieces of the one that failed).
	 */
	for (; k < x->npieces; k++)
		kacc_piece_done(x, r);
	return 0;
}

/* Any context, gr->lock held: stop the posted xfers that can be stopped (a RECV still
 * queued in o2g, a SEND not begun); they complete with -ECANCELED. The others complete
 * on their own (a RECV being filled, a SEND partly written).
 */
void kacc_xfer_stop(struct kacc_graph *gr)
{
	unsigned int i, k;

	if (!gr->xfers || !gr->inflight)
		return;
	for (i = 0; i < gr->g->nnodes; i++) {
		struct kacc_xfer *x = &gr->xfers[i];
		bool stopped = false;

		if (!x->posted)
			continue;
		if (x->conn) {
			spin_lock(&x->conn->lock);
			if (!x->started && !list_empty(&x->q)) {
				list_del_init(&x->q);
				stopped = true;
			}
			spin_unlock(&x->conn->lock);
			if (stopped)
				kacc_xfer_done(x, -ECANCELED);
			continue;
		}
		/* a RECV: each piece still queued in o2g, the others complete on their own */
		for (k = 0; k < x->npieces; k++)
			if (!o2g_kcancel(gr->f->o2g, (u64)(uintptr_t)&x->pieces[k]))
				kacc_piece_done(x, -ECANCELED);
	}
}

/* Any context, gr->lock held: complete the nodes of the xfers on gr->done. The first
 * that failed stops the graph (gr->error: -(KACC_EXFER + errno)) and the other xfers.
 */
void kacc_xfer_drain(struct kacc_graph *gr)
{
	struct kacc_xfer *x, *tmp;
	struct llist_node *l;

	while ((l = llist_del_all(&gr->done))) {
		bool stop = false;

		llist_for_each_entry_safe(x, tmp, l, done) {
			x->posted = false;
			gr->inflight--;
			if (!x->status)
				kacc_stat_add(x->conn ? ST_SENT : ST_RECEIVED, 1);
			if (x->status && cad_query(gr->g) == CAD_Q_RUNNING) {
				gr->error = -(KACC_EXFER - x->status);
				cad_cancel(gr->g);
				stop = true;
			}
			cad_complete(gr->g, x->node);
		}
		if (stop) /* also withdraws a user op offered: kacc_stop */
			kacc_stop(gr);
	}
}

/* Process context (file release): a pointer to kacc_write_space may outlive the module
 * (a layer wrapped ours and calls it, a listener's children copied it): the module then
 * holds itself for good, and says so once.
 */
static void kacc_pin_module(const char *why)
{
	if (test_and_set_bit(0, &kacc_pinned))
		return;
	__module_get(THIS_MODULE);
	pr_warn("kacc: %s: the module stays loaded\n", why);
}

/* Process context (file release), no graph left: give the sockets back, drop o2g. */
void kacc_net_release(struct kacc_file *f)
{
	unsigned int i;

	for (i = 0; i < KACC_PEERS; i++) {
		struct kacc_conn *c = f->conns[i];
		struct sock *sk;
		bool ours;

		if (!c)
			continue;
		sk = c->sock->sk;
		write_lock_bh(&sk->sk_callback_lock);
		/* wrapped by another layer since: it calls ours, which passes on */
		ours = sk->sk_write_space == kacc_write_space;
		if (ours)
			sk->sk_write_space = c->saved_write_space;
		write_unlock_bh(&sk->sk_callback_lock);
		if (!ours)
			kacc_pin_module("a socket's write_space was wrapped over kacc's");
		/* listen() ran while ours was installed: its children carry ours */
		if (READ_ONCE(sk->sk_state) == TCP_LISTEN ||
		    READ_ONCE(sk->sk_max_ack_backlog) != c->backlog)
			kacc_pin_module("a kacc socket listened: its children call us");
		spin_lock(&kacc_conns_lock);
		list_del_rcu(&c->all);
		spin_unlock(&kacc_conns_lock);
		synchronize_rcu(); /* no sk_write_space of ours sees c any more */
		cancel_work_sync(&c->work);
		sockfd_put(c->sock);
		kfree(c);
		f->conns[i] = NULL;
	}
	if (f->o2g)
		fput(f->o2g);
	f->o2g = NULL;
}

/* Process context, f->mutex held (file release), graphs cancelled but not settled: a
 * peer keeps them (it does not read a SEND, it stopped sending a message a RECV is bound
 * to). Shut the file's connections down and wake their workers, so that the partly
 * written SENDs fail (their stream is lost anyway); have o2g end every piece of the RECVs
 * still posted (o2g_kabort: a piece bound to a message arriving fails the connection
 * that carries it, whatever peer the process named for it).
 */
void kacc_net_abort(struct kacc_file *f)
{
	unsigned int i, k, s;

	for (i = 0; i < KACC_PEERS; i++) {
		if (!f->conns[i])
			continue;
		kernel_sock_shutdown(f->conns[i]->sock, SHUT_RDWR);
		kacc_conn_kick(f->conns[i]); /* no write_space comes on a zero window */
	}
	for (s = 0; s < KACC_SLOTS; s++) {
		struct kacc_graph *gr = f->slots[s];

		for (i = 0; gr && gr->xfers && i < gr->g->nnodes; i++) {
			struct kacc_xfer *x = &gr->xfers[i];
			bool posted;

			if (cad_nodes(gr->g)[i].type != CAD_RECV)
				continue;
			spin_lock_bh(&gr->lock);
			posted = x->posted;
			spin_unlock_bh(&gr->lock);
			/* Outside the graph's lock: the hook may run inside o2g_kabort. A
			 * piece it cancelled (0) is ours to complete; one it ended (1) or
			 * that was done (-ENOENT) completed through the hook.
			 */
			for (k = 0; posted && k < x->npieces; k++)
				if (!o2g_kabort(f->o2g, (u64)(uintptr_t)&x->pieces[k]))
					kacc_piece_done(x, -ECANCELED);
		}
	}
}

/* Module init: the workers' queue (per CPU: a worker runs on its file's home CPU), the
 * hook o2g calls.
 */
int kacc_net_init(void)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (err)
		return err;
	kacc_default_write_space = sock->sk->sk_write_space;
	sock_release(sock);
	kacc_wq = alloc_workqueue("kacc_send", WQ_HIGHPRI, 0);
	if (!kacc_wq)
		return -ENOMEM;
	o2g_set_cad_hook(kacc_recv_done);
	return 0;
}

/* Module exit: no file open, so no xfer and no connection left. */
void kacc_net_exit(void)
{
	o2g_set_cad_hook(NULL);
	destroy_workqueue(kacc_wq);
}
