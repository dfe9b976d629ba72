/*
 * impi_relay.c: impi-relay's main program: options, the event loop, the relayed
 * client-server startup (master relay) and the trunk control channel that hands the
 * startup records to secondary relays. The host side is in impi_relay_fwd.c, the tables in
 * impi_relay_map.c.
 */
#include "impi_relay_run.h"
#include "impi_util.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct relay relay;

/* The startup's trunk control records (the format and the link records are in
 * impi_relay_run.h). */
#define CT_HELO 0x48454c4fu /* secondary -> master: index, priv ip/port, glob ip/port */
#define CT_TRKS 0x54524b53u /* master -> secondary: K and every trunk's addresses */
#define CT_JOB  0x4a4f4220u /* master -> secondary: nclients, A's client rank */
#define CT_LABL 0x4c41424cu /* master -> secondary: label, A's data, the server's reply */
#define CT_TEND 0x54454e44u /* master -> secondary: tables complete */

/* One trunk's addresses: priv ip, RELAY_MAX_EXT priv ports, glob ip, glob port, control
 * port. */
#define CT_TRUNK_LEN            ((4 + RELAY_MAX_EXT) * CT_INT_LEN)
/* CT_HELO: the index, then its trunk's addresses. CT_TRKS: K, then K trunks' addresses. */
#define CT_HELO_LEN             (CT_INT_LEN + CT_TRUNK_LEN)
#define CT_TRKS_LEN(k)          (CT_INT_LEN + CT_TRUNK_LEN * (uint32_t)(k))
/* CT_JOB: nclients, A's client rank. */
#define CT_JOB_LEN              (2 * CT_INT_LEN)
/* CT_LABL: label, A's data length, A's data, the reply's length, the reply. */
#define CT_LABL_LEN(alen, rlen) (3 * CT_INT_LEN + (alen) + (rlen))
/* The longest record there is: a CT_LABL of two startup commands' payloads. */
#define CT_MAX_LEN              CT_LABL_LEN(IMPI_MAX_CMD_LEN, IMPI_MAX_CMD_LEN)

/* The command line (parse_args); the ports are updated to the ones bound when 0 asked
 * the kernel to choose. */
static struct {
    uint32_t priv_ip, glob_ip, server_ip;
    uint16_t client_port, server_port, ctrl_port;
    uint32_t auth_mask, server_auth_mask; /* methods accepted from A, offered to the server */
    uint64_t key, server_key;
} opts;

/* The relayed startup: the master between client A and the real server, and the trunks'
 * registration. */
static struct {
    int helos; /* master: secondaries registered so far */
    enum { CL_AUTH, CL_KEY, CL_RUN } cl;
    enum { SV_AUTH, SV_RUN } sv;
    struct impi_label_seq aseq; /* client A's labels, checked in LAM's order */
    struct impi_client_shape ashape;
    uint8_t *adata[IMPI_NLABELS]; /* A's submission per label (malloc), for the reply */
    uint32_t alen[IMPI_NLABELS];
    bool client_fini, server_fini_sent;
    struct rconn *lclient; /* master: A's listener, watched once every trunk registered */
    double last;           /* when the startup last made progress, for the stall limit */
} startup;

/* Main thread: see impi_relay_run.h. */
void relay_fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    impi_log(0, "error: %s; ending the job", msg);
    relay_print_stats();
    exit(1); /* the kernel closes every socket: LAM peers see the drop and abort */
}

/* Main thread: see impi_relay_run.h. */
struct rconn *relay_conn_new(int fd, enum rkind kind, const char *name)
{
    struct rconn *rc = calloc(1, sizeof *rc);
    if (!rc)
        relay_fail("out of memory");
    impi_conn_init(&rc->c, fd, name);
    rc->kind = kind;
    rc->host = -1;
    rc->trunk = -1;
    if (fd >= 0 && impi_conn_watch(&rc->c, relay.ep, rc))
        relay_fail("epoll: %s", strerror(errno));
    return rc;
}

/* Main thread: wrap fd, a non-blocking connect in progress; on_connected completes it
 * when epoll reports the socket writable. */
static struct rconn *conn_connecting(int fd, enum rkind kind, const char *name)
{
    struct rconn *rc = relay_conn_new(fd, kind, name);
    rc->connecting = true;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = rc};
    epoll_ctl(relay.ep, EPOLL_CTL_MOD, fd, &ev);
    rc->c.want_out = true;
    return rc;
}

/* Main thread: see impi_relay_run.h. */
void relay_flush(struct rconn *rc)
{
    if (rc->c.fd >= 0 && !rc->connecting && impi_conn_flush(&rc->c, relay.ep, rc))
        relay_fail("%s: send failed: %s", rc->c.name, strerror(errno));
}

/* Main thread: see impi_relay_run.h. */
void relay_conn_retire(struct rconn *rc)
{
    impi_conn_close(&rc->c, relay.ep); /* fd -1: on_event ignores events naming it */
    rc->dead_next = relay.dead;
    relay.dead = rc;
}

/* Main thread: see impi_relay_run.h. */
void relay_reap(void)
{
    while (relay.dead) {
        struct rconn *rc = relay.dead;
        relay.dead = rc->dead_next;
        free(rc);
    }
}

/* Main thread: see impi_relay_run.h. */
void relay_send(struct rconn *rc, const void *p, size_t n)
{
    if (impi_conn_send(&rc->c, p, n))
        relay_fail("out of memory");
    relay_flush(rc);
}

