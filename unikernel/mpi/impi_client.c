/*
 * impi_client.c: the client side of the IMPI start-up (spec §3), run in task context
 * before any rank starts: AUTH, IMPI, one COLL per label in LAM's order (the server
 * answers each before the next is sent, as LAM expects), DONE. Every command is encoded
 * and every reply decoded and checked by the freestanding codec (mpi/impi/).
 *
 * A client of several nodes is several IMPI hosts, one per node, whose data node 0 sends
 * for all (it knows every node's address and ranks). The other nodes need the server's
 * replies too: node 0 records them from the IMPI reply on (the transcript) and sends each
 * node the transcript over a side connection (IMPI_UK_TABLE_PORT), which that node then
 * reads exactly as if it were the server's stream, with sending turned off (replay); it
 * answers one byte when its tables and links are ready. Node 0 sends DONE only then: no
 * host of another client may connect to any of our nodes before.
 *
 * The connections: receive callbacks (NIC interrupt, lwIP lock held) only append to a
 * buffer made before connecting; the task consumes it under ksock_lock().
 */
#include "mpi/impi_uk.h"
#include "kernel/fmt.h"
#include "arch/x86_64/io.h"
#include "uk/console.h"
#include "uk/cpu.h"
#include "uk/ksock.h"
#include "uk/net.h"
#include "uk/time.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CLIENT_CONNECT_NS 60000000000ull  /* the server may start after us */
#define CLIENT_STEP_NS    120000000000ull /* a reply waits for every other client */
#define CLIENT_RX_MAX     (IMPI_MAX_CMD_LEN + IMPI_CMD_HDR_LEN)
#define LAM_ACKMARK       10 /* flow-control values we offer: LAM's (spec §8) */
#define LAM_HIWATER       20
#define COLL_DEFAULT      (-1) /* C_COLL_XSIZE, C_COLL_MAXLINEAR: "the default" */
#define CLIENT_RETRY_US   200000

/* The stream the start-up reads: the server's (node 0), or node 0's transcript (replay). */
static struct {
    struct ksock *s;
    uint8_t *buf; /* what arrived, not consumed yet */
    size_t len;
    int eof, err, overflow;
    int replay;     /* the other nodes: read node 0's transcript, send nothing */
    uint8_t *rec;   /* node 0: the transcript (what consume() took since recording began) */
    size_t rec_len; /* ... and its length; rec stays NULL until recording begins */
} srv;

/* Where the client's hosts are: node k of `nodes` is host k of our client, with the
 * ranks block placement gives it (job.c's rule). */
struct layout {
    int node, nodes, size;
    const uint32_t *ip; /* [nodes] */
};

static int node_count(const struct layout *lo, int k)
{
    return lo->size / lo->nodes + (k < lo->size % lo->nodes);
}

static void srv_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)s, (void)arg;
    if (len > CLIENT_RX_MAX - srv.len) {
        srv.overflow = 1;
        return;
    }
    memcpy(srv.buf + srv.len, data, len);
    /* Release: the task reads len (acquire, wait_for) before the bytes it covers. */
    __atomic_store_n(&srv.len, srv.len + len, __ATOMIC_RELEASE);
}

static void srv_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)arg;
    if (ev == KSOCK_EV_EOF)
        srv.eof = 1;
    else if (ev == KSOCK_EV_ERROR)
        srv.err = err;
}

static const struct ksock_ops srv_ops = {.recv = srv_recv, .event = srv_event};

static int fail(const char *step, const char *why)
{
    kprintf("impi: client start-up, %s: %s\n", step, why);
    return -1;
}

