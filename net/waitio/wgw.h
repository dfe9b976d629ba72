/*
 * wgw.h: waitio-gw, the front-end gateway of our WaitIO protocol (mpi/waitio/PROTOCOL.md
 * section 8). Linux user space, single-threaded, one level-triggered epoll loop; every
 * socket is non-blocking and every buffer bounded.
 *
 * wgw_main.c   options, listeners, the loop, signals, the first-header timeout
 * wgw_conn.c   one relayed connection: two ends, two bounded rings, flow control, teardown
 * wgw_route.c  the first header (HELLO or REGISTER), the REGISTER/TABLE rewriting and the
 *              real table that data connections are routed by
 */
#ifndef WGW_H
#define WGW_H
#include "wio_wire.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WGW_TICK_MS 250  /* timers' resolution: the first-header timeout, master retries */
#define WGW_RETRY_S 0.25 /* pause between attempts to reach the master */

/* The gateway's two networks. */
enum wgw_leg { WGW_PRIV, WGW_PUB, WGW_NLEGS };

/* What a connection is doing. End 0 is always the side that connected to the gateway, end
 * 1 the side the gateway opened (the master, or the destination of a HELLO). */
enum wgw_state {
    WGW_FIRST,  /* reading end 0's first header */
    WGW_REG_IN, /* reading the REGISTER payload from a PB's rank 0 */
    WGW_REG_UP, /* REGISTER going to the master, its TABLE or REFUSE coming back */
    WGW_FWD,    /* copying bytes both ways without looking at them */
};

/* What an epoll data pointer points to: both structs start with this. */
enum wgw_kind { WGW_K_LISTEN, WGW_K_END };

/* A bounded byte ring: bytes read from one end, waiting to be written to the other. */
struct wgw_ring {
    uint8_t *p;
    size_t cap, head, len;
    size_t max; /* high-water mark of len, for the counters */
};

struct wgw_conn;

/* One socket of a connection. */
struct wgw_end {
    enum wgw_kind kind; /* WGW_K_END: first, the epoll data pointer is read as a kind */
    int fd;             /* -1 when not open */
    uint32_t ev;        /* events registered with epoll; 0 = not in the epoll set */
    bool eof;           /* the peer closed its sending side */
    bool connecting;    /* non-blocking connect() not finished yet */
    enum wgw_leg leg;
    struct wgw_conn *c;
    char name[24]; /* "a.b.c.d:port" of the peer, for every log line */
};

/* A start-up message the gateway built, written to an end before anything else. */
struct wgw_msg {
    uint8_t *p; /* malloc'd, owned by the connection */
    size_t len, off;
};

struct wgw_conn {
    struct wgw_conn *prev, *next; /* every live connection (wgw_conns) */
    uint64_t id;
    enum wgw_state st;
    struct wgw_end end[2];
    struct wgw_ring q[2];  /* q[i]: read from end i, for end 1 - i (allocated in WGW_FWD) */
    struct wgw_msg pre[2]; /* pre[i]: a rewritten start-up message for end i */
    uint64_t tx[2];        /* bytes written to end i */
    uint32_t pauses[2];    /* times reading end i stopped because q[i] was full */
    bool full[2];          /* q[i] was full at the last wgw_conn_sync (counts pauses) */
    uint8_t hdr[WIO_HDR];  /* the header being read: end 0's first, or the master's reply */
    size_t hdr_have;
    uint8_t *body; /* the start-up payload being read (malloc'd) */
    size_t body_len, body_have;
    uint32_t dst;     /* HELLO: the destination universe index */
    uint32_t pbid;    /* REGISTER: the PB that registers */
    double t0;        /* when it was accepted */
    char what[64];    /* where it goes, for log lines ("dst 2 at a.b.c.d:p") */
    uint32_t retries; /* REGISTER: failed attempts to reach the master */
    double retry_at;  /* REGISTER: when to try the master again */
    bool dead;        /* closed; freed by wgw_conn_reap */
};

/* The command line (wgw_main.c). Addresses and ports in host order. */
struct wgw_opts {
    uint32_t ip[WGW_NLEGS];   /* the address of each leg (announced in tables) */
    uint16_t port[WGW_NLEGS]; /* each leg's listening port, as bound */
    uint32_t master_ip;
    uint16_t master_port;
    size_t buf;           /* capacity of each direction's ring */
    double first_timeout; /* seconds a connection may take to send its first header */
    unsigned max_conns;   /* live connections at most */
};
extern struct wgw_opts wgw_opts;

/* Totals since start (printed on SIGUSR1 and at exit). */
struct wgw_stats {
    uint64_t accepted, rejected, forwarded, registered, tables, refused, failed, live;
    uint64_t bytes; /* relayed, both directions */
};
extern struct wgw_stats wgw_stats;
extern int wgw_ep; /* the epoll fd */

/* wgw_conn.c. All: main thread. */
/* Take an accepted socket arriving on `leg`; returns NULL (fd closed) when out of memory. */
struct wgw_conn *wgw_conn_new(int fd, enum wgw_leg leg, const char *peer);
/* The loop: events reported for end e. */
void wgw_conn_event(struct wgw_end *e, uint32_t events);
/* Open end 1 towards ip:port (host order) from leg `leg`'s address; 0 or -1 (errno). */
int wgw_conn_open(struct wgw_conn *c, enum wgw_leg leg, uint32_t ip, uint16_t port);
/* WGW_REG_UP: the master refused or failed (errno err): close end 1 and try again in
 * WGW_RETRY_S (wgw_conn_expire does), as a PB's rank 0 retries until its timeout. */
void wgw_conn_retry(struct wgw_conn *c, int err);
/* Enter WGW_FWD (allocates both rings); 0 or -1 when out of memory. */
int wgw_conn_forward(struct wgw_conn *c);
/* Hand msg (malloc'd, ownership passes) to end i, to be written before any relayed byte. */
void wgw_conn_put(struct wgw_conn *c, int i, uint8_t *msg, size_t len);
/* Close both ends now (after a best-effort flush towards the healthy ones), logging the
 * reason and the connection's counters; `bad` is the end that failed, or -1. c is freed;
 * returns -1, so that callers can `return wgw_conn_close(...)`. */
int wgw_conn_close(struct wgw_conn *c, int bad, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Recompute and register both ends' epoll events from the connection's state. */
void wgw_conn_sync(struct wgw_conn *c);
/* Free the connections closed since the last call (after each batch of events). */
void wgw_conn_reap(void);
/* Log one line of counters per live connection and the totals. */
void wgw_conn_dump(void);
/* Close connections whose first header is overdue, retry the master for those waiting
 * (called every WGW_TICK_MS). */
void wgw_conn_expire(double now);

/* wgw_route.c. All: main thread. */
/* Each returns 0, or -1 when it closed (and freed) c. */
/* End 0's first header is complete (c->hdr): validate it and start the connection's next
 * state (HELLO: open the destination; REGISTER: allocate c->body for the payload). */
int wgw_route_first(struct wgw_conn *c);
/* The REGISTER payload is complete (c->body): rewrite it and open the master. */
int wgw_route_register(struct wgw_conn *c);
/* The master's reply header is complete (c->hdr): check it and allocate c->body. */
int wgw_route_reply_hdr(struct wgw_conn *c);
/* The master's reply is complete (c->hdr, c->body): forward it, rewritten, to end 0. */
int wgw_route_reply(struct wgw_conn *c);
#endif