/* Any context: write a record field at p, return where the next one goes. */
static uint8_t *ct_put32(uint8_t *p, uint32_t v)
{
    impi_put32(p, v);
    return p + CT_INT_LEN;
}
static uint8_t *ct_put_bytes(uint8_t *p, const void *d, uint32_t n)
{
    memcpy(p, d, n);
    return p + n;
}

/* Any context: read a record field at *p (inside the record: callers checked the length)
 * and move *p past it. */
static uint32_t ct_get32(const uint8_t **p)
{
    uint32_t v = impi_get32(*p);
    *p += CT_INT_LEN;
    return v;
}

/* Any context: a trunk's addresses (CT_TRUNK_LEN bytes). */
static uint8_t *ct_put_trunk(uint8_t *p, const struct relay_trunk *t)
{
    p = ct_put32(p, t->priv_ip);
    for (int e = 0; e < RELAY_MAX_EXT; e++)
        p = ct_put32(p, t->priv_port[e]);
    p = ct_put32(p, t->glob_ip);
    p = ct_put32(p, t->glob_port);
    return ct_put32(p, t->ctrl_port);
}
static void ct_get_trunk(const uint8_t **p, struct relay_trunk *t)
{
    t->priv_ip = ct_get32(p);
    for (int e = 0; e < RELAY_MAX_EXT; e++)
        t->priv_port[e] = (uint16_t)ct_get32(p);
    t->glob_ip = ct_get32(p);
    t->glob_port = (uint16_t)ct_get32(p);
    t->ctrl_port = (uint16_t)ct_get32(p);
}

/* Main thread: see impi_relay_run.h. */
void relay_ctrl_send(struct rconn *rc, uint32_t type, const void *p, uint32_t n)
{
    uint8_t h[CT_HDR_LEN];
    ct_put32(ct_put32(h, type), n);
    relay_send(rc, h, sizeof h);
    if (n)
        relay_send(rc, p, n);
}

/* Sends a record to every secondary. */
static void ctrl_all(uint32_t type, const void *p, uint32_t n)
{
    for (int k = 1; k < relay.m.K; k++)
        relay_ctrl_send(relay.ctrl[k], type, p, n);
}

/* Sends an IMPI startup command to a peer. */
static void cmd_send(struct rconn *rc, uint32_t cmd, const void *p, uint32_t n)
{
    uint8_t h[IMPI_CMD_HDR_LEN];
    impi_cmd_put(h, cmd, n);
    relay_send(rc, h, sizeof h);
    if (n)
        relay_send(rc, p, n);
}

/* Input buffered per connection at most: twice the largest startup command
 * (IMPI_MAX_CMD_LEN), so that one always fits whole. */
#define CONN_BUF_MAX (8u << 20)

/* Set when the dance has started, so that the event loop hands the links' records that
 * came before it to ctrl_input (links_backlog). */
static bool link_backlog;

/* The tables are complete: print them and start the host connections. */
static void tables_done(void)
{
    int e = relay_map_finish(&relay.m);
    if (e)
        relay_fail("incomplete startup tables: %s", impi_strerror(e));
    /* A packet, or a link record carrying one, must fit in a connection's input buffer. */
    if ((uint64_t)relay.m.maxlen + IMPI_PKT_HDR_LEN + CT_HDR_LEN + 2 * CT_INT_LEN > CONN_BUF_MAX)
        relay_fail("the job's maximum packet length %u is larger than this relay buffers",
                   relay.m.maxlen);
    relay_map_print(&relay.m, relay.self, stdout);
    /* LAM checks an accepted host connection against the first host at its source
     * address: behind this relay that is our host for the lowest external client, so a LAM
     * client A fails to accept the others (net/impi/README.md). Not refused: a client that
     * checks by the announced index (the unikernel) is served. */
    if (relay.m.me != relay.m.nclients - 1 && relay.m.nclients > 2)
        impi_log(0,
                 "note: client A (client %d of %d) must accept host connections of %d higher "
                 "client(s) from this relay's address: a LAM client A aborts there (it must be "
                 "the highest client); a client that checks host indices does not",
                 relay.m.me, relay.m.nclients, relay.m.nclients - 1 - relay.m.me);
    relay_start_dance();
    link_backlog = true;
}

/* Master: one record of A's submission plus the server's reply. */
static void on_label_reply(const uint8_t *p, uint32_t n)
{
    uint32_t label = impi_get32(p);
    const struct impi_label_info *li = impi_label_lookup(label);
    if (!li || !startup.adata[li->order])
        relay_fail("server: reply for label 0x%04x that client A did not submit", label);
    int i = li->order, e;
    if ((e = relay_map_label(&relay.m, label, startup.adata[i], startup.alen[i], p, n)))
        relay_fail("server: bad %s reply: %s", li->name, impi_strerror(e));
    /* The reply with each external client's part replaced by its trunk view: at most 16
     * bytes per proc or per trunk host of each client more than the server's reply. */
    size_t cap = 64 + (size_t)n + startup.alen[i] +
                 16u * ((size_t)relay.m.out.nprocs + RELAY_MAX_TRUNKS * IMPI_MAX_CLIENTS);
    uint8_t *out = malloc(cap);
    uint32_t olen;
    if (!out)
        relay_fail("out of memory");
    if ((e = relay_private_reply(&relay.m, label, startup.adata[i], startup.alen[i], p, n, out,
                                 (uint32_t)cap, &olen)))
        relay_fail("cannot build the private %s reply: %s", li->name, impi_strerror(e));
    relay_send(relay.client, out, olen);
    free(out);
    if (relay.m.K > 1) {
        uint32_t rl = CT_LABL_LEN(startup.alen[i], n);
        uint8_t *r = malloc(rl), *q = r;
        if (!r)
            relay_fail("out of memory");
        q = ct_put32(q, label);
        q = ct_put32(q, startup.alen[i]);
        q = ct_put_bytes(q, startup.adata[i], startup.alen[i]);
        q = ct_put32(q, n);
        ct_put_bytes(q, p, n);
        ctrl_all(CT_LABL, r, rl);
        free(r);
    }
    impi_log(1, "relayed %s", li->name);
}