/* Task context: send all of data, waiting for room. */
static int send_to(struct ksock *s, const char *step, const void *data, size_t len)
{
    uint64_t deadline = time_ns() + CLIENT_STEP_NS;
    const uint8_t *p = data;
    while (len) {
        long n = ksock_send(s, p, len);
        if (n < 0)
            return fail(step, ksock_strerror((int)-n));
        if (n == 0 && time_ns() > deadline)
            return fail(step, "the peer takes nothing");
        if (n == 0)
            halt();
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Task context: to the server; nothing in replay. */
static int send_all(const char *step, const void *data, size_t len)
{
    return srv.replay ? 0 : send_to(srv.s, step, data, len);
}

/* Task context: wait until `want` bytes from the server are buffered (or it failed). */
static int wait_for(const char *step, size_t want)
{
    uint64_t deadline = time_ns() + CLIENT_STEP_NS;
    while (__atomic_load_n(&srv.len, __ATOMIC_ACQUIRE) < want) {
        if (srv.overflow)
            return fail(step, "the server sent more than any reply holds");
        if (srv.err)
            return fail(step, ksock_strerror(srv.err));
        if (srv.eof)
            return fail(step, "the server closed the connection (see its message)");
        if (time_ns() > deadline)
            return fail(step, "no reply from the server (the other clients never came?)");
        halt();
    }
    return 0;
}

/* Task context: drop the first n buffered bytes (into the transcript once it records). */
static void consume(size_t n)
{
    if (srv.rec) {
        memcpy(srv.rec + srv.rec_len, srv.buf, n);
        srv.rec_len += n;
    }
    int t = ksock_lock();
    memmove(srv.buf, srv.buf + n, srv.len - n);
    srv.len -= n;
    ksock_unlock(t);
}

/* Task context: the next command from the server, which must be `cmd`: its payload stays
 * at srv.buf + IMPI_CMD_HDR_LEN for *len bytes until consume(IMPI_CMD_HDR_LEN + *len). */
static int recv_cmd(const char *step, uint32_t cmd, uint32_t *len)
{
    struct impi_cmd c;
    if (wait_for(step, IMPI_CMD_HDR_LEN))
        return -1;
    int e = impi_cmd_get(srv.buf, srv.len, IMPI_TO_CLIENT, &c);
    if (e != IMPI_OK)
        return fail(step, impi_strerror(e));
    if (c.cmd != cmd)
        return fail(step, "the server answered with another command");
    if (wait_for(step, IMPI_CMD_HDR_LEN + (size_t)c.len))
        return -1;
    *len = c.len;
    return 0;
}

static int send_cmd(const char *step, uint32_t cmd, const void *payload, uint32_t len)
{
    uint8_t hdr[IMPI_CMD_HDR_LEN];
    impi_cmd_put(hdr, cmd, len);
    return send_all(step, hdr, sizeof hdr) || send_all(step, payload, len) ? -1 : 0;
}

/* Task context: AUTH (spec §3.2) and IMPI (§3.3): the job's client count. In replay, the
 * transcript starts with the IMPI reply. */
static int hello(const struct impi_uk_cfg *cfg, struct impi_job *job)
{
    uint8_t v[IMPI_AUTH_KEY_LEN];
    uint32_t which, len;
    if (!srv.replay) {
        impi_put32(v, 1u << cfg->auth);
        if (send_cmd("AUTH", IMPI_CMD_AUTH, v, IMPI_INT4_LEN) ||
            wait_for("AUTH", IMPI_AUTH_REPLY_LEN))
            return -1;
        int e = impi_auth_reply_get(srv.buf, &which);
        consume(IMPI_AUTH_REPLY_LEN);
        if (e != IMPI_OK || which != cfg->auth)
            return fail("AUTH", "the server chose a method we did not offer");
        if (which == IMPI_AUTH_KEY) {
            impi_put64(v, cfg->key);
            if (send_all("AUTH", v, IMPI_AUTH_KEY_LEN))
                return -1;
        }
        srv.rec = malloc(CLIENT_RX_MAX); /* every byte from here on is the transcript */
        if (!srv.rec)
            return fail("IMPI", "out of memory");
    }
    impi_put32(v, (uint32_t)cfg->client);
    if (send_cmd("IMPI", IMPI_CMD_IMPI, v, IMPI_INT4_LEN) ||
        recv_cmd("IMPI", IMPI_CMD_IMPI, &len)) {
        if (!srv.replay && cfg->auth == IMPI_AUTH_KEY && (srv.eof || srv.err))
            kprintf("impi: the server dropped us after our AUTH key: is --impi-key the "
                    "server's key?\n");
        return -1;
    }
    job->nclients = (int32_t)impi_get32(srv.buf + IMPI_CMD_HDR_LEN);
    consume(IMPI_CMD_HDR_LEN + len);
    if (job->nclients < 2 || job->nclients > IMPI_MAX_CLIENTS || cfg->client >= job->nclients)
        return fail("IMPI", "the job's client count does not include our client number");
    job->client = cfg->client;
    return 0;
}

/* Task context: our data for label li: a host per node, the ranks in block placement. */
static uint32_t our_data(const struct impi_label_info *li, uint8_t *out, const struct layout *lo)
{
    uint32_t n = 0;
    switch (li->label) {
    case IMPI_C_VERSION: /* {major 0, minor 0} */
        impi_put32(out, 0);
        impi_put32(out + 4, 0);
        return 8;
    case IMPI_C_NHOSTS:
        impi_put32(out, (uint32_t)lo->nodes);
        return 4;
    case IMPI_C_NPROCS:
        impi_put32(out, (uint32_t)lo->size);
        return 4;
    case IMPI_C_DATALEN:
        impi_put32(out, IMPI_DEFAULT_DATALEN);
        return 4;
    case IMPI_C_TAGUB:
        impi_put32(out, INT_MAX); /* the library's MPI_TAG_UB */
        return 4;
    case IMPI_C_COLL_XSIZE:
    case IMPI_C_COLL_MAXLINEAR:
        impi_put32(out, (uint32_t)COLL_DEFAULT);
        return 4;
    case IMPI_P_IPV6:
    case IMPI_P_PID:
        for (int k = 0, r = 0; k < lo->nodes; k++)
            for (int i = 0; i < node_count(lo, k); i++, r++, n += li->elem)
                if (li->label == IMPI_P_IPV6)
                    impi_hostid_from_ipv4(out + n, lo->ip[k]);
                else /* the rank within our client: unique on its host */
                    impi_put64(out + n, (uint64_t)r);
        return n;
    default: /* per host */
        for (int k = 0; k < lo->nodes; k++, n += li->elem) {
            uint32_t v = li->label == IMPI_H_PORT      ? IMPI_UK_HOST_PORT
                         : li->label == IMPI_H_NPROCS  ? (uint32_t)node_count(lo, k)
                         : li->label == IMPI_H_ACKMARK ? LAM_ACKMARK
                                                       : LAM_HIWATER;
            if (li->label == IMPI_H_IPV6)
                impi_hostid_from_ipv4(out + n, lo->ip[k]);
            else
                impi_put32(out + n, v);
        }
        return n;
    }
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* Task context: one label's reply (data of every client, split) into the job's tables.
 * Per-host and per-proc arrays are indexed globally: client i's start at the sum of the
 * lower clients' counts (spec §3.7). */
static int take_label(const struct impi_label_info *li, const uint8_t *d, const uint32_t *off,
                      const struct impi_client_shape *sh, struct impi_job *job)
{
    int h = 0, p = 0;
    for (int c = 0; c < job->nclients; c++) {
        const uint8_t *v = d + off[c];
        uint32_t x = impi_get32(v);
        switch (li->label) {
        case IMPI_C_DATALEN:
            job->maxlen = c ? min_u32(job->maxlen, x) : x;
            break;
        case IMPI_C_COLL_XSIZE: /* -1 is the default; every client must agree (§3.7) */
        case IMPI_C_COLL_MAXLINEAR:
            if (x != (uint32_t)COLL_DEFAULT)
                return fail("COLL", "a client asks for non-default collective thresholds");
            break;
        case IMPI_H_IPV6:
        case IMPI_H_PORT:
        case IMPI_H_NPROCS:
        case IMPI_H_ACKMARK:
        case IMPI_H_HIWATER:
            for (int k = 0; k < sh[c].nhosts; k++, h++) {
                const uint8_t *e = v + (size_t)k * li->elem;
                uint32_t y = impi_get32(e);
                if (li->label == IMPI_H_IPV6)
                    job->host_ip[h] = impi_hostid_ipv4(e);
                else if (li->label == IMPI_H_PORT)
                    job->host_port[h] = (uint16_t)y;
                else if (li->label == IMPI_H_NPROCS)
                    job->host_first[h + 1] = job->host_first[h] + (int32_t)y;
                else if (li->label == IMPI_H_ACKMARK)
                    job->ackmark = h ? min_u32(job->ackmark, y) : y;
                else
                    job->hiwater = h ? min_u32(job->hiwater, y) : y;
                if (li->label == IMPI_H_PORT && (y == 0 || y > UINT16_MAX))
                    return fail("COLL", "a host's port is out of range");
                if (li->label == IMPI_H_NPROCS && y > (uint32_t)sh[c].nprocs)
                    return fail("COLL", "a host has more procs than its client");
            }
            break;
        case IMPI_P_IPV6:
        case IMPI_P_PID:
            for (int k = 0; k < sh[c].nprocs; k++, p++) {
                const uint8_t *e = v + (size_t)k * li->elem;
                if (li->label == IMPI_P_IPV6)
                    memcpy(job->procs[p].hostid, e, IMPI_HOSTID_LEN);
                else
                    job->procs[p].pid = (int64_t)impi_get64(e);
            }
            break;
        }
    }
    return 0;
}

/* Task context: the tables sized once C_NHOSTS and C_NPROCS are known. */
static int size_tables(const struct impi_client_shape *sh, struct impi_job *job,
                       const struct layout *lo)
{
    int hosts = 0, procs = 0;
    for (int c = 0; c < job->nclients; c++) {
        if (sh[c].nhosts < 1 || sh[c].nhosts > IMPI_MAX_HOSTS || sh[c].nprocs < 1 ||
            sh[c].nprocs > IMPI_MAX_PROCS)
            return fail("COLL", "a client's host or proc count is out of range");
        job->client_first[c] = procs;
        if (c < job->client)
            job->self_host += sh[c].nhosts;
        hosts += sh[c].nhosts;
        procs += sh[c].nprocs;
    }
    job->client_first[job->nclients] = procs;
    if (sh[job->client].nprocs != lo->size || sh[job->client].nhosts != lo->nodes)
        return fail("COLL", "the server's tables differ from what we sent");
    job->self_host += lo->node;
    job->nhosts = hosts;
    job->host_first = calloc((size_t)hosts + 1, sizeof *job->host_first);
    job->host_ip = calloc((size_t)hosts, sizeof *job->host_ip);
    job->host_port = calloc((size_t)hosts, sizeof *job->host_port);
    job->procs = calloc((size_t)procs, sizeof *job->procs);
    if (!job->host_first || !job->host_ip || !job->host_port || !job->procs)
        return fail("COLL", "out of memory");
    return 0;
}

/* Task context: COLL for every label (§3.4). */
static int labels(struct impi_job *job, const struct layout *lo)
{
    struct impi_client_shape sh[IMPI_MAX_CLIENTS];
    uint32_t off[IMPI_MAX_CLIENTS], len[IMPI_MAX_CLIENTS], label, mask, plen;
    uint32_t all = job->nclients == 32 ? ~0u : (1u << job->nclients) - 1;
    size_t cap = (size_t)(lo->size + lo->nodes) * IMPI_HOSTID_LEN + IMPI_INT4_LEN;
    uint8_t *out = malloc(cap);
    if (!out)
        return fail("COLL", "out of memory");
    for (int c = 0; c < job->nclients; c++)
        sh[c].nhosts = sh[c].nprocs = -1;
    int rc = 0;
    for (int i = 0; i < IMPI_NLABELS && !rc; i++) {
        const struct impi_label_info *li = impi_label_at(i);
        impi_put32(out, li->label);
        uint32_t n = our_data(li, out + IMPI_INT4_LEN, lo);
        if (send_cmd(li->name, IMPI_CMD_COLL, out, IMPI_INT4_LEN + n) ||
            recv_cmd(li->name, IMPI_CMD_COLL, &plen)) {
            rc = -1;
            break;
        }
        const uint8_t *pay = srv.buf + IMPI_CMD_HDR_LEN;
        int e = impi_coll_split(pay, plen, (uint32_t)job->nclients, sh, &label, &mask, off, len);
        if (e != IMPI_OK || label != li->label || mask != all) {
            rc = fail(li->name, e != IMPI_OK ? impi_strerror(e)
                                             : "a reply for another label, or not every client");
            break;
        }
        const uint8_t *d = pay + IMPI_COLL_REPLY_HDR_LEN - IMPI_CMD_HDR_LEN;
        for (int c = 0; c < job->nclients && li->label == IMPI_C_NHOSTS; c++)
            sh[c].nhosts = (int32_t)impi_get32(d + off[c]);
        for (int c = 0; c < job->nclients && li->label == IMPI_C_NPROCS; c++)
            sh[c].nprocs = (int32_t)impi_get32(d + off[c]);
        if (li->label == IMPI_C_NPROCS)
            rc = size_tables(sh, job, lo);
        else if (li->label != IMPI_C_NHOSTS)
            rc = take_label(li, d, off, sh, job);
        consume(IMPI_CMD_HDR_LEN + plen);
    }
    free(out);
    return rc;
}

/* Task context: checks on the tables as a whole, once every label is in. */
static int check_tables(const struct impi_job *job)
{
    for (int c = 0, h = 0; c < job->nclients; c++) {
        /* Each client's hosts hold exactly its procs, in order (§2). */
        while (h < job->nhosts && job->host_first[h] < job->client_first[c + 1])
            h++;
        if (job->host_first[h] != job->client_first[c + 1])
            return fail("COLL", "a client's hosts do not hold exactly its procs");
    }
    struct impi_flow_cfg f = {.ackmark = job->ackmark, .hiwater = job->hiwater};
    if (impi_flow_cfg_check(&f) != IMPI_OK || job->maxlen == 0)
        return fail("COLL", "the job's flow-control or packet-size values are impossible");
    return 0;
}

/* Node 0's side connections to the other nodes (IMPI_UK_TABLE_PORT), for the transcript. */
static struct ksock *table_listener;
static struct table_peer {
    struct ksock *s;
    volatile int ready; /* the node said its tables and links are ready */
} table_peer[NET_MAX_NODES];
static const uint32_t *table_ips;
static int table_nodes;

static void table_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)s, (void)data;
    if (len)
        ((struct table_peer *)arg)->ready = 1;
}

static void table_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)arg, (void)ev, (void)err; /* a lost node shows as a missing answer */
}

