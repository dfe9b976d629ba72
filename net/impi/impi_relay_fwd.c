/*
 * impi_relay_fwd.c: the relay's host side: the connection "dance" on both sides, and
 * store-and-forward of packets with pk_src/pk_dest rewritten through the Host-Proc ID
 * tables. Each packet is copied whole into one output queue, so the packets of every
 * (src, dest) pair leave in the order they came (one FIFO per hop). With trunking, a
 * packet leaves towards its receiver from the relay that owns its *source* in the
 * receiver's view, over a trunk link when that is another relay (impi_relay_link.c says
 * why LAM needs this). Flow control is terminated at the relay (see README): the relay
 * acknowledges what LAM senders give it, per (src, dest) pair every ackmark packets, and
 * consumes the PROTOACKs LAM receivers send back instead of forwarding them.
 */
#include "impi_relay_run.h"
#include "impi_util.h"
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Main thread: see impi_relay_run.h. */
int relay_nslots(enum rside s)
{
    return s == SIDE_IN ? relay.m.in.nhosts * relay.m.next : relay.m.out.nhosts;
}

/* This relay's own host index towards host slot `slot` of side s: on the global side it is
 * one host of client A; on the private side one host of each external client, the one of
 * the slot's external client. */
static int my_index(enum rside s, int slot)
{
    return s == SIDE_OUT ? relay_gidx_trunk(&relay.m, relay.self)
                         : relay_pidx_trunk(&relay.m, slot % relay.m.next, relay.self);
}

/* Host index of the real host of slot `slot` of side s (A's hosts in the private view,
 * the external clients' in the global). */
static int host_index(enum rside s, int slot)
{
    return s == SIDE_OUT ? relay_gidx_out(&relay.m, slot)
                         : relay_pidx_in(&relay.m, slot / relay.m.next);
}

/* The real host (index in that side's table) of slot `slot` of side s. */
static int slot_host(enum rside s, int slot)
{
    return s == SIDE_OUT ? slot : slot / relay.m.next;
}

/* Any context: "private" or "global", for messages. */
static const char *side_name(enum rside s)
{
    return s == SIDE_IN ? "private" : "global";
}

/* Connects slot rc to its real host, from our own address on that side: LAM accepts a host
 * connection only from the address that host advertised (spec §4). */
static void host_connect(struct rconn *rc)
{
    const struct relay_side *sd = rc->side == SIDE_IN ? &relay.m.in : &relay.m.out;
    const struct relay_trunk *t = &relay.m.tr[relay.self];
    uint32_t src = rc->side == SIDE_IN ? t->priv_ip : t->glob_ip;
    int h = slot_host(rc->side, rc->host);
    int fd = impi_connect(src, sd->ip[h], sd->port[h]);
    if (fd < 0)
        relay_fail("%s: cannot connect from %s: %s", rc->c.name, impi_ipstr(src), strerror(errno));
    rc->c.fd = fd;
    rc->connecting = true;
    uint8_t idx[4];
    impi_put32(idx, (uint32_t)my_index(rc->side, rc->host));
    if (impi_conn_send(&rc->c, idx, 4))
        relay_fail("out of memory");
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.ptr = rc};
    epoll_ctl(relay.ep, EPOLL_CTL_ADD, fd, &ev);
    rc->c.want_out = true;
    impi_log(1, "%s: connecting as host %d", rc->c.name, my_index(rc->side, rc->host));
}

/* Removes pending connection p from relay.pending (keeping the order: oldest first). */
static void pending_remove(struct rconn *p)
{
    for (int i = 0; i < relay.npending; i++)
        if (relay.pending[i] == p) {
            memmove(&relay.pending[i], &relay.pending[i + 1],
                    (size_t)(relay.npending - i - 1) * sizeof relay.pending[0]);
            relay.npending--;
            return;
        }
}

/* Drops pending connection p, never the job: an unidentified peer is nobody the job
 * knows. The first drop is logged always, the others with -v (a flood must not flood
 * the log). */
