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

struct relay R;

/* Trunk control records (relay to relay only; not IMPI): 4-byte type, 4-byte length. */
#define CT_HELO 0x48454c4fu /* secondary -> master: index, priv ip/port, glob ip/port */
#define CT_TRKS 0x54524b53u /* master -> secondary: K and every trunk's addresses */
#define CT_JOB  0x4a4f4220u /* master -> secondary: nclients, A's client rank */
#define CT_LABL 0x4c41424cu /* master -> secondary: label, A's data, the server's reply */
#define CT_TEND 0x54454e44u /* master -> secondary: tables complete */

static struct {
    uint32_t priv_ip, glob_ip, server_ip, ctrl_ip;
    uint16_t client_port, server_port, ctrl_port;
    uint32_t auth_mask, server_auth_mask;
    uint64_t key, server_key;
    int helos;
    enum { CL_AUTH, CL_KEY, CL_RUN } cl;
    enum { SV_AUTH, SV_RUN } sv;
    struct impi_label_seq aseq;
    struct impi_client_shape ashape;
    uint8_t *adata[IMPI_NLABELS];
    uint32_t alen[IMPI_NLABELS];
    bool client_fini, server_fini_sent;
    struct rconn *lclient;
    double last;
} O;

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
    if (fd >= 0 && impi_conn_watch(&rc->c, R.ep, rc))
        relay_fail("epoll: %s", strerror(errno));
    return rc;
}

/* Main thread: see impi_relay_run.h. */
void relay_send(struct rconn *rc, const void *p, size_t n)
{
    if (impi_conn_send(&rc->c, p, n))
        relay_fail("out of memory");
    if (rc->c.fd >= 0 && !rc->connecting && impi_conn_flush(&rc->c, R.ep, rc))
        relay_fail("%s: send failed: %s", rc->c.name, strerror(errno));
}

/* Sends a trunk control record to one secondary. */
static void ctrl_send(struct rconn *rc, uint32_t type, const void *p, uint32_t n)
{
    uint8_t h[8];
    impi_put32(h, type);
    impi_put32(h + 4, n);
    relay_send(rc, h, 8);
    if (n)
        relay_send(rc, p, n);
}

/* Sends a record to every secondary. */
static void ctrl_all(uint32_t type, const void *p, uint32_t n)
{
    for (int k = 1; k < R.m.K; k++)
        ctrl_send(R.ctrl[k], type, p, n);
}

/* Sends an IMPI startup command to a peer. */
static void cmd_send(struct rconn *rc, uint32_t cmd, const void *p, uint32_t n)
{
    uint8_t h[8];
    impi_cmd_put(h, cmd, n);
    relay_send(rc, h, 8);
    if (n)
        relay_send(rc, p, n);
}

/* The tables are complete: print them and start the host connections. */
static void tables_done(void)
{
    int e = relay_map_finish(&R.m);
    if (e)
        relay_fail("incomplete startup tables: %s", impi_strerror(e));
    relay_map_print(&R.m, R.self, stdout);
    relay_start_dance();
}

/* Master: one record of A's submission plus the server's reply. */
static void on_label_reply(const uint8_t *p, uint32_t n)
{
    uint32_t label = impi_get32(p);
    const struct impi_label_info *li = impi_label_lookup(label);
    if (!li || !O.adata[li->order])
        relay_fail("server: reply for label 0x%04x that client A did not submit", label);
    int i = li->order, e;
    if ((e = relay_map_label(&R.m, label, O.adata[i], O.alen[i], p, n)))
        relay_fail("server: bad %s reply: %s", li->name, impi_strerror(e));
    size_t cap = 64 + (size_t)n + O.alen[i] + 16u * (IMPI_MAX_PROCS + RELAY_MAX_TRUNKS);
    uint8_t *out = malloc(cap);
    uint32_t olen;
    if (!out)
        relay_fail("out of memory");
    if ((e = relay_private_reply(&R.m, label, O.adata[i], O.alen[i], p, n, out, (uint32_t)cap,
                                 &olen)))
        relay_fail("cannot build the private %s reply: %s", li->name, impi_strerror(e));
    relay_send(R.client, out, olen);
    free(out);
    if (R.m.K > 1) { /* record: label, alen, a, rlen, reply */
        uint32_t rl = 12 + O.alen[i] + n;
        uint8_t *r = malloc(rl);
        if (!r)
            relay_fail("out of memory");
        impi_put32(r, label);
        impi_put32(r + 4, O.alen[i]);
        memcpy(r + 8, O.adata[i], O.alen[i]);
        impi_put32(r + 8 + O.alen[i], n);
        memcpy(r + 12 + O.alen[i], p, n);
        ctrl_all(CT_LABL, r, rl);
        free(r);
    }
    impi_log(1, "relayed %s", li->name);
}

