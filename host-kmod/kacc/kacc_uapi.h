/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kacc_uapi.h: the interface of /dev/kacc (host-kmod/kacc/kacc.ko), shared by the module
 * and the processes that use it.
 *
 * KACC (seed 000) runs CAD graphs (mpi/cad/cad.h: one pointer-free block) in
 * the kernel. Use, per open file (one per process):
 *   1. mmap(NULL, KACC_MAP_BYTES, PROT_READ, MAP_SHARED, fd, 0): the status page, one
 *      struct kacc_status per slot, then at KACC_USER_OFF one struct kacc_user per slot;
 *      reading them is how a process tests a graph without a system call.
 *   2. KACC_IOC_ISSUE a finalized graph: the module copies the block, validates it with
 *      mpi/cad/cad_validate.c (the owner's partition is replaced by the whole user address
 *      space: the process is the rank), pins every buffer a node names (charged to
 *      RLIMIT_MEMLOCK) and starts it. On a refusal the ioctl fails with EINVAL and the
 *      validator's message is in the argument's err fields. Buffers must be anonymous
 *      memory, shmem or private file mappings (a shared mapping of another file is
 *      refused, CAD_EBUF). EDQUOT: the file's graphs hold the kernel memory the module
 *      allows a file (parameter kmem_per_file: graph copies and their arrays); release
 *      some first. ENOMEM: RLIMIT_MEMLOCK or memory.
 *   3. Test status[slot].run (>= KACC_Q_DONE: finished; load it with acquire order), or
 *      poll(): EPOLLIN while a finished graph of the file is not yet released.
 *   3a. A CALC with a user-defined op (CAD_OP_USER) is the process's to run: when it is
 *      ready, kacc offers it in user[slot].node (load it with acquire order; -1: none)
 *      and wakes poll() (EPOLLIN, once per offer: watch it edge-triggered). The process
 *      runs the op on the node's buffers (its own addresses, in its copy of the graph)
 *      and says so with KACC_IOC_USER_DONE {slot, node}; the graph goes on. One node of
 *      a graph is offered at a time, the others wait in the graph (cad_defer).
 *   4. KACC_IOC_RELEASE the slot once finished (unpins, frees the slot). KACC_IOC_CANCEL
 *      stops a running graph first (CANCELLED at once, or CANCELLING until the SENDs
 *      and RECVs it cannot stop have ended: under progress=poll, KACC_IOC_PROGRESS
 *      takes their ends in).
 * Closing the file (or the process dying) cancels and releases every graph of the file.
 *
 * Nodes supported: CALC (a predefined op run by kacc, a user op by the process); SEND
 * and RECV over the process's o2g file (host-kmod/o2g), given once with
 * KACC_IOC_O2G (its fd; the calling CPU becomes the home CPU of the file's senders).
 * Without it a graph holding one is refused with KACC_ENEEDO2G. A RECV is a receive of
 * that o2g file (MPI matching, with the process's own), filled in o2g's softirq; a SEND
 * an EAGER message with the native header on the socket of the o2g connection whose peer
 * is the node's peer (refused: KACC_ENOCONN without one). A message longer than the o2g
 * file's eager limit goes as several EAGER messages of that many bytes (the last
 * shorter), same envelope, back to back: the two ends' o2g files must have the same
 * eager limit. The process must not write to a socket while SENDs of its graphs are in
 * flight on it. KACC_IOC_CONN (after KACC_IOC_O2G, before the first SEND to that peer)
 * names the socket SENDs to a peer go out on instead of the o2g connection to it: a
 * connection the process keeps for kacc alone (mpi/linux/mlx_kacc.c), attached to the
 * o2g file too so that what arrives on it is matched. It stays kacc's until the file is
 * closed.
 */
#ifndef KACC_UAPI_H
#define KACC_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KACC_DEV "/dev/kacc"
#define KACC_SLOTS 256	       /* graphs in flight per file */
#define KACC_STATUS_BYTES 4096 /* the status page: KACC_SLOTS * sizeof(struct kacc_status) */
#define KACC_USER_OFF KACC_STATUS_BYTES	       /* the user-op page: KACC_SLOTS struct kacc_user */
#define KACC_MAP_BYTES (2 * KACC_STATUS_BYTES) /* what a process maps */
#define KACC_MSG_LEN 96			       /* = CAD_MSG_LEN */
#define KACC_MAX_GRAPH (4u << 20)	       /* bytes of one graph block */

/* status[slot].run: the graph's CAD_Q_* state (mpi/cad/cad.h); KACC_Q_FREE: no graph. */
#define KACC_Q_FREE 0
#define KACC_Q_RUNNING 1
#define KACC_Q_CANCELLING 2
#define KACC_Q_DONE 3
#define KACC_Q_CANCELLED 4

/* kacc_issue.err_code beyond the CAD_E* codes */
#define KACC_ENEEDO2G 100 /* a SEND or RECV node, and no o2g file given */
#define KACC_ENOCONN 101  /* a SEND to a peer without an o2g connection */
#define KACC_EEAGER 102	  /* a SEND or RECV, and o2g's eager limit is out of range */

/* kacc_status.error of a graph stopped by a failed SEND or RECV: -(KACC_EXFER + errno),
 * e.g. EMSGSIZE (the message was longer than the RECV's buffer), ECONNRESET, EPROTO.
 */
#define KACC_EXFER 1000

/* kacc_issue.flags */
#define KACC_ISSUE_HOLD 1u /* start, but run nothing until an event (KACC_IOC_KICK) */

/* One slot of the status page; written by the module only. */
struct kacc_status {
	__u32 run;    /* KACC_Q_*; stored with release order after the graph's results */
	__u32 issues; /* times this slot was issued (tells a reused slot apart) */
	__s32 error;  /* 0, -CAD_E* (a CALC), -(KACC_EXFER + errno): then CANCELLED */
	__u32 ndone;  /* nodes completed */
};

/* One slot of the user-op page; written by the module only. */
struct kacc_user {
	__s32 node;   /* a user-op CALC the process is to run, or -1; stored with release */
	__u32 offers; /* user-op CALCs offered in this slot so far */
};

/* KACC_IOC_USER_DONE: the process ran user[slot].node's op. */
struct kacc_user_done {
	__u32 slot;
	__s32 node;
};

struct kacc_issue {
	__u64 graph;		    /* in: the block's address */
	__u64 bytes;		    /* in: its size (cad_graph.bytes) */
	__u32 flags;		    /* in: KACC_ISSUE_* */
	__u32 slot;		    /* out: the graph's slot */
	__s32 err_node;		    /* out on EINVAL: the node concerned, -1 for the graph */
	__s32 err_code;		    /* out on EINVAL: CAD_E* or KACC_ENEEDO2G */
	char err_msg[KACC_MSG_LEN]; /* out on EINVAL: the validator's message */
};

/* Counters of the whole module (KACC_IOC_STATS, CAP_SYS_ADMIN only), like O2G_IOC_STATS. */
struct kacc_stats {
	__u64 graphs; /* graphs alive (issued, not released) */
	__u64 pinned; /* pages pinned */
	__u64 issued, refused, finished, cancelled;
	__u64 calc;	   /* CALC nodes run */
	__u64 local;	   /* progress runs on a CPU other than the home CPU */
	__u64 ipi;	   /* IPIs sent to a graph's home CPU */
	__u64 home;	   /* progress runs on the home CPU without an IPI */
	__u64 polled;	   /* progress runs by KACC_IOC_PROGRESS */
	__u64 slices;	   /* CALC slices run (a node is cut into 64 KiB slices) */
	__u64 sent;	   /* SEND nodes completed */
	__u64 received;	   /* RECV nodes completed */
	__u64 write_space; /* a socket had room again: its SEND worker resumed */
	__u64 send_ns;	   /* ns from SENDs being ready to their last byte in the socket
			    * (sum over the SENDs completed: the cost of the worker hop)
			    */
	__u64 user;	   /* user-op CALCs the processes ran (KACC_IOC_USER_DONE) */
};

/* KACC_IOC_CONN: SENDs to peer go out on socket fd (a connected TCP socket). EEXIST: the
 * peer has one already (given, or made at a SEND); EBUSY: another file sends on it;
 * ENOTCONN: not established; EOPNOTSUPP: an upper-layer protocol (kTLS, ...) is on it.
 */
struct kacc_conn_arg {
	__s32 fd;
	__s32 peer;
};

#define KACC_IOC_MAGIC 'k'
#define KACC_IOC_ISSUE _IOWR(KACC_IOC_MAGIC, 1, struct kacc_issue)
#define KACC_IOC_CANCEL _IO(KACC_IOC_MAGIC, 2)	/* arg: slot */
#define KACC_IOC_RELEASE _IO(KACC_IOC_MAGIC, 3) /* arg: slot; EBUSY while running */
/* KACC_IOC_PROGRESS arg: slices (64 KiB of a CALC) per graph to run, 0: all there is (run
 * a bounded number at a time, the CPU given up in between; EINTR on a fatal signal)
 */
#define KACC_IOC_PROGRESS _IO(KACC_IOC_MAGIC, 4) /* run the file's graphs here, now */
#define KACC_IOC_KICK _IO(KACC_IOC_MAGIC, 5)	 /* arg: slot; an event on this CPU */
#define KACC_IOC_STATS _IOR(KACC_IOC_MAGIC, 6, struct kacc_stats)
#define KACC_IOC_O2G _IO(KACC_IOC_MAGIC, 7) /* arg: the process's /dev/o2g fd */
#define KACC_IOC_CONN _IOW(KACC_IOC_MAGIC, 8, struct kacc_conn_arg)
/* EINVAL: the slot's graph does not offer that node (any more: cancelled); ENOENT: no graph */
#define KACC_IOC_USER_DONE _IOW(KACC_IOC_MAGIC, 9, struct kacc_user_done)

#endif
