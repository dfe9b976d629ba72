/*
 * impi_server.c: the IMPI server (spec §3.9). One event loop (epoll), N clients:
 * AUTH (NONE/KEY), IMPI (ranks -> size), COLL answered label by label as soon as every
 * client has submitted the label (or moved past it, or sent DONE), DONE, FINI.
 * Exits 0 after every client's FINI; any client that misbehaves, drops before FINI or
 * stalls the startup past -timeout ends the whole job with a message and exit status 1.
 */
#include "impi_conn.h"
#include "impi_util.h"
#include "impi_wire.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS   16   /* epoll events taken per wait */
#define TICK_MS      1000 /* the longest wait: the stall limit is checked this often */
/* Input buffered per client at most: a whole command of the largest size, header and all,
 * with room to spare. */
#define CONN_BUF_MAX (IMPI_MAX_CMD_LEN + 64)

enum cstate { C_AUTH, C_KEY, C_IMPI, C_RUN };

struct client {
    struct impi_conn c;
    enum cstate st;
    int rank; /* -1 until IMPI */
    struct impi_label_seq seq;
    struct impi_client_shape shape;
    uint8_t *label_data[IMPI_NLABELS]; /* this client's submission, owned here */
    uint32_t label_len[IMPI_NLABELS];
    bool has_label[IMPI_NLABELS];
    bool done, fini;
};

/* This server: its options and the job's startup. */
static struct {
    int n;              /* clients expected */
    uint32_t auth_mask; /* methods we accept */
    uint64_t key;
    double timeout; /* startup stall limit, seconds */
    double last;    /* when the startup last made progress (a client or a command came) */
    int ep, lfd;
    int nconn;         /* accepted so far */
    struct client *cl; /* [n] in accept order */
    struct client *by_rank[IMPI_MAX_CLIENTS];
    int nranked;
    bool size_sent;
    bool replied[IMPI_NLABELS];
    bool done_sent;
    int nfini;
} server;

/* Main thread: end the job (all connections closed, exit 1) with a message. */
static void __attribute__((noreturn)) fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    impi_log(0, "error: %s; ending the job", msg);
    for (int i = 0; i < server.nconn; i++)
        impi_conn_close(&server.cl[i].c, server.ep);
    exit(1);
}

/* Main thread: queue bytes to a client and try to send them now. */
static void csend(struct client *k, const void *p, size_t n)
{
    if (impi_conn_send(&k->c, p, n) || impi_conn_flush(&k->c, server.ep, k))
        fail("%s: cannot send: %s", k->c.name, strerror(errno));
}

/* Main thread: is client k finished with label order index i (submitted, skipped, DONE)? */
static bool past_label(const struct client *k, int i)
{
    return k->has_label[i] || k->done || k->seq.next > i;
}

/* Main thread: answer every label that all clients have settled, then DONE. */
static void progress(void)
{
    if (server.nranked < server.n)
        return;
    if (!server.size_sent) {
        uint8_t m[IMPI_CMD_HDR_LEN + IMPI_INT4_LEN];
        impi_cmd_put(m, IMPI_CMD_IMPI, IMPI_INT4_LEN);
        impi_put32(m + IMPI_CMD_HDR_LEN, (uint32_t)server.n);
        for (int r = 0; r < server.n; r++)
            csend(server.by_rank[r], m, sizeof m);
        server.size_sent = true;
        impi_log(1, "all %d clients in; sent IMPI size", server.n);
    }
    /* LAM blocks on each label's reply (spec §3.4), so labels are answered in order. */
    for (int i = 0; i < IMPI_NLABELS; i++) {
        if (server.replied[i])
            continue;
        uint32_t mask = 0, total = 0;
        for (int r = 0; r < server.n; r++) {
            if (!past_label(server.by_rank[r], i))
                return;
            if (server.by_rank[r]->has_label[i]) {
                mask |= 1u << r;
                total += server.by_rank[r]->label_len[i];
            }
        }
        server.replied[i] = true;
        if (!mask)
            continue;
        uint8_t h[IMPI_COLL_REPLY_HDR_LEN];
        impi_coll_reply_hdr(h, impi_label_at(i)->label, mask, total);
        for (int r = 0; r < server.n; r++) {
            struct client *k = server.by_rank[r];
            if (!k->has_label[i])
                continue;
            csend(k, h, sizeof h);
            for (int q = 0; q < server.n; q++)
                if (server.by_rank[q]->has_label[i])
                    csend(k, server.by_rank[q]->label_data[i], server.by_rank[q]->label_len[i]);
        }
        impi_log(1, "answered %s (mask 0x%x, %u bytes)", impi_label_at(i)->name, mask, total);
    }
    if (!server.done_sent) {
        for (int r = 0; r < server.n; r++)
            if (!server.by_rank[r]->done)
                return;
        uint8_t m[IMPI_CMD_HDR_LEN];
        impi_cmd_put(m, IMPI_CMD_DONE, 0);
        for (int r = 0; r < server.n; r++)
            csend(server.by_rank[r], m, sizeof m);
        server.done_sent = true;
        impi_log(1, "startup complete; sent DONE");
    }
}

