/*
 * wio_core.h: the WaitIO core's internal state (freestanding; the platform reaches it only
 * through wio_plat.h). One struct wio_core per process (the unit tests wire several in one
 * process). Processes are named by universe index (PROTOCOL.md 1); a peer is another
 * process, with at most one established connection (struct wio_conn) shared by every group.
 *
 * Every field below is changed only under the lock hook (wio_plat_lock).
 */
#ifndef WIO_CORE_H
#define WIO_CORE_H
#include "waitio.h"
#include "wio_plat.h"
#include "wio_req.h"
#include "wio_wire.h"
#include <stddef.h>
#include <stdint.h>

#define WIO_TEXT        200         /* longest error line */
#define WIO_HASH_MIN    256         /* fewest buckets of each matching hash */
#define WIO_CONN_SPARE  16          /* connections beyond two per peer: accepted, not yet named */
#define WIO_GROUP_MAGIC 0x50424752u /* "RGBP": a live group */

/* Transmit flags of a connection: control packets owed, sent before queued requests. */
enum {
    WIO_TX_HELLO = 1,
    WIO_TX_HELLO_OK = 2,
    WIO_TX_HELLO_NO = 4,
    WIO_TX_ACK = 8,
    WIO_TX_BYE = 16,
};

/* Where the receive side of a connection stands. */
enum wio_rx_state {
    WIO_RX_HDR, /* collecting a header */
    WIO_RX_PAY, /* collecting the payload of the header in `cur` */
};

struct wio_peer;

/* One byte stream to a peer (or, before HELLO, to someone). */
struct wio_conn {
    struct wio_core *core;
    struct wio_peer *peer; /* NULL while an accepted connection waits for its HELLO */
    void *transport;       /* the platform's handle; NULL once closed */
    enum wio_phase phase;
    uint32_t sseq;    /* sequenced packets sent */
    uint32_t rseq;    /* sequenced packets received = next expected seq */
    uint32_t ack_out; /* rseq value our last packet carried */
    unsigned txflags; /* WIO_TX_* owed */
    int close_after;  /* close once the packet in flight is out (after HELLO_NO) */
    int in_rx;        /* inside wio_rx: releasing waits until it returns */
    int release;      /* closed while in_rx: put back into the pool on the way out */
    /* receive side */
    enum wio_rx_state rx;
    uint8_t rhdr[WIO_HDR];
    uint32_t rfill;
    struct wio_hdr cur;
    uint64_t pay_left;       /* payload bytes of `cur` still to come */
    uint8_t *pay_dst;        /* where they go (NULL: dropped, a truncated message's tail) */
    uint64_t pay_room;       /* bytes pay_dst can still take */
    struct wio_req *pay_req; /* the receive they fill, or NULL */
    struct wio_ux *pay_ux;   /* the unexpected eager record they fill, or NULL */
    /* transmit side: one packet in flight */
    /* its header, and an EAGER payload copied right behind it: one send, one wake-up at
     * the receiver, instead of two */
    uint8_t thdr[WIO_HDR + WIO_EAGER_MAX];
    uint32_t thdr_len;   /* bytes of thdr in the packet */
    uint32_t thdr_off;   /* of those, handed to the platform */
    const uint8_t *tpay; /* its payload (a user buffer) */
    uint64_t tpay_len, tpay_off;
    struct wio_req *treq; /* completes when the packet is out, or NULL */
    int tbusy;            /* a packet is in flight */
    struct wio_conn *free_next;
};

/* Another process. */
struct wio_peer {
    uint32_t index, pb, rank;
    struct wio_addr addr;
    struct wio_conn *conn;       /* established, or NULL */
    struct wio_conn *out;        /* our HELLO not yet answered, or NULL */
    struct wio_req_list txq;     /* requests with a packet to send, in order */
    struct wio_req_list waitcts; /* sends whose RTS went out */
    struct wio_req_list recving; /* receives whose CTS went out, in order */
    uint32_t next_msgid;
    uint32_t nrecv;      /* receives posted or running from this peer */
    int bye_in, bye_out; /* BYE received / sent */
    int failed;
    char why[WIO_TEXT]; /* why it failed: names the peer */
};

