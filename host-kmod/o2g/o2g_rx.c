// SPDX-License-Identifier: GPL-2.0
/*
 * o2g_rx.c: the receive path of o2g. sk_data_ready (softirq) reads the stream with
 * tcp_read_sock, parses the native header, matches EAGER messages (mpi/core/match.c) and
 * copies payloads into pinned receive buffers or the dump area, then publishes completions
 * in the ring. Ownership of every buffer: see the top of o2g_main.c.
 */
#include <linux/highmem.h>
#include <linux/bitmap.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "o2g.h"

/* Any context: the payload bytes that follow header w on the stream (RTS's and CTS's
 * len is a message size, not a payload).
 */
static u64 o2g_payload(const struct mpe_wire *w)
{
	return w->type == MPE_W_EAGER || w->type == MPE_W_DATA ? w->len : 0;
}

/* Any context, under f->lock: ring slots neither filled nor promised. */
u32 o2g_ring_free(struct o2g_file *f)
{
	/* Pairs with the process's release store of tail: slots below it are read. */
	u32 used = f->head - smp_load_acquire(&f->ring->tail);

	/* A process that wrote nonsense in tail only stalls itself. */
	if (used > f->entries || used + f->promised >= f->entries)
		return 0;
	return f->entries - used - f->promised;
}

/* Any context, under f->lock: write a promised entry and publish it. */
static void o2g_emit(struct o2g_file *f, const struct o2g_cqe *e)
{
	f->cqe[f->head & (f->entries - 1)] = *e;
	WRITE_ONCE(f->head, f->head + 1);
	/* Publishes the entry: the process's acquire load of head pairs with this. */
	smp_store_release(&f->ring->head, f->head);
	f->promised--;
	wake_up_interruptible(&f->wq);
}

/* Any context: copy n bytes to byte `pos` of a pinned page array, from skb at skb_off,
 * or from kbuf when skb is NULL. Non-zero if the skb is shorter than said.
 */
static int o2g_copy_to_pages(struct page **pages, u64 pos, const struct sk_buff *skb, int skb_off,
			     const u8 *kbuf, size_t n)
{
	int err = 0;

	while (n && !err) {
		size_t in = pos & ~PAGE_MASK;
		size_t k = min_t(size_t, n, PAGE_SIZE - in);
		u8 *dst = kmap_local_page(pages[pos >> PAGE_SHIFT]);

		if (skb)
			err = skb_copy_bits(skb, skb_off, dst + in, k);
		else
			memcpy(dst + in, kbuf, k);
		kunmap_local(dst);
		pos += k;
		skb_off += k;
		kbuf += skb ? 0 : k;
		n -= k;
	}
	return err;
}

/* Any context: copy n bytes between two pinned page arrays. */
void o2g_copy_pages(struct page **dst, u64 dpos, struct page **src, u64 spos, u64 n)
{
	while (n) {
		size_t in = spos & ~PAGE_MASK;
		size_t k = min_t(u64, n, PAGE_SIZE - in);
		u8 *s = kmap_local_page(src[spos >> PAGE_SHIFT]);

		o2g_copy_to_pages(dst, dpos, NULL, 0, s + in, k);
		kunmap_local(s);
		dpos += k;
		spos += k;
		n -= k;
	}
}

/* Any context, under f->lock: publish a receive's completion. Its pages stay pinned
 * until o2g_kick() or release: unpinning marks them dirty, which may sleep (lock_page),
 * and softirq cannot; a page the module wrote must not be reclaimed as clean.
 */
static void o2g_req_complete(struct o2g_file *f, struct o2g_req *r, int status,
			     const struct mpe_wire *w, u32 conn)
{
	struct o2g_cqe e = {
		.cookie = r->cookie,
		.kind = O2G_CQE_RECV,
		.status = status,
		.conn = conn,
	};

	if (r->kern) { /* another module's receive: its hook, not the ring */
		o2g_kern_done(f, r, !status && w && w->len > r->len ? -EMSGSIZE : status,
			      w ? w->len : 0);
		return;
	}
	if (w) {
		e.len = w->len;
		e.ctx = w->ctx;
		e.src = w->src;
		e.tag = w->tag;
		if (!status && w->len > r->len)
			e.status = -EMSGSIZE; /* MPI_ERR_TRUNCATE */
	}
	r->state = REQ_DONE;
	o2g_req_retire(f, r);
	o2g_emit(f, &e);
}