/* Master: input from the real server. */
static void server_input(struct rconn *rc)
{
    for (;;) {
        const uint8_t *d = impi_conn_data(&rc->c);
        size_t n = impi_conn_avail(&rc->c);
        if (O.sv == SV_AUTH) {
            uint32_t which;
            if (n < 8)
                break;
            if (impi_auth_reply_get(d, &which))
                relay_fail("server: bad AUTH reply");
            impi_conn_consume(&rc->c, 8);
            if (which == IMPI_AUTH_KEY) {
                uint8_t k[8];
                impi_put64(k, O.server_key);
                relay_send(rc, k, 8);
            }
            O.sv = SV_RUN;
            impi_log(1, "server: authenticated (%s)", which ? "KEY" : "NONE");
            continue;
        }
        struct impi_cmd c;
        int e = impi_cmd_get(d, n, IMPI_TO_CLIENT, &c);
        if (e == IMPI_E_AGAIN)
            break;
        if (e)
            relay_fail("server: %s", impi_strerror(e));
        if (n < 8 + (size_t)c.len)
            break;
        const uint8_t *p = d + 8;
        if (c.cmd == IMPI_CMD_IMPI) {
            R.m.nclients = (int)impi_get32(p);
            if (R.m.nclients != 2)
                relay_fail("the job has %d clients; this relay supports 2-client jobs "
                           "(one private cluster, one external client)",
                           R.m.nclients);
            R.m.ext = 1 - R.m.me;
            uint8_t j[8];
            impi_put32(j, (uint32_t)R.m.nclients);
            impi_put32(j + 4, (uint32_t)R.m.me);
            ctrl_all(CT_JOB, j, 8);
            cmd_send(R.client, IMPI_CMD_IMPI, p, 4);
        } else if (c.cmd == IMPI_CMD_COLL) {
            on_label_reply(p, c.len);
        } else if (c.cmd == IMPI_CMD_DONE) {
            ctrl_all(CT_TEND, NULL, 0);
            tables_done();
            cmd_send(R.client, IMPI_CMD_DONE, NULL, 0);
        } else {
            relay_fail("server: unexpected command 0x%08x", c.cmd);
        }
        impi_conn_consume(&rc->c, 8 + c.len);
    }
    if (rc->c.eof) {
        if (!O.server_fini_sent)
            relay_fail("the server closed its connection");
        impi_conn_close(&rc->c, R.ep);
    }
}

/* Master: one command from client A (the relay plays the server). */
static void client_cmd(struct rconn *rc, const struct impi_cmd *c, const uint8_t *p)
{
    if (O.cl == CL_AUTH) {
        uint32_t which, mask = impi_get32(p);
        if (c->cmd != IMPI_CMD_AUTH)
            relay_fail("client A: expected AUTH first");
        if (impi_auth_choose(mask, O.auth_mask, &which))
            relay_fail("client A: no common authentication method (mask 0x%x)", mask);
        uint8_t r[8];
        impi_auth_reply_put(r, which);
        relay_send(rc, r, 8);
        O.cl = which == IMPI_AUTH_KEY ? CL_KEY : CL_RUN;
        return;
    }
    int e;
    switch (c->cmd) {
    case IMPI_CMD_IMPI:
        R.m.me = (int)impi_get32(p);
        if (R.m.me < 0 || R.m.me > 1)
            relay_fail("client A: rank %d; this relay supports 2-client jobs", R.m.me);
        cmd_send(R.server, IMPI_CMD_IMPI, p, 4);
        break;
    case IMPI_CMD_COLL: {
        uint32_t label = impi_get32(p), glen;
        if ((e = impi_coll_check(&O.aseq, &O.ashape, label, p + 4, c->len - 4)))
            relay_fail("client A: bad COLL label 0x%04x: %s", label, impi_strerror(e));
        int i = impi_label_lookup(label)->order;
        O.alen[i] = c->len - 4;
        O.adata[i] = malloc(O.alen[i] + 1);
        size_t cap = 64 + 16u * ((size_t)O.ashape.nprocs + RELAY_MAX_TRUNKS) + O.alen[i];
        uint8_t *g = malloc(cap);
        if (!O.adata[i] || !g)
            relay_fail("out of memory");
        memcpy(O.adata[i], p + 4, O.alen[i]);
        impi_put32(g, label);
        if ((e = relay_to_global(&R.m, label, p + 4, O.alen[i], g + 4, (uint32_t)cap - 4, &glen)))
            relay_fail("cannot translate %s: %s", impi_label_at(i)->name, impi_strerror(e));
        cmd_send(R.server, IMPI_CMD_COLL, g, glen + 4);
        free(g);
        break;
    }
    case IMPI_CMD_DONE:
        cmd_send(R.server, IMPI_CMD_DONE, NULL, 0);
        break;
    case IMPI_CMD_FINI:
        O.client_fini = true;
        O.server_fini_sent = true;
        cmd_send(R.server, IMPI_CMD_FINI, NULL, 0);
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
        if (O.cl == CL_KEY) {
            if (n < 8)
                break;
            if (impi_get64(d) != O.key)
                relay_fail("client A: wrong authentication key");
            impi_conn_consume(&rc->c, 8);
            O.cl = CL_RUN;
            continue;
        }
        struct impi_cmd c;
        int e = impi_cmd_get(d, n, IMPI_TO_SERVER, &c);
        if (e == IMPI_E_AGAIN)
            break;
        if (e)
            relay_fail("client A: %s", impi_strerror(e));
        if (n < 8 + (size_t)c.len)
            break;
        client_cmd(rc, &c, d + 8);
        impi_conn_consume(&rc->c, 8 + c.len);
    }
    if (rc->c.eof) {
        if (impi_conn_avail(&rc->c))
            relay_fail("client A: %s", impi_strerror(IMPI_E_TRUNCATED));
        if (!O.client_fini)
            relay_fail("client A disconnected before FINI");
        impi_conn_close(&rc->c, R.ep);
    }
}

