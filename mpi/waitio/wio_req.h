/*
 * wio_req.h: the library's view of the caller's 88-byte waitio_req_t, and request queues.
 *
 * The request lives entirely inside the caller's object (no library allocation per
 * message). The caller does not initialise it before waitio_isend/irecv (spec 2.1), so
 * those write every field; `magic` tells waitio_wait whether the object holds a request
 * this library posted. After waitio_wait returns the object is the caller's again.
 */
#ifndef WIO_REQ_H
#define WIO_REQ_H
#include "waitio.h"
#include <stddef.h>
#include <stdint.h>

#define WIO_REQ_LIVE  0x51524957u /* "WIRQ": posted, waitio_wait not yet returned */
#define WIO_REQ_SPENT 0x53524957u /* "WIRS": waited for; waitio_wait returns its result */

enum wio_req_kind { WIO_K_SEND = 1, WIO_K_RECV };

enum wio_req_state {
    WIO_S_QUEUED = 1, /* send: waiting for its connection or turn; recv: posted */
    WIO_S_RTS,        /* send: RTS out, waiting for CTS */
    WIO_S_DATA,       /* send: CTS in, DATA chunks going out; recv: CTS owed or out */
    WIO_S_DONE,
};

/* Request errors (waitio_wait returns non-zero for each). */
enum wio_req_err {
    WIO_R_OK = 0,
    WIO_R_TRUNC,  /* receive shorter than the message */
    WIO_R_PEER,   /* the peer failed or left (peer->why says how) */
    WIO_R_ARG,    /* bad argument (rank, group, buffer) */
    WIO_R_NOTREQ, /* waitio_wait on an object that holds no request */
};

struct wio_group;
struct wio_peer;

struct wio_req {
    struct wio_req *prev, *next; /* the one queue it is on (posted, txq, waitcts, recving) */
    struct PBGroup *group;
    char *buf;
    uint64_t len; /* the caller's length */
    uint64_t tag;
    uint64_t done;         /* bytes moved so far */
    uint64_t mlen;         /* recv: the message's length; send: bytes the receiver takes (CTS) */
    struct wio_peer *peer; /* NULL: ourselves */
    uint32_t msgid;        /* rendezvous: send: ours; recv: the sender's */
    uint32_t src;          /* recv: the sender's universe index */
    uint32_t magic;        /* WIO_REQ_LIVE / WIO_REQ_SPENT (offset 80, as the original's) */
    uint8_t kind, state, err, spare;
};
_Static_assert(sizeof(struct wio_req) == sizeof(waitio_req_t), "request fits the caller's 88 B");
_Static_assert(_Alignof(struct wio_req) <= _Alignof(waitio_req_t), "request alignment");
_Static_assert(sizeof(waitio_req_t) == 88, "published size");

/* FIFO of requests linked through prev/next. */
struct wio_req_list {
    struct wio_req *head, *tail;
};

/* Under the lock: queue operations (a request is on at most one list). */
static inline void wio_list_push(struct wio_req_list *l, struct wio_req *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}
static inline void wio_list_remove(struct wio_req_list *l, struct wio_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->prev = r->next = NULL;
}

/* Under the lock, any context: finish r with `err` and wake the waiter (wio_api.c). */
void wio_req_complete(struct wio_req *r, int err);

#endif