/* Main thread: the startup made progress: restart the stall limit. Only whole commands
 * and records count, never bytes or connections: a peer that trickles a command, or
 * floods a gateway, must not keep a stalled startup alive. */
static void progressed(void)
{
    startup.last = impi_now();
}

/* Master: input from the real server. */
static void server_input(struct rconn *rc)
{
    for (;;) {
        const uint8_t *d = impi_conn_data(&rc->c);
        size_t n = impi_conn_avail(&rc->c);
        if (startup.sv == SV_AUTH) {
            uint32_t which;
            if (n < IMPI_AUTH_REPLY_LEN)
                break;
            if (impi_auth_reply_get(d, &which))
                relay_fail("server: bad AUTH reply");
            impi_conn_consume(&rc->c, IMPI_AUTH_REPLY_LEN);
            progressed();
            if (which == IMPI_AUTH_KEY) {
                uint8_t k[IMPI_AUTH_KEY_LEN];
                impi_put64(k, opts.server_key);
                relay_send(rc, k, sizeof k);
            }
            startup.sv = SV_RUN;
            impi_log(1, "server: authenticated (%s)", which ? "KEY" : "NONE");
            continue;
        }
        struct impi_cmd c;
        int e = impi_cmd_get(d, n, IMPI_TO_CLIENT, &c);
        if (e == IMPI_E_AGAIN)
            break;
        if (e)
            relay_fail("server: %s", impi_strerror(e));
        if (n < IMPI_CMD_HDR_LEN + (size_t)c.len)
            break;
        const uint8_t *p = d + IMPI_CMD_HDR_LEN;
        if (c.cmd == IMPI_CMD_IMPI) {
            int nc = (int)impi_get32(p);
            if (relay_map_job(&relay.m, nc, relay.m.me))
                relay_fail("server: the job has %d clients and client A is client %d: a relay "
                           "serves jobs of 2 to %d clients",
                           nc, relay.m.me, IMPI_MAX_CLIENTS);
            uint8_t j[CT_JOB_LEN];
            ct_put32(ct_put32(j, (uint32_t)relay.m.nclients), (uint32_t)relay.m.me);
            ctrl_all(CT_JOB, j, sizeof j);
            cmd_send(relay.client, IMPI_CMD_IMPI, p, IMPI_INT4_LEN);
        } else if (c.cmd == IMPI_CMD_COLL) {
            on_label_reply(p, c.len);
        } else if (c.cmd == IMPI_CMD_DONE) {
            ctrl_all(CT_TEND, NULL, 0);
            tables_done();
            cmd_send(relay.client, IMPI_CMD_DONE, NULL, 0);
        } else {
            relay_fail("server: unexpected command 0x%08x", c.cmd);
        }
        impi_conn_consume(&rc->c, IMPI_CMD_HDR_LEN + c.len);
        progressed();
    }
    if (rc->c.eof) {
        if (!startup.server_fini_sent)
            relay_fail("the server closed its connection");
        impi_conn_close(&rc->c, relay.ep);
    }
}

/* Master: one command from client A (the relay plays the server). */
static void client_cmd(struct rconn *rc, const struct impi_cmd *c, const uint8_t *p)
{
    if (startup.cl == CL_AUTH) {
        uint32_t which, mask = impi_get32(p);
        if (c->cmd != IMPI_CMD_AUTH)
            relay_fail("client A: expected AUTH first");
        if (impi_auth_choose(mask, opts.auth_mask, &which))
            relay_fail("client A: no common authentication method (mask 0x%x)", mask);
        uint8_t r[IMPI_AUTH_REPLY_LEN];
        impi_auth_reply_put(r, which);
        relay_send(rc, r, sizeof r);
        startup.cl = which == IMPI_AUTH_KEY ? CL_KEY : CL_RUN;
        return;
    }
    int e;
    switch (c->cmd) {
    case IMPI_CMD_IMPI:
        relay.m.me = (int)impi_get32(p);
        if (relay.m.me < 0 || relay.m.me >= IMPI_MAX_CLIENTS)
            relay_fail("client A: rank %d; IMPI jobs have at most %d clients", relay.m.me,
                       IMPI_MAX_CLIENTS);
        cmd_send(relay.server, IMPI_CMD_IMPI, p, IMPI_INT4_LEN);
        break;
    case IMPI_CMD_COLL: {
        /* label, then the client's data for it */
        uint32_t label = impi_get32(p), glen, dlen = c->len - IMPI_INT4_LEN;
        const uint8_t *data = p + IMPI_INT4_LEN;
        if ((e = impi_coll_check(&startup.aseq, &startup.ashape, label, data, dlen)))
            relay_fail("client A: bad COLL label 0x%04x: %s", label, impi_strerror(e));
        int i = impi_label_lookup(label)->order;
        startup.alen[i] = dlen;
        startup.adata[i] = malloc(startup.alen[i] + 1);
        size_t cap =
            64 + 16u * ((size_t)startup.ashape.nprocs + RELAY_MAX_TRUNKS) + startup.alen[i];
        uint8_t *g = malloc(cap);
        if (!startup.adata[i] || !g)
            relay_fail("out of memory");
        memcpy(startup.adata[i], data, dlen);
        impi_put32(g, label);
        if ((e = relay_to_global(&relay.m, label, data, dlen, g + IMPI_INT4_LEN,
                                 (uint32_t)cap - IMPI_INT4_LEN, &glen)))
            relay_fail("cannot translate %s: %s", impi_label_at(i)->name, impi_strerror(e));
        cmd_send(relay.server, IMPI_CMD_COLL, g, glen + IMPI_INT4_LEN);
        free(g);
        break;
    }
    case IMPI_CMD_DONE:
        cmd_send(relay.server, IMPI_CMD_DONE, NULL, 0);
        break;
    case IMPI_CMD_FINI:
        startup.client_fini = true;
        startup.server_fini_sent = true;
        cmd_send(relay.server, IMPI_CMD_FINI, NULL, 0);
        impi_log(1, "client A: FINI (forwarded to the server)");
        break;
    default:
        relay_fail("client A: command 0x%08x out of place", c->cmd);
    }
}