/* Either end of a trunk control link. */
static void ctrl_input(struct rconn *rc)
{
    for (;;) {
        const uint8_t *d = impi_conn_data(&rc->c);
        size_t n = impi_conn_avail(&rc->c);
        if (n < 8)
            break;
        uint32_t type = impi_get32(d), len = impi_get32(d + 4);
        if (len > IMPI_MAX_CMD_LEN * 2 + 64)
            relay_fail("trunk control: impossible record length %u", len);
        if (n < 8 + (size_t)len)
            break;
        const uint8_t *p = d + 8;
        if (type == CT_HELO && R.self == 0 && len == 20) {
            int k = (int)impi_get32(p);
            if (k < 1 || k >= R.m.K || R.ctrl[k])
                relay_fail("trunk control: bad or duplicate trunk index %d", k);
            R.ctrl[k] = rc;
            R.m.tr[k].priv_ip = impi_get32(p + 4);
            R.m.tr[k].priv_port = (uint16_t)impi_get32(p + 8);
            R.m.tr[k].glob_ip = impi_get32(p + 12);
            R.m.tr[k].glob_port = (uint16_t)impi_get32(p + 16);
            impi_log(1, "trunk %d registered", k);
            if (++O.helos == R.m.K - 1) {
                uint8_t t[4 + 16 * RELAY_MAX_TRUNKS];
                impi_put32(t, (uint32_t)R.m.K);
                for (int j = 0; j < R.m.K; j++) {
                    impi_put32(t + 4 + 16 * j, R.m.tr[j].priv_ip);
                    impi_put32(t + 8 + 16 * j, R.m.tr[j].priv_port);
                    impi_put32(t + 12 + 16 * j, R.m.tr[j].glob_ip);
                    impi_put32(t + 16 + 16 * j, R.m.tr[j].glob_port);
                }
                ctrl_all(CT_TRKS, t, 4 + 16 * (uint32_t)R.m.K);
                impi_conn_watch(&O.lclient->c, R.ep, O.lclient); /* now A may come */
            }
        } else if (type == CT_TRKS && R.self > 0 && len >= 4) {
            R.m.K = (int)impi_get32(p);
            if (R.m.K <= R.self || R.m.K > RELAY_MAX_TRUNKS || len != 4 + 16u * (uint32_t)R.m.K)
                relay_fail("trunk control: bad trunk table");
            for (int j = 0; j < R.m.K; j++) {
                R.m.tr[j].priv_ip = impi_get32(p + 4 + 16 * j);
                R.m.tr[j].priv_port = (uint16_t)impi_get32(p + 8 + 16 * j);
                R.m.tr[j].glob_ip = impi_get32(p + 12 + 16 * j);
                R.m.tr[j].glob_port = (uint16_t)impi_get32(p + 16 + 16 * j);
            }
        } else if (type == CT_JOB && R.self > 0 && len == 8) {
            R.m.nclients = (int)impi_get32(p);
            R.m.me = (int)impi_get32(p + 4);
            R.m.ext = 1 - R.m.me;
        } else if (type == CT_LABL && R.self > 0 && len >= 12) {
            uint32_t label = impi_get32(p), al = impi_get32(p + 4), rl;
            if (al > len - 12 || (rl = impi_get32(p + 8 + al)) != len - 12 - al)
                relay_fail("trunk control: bad label record");
            int e = relay_map_label(&R.m, label, p + 8, al, p + 12 + al, rl);
            if (e)
                relay_fail("trunk control: label 0x%04x: %s", label, impi_strerror(e));
        } else if (type == CT_TEND && R.self > 0) {
            tables_done();
        } else {
            relay_fail("trunk control: unexpected record 0x%08x", type);
        }
        impi_conn_consume(&rc->c, 8 + len);
    }
    if (rc->c.eof) {
        if (!R.dance_started)
            relay_fail("trunk control link closed before the tables were complete");
        impi_conn_close(&rc->c, R.ep);
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
            if (R.client) {
                impi_log(0, "rejecting a second client connection");
                close(fd);
                continue;
            }
            R.client = relay_conn_new(fd, K_CLIENT, "client A");
            impi_log(1, "client A connected");
        } else {
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
            "       [-port P] [-auth none|key] [-key K] [-server-auth none|key] [-server-key K]\n"
            "       [-trunks K -trunk-port P] [-timeout SEC] [-v]...\n");
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

/* Parses the command line into O and R. */
static void parse_args(int argc, char **argv, uint32_t *trunk_of_ip, uint16_t *trunk_of_port)
{
    R.m.K = 1;
    R.timeout = 60;
    O.auth_mask = 1u << IMPI_AUTH_NONE;
    O.server_auth_mask = 1u << IMPI_AUTH_NONE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            impi_verbose++;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "-private")) {
            if (impi_parse_ip(v, &O.priv_ip))
                usage();
        } else if (!strcmp(a, "-global")) {
            if (impi_parse_ip(v, &O.glob_ip))
                usage();
        } else if (!strcmp(a, "-server")) {
            if (impi_parse_ipport(v, &O.server_ip, &O.server_port))
                usage();
        } else if (!strcmp(a, "-trunk-of")) {
            if (impi_parse_ipport(v, trunk_of_ip, trunk_of_port))
                usage();
        } else if (!strcmp(a, "-trunk-index"))
            R.self = atoi(v);
        else if (!strcmp(a, "-trunks"))
            R.m.K = atoi(v);
        else if (!strcmp(a, "-trunk-port"))
            O.ctrl_port = (uint16_t)atoi(v);
        else if (!strcmp(a, "-port"))
            O.client_port = (uint16_t)atoi(v);
        else if (!strcmp(a, "-auth"))
            O.auth_mask = !strcmp(v, "key") ? 2u : !strcmp(v, "none") ? 1u : 3u;
        else if (!strcmp(a, "-key"))
            O.key = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-server-auth"))
            O.server_auth_mask = !strcmp(v, "key") ? 2u : !strcmp(v, "none") ? 1u : 3u;
        else if (!strcmp(a, "-server-key"))
            O.server_key = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-timeout"))
            R.timeout = atof(v);
        else
            usage();
    }
    if (!O.priv_ip || !O.glob_ip || R.m.K < 1 || R.m.K > RELAY_MAX_TRUNKS)
        usage();
    if (R.self == 0 && !O.server_ip)
        usage();
    if (R.self > 0 && !*trunk_of_ip)
        usage();
}