static void __attribute__((format(printf, 2, 3)))
pending_drop(struct rconn *p, const char *fmt, ...)
{
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    impi_log(relay.dropped ? 1 : 0, "%s: %s; dropped%s", p->c.name, why,
             relay.dropped ? "" : " (further drops are logged with -v)");
    relay.dropped++;
    pending_remove(p);
    relay_conn_retire(p);
}

/* Identifies pending connection p by its complete host index (the tables are complete):
 * its socket moves into the host slot, which may already hold queued packets, and p is
 * retired. A bad index or a second connection for one host drops p. */
static void identify(struct rconn *p)
{
    enum rside s = p->side;
    int idx = (int)impi_get32(p->idx), h = -1;
    if (s == SIDE_OUT) {
        /* Global view: the external hosts in order, A's K relay hosts among them. */
        int before = relay_gidx_trunk(&relay.m, 0);
        h = idx < before ? idx : idx - relay.m.K;
        if (idx < 0 || (idx >= before && idx < before + relay.m.K) || h >= relay.m.out.nhosts)
            h = -1;
    } else if (p->ext < relay.m.next) {
        /* Private view: A's host, at the gateway port of external client p->ext. */
        int a = idx - relay_pidx_in(&relay.m, 0);
        h = a >= 0 && a < relay.m.in.nhosts ? a * relay.m.next + p->ext : -1;
    }
    if (h < 0 || idx < my_index(s, h)) {
        pending_drop(p, "announced host index %d, which is no host that connects to us", idx);
        return;
    }
    struct rconn *slot = relay.hosts[s][h];
    if (slot->c.fd >= 0) {
        pending_drop(p, "announced host index %d, which is connected already", idx);
        return;
    }
    /* What the host sent after its index is still in the kernel: the slot reads it. */
    slot->c.fd = p->c.fd;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT, .data.ptr = slot};
    if (epoll_ctl(relay.ep, p->parked ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, slot->c.fd, &ev))
        relay_fail("epoll: %s", strerror(errno));
    slot->c.want_out = true;
    p->c.fd = -1; /* the socket is the slot's now */
    pending_remove(p);
    relay_conn_retire(p);
    impi_log(1, "%s connected to our %s gateway (host index %d)", slot->c.name, side_name(s), idx);
}

/* Main thread: see impi_relay_run.h. Reads at most the 4-byte host index; once it is
 * complete the connection is identified, or, before the tables are complete, parked: off
 * epoll, since level-triggered EPOLLIN would report it ready on every wait while nothing
 * reads it (the busy loop this replaces). */