u64 o2g_msg_pos(struct o2g_file *f, struct o2g_msg *m)
{
	return (u64)(m - f->msgs) * O2G_DUMP_CHUNK;
}

/* Any context, under f->lock: a run of chunks for `bytes`, or NULL. */
static struct o2g_msg *o2g_dump_alloc(struct o2g_file *f, u64 bytes)
{
	u32 n = max_t(u64, 1, DIV_ROUND_UP(bytes, O2G_DUMP_CHUNK));
	unsigned long i = bitmap_find_next_zero_area(f->chunk_map, f->nchunks, 0, n, 0);
	struct o2g_msg *m;

	if (i >= f->nchunks)
		return NULL;
	bitmap_set(f->chunk_map, i, n);
	m = &f->msgs[i];
	memset(m, 0, sizeof(*m));
	m->nchunks = n;
	m->state = MSG_FILLING;
	return m;
}

/* Any context, under f->lock. */
void o2g_dump_free(struct o2g_file *f, struct o2g_msg *m)
{
	bitmap_clear(f->chunk_map, m - f->msgs, m->nchunks);
	m->state = MSG_FREE;
	m->nchunks = 0;
}

/* Softirq or process context, under f->lock: the connection fails with `status`. Its
 * message in progress fails, and so do the posted receives naming its peer (they can
 * never be satisfied by it); the process reads an O2G_CQE_CONN entry.
 */
void o2g_conn_fail(struct o2g_conn *c, int status)
{
	struct o2g_file *f = c->f;
	struct o2g_cqe e = {
		.kind = O2G_CQE_CONN, .status = status, .src = c->peer, .conn = c->id
	};
	struct o2g_req *r, *tmp;

	if (c->dead)
		return;
	c->dead = true;
	o2g_stat_add(ST_CONN_ERRORS, 1);
	if (c->placed && c->req)
		o2g_req_complete(f, c->req, status, &c->w, c->id);
	if (c->placed && c->msg) {
		if (c->msg->claim) /* the claim consumes the record's promise */
			o2g_req_complete(f, c->msg->claim, status, &c->w, c->id);
		else
			f->promised--;
		if (c->msg->me.queued == 2)
			match_take(f->eng, &c->msg->me);
		o2g_dump_free(f, c->msg);
	}
	c->req = NULL;
	c->msg = NULL;
	c->placed = false;
	list_for_each_entry_safe(r, tmp, &f->reqs, node) {
		if (r->state == REQ_QUEUED && r->me.key.src == c->peer &&
		    match_cancel(f->eng, &r->me)) {
			o2g_stat_add(ST_POSTED, -1);
			o2g_req_complete(f, r, status, NULL, c->id);
		}
	}
	o2g_emit(f, &e); /* the connection's own promise */
}

/* Softirq or process context, under f->lock: find the destination of the message whose
 * header c->w was just read. False: no room (dump area or ring) yet, stall.
 */
