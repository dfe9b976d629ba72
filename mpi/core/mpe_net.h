/*
 * mpe_net.h: the state of one node-pair connection, shared by mpe_net.c (sending,
 * binding) and mpe_net_rx.c (the receive parser). Every field is guarded by the network
 * lock (see mpe_net.c).
 */
#ifndef MPI_MPE_NET_H
#define MPI_MPE_NET_H
#include "mpe_internal.h"
#include "mpe_frame.h"

#define MPE_HANDLES (MPE_RDV_HANDLES * 2) /* see mpe_handle_new() */
#define MPE_CTL_MAX (MPE_HANDLES + 16)
/* EAGER payloads up to this size are copied behind their header and handed to the
 * transport in one send (struct mpe_tx): with the header, they fit one TCP segment on a
 * 1500-byte MTU (MSS 1460). */
#define MPE_TX_GLUE 1024

struct mpe_reqq {
    struct mpe_req *head, *tail;
};

/* Under the network lock: a FIFO of requests through mpe_req.next. */
static inline void mpe_reqq_push(struct mpe_reqq *q, struct mpe_req *r)
{
    r->next = 0;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
}
static inline struct mpe_req *mpe_reqq_pop(struct mpe_reqq *q)
{
    struct mpe_req *r = q->head;
    if (r) {
        q->head = r->next;
        if (!q->head)
            q->tail = 0;
    }
    return r;
}

/* Rendezvous requests named by handle (mpe_handle_new). */
struct mpe_handles {
    struct mpe_req *req[MPE_HANDLES];
    uint16_t gen[MPE_HANDLES];
    uint32_t next, used;
};

/* The item being transmitted: its header, then its payload. An EAGER payload of up to
 * MPE_TX_GLUE bytes is copied behind the header and goes with it in one transport send:
 * two sends would make two TCP segments (no Nagle), and the receiver's second segment
 * also forces an immediate ACK frame (lwIP acknowledges every second segment at once). */
struct mpe_tx {
    int active;
    size_t hlen, hoff; /* hdr bytes to send (header and glued payload), bytes sent */
    const void *payload;
    uint64_t plen, poff;
    struct mpe_req *req;                     /* completes when the payload is all handed over */
    uint8_t hdr[MPE_WIRE_HDR + MPE_TX_GLUE]; /* last: tx_next() clears what precedes it */
};

/* Receive parser (mpe_net_rx.c): a header being gathered, then a payload being stored
 * (mpe_frame.h). */
struct mpe_rx {
    uint8_t hdr[MPE_WIRE_HDR];
    struct mpe_frame f;
    struct mpe_msg *msg;  /* EAGER: its descriptor */
    struct mpe_req *rreq; /* EAGER straight into a receive, or DATA */
};

struct mpe_conn {
    struct mpe_node *node;
    int peer;
    void *transport; /* the platform's (a ksock) */
    int failed, pumping, hello_seen, bye_seen;
    /* sending */
    uint32_t tx_seq;
    int32_t credit_descs, credit_slots;
    struct mpe_wire ctl[MPE_CTL_MAX];
    uint32_t ctl_head, ctl_n;
    struct mpe_reqq data, msgs;
    struct mpe_handles rdv_out; /* our RTS waiting for the peer's CTS */
    struct mpe_tx cur;
    /* receiving */
    uint32_t rx_seq;
    struct mpe_rx rx;
    struct mpe_handles rdv_in; /* our receives waiting for the peer's DATA */
    struct mpe_msg *descs, *free_descs;
    uint8_t *slots;
    int16_t free_slot[MPE_NET_SLOTS];
    int nfree_slots;
    uint32_t ret_descs, ret_slots; /* freed, not yet returned as CREDIT */
    uint64_t rx_msgs, rx_direct;   /* statistics: eager messages, of which streamed direct */
};

uint32_t mpe_handle_new(struct mpe_handles *h, struct mpe_req *r);
/* The request a handle names (NULL: unknown or stale), and the same taking it out. */
struct mpe_req *mpe_handle_peek(const struct mpe_handles *h, uint32_t handle);
struct mpe_req *mpe_handle_take(struct mpe_handles *h, uint32_t handle);
void mpe_ctl_push(struct mpe_conn *c, const struct mpe_wire *w);
void mpe_tx_pump(struct mpe_conn *c);
void mpe_desc_put(struct mpe_conn *c, struct mpe_msg *m);

#endif