/* Master: input from client A. */
static void client_input(struct rconn *rc)
{
    for (;;) {
        const uint8_t *d = impi_conn_data(&rc->c);
        size_t n = impi_conn_avail(&rc->c);
        if (startup.cl == CL_KEY) {
            if (n < IMPI_AUTH_KEY_LEN)
                break;
            if (impi_get64(d) != opts.key)
                relay_fail("client A: wrong authentication key");
            impi_conn_consume(&rc->c, IMPI_AUTH_KEY_LEN);
            progressed();
            startup.cl = CL_RUN;
            continue;
        }
        struct impi_cmd c;
        int e = impi_cmd_get(d, n, IMPI_TO_SERVER, &c);
        if (e == IMPI_E_AGAIN)
            break;
        if (e)
            relay_fail("client A: %s", impi_strerror(e));
        if (n < IMPI_CMD_HDR_LEN + (size_t)c.len)
            break;
        client_cmd(rc, &c, d + IMPI_CMD_HDR_LEN);
        impi_conn_consume(&rc->c, IMPI_CMD_HDR_LEN + c.len);
        progressed();
    }
    if (rc->c.eof) {
        if (impi_conn_avail(&rc->c))
            relay_fail("client A: %s", impi_strerror(IMPI_E_TRUNCATED));
        if (!startup.client_fini)
            relay_fail("client A disconnected before FINI");
        impi_conn_close(&rc->c, relay.ep);
    }
}

/* Master: secondary rc registers (CT_HELO); once every one has, the trunk table goes to
 * all of them and client A may connect. */
static void on_helo(struct rconn *rc, const uint8_t *p)
{
    int k = (int)ct_get32(&p);
    if (k < 1 || k >= relay.m.K || relay.ctrl[k] || rc->trunk >= 0)
        relay_fail("trunk control: bad or duplicate trunk index %d", k);
    relay.ctrl[k] = rc;
    relay_link_set(k, rc);
    ct_get_trunk(&p, &relay.m.tr[k]);
    impi_log(1, "trunk %d registered", k);
    if (++startup.helos < relay.m.K - 1)
        return;
    uint8_t t[CT_TRKS_LEN(RELAY_MAX_TRUNKS)], *q = ct_put32(t, (uint32_t)relay.m.K);
    for (int j = 0; j < relay.m.K; j++)
        q = ct_put_trunk(q, &relay.m.tr[j]);
    ctrl_all(CT_TRKS, t, CT_TRKS_LEN(relay.m.K));
    impi_conn_watch(&startup.lclient->c, relay.ep, startup.lclient); /* now A may come */
}

/* Secondary: the trunk table (CT_TRKS, len >= CT_INT_LEN bytes). Opens the links to the
 * lower-indexed secondaries (the master's link is the control connection itself); the
 * higher-indexed ones connect to us. */
static void on_trunks(const uint8_t *p, uint32_t len)
{
    relay.m.K = (int)ct_get32(&p);
    if (relay.m.K <= relay.self || relay.m.K > RELAY_MAX_TRUNKS || len != CT_TRKS_LEN(relay.m.K))
        relay_fail("trunk control: bad trunk table");
    for (int j = 0; j < relay.m.K; j++)
        ct_get_trunk(&p, &relay.m.tr[j]);
    for (int k = relay.m.K; k < RELAY_MAX_TRUNKS; k++)
        if (relay.link[k].rc)
            relay_fail("trunk control: a link from trunk %d of %d", k, relay.m.K);
    for (int k = 1; k < relay.self; k++) {
        const struct relay_trunk *t = &relay.m.tr[k];
        int fd = impi_connect(relay.m.tr[relay.self].priv_ip, t->priv_ip, t->ctrl_port);
        if (fd < 0)
            relay_fail("cannot reach trunk %d at %s:%u: %s", k, impi_ipstr(t->priv_ip),
                       t->ctrl_port, strerror(errno));
        struct rconn *rc = conn_connecting(fd, K_CTRL, "trunk link");
        uint8_t me[CT_INT_LEN];
        impi_put32(me, (uint32_t)relay.self);
        relay_ctrl_send(rc, CT_LINK, me, sizeof me);
        relay_link_set(k, rc);
    }
}