static const struct ksock_ops table_ops = {.recv = table_recv, .event = table_event};

static void table_accept(struct ksock *l, void *arg, struct ksock *s)
{
    (void)l, (void)arg;
    for (int k = 1; k < table_nodes; k++)
        if (ksock_peer_ip(s) == table_ips[k] && !table_peer[k].s) {
            table_peer[k].s = s;
            ksock_set_ops(s, &table_ops, &table_peer[k]);
            return;
        }
    ksock_abort(s); /* not one of our nodes */
}

/* Task context, node 0, before DONE: every other node gets the transcript and answers
 * once its links exist. */
static int hand_tables(void)
{
    uint64_t deadline = time_ns() + CLIENT_STEP_NS;
    for (int k = 1; k < table_nodes; k++) {
        while (!__atomic_load_n(&table_peer[k].s, __ATOMIC_ACQUIRE) && time_ns() < deadline)
            halt();
        if (!table_peer[k].s || send_to(table_peer[k].s, "tables", srv.rec, srv.rec_len))
            return fail("tables", "a node of this job did not ask for the tables");
    }
    for (int k = 1; k < table_nodes; k++) {
        while (!table_peer[k].ready && time_ns() < deadline)
            halt();
        if (!table_peer[k].ready)
            return fail("tables", "a node of this job did not get ready");
        ksock_close(table_peer[k].s);
    }
    return 0;
}