static bool o2g_place(struct o2g_conn *c)
{
	struct o2g_file *f = c->f;
	bool rts = c->w.type == MPE_W_RTS;
	bool control = c->w.type != MPE_W_EAGER && !rts;
	u64 bytes = (c->w.type != MPE_W_EAGER ? MPE_WIRE_HDR : 0) +
		    (control ? min_t(u64, o2g_payload(&c->w), O2G_DATA_PIECE) : o2g_payload(&c->w));
	struct match_entry *me;
	struct o2g_msg *m;

	c->body_done = 0;
	c->piece_base = 0;
	c->more = false;
	c->req = NULL;
	c->msg = NULL;
	if (!control && !rts) {
		/* A posted receive needs no room: try it first (the probe entry is queued
		 * as unexpected if nothing matches, and taken back at once).
		 */
		c->probe.key.comm = c->w.ctx;
		c->probe.key.src = c->w.src;
		c->probe.key.tag = c->w.tag;
		me = match_arrive(f->eng, &c->probe);
		if (me) {
			c->req = container_of(me, struct o2g_req, me);
			c->req->state = REQ_FILLING;
			c->placed = true;
			o2g_stat_add(ST_POSTED, -1);
			o2g_stat_add(ST_MATCHED_SOFTIRQ, 1);
			return true;
		}
		match_take(f->eng, &c->probe);
	}
	if (bytes > f->dump_len) {
		o2g_conn_fail(c, -EMSGSIZE);
		return false;
	}
	if (!o2g_ring_free(f))
		return false;
	m = o2g_dump_alloc(f, bytes);
	if (!m)
		return false;
	f->promised++; /* the record's UNEXP/CONTROL (or its claim's RECV) entry */
	m->len = rts ? c->w.len : o2g_payload(&c->w);
	m->conn = c->id;
	m->control = control;
	m->rts = rts;
	if (control || rts)
		o2g_copy_to_pages(f->dump_pages, o2g_msg_pos(f, m), NULL, 0, c->hdr, MPE_WIRE_HDR);
	if (control) {
		o2g_stat_add(ST_CONTROL, 1);
	} else if (rts) {
		/* Matched only now that its record exists: the process needs the header
		 * (handle, ranks) to answer CTS whether a receive waits or not. An RTS has
		 * no payload, so o2g_finish follows at once, under this same lock.
		 */
		m->me.key.comm = c->w.ctx;
		m->me.key.src = c->w.src;
		m->me.key.tag = c->w.tag;
		me = match_arrive(f->eng, &m->me);
		if (me) {
			c->req = container_of(me, struct o2g_req, me);
			c->req->state = REQ_FILLING;
			o2g_stat_add(ST_POSTED, -1);
			o2g_stat_add(ST_MATCHED_SOFTIRQ, 1);
		} else {
			o2g_stat_add(ST_UNEXPECTED, 1);
		}
	} else {
		m->me.key = c->probe.key;
		/* Same engine state as the probe saw: this queues it as unexpected. */
		match_arrive(f->eng, &m->me);
		o2g_stat_add(ST_UNEXPECTED, 1);
	}
	c->msg = m;
	c->placed = true;
	return true;
}

/* Softirq or process context, under f->lock: the body of the current message is in. */
static void o2g_finish(struct o2g_conn *c)
{
	struct o2g_file *f = c->f;
	struct o2g_msg *m = c->msg;
	struct o2g_cqe e = {
		.len = c->w.len, .ctx = c->w.ctx, .src = c->w.src, .tag = c->w.tag, .conn = c->id
	};

	if (c->req && m && c->req->kern) {
		/* An RTS took a kernel receive: the kernel does no rendezvous; the receive
		 * fails, the process gets the header as an unexpected RTS.
		 */
		o2g_req_complete(f, c->req, -EPROTO, NULL, c->id);
		c->req = NULL;
	}
	if (c->req && m) {
		/* An RTS took a posted receive: one entry says both (the receive's promise
		 * is used, the record's given back); the buffer was never written.
		 */
		e.kind = O2G_CQE_RTS;
		e.cookie = c->req->cookie;
		e.off = o2g_msg_pos(f, m);
		c->req->state = REQ_DONE;
		o2g_req_retire(f, c->req);
		m->state = MSG_READY;
		f->promised--;
		o2g_emit(f, &e);
	} else if (c->req) {
		o2g_req_complete(f, c->req, 0, &c->w, c->id);
	} else if (m->claim) {
		/* The race of the seed (O2G_POST_DEFERRED): the receive took this message
		 * while it was arriving; now it is whole, hand it over.
		 */
		o2g_copy_pages(m->claim->pages, m->claim->first_off, f->dump_pages,
			       o2g_msg_pos(f, m), min(m->len, m->claim->len));
		o2g_req_complete(f, m->claim, 0, &c->w, c->id);
		o2g_dump_free(f, m);
	} else {
		e.kind = m->control ? O2G_CQE_CONTROL : m->rts ? O2G_CQE_UNEXP_RTS : O2G_CQE_UNEXP;
		e.off = o2g_msg_pos(f, m);
		if (m->control) /* the last (or only) piece of the payload */
			e.len = MPE_WIRE_HDR + c->body_done - c->piece_base;
		if (m->piece) {
			e.kind = O2G_CQE_MORE;
			e.len -= MPE_WIRE_HDR;
			e.ctx = 0;
			e.src = 0;
			e.tag = 0;
		}
		m->state = MSG_READY; /* the process's from the emit on */
		o2g_emit(f, &e);
	}
	c->req = NULL;
	c->msg = NULL;
	c->placed = false;
	c->hdr_got = 0;
}