/* Main thread: handle one complete command from client k (payload p[0..len)). */
static void on_cmd(struct client *k, const struct impi_cmd *cmd, const uint8_t *p)
{
    if (k->st == C_AUTH && cmd->cmd != IMPI_CMD_AUTH)
        fail("%s: expected AUTH first", k->c.name);
    switch (cmd->cmd) {
    case IMPI_CMD_AUTH: {
        uint32_t which, cm = impi_get32(p);
        if (k->st != C_AUTH)
            fail("%s: AUTH repeated", k->c.name);
        if (impi_auth_choose(cm, server.auth_mask, &which))
            fail("%s: no common authentication method (client mask 0x%x, server 0x%x)", k->c.name,
                 cm, server.auth_mask);
        uint8_t r[IMPI_AUTH_REPLY_LEN];
        impi_auth_reply_put(r, which);
        csend(k, r, sizeof r);
        k->st = which == IMPI_AUTH_KEY ? C_KEY : C_IMPI;
        impi_log(1, "%s: auth mask 0x%x, chose %s", k->c.name, cm,
                 which == IMPI_AUTH_KEY ? "KEY" : "NONE");
        break;
    }
    case IMPI_CMD_IMPI: {
        int32_t r = (int32_t)impi_get32(p);
        if (k->st != C_IMPI)
            fail("%s: IMPI command out of place", k->c.name);
        if (r < 0 || r >= server.n)
            fail("%s: client rank %d outside 0..%d", k->c.name, r, server.n - 1);
        if (server.by_rank[r])
            fail("%s: client rank %d claimed twice", k->c.name, r);
        k->rank = r;
        server.by_rank[r] = k;
        server.nranked++;
        k->st = C_RUN;
        snprintf(k->c.name, sizeof k->c.name, "client %d", r);
        impi_log(1, "%s registered", k->c.name);
        break;
    }
    case IMPI_CMD_COLL: {
        uint32_t label = impi_get32(p);
        if (k->st != C_RUN || k->done)
            fail("%s: COLL out of place", k->c.name);
        int e = impi_coll_check(&k->seq, &k->shape, label, p + 4, cmd->len - 4);
        if (e)
            fail("%s: bad COLL label 0x%04x: %s", k->c.name, label, impi_strerror(e));
        int i = impi_label_lookup(label)->order;
        k->label_data[i] = malloc(cmd->len - 4 + 1);
        if (!k->label_data[i])
            fail("out of memory");
        memcpy(k->label_data[i], p + 4, cmd->len - 4);
        k->label_len[i] = cmd->len - 4;
        k->has_label[i] = true;
        impi_log(2, "%s: COLL %s (%u bytes)", k->c.name, impi_label_at(i)->name, cmd->len - 4);
        break;
    }
    case IMPI_CMD_DONE:
        if (k->st != C_RUN || k->done)
            fail("%s: DONE out of place", k->c.name);
        k->done = true;
        impi_log(1, "%s: DONE", k->c.name);
        break;
    case IMPI_CMD_FINI:
        if (!server.done_sent || k->fini)
            fail("%s: FINI out of place", k->c.name);
        k->fini = true;
        server.nfini++;
        impi_log(1, "%s: FINI (%d of %d)", k->c.name, server.nfini, server.n);
        break;
    }
}