void relay_pending_input(struct rconn *p)
{
    while (p->nidx < sizeof p->idx) {
        ssize_t n = recv(p->c.fd, p->idx + p->nidx, sizeof p->idx - p->nidx, 0);
        if (n > 0) {
            p->nidx += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        pending_drop(p, "%s before it identified itself", n == 0 ? "closed" : strerror(errno));
        return;
    }
    if (relay.dance_started) {
        identify(p);
        return;
    }
    if (epoll_ctl(relay.ep, EPOLL_CTL_DEL, p->c.fd, NULL))
        relay_fail("epoll: %s", strerror(errno));
    p->parked = true; /* relay_start_dance identifies it */
}

/* Main thread: see impi_relay_run.h. */
void relay_start_dance(void)
{
    for (int s = 0; s < 2; s++) {
        const struct relay_side *sd = s == SIDE_IN ? &relay.m.in : &relay.m.out;
        int nslots = relay_nslots((enum rside)s);
        relay.hosts[s] = calloc((size_t)nslots, sizeof *relay.hosts[s]);
        size_t np = (size_t)(s == SIDE_IN ? relay.m.out.nprocs : relay.m.in.nprocs);
        relay.st.dest_pkts[s] = calloc(np, sizeof(uint64_t));
        relay.st.dest_data[s] = calloc(np, sizeof(uint64_t));
        size_t pairs = (size_t)relay.m.in.nprocs * (size_t)relay.m.out.nprocs;
        relay.st.pair_pkts[s] = calloc(pairs, sizeof(uint64_t));
        relay.st.pair_acks[s] = calloc(pairs, sizeof(uint64_t));
        if (!relay.hosts[s] || !relay.st.dest_pkts[s] || !relay.st.dest_data[s] ||
            !relay.st.pair_pkts[s] || !relay.st.pair_acks[s])
            relay_fail("out of memory");
        for (int slot = 0; slot < nslots; slot++) {
            int h = slot_host((enum rside)s, slot);
            char name[64];
            if (s == SIDE_IN)
                snprintf(name, sizeof name, "private host %d (%s:%u) for client %d", h,
                         impi_ipstr(sd->ip[h]), sd->port[h], relay.m.ext[slot % relay.m.next]);
            else
                snprintf(name, sizeof name, "external host %d (%s:%u)", h, impi_ipstr(sd->ip[h]),
                         sd->port[h]);
            struct rconn *rc = calloc(1, sizeof *rc);
            if (!rc)
                relay_fail("out of memory");
            impi_conn_init(&rc->c, -1, name);
            rc->kind = K_HOST;
            rc->side = (enum rside)s;
            rc->host = slot;
            relay.hosts[s][slot] = rc;
            /* The higher-indexed host connects to the lower one (spec §4). */
            if (host_index((enum rside)s, slot) < my_index((enum rside)s, slot))
                host_connect(rc);
        }
    }
    relay.fc.ackmark =
        relay.m.in.ackmark < relay.m.out.ackmark ? relay.m.in.ackmark : relay.m.out.ackmark;
    relay.fc.hiwater =
        relay.m.in.hiwater < relay.m.out.hiwater ? relay.m.in.hiwater : relay.m.out.hiwater;
    if (impi_flow_cfg_check(&relay.fc))
        relay_fail("flow control: ackmark %u / hiwater %u", relay.fc.ackmark, relay.fc.hiwater);
    size_t pairs = (size_t)relay.m.in.nprocs * (size_t)relay.m.out.nprocs;
    if (pairs > (64u << 20))
        relay_fail("%zu proc pairs: too many for the flow-control tables", pairs);
    relay.rx[SIDE_IN] = calloc(pairs, sizeof *relay.rx[SIDE_IN]);
    relay.rx[SIDE_OUT] = calloc(pairs, sizeof *relay.rx[SIDE_OUT]);
    if (!relay.rx[SIDE_IN] || !relay.rx[SIDE_OUT])
        relay_fail("out of memory");
    relay.dance_started = true;
    /* identify() removes each parked connection from the table; the others are still
     * reading their index and come back through relay_pending_input. */
    for (int i = 0; i < relay.npending;)
        if (relay.pending[i]->parked)
            identify(relay.pending[i]);
        else
            i++;
}

/* Makes room in a full pending table by dropping the oldest connection that has not
 * sent its whole index: real hosts send it as soon as they connect, silent peers hold a
 * slot for nothing. Returns false when every pending connection has sent its index (they
 * wait for the tables; the newcomer is the one to drop then). */
static bool evict_silent(void)
{
    for (int i = 0; i < relay.npending; i++)
        if (!relay.pending[i]->parked && relay.pending[i]->nidx < IMPI_INT4_LEN) {
            pending_drop(relay.pending[i], "no host index yet while %d connections wait",
                         RELAY_PENDING_MAX);
            return true;
        }
    return false;
}

/* Main thread: see impi_relay_run.h. */
void relay_gateway_accept(struct rconn *lc)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(lc->c.fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        impi_sock_setup(fd);
        char name[64];
        snprintf(name, sizeof name, "unidentified %s host %s:%u", side_name(lc->side),
                 impi_ipstr(ntohl(sa.sin_addr.s_addr)), ntohs(sa.sin_port));
        struct rconn *p = relay_conn_new(fd, K_PENDING, name);
        p->side = lc->side;
        p->ext = lc->ext;
        if (relay.npending == RELAY_PENDING_MAX && !evict_silent()) {
            pending_drop(p, "%d connections are waiting for the tables already", RELAY_PENDING_MAX);
            continue;
        }
        relay.pending[relay.npending++] = p;
    }
}