/* Softirq or process context, under f->lock: the current record of a DATA payload is
 * full: publish it, the next bytes need a new record (o2g_next_piece).
 */
static void o2g_piece_done(struct o2g_conn *c)
{
	struct o2g_file *f = c->f;
	struct o2g_msg *m = c->msg;
	struct o2g_cqe e = {
		.kind = m->piece ? O2G_CQE_MORE : O2G_CQE_CONTROL,
		.len = (m->piece ? 0 : MPE_WIRE_HDR) + c->body_done - c->piece_base,
		.off = o2g_msg_pos(f, m),
		.conn = c->id,
	};

	m->state = MSG_READY;
	o2g_emit(f, &e);
	c->msg = NULL;
	c->piece_base = c->body_done;
	c->more = true;
}

/* Softirq or process context, under f->lock: a record for the next piece of the DATA
 * payload. False: no room (dump area or ring) yet, stall.
 */
static bool o2g_next_piece(struct o2g_conn *c)
{
	struct o2g_file *f = c->f;
	struct o2g_msg *m;

	if (!o2g_ring_free(f))
		return false;
	m = o2g_dump_alloc(f, min_t(u64, o2g_payload(&c->w) - c->body_done, O2G_DATA_PIECE));
	if (!m)
		return false;
	f->promised++; /* its MORE entry */
	m->conn = c->id;
	m->control = true;
	m->piece = true;
	c->msg = m;
	c->more = false;
	return true;
}

/* Any context, under f->lock: where the next payload byte goes in the dump area. */
static u64 o2g_body_pos(struct o2g_conn *c)
{
	struct o2g_msg *m = c->msg;
	u64 hdr = m->control && !m->piece ? MPE_WIRE_HDR : 0;

	return o2g_msg_pos(c->f, m) + hdr + c->body_done - c->piece_base;
}

/* The tcp_read_sock actor: softirq (sk_data_ready) or process context (resume), socket
 * locked, under f->lock. Consumes what it can place; returning less than len (0 when
 * stalled) leaves the rest in the socket, which is how TCP's window closes.
 */
static int o2g_recv_actor(read_descriptor_t *desc, struct sk_buff *skb, unsigned int off,
			  size_t len)
{
	struct o2g_conn *c = desc->arg.data;
	struct o2g_file *f = c->f;
	size_t used = 0;

	while (used < len && !c->dead && !c->stalled) {
		size_t n;
		int err;

		if (c->hdr_got < MPE_WIRE_HDR) {
			n = min_t(size_t, len - used, MPE_WIRE_HDR - c->hdr_got);
			if (skb_copy_bits(skb, off + used, c->hdr + c->hdr_got, n)) {
				o2g_conn_fail(c, -EIO);
				break;
			}
			c->hdr_got += n;
			used += n;
			if (c->hdr_got < MPE_WIRE_HDR)
				break;
			if (mpe_wire_decode(c->hdr, &c->w, f->max_eager)) {
				/* Hazard: past a bad header the stream has no framing left;
				 * nothing more is read from this connection.
				 */
				o2g_conn_fail(c, -EPROTO);
				break;
			}
			c->placed = false;
		}
		if (!c->placed && !o2g_place(c)) {
			if (!c->dead) {
				c->stalled = true;
				o2g_stat_add(ST_STALLS, 1);
			}
			break;
		}
		if (c->more && !o2g_next_piece(c)) {
			c->stalled = true;
			o2g_stat_add(ST_STALLS, 1);
			break;
		}
		n = min_t(u64, len - used, o2g_payload(&c->w) - c->body_done);
		if (c->msg && c->msg->control) /* a DATA record holds one piece */
			n = min_t(u64, n, c->piece_base + O2G_DATA_PIECE - c->body_done);
		err = 0;
		if (n && c->req && c->body_done < c->req->len) /* else truncated: skip */
			err = o2g_copy_to_pages(c->req->pages, c->req->first_off + c->body_done,
						skb, off + used, NULL,
						min_t(u64, n, c->req->len - c->body_done));
		else if (n && c->msg)
			err = o2g_copy_to_pages(f->dump_pages, o2g_body_pos(c), skb, off + used,
						NULL, n);
		if (err) {
			o2g_conn_fail(c, -EIO);
			break;
		}
		used += n;
		c->body_done += n;
		if (c->body_done == o2g_payload(&c->w))
			o2g_finish(c);
		else if (c->msg && c->msg->control &&
			 c->body_done == c->piece_base + O2G_DATA_PIECE)
			o2g_piece_done(c);
	}
	return used;
}