/* Main thread: the startup made progress: restart the stall limit. Only whole commands
 * and new clients count, never bytes: a client that trickles a command must not keep a
 * stalled startup alive. */
static void progressed(void)
{
    server.last = impi_now();
}

/* Main thread: parse everything client k has sent so far. */
static void on_input(struct client *k)
{
    for (;;) {
        const uint8_t *d = impi_conn_data(&k->c);
        size_t n = impi_conn_avail(&k->c);
        if (k->st == C_KEY) { /* the key: raw bytes without a header (spec §3.2) */
            if (n < IMPI_AUTH_KEY_LEN)
                break;
            if (impi_get64(d) != server.key)
                fail("%s: wrong authentication key", k->c.name);
            impi_conn_consume(&k->c, IMPI_AUTH_KEY_LEN);
            k->st = C_IMPI;
            progressed();
            continue;
        }
        struct impi_cmd cmd;
        int e = impi_cmd_get(d, n, IMPI_TO_SERVER, &cmd);
        if (e == IMPI_E_AGAIN)
            break;
        if (e)
            fail("%s: %s (bytes %02x %02x %02x %02x)", k->c.name, impi_strerror(e), d[0], d[1],
                 d[2], d[3]);
        if (n < IMPI_CMD_HDR_LEN + (size_t)cmd.len)
            break;
        on_cmd(k, &cmd, d + IMPI_CMD_HDR_LEN);
        impi_conn_consume(&k->c, IMPI_CMD_HDR_LEN + cmd.len);
        progressed();
    }
    if (k->c.eof) {
        if (k->fini && impi_conn_avail(&k->c) == 0) {
            impi_conn_close(&k->c, server.ep);
            return;
        }
        if (impi_conn_avail(&k->c))
            fail("%s: %s", k->c.name, impi_strerror(IMPI_E_TRUNCATED));
        fail("%s disconnected before FINI", k->c.name);
    }
}