/* Sends FINI on every connection of side s (all of the other side's hosts sent theirs:
 * nothing more can come for side s through this relay). */
static void fini_side(enum rside s)
{
    struct impi_proc z;
    memset(&z, 0, sizeof z);
    z.pid = -1;
    struct impi_pkt f;
    impi_pkt_control(&f, IMPI_PK_FINI, &z, &z);
    uint8_t b[IMPI_PKT_HDR_LEN];
    impi_pkt_encode(&f, b);
    for (int h = 0; h < relay_nslots(s); h++) {
        struct rconn *rc = relay.hosts[s][h];
        if (rc->fini_tx)
            continue;
        rc->fini_tx = true;
        relay_send(rc, b, sizeof b);
        impi_log(1, "%s: sent FINI", rc->c.name);
    }
}

/* Whether every host of side s has sent its FINI to this relay. */
static bool side_fini_rx(enum rside s)
{
    for (int h = 0; h < relay_nslots(s); h++)
        if (!relay.hosts[s][h]->fini_rx)
            return false;
    return true;
}

/* Main thread: see impi_relay_run.h. Nothing more can come for the hosts of one side
 * once every host of the other side sent FINI here and every other trunk said the same
 * over its link (a packet it took before those FINIs is ahead of its CT_DONE there). */
void relay_fini_check(void)
{
    for (int s = SIDE_IN; s <= SIDE_OUT; s++)
        if (side_fini_rx((enum rside)s) && relay_links_done_rx((enum rside)s))
            fini_side(s == SIDE_IN ? SIDE_OUT : SIDE_IN); /* idempotent */
}

/* FINI is per hop: consumed here, and generated towards the other side once every host
 * of this side has sent its own, here and at every other trunk. */
static void on_fini(struct rconn *rc)
{
    if (rc->fini_rx)
        relay_fail("%s: second FINI", rc->c.name);
    rc->fini_rx = true;
    impi_log(1, "%s: got FINI", rc->c.name);
    if (!side_fini_rx(rc->side))
        return;
    relay_links_side_done(rc->side);
    relay_fini_check();
}