/* Secondary: the dance starts once the tables are complete (CT_TEND) and every link is
 * there: a packet may have to cross any of them. */
static void start_when_linked(void)
{
    if (relay.tables_ready && !relay.dance_started && relay_links_ready())
        tables_done();
}

/* Secondary: CT_LINK from a higher-indexed secondary on connection rc. It may come before
 * our own CT_TRKS (the other trunk got its copy first): on_trunks checks k against K. */
static void on_link(struct rconn *rc, const uint8_t *p)
{
    int k = (int)ct_get32(&p);
    if (k <= relay.self || k >= RELAY_MAX_TRUNKS || (relay.m.K > 1 && k >= relay.m.K) ||
        relay.link[k].rc || rc->trunk >= 0)
        relay_fail("trunk control: bad or duplicate link from trunk %d", k);
    relay_link_set(k, rc);
    impi_log(1, "trunk %d linked", k);
    start_when_linked();
}

/* Secondary: one label of the startup tables (CT_LABL, len >= CT_LABL_LEN(0, 0)). */
static void on_label(const uint8_t *p, uint32_t len)
{
    uint32_t label = ct_get32(&p), al = ct_get32(&p), rl;
    if (al > len - CT_LABL_LEN(0, 0))
        relay_fail("trunk control: bad label record");
    const uint8_t *a = p;
    p += al;
    if ((rl = ct_get32(&p)) != len - CT_LABL_LEN(al, 0))
        relay_fail("trunk control: bad label record");
    int e = relay_map_label(&relay.m, label, a, al, p, rl);
    if (e)
        relay_fail("trunk control: label 0x%04x: %s", label, impi_strerror(e));
}

/* Either end of a trunk control link. */
static void ctrl_input(struct rconn *rc)
{
    for (;;) {
        const uint8_t *d = impi_conn_data(&rc->c);
        size_t n = impi_conn_avail(&rc->c);
        if (n < CT_HDR_LEN)
            break;
        uint32_t type = ct_get32(&d), len = ct_get32(&d);
        if (len > CT_MAX_LEN)
            relay_fail("trunk control: impossible record length %u", len);
        if (n < CT_HDR_LEN + (size_t)len)
            break;
        /* The startup records come from the master only, on a secondary's link 0. */
        bool master = relay.self == 0, from_master = rc == relay.ctrl_master;
        if ((type == CT_PKT || type == CT_DONE) && rc->trunk >= 0) {
            /* A trunk whose dance started before ours may already forward: its records
             * wait in the buffer until ours has (then links_backlog). */
            if (!relay.dance_started)
                break;
            relay_link_record(rc, type, d, len);
        } else if (type == CT_LINK && !master && len == CT_INT_LEN) {
            on_link(rc, d);
        } else if (type == CT_HELO && master && len == CT_HELO_LEN) {
            on_helo(rc, d);
        } else if (type == CT_TRKS && from_master && len >= CT_INT_LEN) {
            on_trunks(d, len);
        } else if (type == CT_JOB && from_master && len == CT_JOB_LEN) {
            int nc = (int)ct_get32(&d), me = (int)ct_get32(&d);
            if (relay_map_job(&relay.m, nc, me))
                relay_fail("trunk control: bad job record (%d clients, A is %d)", nc, me);
        } else if (type == CT_LABL && from_master && len >= CT_LABL_LEN(0, 0)) {
            on_label(d, len);
        } else if (type == CT_TEND && from_master) {
            relay.tables_ready = true;
            start_when_linked();
        } else {
            relay_fail("trunk control: unexpected record 0x%08x", type);
        }
        impi_conn_consume(&rc->c, CT_HDR_LEN + len);
        progressed();
    }
    if (rc->c.eof) {
        if (!relay.dance_started)
            relay_fail("trunk control link closed before the tables were complete");
        if (rc->trunk >= 0)
            relay_link_eof(rc);
        else
            impi_conn_close(&rc->c, relay.ep);
    }
}

/* Event loop: once the dance has started, the link records that waited for it
 * (ctrl_input stops at them before) are handled; not from inside ctrl_input, which may be
 * in the middle of the very buffer. */
static void links_backlog(void)
{
    if (!link_backlog)
        return;
    link_backlog = false;
    for (int k = 0; k < relay.m.K; k++) {
        struct rconn *rc = relay.link[k].rc;
        if (k != relay.self && rc && rc->c.fd >= 0 && impi_conn_avail(&rc->c))
            ctrl_input(rc);
    }
}

