/* impi_relay_run.h: the relay process's state and the functions its files share
 * (single-threaded; everything here belongs to the main thread). */
#ifndef IMPI_RELAY_RUN_H
#define IMPI_RELAY_RUN_H
#include "impi_relay.h"

enum rkind {
    K_LISTEN_CLIENT, /* master: where client A connects, as to an IMPI server */
    K_LISTEN_PRIV,   /* this relay's private gateway host */
    K_LISTEN_GLOB,   /* this relay's global gateway host */
    K_LISTEN_CTRL,   /* trunk control: secondaries connect here (links, and HELO to the master) */
    K_CLIENT,        /* master: client A's startup connection */
    K_SERVER,        /* master: our startup connection to the real server */
    K_CTRL,          /* trunk control connection, later a trunk link (either end) */
    K_HOST,          /* a host-to-host connection (A's or B's host) */
    K_PENDING,       /* accepted at a gateway, its 4-byte host index not yet acted on */
};
/* IN: private cluster A; OUT: every external client ("B" below and in logs: A->B is
 * private to global). */
enum rside { SIDE_IN = 0, SIDE_OUT = 1 };

struct rconn {
    struct impi_conn c;
    enum rkind kind;
    enum rside side;
    int host;        /* K_HOST: slot in relay.hosts[side], -1 until identified (relay_nslots) */
    int ext;         /* private gateway listener and its accepts: the external client it serves */
    bool connecting; /* non-blocking connect in progress */
    bool fini_rx, fini_tx;
    int trunk; /* K_CTRL: the relay at the other end once known (a link), else -1 */
    /* K_PENDING: the host index read so far; nothing more is read from an unidentified
     * peer (the rest waits in the kernel: TCP back-pressure bounds it). */
    uint8_t idx[IMPI_INT4_LEN];
    size_t nidx;
    bool parked;             /* K_PENDING: index complete, tables not: off epoll */
    struct rconn *dead_next; /* closed, on relay.dead until the event batch is over */
};

/* A relay-to-relay link (impi_relay_link.c): the packets this relay hands to trunk k for
 * delivery, and the per-side end markers that FINI per hop needs with links. Directions
 * are indexed by the side the packet came from: [SIDE_IN] = A->B, [SIDE_OUT] = B->A. */
struct relay_link {
    struct rconn *rc;            /* NULL until opened or accepted; fd -1 once closed */
    bool done_tx[2], done_rx[2]; /* CT_DONE(side) sent / received */
    uint64_t pkts_tx[2], bytes_tx[2], pkts_rx[2], bytes_rx[2];
};

/* Unidentified gateway connections held at once. Real hosts identify themselves at once
 * and wait only until the tables are complete, so this bounds what unauthenticated peers
 * can hold (a file descriptor and this struct each), not what a job may use. */
#define RELAY_PENDING_MAX 256

struct relay_stats {
    uint64_t pkts[2], bytes[2]; /* by direction: [SIDE_IN] = A->B, [SIDE_OUT] = B->A */
    uint64_t *dest_pkts[2];     /* per destination proc: [SIDE_IN] external, [SIDE_OUT] A's */
    uint64_t *dest_data[2];     /* the same, DATA/DATASYNC only */
    uint64_t acks_sent[2];      /* PROTOACKs we generated towards senders on that side */
    uint64_t acks_dropped[2];   /* PROTOACKs from LAM receivers on that side, consumed */
    uint64_t *pair_pkts[2];     /* per (src, dest) pair, by the side of the src: counted
                                 * packets taken (the SIGUSR1 dump's flow-control state) */
    uint64_t *pair_acks[2];     /* the same pairs: PROTOACKs sent to the src */
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
    struct relay_link link[RELAY_MAX_TRUNKS];    /* [self] unused */
    /* [side][slot] once the map is complete: on the global side one per external host; on
     * the private side one per (A's host h, external client e), slot h * next + e, since
     * A's host connects to our host of each external client separately. */
    struct rconn **hosts[2];
    struct rconn *pending[RELAY_PENDING_MAX]; /* K_PENDING, oldest first */
    int npending;
    uint64_t dropped;   /* unidentified connections dropped (bad index, no room, closed) */
    int nctrl;          /* master: trunk control connections accepted */
    struct rconn *dead; /* closed connections that epoll events may still name */
    bool dance_started, all_done;
    bool tables_ready; /* secondary: CT_TEND came; the dance waits for every link */
};
extern struct relay relay;

/* Trunk control records (relay to relay only; not IMPI): 4-byte type, 4-byte length, then
 * the fields, each a big-endian 4-byte integer (CT_INT_LEN) or a byte string after its
 * length. The startup records are in impi_relay.c; these three make a control connection
 * a trunk link (impi_relay_link.c). */
#define CT_LINK    0x4c494e4bu /* secondary -> lower secondary: my index (opens a link) */
#define CT_PKT     0x504b5420u /* link: from side, to host index, one packet (exit side ids) */
#define CT_DONE    0x444f4e45u /* link: side; every host of that side sent FINI to the sender */
#define CT_HDR_LEN 8
#define CT_INT_LEN 4

/* A destination queue past this size means a peer stopped reading while LAM's own flow
 * control should have bounded the traffic: fail rather than eat the machine. */
#define RELAY_QUEUE_LIMIT (1ull << 30)

/* Main thread: end the job with a message (closes every connection, exits 1). */
void relay_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Main thread: allocate a connection object and register it with epoll (fd may be -1). */
struct rconn *relay_conn_new(int fd, enum rkind kind, const char *name);
/* Main thread: queue bytes and flush; fails the job on error. */
void relay_send(struct rconn *rc, const void *p, size_t n);
/* Main thread: write what rc has queued, if it is connected; fails the job on error. */
void relay_flush(struct rconn *rc);
/* Main thread: send one trunk control record (type, then n bytes of fields at p). */
void relay_ctrl_send(struct rconn *rc, uint32_t type, const void *p, uint32_t n);
/* Main thread, tables complete: the number of host connections on side s. */
int relay_nslots(enum rside s);
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
/* Main thread: FINI the hosts of a side once nothing more can come for them (after a host
 * FINI or a link's CT_DONE). */
void relay_fini_check(void);

/* Trunk links (impi_relay_link.c), all main thread. */
/* rc (a K_CTRL connection) is the link to trunk k. */
void relay_link_set(int k, struct rconn *rc);
/* Every link of this relay is open (or being opened): the dance may start. */
bool relay_links_ready(void);
/* Queue a packet of fr bytes that came from side `from` for host `host` of the other side
 * on the link to trunk k; returns where the caller writes the packet (valid until the
 * next queue operation on that link). */
uint8_t *relay_link_reserve(int k, enum rside from, int host, size_t fr);
/* A CT_PKT or CT_DONE record (fields p[0..len)) from link rc. */
void relay_link_record(struct rconn *rc, uint32_t type, const uint8_t *p, uint32_t len);
/* Every host of side s sent FINI here: tell every link (CT_DONE). */
void relay_links_side_done(enum rside s);
/* Every other trunk said CT_DONE(s). */
bool relay_links_done_rx(enum rside s);
/* The peer of link rc closed it: fine after both end markers, else the job fails. */
void relay_link_eof(struct rconn *rc);
/* Close the links that are done and drained; true once all are closed. */
bool relay_links_finished(void);
/* Print the links' counters. */
void relay_link_print_stats(void);
/* impi_relay_dump.c: print the whole forwarding state on stderr (SIGUSR1). */
void relay_dump(void);
#endif