/* Rewrites one packet (frame f of fr bytes, decoded as p) from rc and queues it. */
static void forward(struct rconn *rc, const uint8_t *f, size_t fr, const struct impi_pkt *p)
{
    struct impi_proc src, dest;
    struct rconn *out;
    int32_t i, j;
    if (rc->side == SIDE_IN) {
        if ((i = relay_in_by_real(&relay.m, &p->src)) < 0)
            relay_fail("%s: %s packet from unknown source proc %s:%lld", rc->c.name,
                       impi_pkt_type_name(p->type), impi_ipstr(impi_hostid_ipv4(p->src.hostid)),
                       (long long)p->src.pid);
        if ((j = relay_out_by_private(&relay.m, &p->dest)) < 0)
            relay_fail("%s: %s packet to unknown destination proc %s:%lld", rc->c.name,
                       impi_pkt_type_name(p->type), impi_ipstr(impi_hostid_ipv4(p->dest.hostid)),
                       (long long)p->dest.pid);
        relay_global_id(&relay.m, i, &src);
        dest = relay.m.out.proc[j];
        out = relay.hosts[SIDE_OUT][relay.m.out.proc_host[j]];
    } else {
        if ((j = relay_out_by_real(&relay.m, &p->src)) < 0)
            relay_fail("%s: %s packet from unknown source proc %s:%lld", rc->c.name,
                       impi_pkt_type_name(p->type), impi_ipstr(impi_hostid_ipv4(p->src.hostid)),
                       (long long)p->src.pid);
        if ((i = relay_in_by_global(&relay.m, &p->dest)) < 0)
            relay_fail("%s: %s packet to unknown destination proc %s:%lld", rc->c.name,
                       impi_pkt_type_name(p->type), impi_ipstr(impi_hostid_ipv4(p->dest.hostid)),
                       (long long)p->dest.pid);
        relay_private_id(&relay.m, j, &src);
        dest = relay.m.in.proc[i];
        /* A's host gets it on its connection to our host for the source's client. */
        out = relay.hosts[SIDE_IN][relay.m.in.proc_host[i] * relay.m.next + relay.m.out.ext_of[j]];
    }
    if (p->type == IMPI_PK_PROTOACK) {
        /* A LAM receiver acknowledging what the relay delivered: the relay never holds
         * packets back on hiwater towards a receiver (TCP backpressure and the queue
         * limit do), so the credit has no use; and with trunking it would often reach a
         * relay that did not send the data (LAM routes it to the owner of the source). */
        relay.st.acks_dropped[rc->side]++;
        return;
    }
    if (rc->side == SIDE_IN) {
        relay.st.dest_pkts[SIDE_IN][j]++;
        relay.st.dest_data[SIDE_IN][j] += impi_pkt_has_payload(p->type);
    } else {
        relay.st.dest_pkts[SIDE_OUT][i]++;
        relay.st.dest_data[SIDE_OUT][i] += impi_pkt_has_payload(p->type);
    }
    /* The receiving LAM must get the packet from the relay that owns the source proc in
     * its tables (the id just written into pk_src names it); when that is another trunk,
     * the packet crosses the link to it (impi_relay_link.c explains why). */
    int via = rc->side == SIDE_IN ? relay.m.in.owner[i] : relay.m.out.owner[j];
    struct rconn *q = via == relay.self ? out : relay.link[via].rc;
    uint8_t *o;
    if (via == relay.self) {
        if (out->fini_tx)
            relay_fail("%s: packet for %s after its FINI", rc->c.name, out->c.name);
        if (impi_conn_pending(&out->c) > RELAY_QUEUE_LIMIT)
            relay_fail("%s: more than 1 GiB queued; the peer stopped reading", out->c.name);
        if (!(o = impi_conn_reserve(&out->c, fr)))
            relay_fail("out of memory");
    } else {
        o = relay_link_reserve(via, rc->side, out->host, fr);
    }
    memcpy(o, f, fr);
    /* Only the ids change: LAM's other header fields (garbage cids included) and the
     * payload pass through byte for byte. srqid/drqid are left alone: they stay
     * meaningful end to end because every packet of a message takes the same path. */
    impi_proc_put(o, IMPI_OFF_SRC, &src);
    impi_proc_put(o, IMPI_OFF_DEST, &dest);
    relay.st.pkts[rc->side]++;
    relay.st.bytes[rc->side] += fr;
    impi_log(
        3, "%s: %s A%d %s B%d len %u msglen %llu srq %llu drq %llu tag %d via trunk %d queued %zu",
        rc->side == SIDE_IN ? "A->B" : "B->A", impi_pkt_type_name(p->type), i,
        rc->side == SIDE_IN ? "->" : "<-", j, p->len, (unsigned long long)p->msglen,
        (unsigned long long)p->srqid, (unsigned long long)p->drqid, p->tag, via,
        impi_conn_pending(&q->c));
    relay_flush(q);
    /* Acknowledge the sender once per ackmark packets of this pair, on the connection the
     * data came in on, with the ids as the sender knows them (swapped). LAM accepts a
     * PROTOACK from any host connection: it matches the proc pair, not the socket. */
    size_t pair = rc->side == SIDE_IN ? (size_t)i * (size_t)relay.m.out.nprocs + (size_t)j
                                      : (size_t)j * (size_t)relay.m.in.nprocs + (size_t)i;
    bool due;
    impi_flow_received(&relay.fc, &relay.rx[rc->side][pair], p->type, &due);
    relay.st.pair_pkts[rc->side][pair] += impi_flow_counts(p->type);
    if (due) {
        struct impi_pkt a;
        uint8_t b[IMPI_PKT_HDR_LEN];
        impi_pkt_control(&a, IMPI_PK_PROTOACK, &p->dest, &p->src);
        impi_pkt_encode(&a, b);
        relay_send(rc, b, sizeof b);
        relay.st.acks_sent[rc->side]++;
        relay.st.pair_acks[rc->side][pair]++;
    }
}

