/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kacc.h: what kacc_main.c (the device: issue, pin, release) and kacc_run.c (progress:
 * per-CPU tasklets, IPIs, the polling baseline) share.
 */
#ifndef KACC_H
#define KACC_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/list.h>
#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/workqueue.h>

#include "kacc_uapi.h"
#include "cad.h"
#include "mpe_wire.h"

#define KACC_PEERS 64		     /* peers a file sends to (= O2G_MAX_CONNS) */
#define KACC_MAX_RANGE (256UL << 20) /* bytes of one buffer a node names */
/* Eager pieces a SEND or RECV is cut into at most: a 256 MiB message at the library's
 * smallest eager limit (32 KiB). A RECV posts them all at once in softirq, and holds an
 * array of them.
 */
#define KACC_MAX_PIECES 8192

/* progress= module parameter */
enum kacc_progress { KACC_TASKLET, KACC_IPI, KACC_POLL };
extern int kacc_progress;

enum kacc_stat {
	ST_GRAPHS,
	ST_PINNED,
	ST_ISSUED,
	ST_REFUSED,
	ST_FINISHED,
	ST_CANCELLED,
	ST_CALC,
	ST_LOCAL,
	ST_IPI,
	ST_HOME,
	ST_POLLED,
	ST_SLICES,
	ST_SENT,
	ST_RECEIVED,
	ST_WRITE_SPACE,
	ST_SEND_NS,
	ST_USER,
	ST_N
};

extern atomic64_t kacc_stats[ST_N];

static inline void kacc_stat_add(enum kacc_stat s, long v)
{
	atomic64_add(v, &kacc_stats[s]);
}

/* One pinned buffer range of a graph, mapped contiguously for softirq (vmap). */
struct kacc_buf {
	struct page **pages;
	unsigned long npages;
	void *map;  /* vmap of the pages, or NULL */
	bool write; /* the graph writes it: unpinned dirty */
};

struct kacc_graph;
struct kacc_conn;
struct sock;

/* A socket callback (sk_write_space): ours, or the one it replaced. */
typedef void (*kacc_sk_cb)(struct sock *sk);

/* One eager piece of a RECV, posted to o2g on its own (its address is the cookie). */
struct kacc_piece {
	struct kacc_xfer *x;
};

/* A SEND or RECV node of a graph while it is posted (kacc_net.c). Posted under the
 * graph's lock; completed (status) by o2g's hook or the connection's worker, which hand
 * it back through the graph's done list; the graph's lock takes it from there.
 */
struct kacc_xfer {
	struct kacc_graph *gr;
	struct llist_node done; /* on gr->done once complete */
	struct list_head q;	/* SEND: on its connection's queue */
	struct kacc_conn *conn; /* SEND: the connection it goes out on */
	int node;
	int status;		   /* 0 or a negative errno */
	u32 npieces;		   /* eager messages it is cut into on the wire (>= 1) */
	atomic_t left;		   /* RECV: pieces not yet completed by o2g */
	atomic_t pstatus;	   /* RECV: the first piece's error, or 0 */
	struct kacc_piece one;	   /* RECV: the piece of a message of one piece */
	struct kacc_piece *pieces; /* RECV: &one, or an array of npieces */
	bool posted;		   /* posted, not yet taken back from gr->done */
	bool started;		   /* SEND: the worker has begun writing it (not cancellable) */
	u64 sent;		   /* SEND: bytes of header and payload written */
	u64 t_ready;		   /* SEND: when it was queued (ktime ns), for ST_SEND_NS */
	void *kaddr;		   /* the pinned buffer's kernel mapping (NULL: 0 bytes) */
	struct kacc_buf *buf;	   /* RECV: its pinned pages (o2g writes them) */
	u8 hdr[MPE_WIRE_HDR];	   /* SEND: the native header of the piece being written */
};

/* A connection SENDs go out on: the socket of the opener's o2g connection to a peer.
 * The worker (work, on the file's home CPU) writes the queue in order, without blocking,
 * and is queued again by sk_write_space when the socket has room.
 */
