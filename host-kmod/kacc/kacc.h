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

#include "kacc_uapi.h"
#include "cad.h"

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
	u64 calc_off; /* ... and its elements done */
	bool counted; /* its end was counted in the stats */
	struct kacc_buf *bufs;
	unsigned int nbufs;
	unsigned long npinned;
};

struct kacc_file {
	struct mutex mutex;	    /* slots[], issue/release */
	struct mm_struct *mm;	    /* the opener's: pinned pages are charged to it */
	wait_queue_head_t wq;	    /* poll(): a graph finished */
	struct kacc_status *status; /* vmalloc_user page, mapped read-only by the process */
	struct kacc_graph *slots[KACC_SLOTS];
};

/* kacc_run.c */
void kacc_event(struct kacc_graph *gr);
bool kacc_step(struct kacc_graph *gr, unsigned int budget, bool queued);
void kacc_publish(struct kacc_graph *gr);
void kacc_unqueue(struct kacc_graph *gr);
void kacc_stop(struct kacc_graph *gr);
int kacc_run_init(void);
void kacc_run_exit(void);

#endif