/* Main thread: see impi_relay_run.h. */
void relay_host_input(struct rconn *rc)
{
    for (;;) {
        struct impi_pkt p;
        size_t fr;
        const uint8_t *d = impi_conn_data(&rc->c);
        int e = impi_frame(d, impi_conn_avail(&rc->c), relay.m.maxlen, &p, &fr);
        if (e == IMPI_E_AGAIN)
            break;
        if (e)
            relay_fail("%s: bad packet: %s", rc->c.name, impi_strerror(e));
        if (p.type == IMPI_PK_FINI)
            on_fini(rc);
        else if (rc->fini_rx)
            relay_fail("%s: %s packet after FINI", rc->c.name, impi_pkt_type_name(p.type));
        else
            forward(rc, d, fr, &p);
        impi_conn_consume(&rc->c, fr);
    }
    if (rc->c.eof) {
        if (impi_frame_eof(impi_conn_avail(&rc->c)))
            relay_fail("%s: connection closed inside a packet (%zu bytes of it)", rc->c.name,
                       impi_conn_avail(&rc->c));
        if (!rc->fini_rx)
            relay_fail("%s closed its connection before FINI", rc->c.name);
    }
    if (rc->fini_rx && rc->fini_tx && !impi_conn_pending(&rc->c) && rc->c.fd >= 0) {
        impi_log(1, "%s: FINI both ways; closing", rc->c.name);
        impi_conn_close(&rc->c, relay.ep);
    }
}

/* Main thread: see impi_relay_run.h. */
bool relay_hosts_finished(void)
{
    if (!relay.dance_started)
        return false;
    for (int s = 0; s < 2; s++) {
        for (int h = 0; h < relay_nslots((enum rside)s); h++) {
            struct rconn *rc = relay.hosts[s][h];
            if (rc->fini_rx && rc->fini_tx && !impi_conn_pending(&rc->c) && rc->c.fd >= 0)
                impi_conn_close(&rc->c, relay.ep);
            if (rc->c.fd >= 0 || !rc->fini_rx || !rc->fini_tx)
                return false;
        }
    }
    return true;
}

/* Main thread: see impi_relay_run.h. */
void relay_print_stats(void)
{
    if (!relay.dance_started)
        return;
    printf("impi-relay[%d]: forwarded private->global %llu packets %llu bytes, "
           "global->private %llu packets %llu bytes\n",
           relay.self, (unsigned long long)relay.st.pkts[SIDE_IN],
           (unsigned long long)relay.st.bytes[SIDE_IN], (unsigned long long)relay.st.pkts[SIDE_OUT],
           (unsigned long long)relay.st.bytes[SIDE_OUT]);
    printf("impi-relay[%d]: flow control per hop (ackmark %u, hiwater %u): PROTOACKs sent to "
           "private %llu, to external %llu; consumed from private %llu, from external %llu\n",
           relay.self, relay.fc.ackmark, relay.fc.hiwater,
           (unsigned long long)relay.st.acks_sent[SIDE_IN],
           (unsigned long long)relay.st.acks_sent[SIDE_OUT],
           (unsigned long long)relay.st.acks_dropped[SIDE_IN],
           (unsigned long long)relay.st.acks_dropped[SIDE_OUT]);
    for (int32_t j = 0; j < relay.m.out.nprocs; j++)
        printf("impi-relay[%d]: to external proc %d: %llu packets, %llu data packets\n", relay.self,
               j, (unsigned long long)relay.st.dest_pkts[SIDE_IN][j],
               (unsigned long long)relay.st.dest_data[SIDE_IN][j]);
    for (int32_t i = 0; i < relay.m.in.nprocs; i++)
        printf("impi-relay[%d]: to private proc %d: %llu packets, %llu data packets\n", relay.self,
               i, (unsigned long long)relay.st.dest_pkts[SIDE_OUT][i],
               (unsigned long long)relay.st.dest_data[SIDE_OUT][i]);
    relay_link_print_stats();
    fflush(stdout);
}