/* Main thread: accept pending connections. */
static void on_accept(void)
{
    for (;;) {
        int fd = accept4(server.lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (server.nconn >= server.n) {
            impi_log(0, "rejecting an extra connection (all %d clients are in)", server.n);
            close(fd);
            continue;
        }
        impi_sock_setup(fd);
        struct client *k = &server.cl[server.nconn++];
        char name[32];
        snprintf(name, sizeof name, "connection %d", server.nconn);
        impi_conn_init(&k->c, fd, name);
        k->rank = -1;
        k->shape.nhosts = k->shape.nprocs = -1;
        impi_conn_watch(&k->c, server.ep, k);
        impi_log(1, "%s accepted", name);
        progressed(); /* at most N times: extra connections are refused above */
    }
}

/* Main thread: print the command line and exit 2. */
static void usage(void)
{
    fprintf(stderr, "usage: impi-server -server N [-port P] [-host IP] [-auth none|key|none,key]"
                    " [-key K] [-timeout SEC] [-v]...\n");
    exit(2);
}

/* Main thread: report a bad value for option opt (expected: want) and exit 2. */
static void __attribute__((noreturn)) bad_option(const char *opt, const char *v, const char *want)
{
    impi_bad_option(opt, v, want);
    usage();
    exit(2);
}

/* Main thread: parse the command line into server, *host and *port; exits 2 on any
 * mistake, naming the option. */
static void parse_args(int argc, char **argv, uint32_t *host, uint16_t *port)
{
    bool key_set = false;
    long x;
    server.auth_mask = 1u << IMPI_AUTH_NONE;
    server.timeout = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            impi_verbose++;
            continue;
        }
        if (!strcmp(a, "-vv")) {
            impi_verbose += 2;
            continue;
        }
        if (!v) {
            fprintf(stderr, "impi-server: option %s needs a value\n", a);
            usage();
        }
        i++;
        if (!strcmp(a, "-server")) {
            char want[32];
            snprintf(want, sizeof want, "a client count in 1..%d", IMPI_MAX_CLIENTS);
            if (impi_parse_int(v, 1, IMPI_MAX_CLIENTS, &x))
                bad_option(a, v, want);
            server.n = (int)x;
        } else if (!strcmp(a, "-port")) {
            if (impi_parse_int(v, 0, UINT16_MAX, &x))
                bad_option(a, v, "a port in 0..65535");
            *port = (uint16_t)x;
        } else if (!strcmp(a, "-host")) {
            if (impi_parse_ip(v, host))
                bad_option(a, v, "an IPv4 address");
        } else if (!strcmp(a, "-auth")) {
            if (impi_parse_auth(v, &server.auth_mask))
                bad_option(a, v, "none, key or none,key");
        } else if (!strcmp(a, "-key")) {
            /* LAM reads IMPI_AUTH_KEY with atoll: decimal */
            if (impi_parse_key(v, &server.key))
                bad_option(a, v, "a decimal 64-bit key");
            key_set = true;
        } else if (!strcmp(a, "-timeout")) {
            if (impi_parse_seconds(v, &server.timeout))
                bad_option(a, v, "a number of seconds >= 0 (0: no limit)");
        } else {
            fprintf(stderr, "impi-server: unknown option %s\n", a);
            usage();
        }
    }
    if (!server.n) {
        fprintf(stderr, "impi-server: -server N is required\n");
        usage();
    }
    if ((server.auth_mask & (1u << IMPI_AUTH_KEY)) && !key_set) {
        fprintf(stderr, "impi-server: -auth key needs -key K\n");
        exit(2);
    }
}

/* Main thread: parse options, listen, run the event loop until every FINI is done. */
int main(int argc, char **argv)
{
    uint32_t host = 0;
    uint16_t port = 0;
    impi_progname = "impi-server";
    parse_args(argc, argv, &host, &port);
    signal(SIGPIPE, SIG_IGN);
    server.cl = calloc((size_t)server.n, sizeof *server.cl);
    server.ep = epoll_create1(EPOLL_CLOEXEC);
    server.lfd = impi_listen(host, &port);
    if (server.lfd < 0) {
        impi_log(0, "error: cannot listen on %s:%u: %s", impi_ipstr(host), port, strerror(errno));
        return 1;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(server.ep, EPOLL_CTL_ADD, server.lfd, &ev);
    printf("%s:%u\n", impi_ipstr(host ? host : impi_default_ip()), port);
    fflush(stdout);
    impi_log(1, "waiting for %d clients", server.n);
    server.last = impi_now();
    while (server.nfini < server.n) {
        struct epoll_event evs[MAX_EVENTS];
        int n = epoll_wait(server.ep, evs, MAX_EVENTS, TICK_MS);
        if (n < 0 && errno != EINTR)
            fail("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            struct client *k = evs[i].data.ptr;
            if (!k) {
                on_accept();
                continue;
            }
            if (k->c.fd < 0)
                continue;
            if (evs[i].events & EPOLLOUT && impi_conn_flush(&k->c, server.ep, k))
                fail("%s: send failed: %s", k->c.name, strerror(errno));
            if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                if (impi_conn_read(&k->c, CONN_BUF_MAX))
                    fail("%s: %s", k->c.name, strerror(errno));
                on_input(k);
            }
        }
        progress();
        /* The stall limit applies to the startup only: once DONE is out, a job may
         * legitimately keep its server sockets silent for as long as it runs. */
        if (!server.done_sent && server.timeout > 0 && impi_now() - server.last > server.timeout)
            fail("startup stalled for %g s (%d of %d clients connected, %d registered)",
                 server.timeout, server.nconn, server.n, server.nranked);
    }
    impi_log(1, "all %d clients sent FINI; exiting", server.n);
    return 0;
}