/* An unexpected message (PROTOCOL.md 7): an eager payload copy, an RTS's header, or a
 * send to ourselves waiting for its receive. */
struct wio_ux {
    struct wio_ux *next;
    uint64_t group, tag, len;
    uint32_t src, msgid;
    uint8_t type;         /* WIO_T_EAGER, WIO_T_RTS, or WIO_UX_SELF */
    struct wio_req *sreq; /* WIO_UX_SELF: the send */
    uint8_t data[WIO_EAGER_MAX];
};
#define WIO_UX_SELF 0xff

struct wio_ux_bucket {
    struct wio_ux *head, *tail;
};

/* The public group (waitio_group_t points to one). */
struct PBGroup {
    uint32_t magic;
    int gid;
    struct wio_core *core;
    uint64_t key;
    int size, rank;
    uint32_t *members; /* universe index of each group rank */
    struct PBGroup *next;
};

struct wio_core {
    uint32_t self; /* our universe index */
    uint32_t npb, pbid, nprocs;
    uint32_t *pb_size; /* npb */
    uint32_t *pb_base; /* npb: universe index of each PB's rank 0 */
    struct wio_peer *peers;
    struct wio_conn *conns, *free_conns;
    uint32_t nconns;
    struct wio_req_list *posted; /* receives waiting for their message, hashed */
    struct wio_ux_bucket *ux;    /* messages waiting for their receive, hashed */
    uint32_t hmask;
    struct PBGroup *groups;
    int finalizing;
    void *plat; /* the platform's */
};

/* wio_group.c */
extern struct wio_core *wio_this;
struct PBGroup *wio_group_filter(struct wio_core *c, int gid, waitio_filter_func_t func[],
                                 int order[]);
struct PBGroup *wio_group_ranks(struct wio_core *c, int gid, int *rankap[], int order[]);

/* wio_conn.c */
void wio_core_bye(struct wio_core *c);
int wio_core_quiet(struct wio_core *c);
void wio_core_close_all(struct wio_core *c);
int wio_core_init(struct wio_core *c, uint32_t npb, uint32_t pbid, uint32_t rank,
                  const uint32_t *pb_size, const struct wio_addr *addrs);
void wio_core_free(struct wio_core *c);
struct wio_addr wio_peer_addr(struct wio_core *c, uint32_t index);
void wio_peer_need_conn(struct wio_core *c, struct wio_peer *p);
void wio_peer_fail(struct wio_core *c, struct wio_peer *p, const char *what, const char *detail);
void wio_conn_fail(struct wio_conn *k, const char *what, const char *detail);
void wio_conn_close(struct wio_conn *k);
void wio_conn_established(struct wio_conn *k);
void wio_hello_in(struct wio_conn *k, const struct wio_hdr *h);
int wio_peer_idle(struct wio_peer *p);

/* wio_rx.c */
void wio_log_trunc(struct wio_core *c, const struct wio_req *r);

/* wio_tx.c */
void wio_tx_pump(struct wio_conn *k);
void wio_peer_kick(struct wio_peer *p);

/* wio_match.c */
int wio_match_init(struct wio_core *c);
void wio_match_free(struct wio_core *c);
void wio_posted_add(struct wio_core *c, struct wio_req *r);
struct wio_req *wio_posted_take(struct wio_core *c, uint64_t group, uint32_t src, uint64_t tag);
void wio_posted_remove(struct wio_core *c, struct wio_req *r);
void wio_ux_add(struct wio_core *c, struct wio_ux *u);
struct wio_ux *wio_ux_take(struct wio_core *c, uint64_t group, uint32_t src, uint64_t tag);
void wio_posted_fail_peer(struct wio_core *c, uint32_t src, int err);

/* wio_text.c: a tiny freestanding line builder. */
struct wio_text {
    char *buf;
    size_t cap, len;
};
void wio_text_init(struct wio_text *t, char *buf, size_t cap);
void wio_text_str(struct wio_text *t, const char *s);
void wio_text_u64(struct wio_text *t, uint64_t v);
void wio_text_peer(struct wio_text *t, struct wio_core *c, uint32_t index);

#endif