/* Accepts on one of the non-host listening sockets. */
static void on_listen(struct rconn *lc)
{
    if (lc->kind == K_LISTEN_PRIV || lc->kind == K_LISTEN_GLOB) {
        relay_gateway_accept(lc);
        return;
    }
    for (;;) {
        int fd = accept4(lc->c.fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        impi_sock_setup(fd);
        if (lc->kind == K_LISTEN_CLIENT) {
            if (relay.client) {
                impi_log(0, "rejecting a second client connection");
                close(fd);
                continue;
            }
            relay.client = relay_conn_new(fd, K_CLIENT, "client A");
            impi_log(1, "client A connected");
        } else if (relay.nctrl == relay.m.K - 1) {
            /* Every secondary has its link (or someone took one: the startup then stalls
             * and the stall limit ends it); more would only hold file descriptors. */
            impi_log(0, "rejecting an extra trunk control connection");
            close(fd);
        } else {
            relay.nctrl++;
            relay_conn_new(fd, K_CTRL, "trunk control");
        }
    }
}

/* Completes a non-blocking connect. */
static void on_connected(struct rconn *rc)
{
    int err = 0;
    socklen_t l = sizeof err;
    getsockopt(rc->c.fd, SOL_SOCKET, SO_ERROR, &err, &l);
    if (err)
        relay_fail("%s: connect failed: %s", rc->c.name, strerror(err));
    rc->connecting = false;
    impi_log(1, "%s: connected", rc->c.name);
}

/* Main thread: print the command line and exit 2. */
static void usage(void)
{
    fprintf(stderr,
            "usage: impi-relay -private IP -global IP (-server IP:PORT | -trunk-of IP:PORT "
            "-trunk-index k)\n"
            "       [-port P] [-auth none|key|none,key] [-key K] [-server-auth none|key|none,key]\n"
            "       [-server-key K] [-trunks K -trunk-port P] [-timeout SEC] [-v]...\n");
    exit(2);
}

/* Opens a listening socket and wraps it. */
static struct rconn *listen_on(uint32_t ip, uint16_t *port, enum rkind kind, const char *name)
{
    int fd = impi_listen(ip, port);
    if (fd < 0)
        relay_fail("cannot listen on %s:%u: %s", impi_ipstr(ip), *port, strerror(errno));
    return relay_conn_new(fd, kind, name);
}

/* Main thread: report a bad value for option opt (expected: want) and exit 2. */
static void __attribute__((noreturn)) bad_option(const char *opt, const char *v, const char *want)
{
    impi_bad_option(opt, v, want);
    usage();
    exit(2);
}

/* Main thread: reject a contradiction between options (message msg) and exit 2. */
static void __attribute__((noreturn)) bad_options(const char *msg)
{
    fprintf(stderr, "%s: %s\n", impi_progname, msg);
    usage();
    exit(2);
}

/* Main thread: an integer option value in [min, max]; exits 2 naming the option if not. */
static long int_option(const char *opt, const char *v, long min, long max)
{
    long x;
    char want[64];
    if (impi_parse_int(v, min, max, &x)) {
        snprintf(want, sizeof want, "an integer in %ld..%ld", min, max);
        bad_option(opt, v, want);
    }
    return x;
}

/* Parses the command line into opts and relay; exits 2 on any mistake, naming the
 * option. The authentication options are checked as impi-server checks them: a relay
 * that took a typo for "accept anything" would let in clients the user meant to keep
 * out. */
static void parse_args(int argc, char **argv, uint32_t *trunk_of_ip, uint16_t *trunk_of_port)
{
    bool key_set = false, server_key_set = false, server_set = false, trunks_set = false;
    impi_progname = "impi-relay";
    relay.m.K = 1;
    relay.timeout = 60;
    opts.auth_mask = 1u << IMPI_AUTH_NONE;
    opts.server_auth_mask = 1u << IMPI_AUTH_NONE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            impi_verbose++;
            continue;
        }
        if (!v) {
            fprintf(stderr, "%s: option %s needs a value\n", impi_progname, a);
            usage();
        }
        i++;
        if (!strcmp(a, "-private")) {
            if (impi_parse_ip(v, &opts.priv_ip) || !opts.priv_ip)
                bad_option(a, v, "an IPv4 address");
        } else if (!strcmp(a, "-global")) {
            if (impi_parse_ip(v, &opts.glob_ip) || !opts.glob_ip)
                bad_option(a, v, "an IPv4 address");
        } else if (!strcmp(a, "-server")) {
            if (impi_parse_ipport(v, &opts.server_ip, &opts.server_port))
                bad_option(a, v, "IP:PORT");
            server_set = true;
        } else if (!strcmp(a, "-trunk-of")) {
            if (impi_parse_ipport(v, trunk_of_ip, trunk_of_port))
                bad_option(a, v, "IP:PORT");
        } else if (!strcmp(a, "-trunk-index")) {
            relay.self = (int)int_option(a, v, 0, RELAY_MAX_TRUNKS - 1);
        } else if (!strcmp(a, "-trunks")) {
            relay.m.K = (int)int_option(a, v, 1, RELAY_MAX_TRUNKS);
            trunks_set = true;
        } else if (!strcmp(a, "-trunk-port")) {
            opts.ctrl_port = (uint16_t)int_option(a, v, 0, UINT16_MAX);
        } else if (!strcmp(a, "-port")) {
            opts.client_port = (uint16_t)int_option(a, v, 0, UINT16_MAX);
        } else if (!strcmp(a, "-auth")) {
            if (impi_parse_auth(v, &opts.auth_mask))
                bad_option(a, v, "none, key or none,key");
        } else if (!strcmp(a, "-key")) {
            if (impi_parse_key(v, &opts.key))
                bad_option(a, v, "a decimal 64-bit key");
            key_set = true;
        } else if (!strcmp(a, "-server-auth")) {
            if (impi_parse_auth(v, &opts.server_auth_mask))
                bad_option(a, v, "none, key or none,key");
        } else if (!strcmp(a, "-server-key")) {
            if (impi_parse_key(v, &opts.server_key))
                bad_option(a, v, "a decimal 64-bit key");
            server_key_set = true;
        } else if (!strcmp(a, "-timeout")) {
            if (impi_parse_seconds(v, &relay.timeout))
                bad_option(a, v, "a number of seconds >= 0 (0: no limit)");
        } else {
            fprintf(stderr, "%s: unknown option %s\n", impi_progname, a);
            usage();
        }
    }
    if (!opts.priv_ip || !opts.glob_ip)
        bad_options("-private IP and -global IP are required");
    if (relay.self == 0 && (!server_set || *trunk_of_ip))
        bad_options("the master relay (trunk 0) needs -server IP:PORT and takes no -trunk-of");
    if (relay.self > 0 && (!*trunk_of_ip || server_set || trunks_set))
        bad_options("a secondary trunk (-trunk-index k >= 1) needs -trunk-of IP:PORT and takes "
                    "no -server or -trunks (the master has them)");
    if ((opts.auth_mask & (1u << IMPI_AUTH_KEY)) && !key_set)
        bad_options("-auth key needs -key K");
    if ((opts.server_auth_mask & (1u << IMPI_AUTH_KEY)) && !server_key_set)
        bad_options("-server-auth key needs -server-key K");
}