struct kacc_conn {
	struct kacc_file *f;
	struct socket *sock; /* a reference to its file (sockfd_put) */
	s32 peer;
	int home;
	spinlock_t lock;	/* BH lock: sendq, xfer->started */
	struct list_head sendq; /* kacc_xfer.q, in order */
	struct work_struct work;
	kacc_sk_cb saved_write_space;
	u32 backlog;	      /* the socket's sk_max_ack_backlog when it became ours */
	struct list_head all; /* kacc_conns (RCU): how sk_write_space finds it */
};

/* Bits of kacc_graph.flags */
#define KACC_QUEUED 0 /* on a CPU's run list, or being run by its tasklet */

/* A graph issued through a file. The file's mutex guards the slot and the buffers; lock
 * (a BH spinlock) serialises cad's run-side calls and the status slot's writes.
 */
struct kacc_graph {
	struct kacc_file *f;
	unsigned int slot;
	int home;		   /* the CPU that issued it */
	unsigned long flags;	   /* KACC_QUEUED */
	struct list_head run_node; /* on kacc_cpu.list while KACC_QUEUED */
	spinlock_t lock;
	struct cad_graph *g; /* the module's copy, addresses rewritten to maps */
	size_t bytes;
	int error;    /* a CALC's negative CAD_E*, published in the slot */
	int partial;  /* a CALC cut into slices, still ACTIVE (-1: none) */
	int user;     /* the user-op CALC offered to the process, ACTIVE (-1: none) */
	u64 calc_off; /* ... and its elements done */
	bool counted; /* its end was counted in the stats */
	struct kacc_buf *bufs;
	unsigned int nbufs;
	unsigned long npinned;
	struct kacc_xfer *xfers; /* per node (SEND/RECV only used), or NULL: none */
	struct llist_head done;	 /* completed xfers not yet taken back */
	unsigned int inflight;	 /* xfers posted, not taken back (under lock) */
	atomic_t active;	 /* xfers whose completer may still touch the graph */
	u64 piece;		 /* bytes of a message's eager pieces: o2g's eager limit */
	size_t kmem;		 /* kernel memory charged to the file for it (f->kmem) */
};

struct kacc_file {
	struct mutex mutex;	    /* slots[], issue/release */
	struct mm_struct *mm;	    /* the opener's: pinned pages are charged to it */
	wait_queue_head_t wq;	    /* poll(): a graph finished */
	struct kacc_status *status; /* vmalloc_user pages, mapped read-only by the process */
	struct kacc_user *user;	    /* the second of them (KACC_USER_OFF) */
	struct kacc_graph *slots[KACC_SLOTS];
	struct file *o2g; /* KACC_IOC_O2G: the opener's o2g file (a reference), or NULL */
	int home;	  /* the CPU of the KACC_IOC_O2G call: the workers' */
	struct kacc_conn *conns[KACC_PEERS]; /* by peer rank, made at the first SEND */
	size_t kmem; /* kernel memory its graphs hold (kacc_kmem_charge), f->mutex */
};

/* kacc_main.c */
struct cad_error;
int kacc_refuse(struct cad_error *err, int code, int node, int type, const char *why);
int kacc_kmem_charge(struct kacc_graph *gr, size_t bytes);

/* kacc_net.c */
int kacc_net_prepare(struct kacc_file *f, struct kacc_graph *gr, struct cad_error *err);
int kacc_xfer_start(struct kacc_graph *gr, int node);
void kacc_xfer_drain(struct kacc_graph *gr);
void kacc_xfer_stop(struct kacc_graph *gr);
void kacc_xfer_free(struct kacc_graph *gr);
int kacc_net_conn(struct kacc_file *f, struct kacc_conn_arg __user *arg);
void kacc_net_release(struct kacc_file *f);
void kacc_net_abort(struct kacc_file *f);
int kacc_net_init(void);
void kacc_net_exit(void);

/* kacc_run.c */
void kacc_event(struct kacc_graph *gr);
bool kacc_step(struct kacc_graph *gr, unsigned int budget, bool queued);
void kacc_publish(struct kacc_graph *gr);
void kacc_unqueue(struct kacc_graph *gr);
void kacc_stop(struct kacc_graph *gr);
void kacc_offer_user(struct kacc_graph *gr);
int kacc_run_init(void);
void kacc_run_exit(void);

#endif