/* Task context: connect srv to ip:port, retrying until the deadline (the server, or node
 * 0, may not listen yet). */
static int connect_srv(uint32_t ip, uint16_t port, const char *what)
{
    srv.s =
        ksock_connect_wait(ip, port, &srv_ops, 0, time_ns() + CLIENT_CONNECT_NS, CLIENT_RETRY_US);
    srv.eof = srv.err = 0; /* what a refused attempt reported */
    if (!srv.s)
        kprintf("impi: cannot connect to %s at %u.%u.%u.%u:%u\n", what, ip >> 24, ip >> 16 & 255,
                ip >> 8 & 255, ip & 255, port);
    return srv.s ? 0 : -1;
}

/* Task context; see impi_uk.h. */
int impi_client_start(const struct impi_uk_cfg *cfg, int node, int nodes, int size,
                      const uint32_t *ips, struct impi_job *job,
                      int (*ready)(const struct impi_job *job))
{
    struct layout lo = {.node = node, .nodes = nodes, .size = size, .ip = ips};
    memset(job, 0, sizeof *job);
    srv.buf = malloc(CLIENT_RX_MAX);
    if (!srv.buf)
        return fail("connect", "out of memory");
    srv.replay = node > 0;
    if (srv.replay) { /* node 0 is our server: its transcript, then our answer */
        static const uint8_t ok = 1;
        if (connect_srv(ips[0], IMPI_UK_TABLE_PORT, "node 0 for the IMPI tables") ||
            hello(cfg, job) || labels(job, &lo) || check_tables(job) || ready(job) ||
            send_to(srv.s, "tables", &ok, sizeof ok))
            return -1;
        ksock_close(srv.s);
        srv.s = 0;
        return 0;
    }
    table_ips = ips;
    table_nodes = nodes;
    if (nodes > 1 && !(table_listener = ksock_listen(IMPI_UK_TABLE_PORT, table_accept, 0)))
        return fail("tables", "cannot listen for the other nodes");
    uint32_t len;
    if (connect_srv(cfg->server_ip, cfg->server_port, "the IMPI server") || hello(cfg, job) ||
        labels(job, &lo) || check_tables(job) || ready(job) || hand_tables() ||
        send_cmd("DONE", IMPI_CMD_DONE, 0, 0) || recv_cmd("DONE", IMPI_CMD_DONE, &len))
        return -1;
    consume(IMPI_CMD_HDR_LEN + len);
    return 0;
}

/* Task context; see impi_uk.h. */
void impi_client_fini(void)
{
    if (!srv.s)
        return;
    if (send_cmd("FINI", IMPI_CMD_FINI, 0, 0) == 0) {
        uint64_t deadline = time_ns() + CLIENT_STEP_NS;
        while (!ksock_flushed(srv.s) && !srv.err && time_ns() < deadline)
            halt();
    }
    ksock_close(srv.s);
    srv.s = 0;
}