/* Set by SIGUSR1: the event loop prints the state (relay_dump) at its next turn. */
static volatile sig_atomic_t dump_requested;

/* Signal handler (SIGUSR1): only flags the request; the loop does the printing. */
static void on_sigusr1(int sig)
{
    (void)sig;
    dump_requested = 1;
}

/* Main thread: the process-wide state before any socket: the name in log lines, epoll,
 * the startup tables' "not known yet" shapes. */
static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, on_sigusr1);
    setvbuf(stdout, NULL, _IOLBF, 0);
    static char pname[32];
    snprintf(pname, sizeof pname, "impi-relay[%d]", relay.self);
    impi_progname = pname;
    relay.ep = epoll_create1(EPOLL_CLOEXEC);
    for (int c = 0; c < IMPI_MAX_CLIENTS; c++)
        relay.m.gshape[c].nhosts = relay.m.gshape[c].nprocs = -1;
    startup.ashape.nhosts = startup.ashape.nprocs = -1;
}

/* Main thread: our gateway hosts listen first, as their ports go into the tables; returns
 * this trunk's entry, filled. */
static struct relay_trunk *listen_gateways(void)
{
    struct relay_trunk *me = &relay.m.tr[relay.self];
    me->priv_ip = opts.priv_ip;
    me->glob_ip = opts.glob_ip;
    /* One private gateway per external client the job may have (the job's size is known
     * only later, and the ports go to the master before): the unused ones only listen. */
    for (int e = 0; e < RELAY_MAX_EXT; e++) {
        struct rconn *lp =
            listen_on(opts.priv_ip, &me->priv_port[e], K_LISTEN_PRIV, "private gateway");
        lp->side = SIDE_IN;
        lp->ext = e;
    }
    struct rconn *lg = listen_on(opts.glob_ip, &me->glob_port, K_LISTEN_GLOB, "global gateway");
    lg->side = SIDE_OUT;
    return me;
}

/* Main thread, secondary relay: connect to the master at ip:port and register this trunk
 * (index and gateway addresses, CT_HELO). */
static void join_master(struct relay_trunk *me, uint32_t ip, uint16_t port)
{
    int fd = impi_connect(0, ip, port);
    if (fd < 0)
        relay_fail("cannot reach the master relay at %s:%u", impi_ipstr(ip), port);
    relay.ctrl_master = conn_connecting(fd, K_CTRL, "trunk master");
    relay_link_set(0, relay.ctrl_master);
    /* Higher-indexed secondaries open their links to us here (CT_LINK). */
    listen_on(me->priv_ip, &me->ctrl_port, K_LISTEN_CTRL, "trunk control");
    uint8_t h[CT_HELO_LEN];
    ct_put_trunk(ct_put32(h, (uint32_t)relay.self), me);
    relay_ctrl_send(relay.ctrl_master, CT_HELO, h, sizeof h);
    printf("trunk %d ready: private %s:%u global %s:%u\n", relay.self, impi_ipstr(me->priv_ip),
           me->priv_port[0], impi_ipstr(me->glob_ip), me->glob_port);
}

/* Main thread, master relay: connect to the real server (AUTH first), open client A's
 * listener and, with secondaries, the trunk control listener; print where they listen. */
static void start_master(void)
{
    int fd = impi_connect(opts.glob_ip, opts.server_ip, opts.server_port);
    if (fd < 0)
        relay_fail("cannot connect to the server %s:%u: %s", impi_ipstr(opts.server_ip),
                   opts.server_port, strerror(errno));
    relay.server = conn_connecting(fd, K_SERVER, "server");
    uint8_t m[IMPI_INT4_LEN];
    impi_put32(m, opts.server_auth_mask);
    cmd_send(relay.server, IMPI_CMD_AUTH, m, sizeof m);
    /* Client A is let in only when every trunk has registered (its tables need all
     * the trunks' addresses): until then its listening socket is not watched. */
    int lfd = impi_listen(opts.priv_ip, &opts.client_port);
    if (lfd < 0)
        relay_fail("cannot listen on %s:%u: %s", impi_ipstr(opts.priv_ip), opts.client_port,
                   strerror(errno));
    startup.lclient = calloc(1, sizeof *startup.lclient);
    impi_conn_init(&startup.lclient->c, lfd, "client listener");
    startup.lclient->kind = K_LISTEN_CLIENT;
    if (relay.m.K > 1) {
        listen_on(opts.priv_ip, &opts.ctrl_port, K_LISTEN_CTRL, "trunk control");
        relay.m.tr[0].ctrl_port = opts.ctrl_port;
    } else
        impi_conn_watch(&startup.lclient->c, relay.ep, startup.lclient);
    printf("%s:%u\n", impi_ipstr(opts.priv_ip), opts.client_port);
    if (relay.m.K > 1)
        printf("trunk control %s:%u\n", impi_ipstr(opts.priv_ip), opts.ctrl_port);
}