/* Main thread: parse options, listen, run the event loop until every FINI is done. */
int main(int argc, char **argv)
{
    uint32_t tof_ip = 0;
    uint16_t tof_port = 0;
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_args(argc, argv, &tof_ip, &tof_port);
    static char pname[32];
    snprintf(pname, sizeof pname, "impi-relay[%d]", R.self);
    impi_progname = pname;
    R.ep = epoll_create1(EPOLL_CLOEXEC);
    for (int c = 0; c < IMPI_MAX_CLIENTS; c++)
        R.m.gshape[c].nhosts = R.m.gshape[c].nprocs = -1;
    O.ashape.nhosts = O.ashape.nprocs = -1;

    /* Our gateway hosts listen first: their ports go into the tables. */
    struct relay_trunk *me = &R.m.tr[R.self];
    me->priv_ip = O.priv_ip;
    me->glob_ip = O.glob_ip;
    struct rconn *lp = listen_on(O.priv_ip, &me->priv_port, K_LISTEN_PRIV, "private gateway");
    struct rconn *lg = listen_on(O.glob_ip, &me->glob_port, K_LISTEN_GLOB, "global gateway");
    lp->side = SIDE_IN;
    lg->side = SIDE_OUT;

    if (R.self > 0) {
        int fd = impi_connect(0, tof_ip, tof_port);
        R.ctrl_master = relay_conn_new(fd, K_CTRL, "trunk master");
        if (fd < 0)
            relay_fail("cannot reach the master relay at %s:%u", impi_ipstr(tof_ip), tof_port);
        R.ctrl_master->connecting = true;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = R.ctrl_master};
        epoll_ctl(R.ep, EPOLL_CTL_MOD, fd, &ev);
        R.ctrl_master->c.want_out = true;
        uint8_t h[20];
        impi_put32(h, (uint32_t)R.self);
        impi_put32(h + 4, me->priv_ip);
        impi_put32(h + 8, me->priv_port);
        impi_put32(h + 12, me->glob_ip);
        impi_put32(h + 16, me->glob_port);
        ctrl_send(R.ctrl_master, CT_HELO, h, 20);
        printf("trunk %d ready: private %s:%u global %s:%u\n", R.self, impi_ipstr(me->priv_ip),
               me->priv_port, impi_ipstr(me->glob_ip), me->glob_port);
    } else {
        int fd = impi_connect(O.glob_ip, O.server_ip, O.server_port);
        if (fd < 0)
            relay_fail("cannot connect to the server %s:%u: %s", impi_ipstr(O.server_ip),
                       O.server_port, strerror(errno));
        R.server = relay_conn_new(fd, K_SERVER, "server");
        R.server->connecting = true;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = R.server};
        epoll_ctl(R.ep, EPOLL_CTL_MOD, fd, &ev);
        R.server->c.want_out = true;
        uint8_t m[4];
        impi_put32(m, O.server_auth_mask);
        cmd_send(R.server, IMPI_CMD_AUTH, m, 4);
        /* Client A is let in only when every trunk has registered (its tables need all
         * the trunks' addresses): until then its listening socket is not watched. */
        int lfd = impi_listen(O.priv_ip, &O.client_port);
        if (lfd < 0)
            relay_fail("cannot listen on %s:%u: %s", impi_ipstr(O.priv_ip), O.client_port,
                       strerror(errno));
        O.lclient = calloc(1, sizeof *O.lclient);
        impi_conn_init(&O.lclient->c, lfd, "client listener");
        O.lclient->kind = K_LISTEN_CLIENT;
        if (R.m.K > 1)
            listen_on(O.priv_ip, &O.ctrl_port, K_LISTEN_CTRL, "trunk control");
        else
            impi_conn_watch(&O.lclient->c, R.ep, O.lclient);
        printf("%s:%u\n", impi_ipstr(O.priv_ip), O.client_port);
        if (R.m.K > 1)
            printf("trunk control %s:%u\n", impi_ipstr(O.priv_ip), O.ctrl_port);
    }
    impi_log(1, "private gateway %s:%u, global gateway %s:%u", impi_ipstr(me->priv_ip),
             me->priv_port, impi_ipstr(me->glob_ip), me->glob_port);

    O.last = impi_now();
    for (;;) {
        bool done = relay_hosts_finished();
        if (done && (R.self > 0 || (O.client_fini && !impi_conn_pending(&R.server->c))))
            break;
        struct epoll_event evs[32];
        int n = epoll_wait(R.ep, evs, 32, 1000);
        if (n < 0 && errno != EINTR)
            relay_fail("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            struct rconn *rc = evs[i].data.ptr;
            if (rc->c.fd < 0)
                continue;
            if (rc->kind <= K_LISTEN_CTRL) {
                on_listen(rc);
                continue;
            }
            if (evs[i].events & (EPOLLOUT | EPOLLERR) && rc->connecting)
                on_connected(rc);
            if (!rc->connecting && impi_conn_flush(&rc->c, R.ep, rc))
                relay_fail("%s: send failed: %s", rc->c.name, strerror(errno));
            if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                if (impi_conn_read(&rc->c, 8u << 20))
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
            }
        }
        if (n > 0)
            O.last = impi_now();
        /* Stall limit for the startup and the dance only: a running job may be silent. */
        if (!R.dance_started && R.timeout > 0 && impi_now() - O.last > R.timeout)
            relay_fail("startup stalled for %.0f s", R.timeout);
    }
    relay_print_stats();
    impi_log(1, "all host connections finished; exiting");
    return 0;
}
