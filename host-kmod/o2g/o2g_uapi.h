/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * o2g_uapi.h: the interface of /dev/o2g (host-kmod/o2g/o2g.ko), shared by the module and
 * the processes that use it.
 *
 * O2G (seed 004) matches MPI messages inside the receive path of TCP: the process hands
 * connected TCP sockets to the module, posts its receives with pinned buffers, and the
 * module's sk_data_ready handler (softirq) parses the native 48-byte header
 * (mpi/core/mpe_wire.h), matches EAGER messages against the posted receives
 * (mpi/core/match.c, MPI's rules) and copies the payload straight into the receive buffer.
 * The process learns about completions from a ring it maps: testing a request costs no
 * system call.
 *
 * Use, per open file (one per process):
 *   1. O2G_IOC_SETUP: give the dump area (page-aligned, O2G_DUMP_CHUNK multiple; pinned
 *      once, until close) and the eager limit; the module makes the completion ring.
 *   2. mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0): the ring.
 *   3. O2G_IOC_ATTACH each connected TCP socket (the peer's rank with it).
 *   4. O2G_IOC_POST receives; read completions from the ring; O2G_IOC_FREE dump records
 *      once copied out; O2G_IOC_WAIT or poll() to sleep until the ring is not empty.
 * Sending is not the module's business: the process writes headers and payloads to its
 * sockets itself.
 *
 * Pinned pages (the dump area, posted receive buffers) count against the opener's
 * RLIMIT_MEMLOCK like mlock()ed memory (ENOMEM beyond it, unless CAP_IPC_LOCK). A file
 * serves the process that opened it: ioctls from another one (a forked child) fail with
 * EPERM, O2G_IOC_STATS excepted. Taking a socket, the module also refuses what is not the
 * process's own plain connected TCP socket (o2g_sock.c).
 *
 * The dump area. Every message the module cannot place in a posted receive lands in the
 * dump area as a record of whole O2G_DUMP_CHUNK-byte chunks:
 *   - an EAGER message that matched no posted receive: its payload (O2G_CQE_UNEXP; the
 *     message also stays in the module's unexpected queue, where a later POST finds it);
 *   - an RTS header (a large or synchronous message announced without its payload): the
 *     48 header bytes. An RTS is a message for matching like EAGER (MPI's order covers
 *     both): it takes a posted receive on arrival (O2G_CQE_RTS: the receive is done with
 *     in the module, the process answers CTS) or waits in the unexpected queue
 *     (O2G_CQE_UNEXP_RTS, then O2G_POST_RTS or O2G_IOC_FREE, as UNEXP);
 *   - any other header (HELLO, CTS, DATA, CREDIT, BYE): the 48 header bytes as they
 *     came, then DATA's payload (O2G_CQE_CONTROL). The module does not interpret them: the
 *     process's engine runs that protocol. Control records of one connection appear in the
 *     ring in the order of the stream, interleaved in order with that connection's EAGER
 *     and RTS messages' completions.
 * A DATA payload longer than O2G_DATA_PIECE comes in several records, so that no record
 * outgrows the dump area: the first holds the header and the first O2G_DATA_PIECE bytes
 * (CONTROL), each next one (O2G_CQE_MORE) the next bytes, at most O2G_DATA_PIECE; they
 * follow one another in the ring with nothing of that connection between them.
 * A record belongs to the module until its completion entry is in the ring; then it is
 * the process's to read until it gives it back with O2G_IOC_FREE (offset of the record).
 * An UNEXP entry is a notice (for MPI_Probe and progress): the message is taken by a POST
 * (answer O2G_POST_UNEXP) or by O2G_IOC_FREE of its record, whichever comes first; an UNEXP
 * entry read later may describe a message a POST already took.
 * When the dump area is full the module stops reading that connection: the bytes stay in
 * the socket, TCP's window closes and the peer stops; nothing is dropped. Reading resumes
 * on the next O2G_IOC_FREE (or any other ioctl of the file, O2G_IOC_WAIT included; poll()
 * does not restart it).
 */
#ifndef O2G_UAPI_H
#define O2G_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define O2G_DEV "/dev/o2g"
#define O2G_DUMP_CHUNK 1024u	   /* dump allocation unit, bytes */
#define O2G_MAX_CONNS 64	   /* sockets attached per file */
#define O2G_DATA_PIECE (64u << 10) /* DATA payload bytes per record at most */
#define O2G_ANY_SOURCE (-1)	   /* = MATCH_ANY_SOURCE of mpi/core/match.h */
#define O2G_ANY_TAG (-2)	   /* = MATCH_ANY_TAG */

/* o2g_setup.max_eager bounds (EINVAL outside them): the library's limits (32 KiB, 1 MiB)
 * are well inside; kacc cuts its messages into pieces of max_eager bytes, so a bound below
 * keeps its piece count per message small and one above keeps a piece's stride in range.
 */
#define O2G_MIN_EAGER 1024u
#define O2G_MAX_EAGER (16u << 20)

/*
 * The completion ring (mmap offset 0): a struct o2g_ring_hdr, then `entries` (a power of
 * two, O2G_IOC_SETUP says how many) struct o2g_cqe at offset O2G_RING_CQE_OFF.
 *
 * One producer (the module, under its lock, from softirq or ioctl) and one consumer (the
 * process). Entry i lives at cqe[i & (entries - 1)]; head and tail count forever (u32,
 * wrapping). The consumer owns `tail`, the producer owns `head`.
 *
 * Memory order (the argument):
 *   producer: write cqe[head & mask]; smp_store_release(&head, head + 1)
 *   consumer: h = load_acquire(&head); read cqe[t & mask] for t < h; store_release(&tail, t)
 *   producer, before reusing a slot: t = smp_load_acquire(&tail)
 * The consumer's acquire of head pairs with the producer's release: seeing head = n means
 * the entries below n are completely written (no torn entry, on any CPU). The producer's
 * acquire of tail pairs with the consumer's release: seeing tail = n means the consumer
 * has finished reading the entries below n, so the producer may overwrite them. In C11
 * user space: __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) and
 * __atomic_store_n(&r->tail, t, __ATOMIC_RELEASE).
 * The module never writes tail and never trusts it beyond "how many slots are free": a
 * process that writes nonsense there only stalls its own connections.
 *
 * The ring never overflows: every entry the module will write has a slot reserved before
 * the event that makes it (a queued POST, a message being dumped, an attached socket's
 * closing entry). When none is free, POST fails with ENOSPC and the connections stop
 * reading until the process advances tail and makes any ioctl.
 */
struct o2g_ring_hdr {
	__u32 head;	/* written by the module */
	__u32 pad0[15]; /* head and tail on separate cache lines */
	__u32 tail;	/* written by the process */
	__u32 pad1[15];
};

#define O2G_RING_CQE_OFF 128

enum o2g_cqe_kind {
	O2G_CQE_RECV = 1,  /* a POSTed receive completed (or failed: status) */
	O2G_CQE_UNEXP,	   /* an EAGER message without receive is in the dump area */
	O2G_CQE_CONTROL,   /* another header (and payload) is in the dump area */
	O2G_CQE_CONN,	   /* a connection ended (status: -ECONNRESET closed, -EPROTO
			    * corrupt header, -EMSGSIZE message larger than the dump
			    * area); its posted receives naming its peer failed too
			    */
	O2G_CQE_RTS,	   /* a POSTed receive took an RTS on arrival: the RTS header is
			    * the record at off (free it); nothing was written to the
			    * buffer, which is unpinned
			    */
	O2G_CQE_UNEXP_RTS, /* an RTS without receive: its header at off (as UNEXP) */
	O2G_CQE_MORE,	   /* the next bytes of the DATA payload of the last CONTROL
			    * record of this connection (len: the record's bytes)
			    */
};

/* One completion, 48 bytes. Fields not listed for a kind are 0. */
struct o2g_cqe {
	__u64 cookie; /* RECV/RTS: the POST's cookie */
	__u64 len;    /* RECV/UNEXP/RTS/UNEXP_RTS: message bytes as sent (RECV: may exceed
		       * the buffer, then status is -EMSGSIZE and the buffer holds its first
		       * bytes); CONTROL: record bytes (48 + payload)
		       */
	__u64 off;    /* UNEXP/CONTROL/RTS/UNEXP_RTS: the record's offset in the dump area */
	__u32 kind;   /* enum o2g_cqe_kind */
	__s32 status; /* 0, or a negative errno */
	__u32 ctx;    /* RECV/UNEXP/RTS/UNEXP_RTS: the message's context id */
	__s32 src;    /* ... source rank; CONN: the peer given to ATTACH */
	__s32 tag;    /* ... tag */
	__u32 conn;   /* the connection the message came on (RECV: if any) */
};

/* O2G_IOC_SETUP, once per file, before anything else. */
struct o2g_setup {
	__u64 dump_addr;  /* in: page-aligned start of the dump area */
	__u64 dump_len;	  /* in: bytes, a multiple of O2G_DUMP_CHUNK and of the page */
	__u64 max_eager;  /* in: the job's eager limit (longer EAGER = corrupt), in
			   * [O2G_MIN_EAGER, O2G_MAX_EAGER]
			   */
	__u32 entries;	  /* out: ring entries (a power of two) */
	__u32 ring_bytes; /* out: bytes to mmap at offset 0 */
};

/* O2G_IOC_ATTACH: hand a connected TCP socket to the module. The file keeps a reference
 * to the socket until DETACH or close; the process may close its own fd. EBUSY: the
 * socket is already claimed by someone (o2g, kcm, a BPF sockmap, ...).
 */
struct o2g_attach {
	__s32 fd;    /* in: the socket */
	__s32 peer;  /* in: the source rank the peer's messages carry, for errors */
	__u32 conn;  /* out: the connection id used in completions and DETACH */
	__u32 flags; /* in: O2G_ATTACH_* */
};

/* o2g_attach.flags: the process never frees this connection's UNEXP records; a kernel
 * receive (kacc, o2g_kern.h) that takes such a message gives its record back itself
 * (and stalled reads resume). For a connection only kernel receives read from.
 */
#define O2G_ATTACH_KFREE 1u

/* O2G_IOC_POST: post a receive. The buffer is pinned now, until completion. */
struct o2g_post {
	__u64 cookie; /* in: returned in the RECV completion; unique among posted */
	__u64 buf;    /* in: the receive buffer */
	__u64 len;    /* in: its bytes */
	__u32 ctx;    /* in: context id */
	__s32 src;    /* in: source rank or O2G_ANY_SOURCE */
	__s32 tag;    /* in: tag or O2G_ANY_TAG */
	__u32 result; /* out: enum o2g_post_result */
	/* out, O2G_POST_UNEXP and O2G_POST_RTS only: the matched unexpected message */
	__u64 off;     /* its record in the dump area: copy it out, then O2G_IOC_FREE */
	__u64 msg_len; /* its length */
	__s32 msg_src;
	__s32 msg_tag;
	__u32 msg_conn;
	__u32 pad;
};

enum o2g_post_result {
	/* Queued: the RECV completion comes through the ring. */
	O2G_POST_QUEUED = 1,
	/* Matched an unexpected message already complete in the dump area (off, msg_*):
	 * nothing is pinned and no completion follows; the process copies and frees.
	 */
	O2G_POST_UNEXP,
	/* The seed's race: the oldest matching unexpected message is still arriving (its
	 * header was read, its payload is being delivered). The receive is bound to it: when
	 * the last byte is in, the module copies the record into the buffer, frees the record
	 * and writes the RECV completion. MPI order is kept: the receive takes the oldest
	 * matching message, finished or not, never a newer one that happens to be complete.
	 */
	O2G_POST_DEFERRED,
	/* Matched an unexpected RTS: off is its 48-byte header record (copy, then
	 * O2G_IOC_FREE), msg_* describe it; nothing is pinned and no completion follows.
	 */
	O2G_POST_RTS,
};

/* O2G_IOC_STATS: the module's counters, over every file (so a test can see that a
 * killed process left nothing pinned); CAP_SYS_ADMIN only (they are every user's traffic).
 */
struct o2g_stats {
	__u64 pinned_pages;    /* pages pinned now (dump areas and receive buffers) */
	__u64 posted;	       /* receives queued in the module now */
	__u64 matched_softirq; /* EAGER/RTS messages matched to a posted receive on arrival */
	__u64 unexpected;      /* EAGER/RTS messages dumped unmatched */
	__u64 matched_post;    /* POSTs answered with O2G_POST_UNEXP or _RTS */
	__u64 deferred;	       /* POSTs answered with O2G_POST_DEFERRED */
	__u64 control;	       /* control records dumped */
	__u64 stalls;	       /* times a connection stopped reading (dump or ring full) */
	__u64 conn_errors;     /* connections failed (corrupt, closed, too large) */
	__u64 attached;	       /* sockets attached now */
	__u64 dropped;	       /* bytes dropped: always 0 (kept to be checked) */
};

#define O2G_IOC_MAGIC 0xb2
#define O2G_IOC_SETUP _IOWR(O2G_IOC_MAGIC, 1, struct o2g_setup)
#define O2G_IOC_ATTACH _IOWR(O2G_IOC_MAGIC, 2, struct o2g_attach)
/* arg: the connection id. The socket gets its callbacks back; its unread bytes stay, but
 * a message half read is lost: the connection ends as if failed (an O2G_CQE_CONN entry
 * with -ECONNABORTED; posted receives naming its peer fail too). Meant for the end of a
 * connection (after BYE), and done by close for every attached socket.
 */
#define O2G_IOC_DETACH _IOW(O2G_IOC_MAGIC, 3, __u32)
#define O2G_IOC_POST _IOWR(O2G_IOC_MAGIC, 4, struct o2g_post)
/* arg: pointer to the cookie. 0: cancelled (no completion follows); ENOENT: not posted
 * (already completed: its completion is or will be in the ring); EBUSY: the receive is
 * being filled or is bound to an arriving message (DEFERRED), it will complete.
 */
#define O2G_IOC_CANCEL _IOW(O2G_IOC_MAGIC, 5, __u64)
/* arg: pointer to the record offset. EINVAL: no record there, or not the process's yet.
 * An UNEXP record still unmatched leaves the unexpected queue too (a matched probe).
 */
#define O2G_IOC_FREE _IOW(O2G_IOC_MAGIC, 6, __u64)
/* arg: pointer to a timeout in milliseconds (0: none). Sleeps until the ring holds an
 * entry; returns 0, or ETIMEDOUT, or EINTR.
 */
#define O2G_IOC_WAIT _IOW(O2G_IOC_MAGIC, 7, __u32)
#define O2G_IOC_STATS _IOR(O2G_IOC_MAGIC, 8, struct o2g_stats)

#endif