/* Input read per connection and event at most when its largest unit is smaller. */
#define READ_MIN (8u << 20)

/* Main thread: how much input rc may buffer: its largest unit (a startup command, a trunk
 * record, a packet of the job's maxlen) whole, since its parser waits for whole units. */
static size_t read_limit(const struct rconn *rc)
{
    size_t unit;
    switch (rc->kind) {
    case K_CTRL:
        unit = CT_HDR_LEN + (size_t)CT_MAX_LEN;
        break;
    case K_HOST:
        unit = IMPI_PKT_HDR_LEN + (size_t)relay.m.maxlen;
        break;
    default:
        unit = IMPI_CMD_HDR_LEN + (size_t)IMPI_MAX_CMD_LEN;
    }
    return unit > READ_MIN ? unit : READ_MIN;
}

/* Main thread: one epoll event (`events`) on connection rc. */
static void on_event(struct rconn *rc, uint32_t events)
{
    if (rc->c.fd < 0)
        return;
    if (rc->kind <= K_LISTEN_CTRL) {
        on_listen(rc);
        return;
    }
    if (rc->kind == K_PENDING) {
        relay_pending_input(rc);
        return;
    }
    if (events & (EPOLLOUT | EPOLLERR) && rc->connecting)
        on_connected(rc);
    if (!rc->connecting && impi_conn_flush(&rc->c, relay.ep, rc))
        relay_fail("%s: send failed: %s", rc->c.name, strerror(errno));
    if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
        return;
    size_t limit = read_limit(rc);
    if (impi_conn_read(&rc->c, limit))
        relay_fail("%s: %s", rc->c.name, strerror(errno));
    switch (rc->kind) {
    case K_CLIENT:
        client_input(rc);
        break;
    case K_SERVER:
        server_input(rc);
        break;
    case K_CTRL:
        ctrl_input(rc);
        break;
    default:
        relay_host_input(rc);
    }
    /* Every parser consumes each whole unit and rejects one larger than its limit, so a
     * full buffer here is a bug; left alone, the level-triggered EPOLLIN of a socket
     * that is no longer read would spin this loop. */
    if (rc->c.fd >= 0 && impi_conn_avail(&rc->c) >= limit)
        relay_fail("%s: %zu bytes buffered without a complete unit", rc->c.name,
                   impi_conn_avail(&rc->c));
}

/* Main thread: true once every host connection has finished (relay_hosts_finished closes
 * the drained ones) and, on the master, client A's FINI has reached the server. */
static bool finished(void)
{
    if (!relay_hosts_finished() || !relay_links_finished())
        return false;
    return relay.self > 0 || (startup.client_fini && !impi_conn_pending(&relay.server->c));
}

#define MAX_EVENTS 32   /* epoll events taken per wait */
#define TICK_MS    1000 /* the longest wait: the stall limit is checked this often */

/* Main thread: the event loop, until finished(); fails the job if the startup stalls. */
static void run(void)
{
    startup.last = impi_now();
    while (!finished()) {
        struct epoll_event evs[MAX_EVENTS];
        int n = epoll_wait(relay.ep, evs, MAX_EVENTS, TICK_MS);
        if (n < 0 && errno != EINTR)
            relay_fail("epoll_wait: %s", strerror(errno));
        if (dump_requested) { /* SIGUSR1 (it interrupts epoll_wait: EINTR) */
            dump_requested = 0;
            relay_dump();
        }
        for (int i = 0; i < n; i++)
            on_event(evs[i].data.ptr, evs[i].events);
        relay_reap();
        links_backlog();
        /* Stall limit for the startup and the dance only: a running job may be silent. */
        if (!relay.dance_started && relay.timeout > 0 && impi_now() - startup.last > relay.timeout)
            relay_fail("startup stalled for %g s (no complete startup command or record)",
                       relay.timeout);
    }
}

/* Main thread: parse options, listen, run the event loop until every FINI is done. */
int main(int argc, char **argv)
{
    uint32_t tof_ip = 0;
    uint16_t tof_port = 0;
    parse_args(argc, argv, &tof_ip, &tof_port);
    setup();
    struct relay_trunk *me = listen_gateways();
    if (relay.self > 0)
        join_master(me, tof_ip, tof_port);
    else
        start_master();
    impi_log(1, "private gateway %s:%u (and %d more ports), global gateway %s:%u",
             impi_ipstr(me->priv_ip), me->priv_port[0], RELAY_MAX_EXT - 1, impi_ipstr(me->glob_ip),
             me->glob_port);
    run();
    relay_print_stats();
    impi_log(1, "all host connections finished; exiting");
    return 0;
}
