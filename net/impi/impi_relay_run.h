/* impi_relay_run.h: the relay process's state and the functions its files share
 * (single-threaded; everything here belongs to the main thread). */
#ifndef IMPI_RELAY_RUN_H
#define IMPI_RELAY_RUN_H
#include "impi_relay.h"

enum rkind {
    K_LISTEN_CLIENT, /* master: where client A connects, as to an IMPI server */
    K_LISTEN_PRIV,   /* this relay's private gateway host */
    K_LISTEN_GLOB,   /* this relay's global gateway host */
    K_LISTEN_CTRL,   /* master: trunk control, secondaries connect here */
    K_CLIENT,        /* master: client A's startup connection */
    K_SERVER,        /* master: our startup connection to the real server */
    K_CTRL,          /* trunk control connection (either end) */
    K_HOST,          /* a host-to-host connection (A's or B's host) */
    K_PENDING,       /* accepted at a gateway, its 4-byte host index not yet acted on */
};
enum rside { SIDE_IN = 0, SIDE_OUT = 1 }; /* IN: private cluster A, OUT: external B */

struct rconn {
    struct impi_conn c;
    enum rkind kind;
    enum rside side;
    int host;        /* index in that side's host table, -1 until identified */
    bool connecting; /* non-blocking connect in progress */
    bool fini_rx, fini_tx;
    int trunk; /* K_CTRL on the master: which secondary */
    /* K_PENDING: the host index read so far; nothing more is read from an unidentified
     * peer (the rest waits in the kernel: TCP back-pressure bounds it). */
    uint8_t idx[IMPI_INT4_LEN];
    size_t nidx;
    bool parked;             /* K_PENDING: index complete, tables not: off epoll */
    struct rconn *dead_next; /* closed, on relay.dead until the event batch is over */
};

/* Unidentified gateway connections held at once. Real hosts identify themselves at once
 * and wait only until the tables are complete, so this bounds what unauthenticated peers
 * can hold (a file descriptor and this struct each), not what a job may use. */
#define RELAY_PENDING_MAX 256

struct relay_stats {
    uint64_t pkts[2], bytes[2]; /* by direction: [SIDE_IN] = A->B, [SIDE_OUT] = B->A */
    uint64_t *dest_pkts[2];     /* per destination proc: [SIDE_IN] B's procs, [SIDE_OUT] A's */
    uint64_t *dest_data[2];     /* the same, DATA/DATASYNC only (SYNCACKs follow sockets) */
    uint64_t acks_sent[2];      /* PROTOACKs we generated towards senders on that side */
    uint64_t acks_dropped[2];   /* PROTOACKs from LAM receivers on that side, consumed */
};

struct relay {
    int self; /* trunk index; 0 = master */
    int ep;
    double timeout;
    struct relay_map m;
    struct relay_stats st;
    struct impi_flow_cfg fc;    /* the job's ackmark/hiwater, the same in both views */
    struct impi_flow_rx *rx[2]; /* per (src proc, dest proc) received counts, by side */
    struct rconn *client, *server, *ctrl_master; /* ctrl_master: a secondary's link */
    struct rconn *ctrl[RELAY_MAX_TRUNKS];        /* master's links to secondaries */
    struct rconn **hosts[2];                     /* [side][host] once the map is complete */
    struct rconn *pending[RELAY_PENDING_MAX];    /* K_PENDING, oldest first */
    int npending;
    uint64_t dropped;   /* unidentified connections dropped (bad index, no room, closed) */
    int nctrl;          /* master: trunk control connections accepted */
    struct rconn *dead; /* closed connections that epoll events may still name */
    bool dance_started, all_done;
};
extern struct relay relay;

/* Main thread: end the job with a message (closes every connection, exits 1). */
void relay_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Main thread: allocate a connection object and register it with epoll (fd may be -1). */
struct rconn *relay_conn_new(int fd, enum rkind kind, const char *name);
/* Main thread: queue bytes and flush; fails the job on error. */
void relay_send(struct rconn *rc, const void *p, size_t n);
/* Main thread: the tables are complete: create host slots, connect where we are the
 * higher-indexed host, and identify pending accepts (impi_relay_fwd.c). */
void relay_start_dance(void);
/* Main thread: a host connection, a pending connection or a listening gateway socket has
 * input. */
void relay_host_input(struct rconn *rc);
void relay_pending_input(struct rconn *rc);
void relay_gateway_accept(struct rconn *lc);
/* Main thread: close rc and free it once the current batch of epoll events is handled
 * (relay_reap): a later event of the same batch may still name it. */
void relay_conn_retire(struct rconn *rc);
void relay_reap(void);
/* Main thread: true once every host connection has exchanged FINI both ways and drained. */
bool relay_hosts_finished(void);
/* Main thread: print the forwarding counters. */
void relay_print_stats(void);
#endif
