/* SPDX-License-Identifier: GPL-2.0 */
/*
 * o2g_kern.h: what o2g exports to other modules (kacc): receives posted by the
 * kernel on a process's o2g file, completed through a hook called from o2g's receive
 * path instead of through the process's ring, and the sockets of its connections.
 *
 * A kernel receive is matched like the process's own (mpi/core/match.c, one engine per
 * file, MPI order over both), but its pages are pinned by the caller, who owns them,
 * and its completion is the hook, called under the file's BH spinlock: from softirq
 * (data_ready) or from an ioctl or release of the o2g file. The hook must not sleep, must
 * not call back into o2g, and must not take a lock held around o2g_kpost, o2g_kcancel or
 * o2g_kabort.
 */
#ifndef O2G_KERN_H
#define O2G_KERN_H

#include <linux/types.h>

struct file;
struct page;
struct socket;

/* cookie: the poster's; status: 0, -EMSGSIZE (truncated), -EPROTO (a rendezvous
 * message: not for the kernel), or the connection's error; len: the message's bytes.
 */
typedef void (*o2g_cad_hook_t)(u64 cookie, int status, u64 len);

/* One receive posted by the kernel. */
struct o2g_kpost {
	u64 cookie;		/* unique among the file's kernel receives */
	struct page **pages;	/* the buffer's pinned pages (the caller's, kept until done) */
	unsigned int first_off; /* offset of the buffer in pages[0] */
	u64 len;		/* buffer bytes */
	u32 ctx;
	s32 src, tag; /* O2G_ANY_SOURCE / O2G_ANY_TAG allowed */
	u64 got;      /* out (done at once): the message's bytes */
};

void o2g_set_cad_hook(o2g_cad_hook_t hook);
struct file *o2g_kget(int fd);
u64 o2g_kmax_eager(struct file *file);
int o2g_kpost(struct file *file, struct o2g_kpost *p, gfp_t gfp);
int o2g_kcancel(struct file *file, u64 cookie);
int o2g_kabort(struct file *file, u64 cookie);
struct socket *o2g_kpeer(struct file *file, s32 peer);

#endif
