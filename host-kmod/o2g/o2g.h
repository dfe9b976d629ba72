/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2g.h: the module's own objects (receives, dump records, connections, files) and the
 * calls between its two halves: o2g_main.c (the device: ioctls, setup, release) and
 * o2g_rx.c (the receive path: sk_data_ready, parsing, matching, the ring). Who owns
 * what is said at the top of o2g_main.c.
 */
#ifndef O2G_H
#define O2G_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/mm_types.h>
#include <net/sock.h>

#include "o2g_uapi.h"
#include "match.h"
#include "mpe_wire.h"

enum o2g_stat {
	ST_PINNED,
	ST_POSTED,
	ST_MATCHED_SOFTIRQ,
	ST_UNEXPECTED,
	ST_MATCHED_POST,
	ST_DEFERRED,
	ST_CONTROL,
	ST_STALLS,
	ST_CONN_ERRORS,
	ST_ATTACHED,
	ST_DROPPED,
	ST_N
};

enum o2g_req_state { REQ_QUEUED, REQ_FILLING, REQ_DEFERRED, REQ_DONE };

/* A posted receive. */
struct o2g_req {
	struct match_entry me;
	struct list_head node;	     /* f->reqs while live, f->reap once done */
	struct hlist_node by_cookie; /* f->cookies while live */
	u64 cookie, len;
	struct page **pages;
	unsigned int npages, first_off;
	enum o2g_req_state state;
	bool kern; /* posted by another module (o2g_kern.c): its pages are not ours */
};

enum o2g_msg_state { MSG_FREE, MSG_FILLING, MSG_READY };

/* A dump record; f->msgs[i] describes the record that starts at chunk i. */
struct o2g_msg {
	struct match_entry me;
	struct o2g_req *claim; /* the DEFERRED receive that took it while filling */
	u64 len;	       /* payload bytes; RTS: the message's bytes (no payload) */
	u32 nchunks, conn;
	enum o2g_msg_state state;
	bool control;
	bool rts;   /* the record is an RTS header, a message for matching */
	bool piece; /* the record continues a DATA payload (O2G_CQE_MORE) */
};

struct o2g_file;

/* A socket callback: ours, or the kernel's own that ours replace. */
typedef void (*o2g_sk_cb)(struct sock *sk);

/* The kernel's own TCP callbacks (o2g_sock.c reads them at module load). */
struct o2g_sk_dfl {
	o2g_sk_cb data_ready;
	o2g_sk_cb state_change;
};

/* An attached socket and the parser of its byte stream. */
struct o2g_conn {
	struct o2g_file *f;
	struct socket *sock;
	u32 id;
	s32 peer;
	u8 hdr[MPE_WIRE_HDR];
	u32 hdr_got; /* header bytes read; == MPE_WIRE_HDR: in the body */
	struct mpe_wire w;
	bool placed;		  /* the current message has its destination */
	u64 body_done;		  /* payload bytes consumed */
	u64 piece_base;		  /* payload offset of the current record's first byte */
	bool more;		  /* the next piece of a DATA payload needs a record */
	struct o2g_req *req;	  /* destination: a receive matched on arrival, or */
	struct o2g_msg *msg;	  /* a dump record */
	struct match_entry probe; /* the arriving message's key while matching */
	bool stalled;		  /* stopped reading: dump area or ring full */
	bool closed;		  /* the peer closed: fail once everything is read */
	bool dead;		  /* failed: nothing more is read */
	bool kfree;		  /* O2G_ATTACH_KFREE */
};

struct o2g_file {
	struct mm_struct *mm; /* the process's: charged (locked_vm) for every pin */
	spinlock_t lock;      /* BH lock: everything below but the mutex's */
	struct mutex mutex;   /* setup, conns[] membership, release */
	wait_queue_head_t wq;
	bool ready; /* O2G_IOC_SETUP done */
	struct match_engine *eng;
	struct list_head reqs;	    /* live receives */
	struct list_head reap;	    /* done receives, pages still pinned */
	struct hlist_head *cookies; /* live receives by cookie (o2g_req_find) */
	u32 cookie_bits;
	/* dump area */
	struct page **dump_pages;
	unsigned long dump_npages;
	u64 dump_len, max_eager;
	unsigned long *chunk_map; /* bit set: chunk in a record */
	struct o2g_msg *msgs;
	u32 nchunks;
	/* ring */
	struct o2g_ring_hdr *ring;
	struct o2g_cqe *cqe;
	size_t ring_bytes;
	u32 entries, head;
	u32 promised; /* entries the module has promised to write */
	struct o2g_conn *conns[O2G_MAX_CONNS];
	struct work_struct kick; /* o2g_kick from softirq's side (o2g_kick_later) */
};

/* The module's counters (O2G_IOC_STATS), over every file. */
extern atomic64_t o2g_stats[ST_N];

static inline void o2g_stat_add(enum o2g_stat s, long v)
{
	atomic64_add(v, &o2g_stats[s]);
}

/* o2g_rx.c; each says its context there. */
u32 o2g_ring_free(struct o2g_file *f);
u64 o2g_msg_pos(struct o2g_file *f, struct o2g_msg *m);
void o2g_dump_free(struct o2g_file *f, struct o2g_msg *m);
void o2g_conn_fail(struct o2g_conn *c, int status);
void o2g_data_ready(struct sock *sk);
void o2g_state_change(struct sock *sk);
void o2g_resume(struct o2g_conn *c);
void o2g_kick_later(struct o2g_file *f);
void o2g_copy_pages(struct page **dst, u64 dpos, struct page **src, u64 spos, u64 n);
int o2g_post_locked(struct o2g_file *f, struct o2g_req *r, struct o2g_msg **mp);

/* o2g_sock.c; each says its context there. */
extern struct o2g_sk_dfl o2g_sk_dfl;
int o2g_sock_init(void);
int o2g_sock_take(struct sock *sk, struct o2g_conn *c);
void o2g_sock_release(struct sock *sk);
void o2g_sock_orphan(struct sock *sk);

/* Under sk->sk_callback_lock: the connection sk serves, or NULL (none: detached, or a
 * child a listener cloned from an attached socket, which SK_USER_DATA_NOCOPY leaves
 * without one).
 */
static inline struct o2g_conn *o2g_conn_of(const struct sock *sk)
{
	return __locked_read_sk_user_data_with_flags(sk, SK_USER_DATA_NOCOPY);
}

/* o2g_main.c */
extern const struct file_operations o2g_fops;
struct o2g_req *o2g_req_find(struct o2g_file *f, u64 cookie, bool kern);
void o2g_req_unlist(struct o2g_file *f, struct o2g_req *r);
void o2g_req_retire(struct o2g_file *f, struct o2g_req *r);

/* o2g_kern.c */
void o2g_kern_done(struct o2g_file *f, struct o2g_req *r, int status, u64 len);

#endif