/* Softirq or process context: sk locked, callback lock read-held, f->lock held. */
static void o2g_read(struct o2g_conn *c)
{
	read_descriptor_t desc = { .arg.data = c, .count = 1 };

	if (c->dead || c->stalled)
		return;
	/* A header read whole before a stall still needs its place when no byte follows
	 * it (a message without payload): the actor runs only on bytes, so place it here.
	 */
	if (c->hdr_got == MPE_WIRE_HDR && !c->placed) {
		if (!o2g_place(c)) {
			if (!c->dead) {
				c->stalled = true;
				o2g_stat_add(ST_STALLS, 1);
			}
			return;
		}
		if (!o2g_payload(&c->w))
			o2g_finish(c);
	}
	tcp_read_sock(c->sock->sk, &desc, o2g_recv_actor);
	/* The peer's FIN comes before the data_ready of the last bytes: fail only once
	 * everything before it was read.
	 */
	if (c->closed && !c->stalled)
		o2g_conn_fail(c, -ECONNRESET);
}

/* Under sk_callback_lock: the stream of an attached socket is over: the peer closed, or
 * the owner disconnected it (connect with AF_UNSPEC) and maybe made it a listener.
 */
static bool o2g_sk_over(const struct sock *sk)
{
	return (sk->sk_shutdown & RCV_SHUTDOWN) || sk->sk_state == TCP_CLOSE ||
	       sk->sk_state == TCP_LISTEN;
}

/* sk_data_ready: softirq (or release_sock's backlog run), socket locked. */
void o2g_data_ready(struct sock *sk)
{
	struct o2g_conn *c;
	bool listener;

	read_lock_bh(&sk->sk_callback_lock);
	c = o2g_conn_of(sk);
	listener = sk->sk_state == TCP_LISTEN;
	if (likely(c)) {
		spin_lock(&c->f->lock);
		if (unlikely(o2g_sk_over(sk)))
			c->closed = true;
		o2g_read(c);
		spin_unlock(&c->f->lock);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (likely(c) && likely(!listener))
		return;
	/* No connection (detached meanwhile, or a listener's child), or a listener whose
	 * accept() waits: the kernel's own callback. Never sk->sk_data_ready: a layer that
	 * wrapped ours would call us again.
	 */
	if (!c && sk->sk_data_ready == o2g_data_ready)
		o2g_sock_orphan(sk);
	o2g_sk_dfl.data_ready(sk);
}

/* sk_state_change: softirq or process context, socket locked. */
void o2g_state_change(struct sock *sk)
{
	struct o2g_conn *c;

	read_lock_bh(&sk->sk_callback_lock);
	c = o2g_conn_of(sk);
	if (c && o2g_sk_over(sk)) {
		spin_lock(&c->f->lock);
		c->closed = true;
		o2g_read(c);
		spin_unlock(&c->f->lock);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (!c && sk->sk_state_change == o2g_state_change)
		o2g_sock_orphan(sk);
	/* The socket's own waiters, as the kernel's callback (which ours replaced) wakes. */
	o2g_sk_dfl.state_change(sk);
}

/* Process context, f->mutex held: read a stalled connection again. */
void o2g_resume(struct o2g_conn *c)
{
	struct sock *sk = c->sock->sk;

	lock_sock(sk);
	read_lock_bh(&sk->sk_callback_lock);
	if (o2g_conn_of(sk) == c) {
		spin_lock(&c->f->lock);
		c->stalled = false;
		o2g_read(c);
		spin_unlock(&c->f->lock);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
}
