/*
 * wgw_route.c: what waitio-gw reads of the protocol (PROTOCOL.md sections 4 and 8), all
 * through the codec (mpi/waitio/wio_wire.h): the first header of every connection, the
 * REGISTER a private PB's rank 0 sends (forwarded with every entry replaced by the
 * gateway's public address), the master's TABLE (forwarded with every public entry
 * replaced by the gateway's private address), and the real table that HELLOs are routed by.
 */
#include "impi_util.h"
#include "wgw.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A PB that registered through this gateway, with its processes' real addresses. Kept
 * until the same PB id registers again (the next run). */
struct reg {
    struct reg *next;
    uint32_t pbid, npb, nprocs;
    struct wio_addr *addrs;
};
static struct reg *regs;

/* The real table of the last TABLE seen: where each universe index really is, and
 * whether it is behind this gateway (its PB registered through us). */
static struct {
    uint32_t total;
    struct wio_addr *addr;
    uint8_t *priv;
} tab;

/* Main thread: leg's address as a table entry. */
static struct wio_addr leg_addr(enum wgw_leg leg)
{
    uint32_t ip = wgw_opts.ip[leg];
    return (struct wio_addr){{ip >> 24, ip >> 16 & 255, ip >> 8 & 255, ip & 255},
                             wgw_opts.port[leg]};
}

/* Main thread: an entry's address in host order. */
static uint32_t addr_ip(const struct wio_addr *a)
{
    return (uint32_t)a->ip[0] << 24 | (uint32_t)a->ip[1] << 16 | (uint32_t)a->ip[2] << 8 | a->ip[3];
}

/* Main thread: a header h with payload p[0..n) as one malloc'd message; NULL when out of
 * memory. The header's lengths are set to n. */
static uint8_t *message(struct wio_hdr h, const uint8_t *p, size_t n)
{
    uint8_t *m = malloc(WIO_HDR + n);
    if (!m)
        return NULL;
    h.len = h.plen = (uint32_t)n;
    wio_hdr_encode(&h, m);
    memcpy(m + WIO_HDR, p, n);
    return m;
}

/* Main thread: a HELLO: route it by dst through the real table. */
static int hello(struct wgw_conn *c, const struct wio_hdr *h)
{
    enum wgw_leg from = c->end[0].leg;
    uint32_t d = h->dst;
    if (from == WGW_PUB && !tab.priv[d])
        return wgw_conn_close(c, 0, "HELLO from %u for %u, which is not behind this gateway",
                              h->src, d);
    enum wgw_leg to = tab.priv[d] ? WGW_PRIV : WGW_PUB;
    const struct wio_addr *a = &tab.addr[d];
    snprintf(c->what, sizeof c->what, "dst %u at %u.%u.%u.%u:%u", d, a->ip[0], a->ip[1], a->ip[2],
             a->ip[3], a->port);
    c->dst = d;
    uint8_t *m = malloc(WIO_HDR); /* the HELLO goes on as it came, byte for byte */
    if (m)
        memcpy(m, c->hdr, WIO_HDR);
    if (!m || wgw_conn_forward(c)) {
        free(m);
        return wgw_conn_close(c, -1, "out of memory");
    }
    wgw_conn_put(c, 1, m, WIO_HDR);
    if (wgw_conn_open(c, to, addr_ip(a), a->port))
        return wgw_conn_close(c, 1, "connect: %m");
    wgw_stats.forwarded++;
    impi_log(1, "conn %llu: HELLO %u -> %u via %s", (unsigned long long)c->id, h->src, d, c->what);
    return 0;
}

/* Main thread: see wgw.h. */
int wgw_route_first(struct wgw_conn *c)
{
    struct wio_hdr h;
    wio_hdr_decode(c->hdr, &h);
    /* The gateway answers for the destination: the codec checks the header as the
     * process `dst` would when accepting it (any src, dst = itself). Only the private leg
     * takes a REGISTER, as the master would. */
    bool reg = h.type == WIO_T_REGISTER && c->end[0].leg == WGW_PRIV;
    struct wio_conn_view v = {.phase = reg ? WIO_PH_MASTER : WIO_PH_ACCEPTED, .peer = WIO_ANY};
    if (reg) {
        v.self = 0; /* the master is PB 0 */
        v.nprocs = WIO_MAX_PROCS;
    } else {
        /* Before any TABLE every dst is out of range: let that be the reason given. */
        v.self = h.dst < tab.total ? h.dst : WIO_ANY;
        v.nprocs = tab.total ? tab.total : WIO_MAX_PROCS;
    }
    int e = wio_hdr_check(&h, &v, NULL);
    if (e == WIO_E_DST && !reg)
        return wgw_conn_close(c, 0, "HELLO from %u: destination %u out of range (%u processes%s)",
                              h.src, h.dst, tab.total, tab.total ? "" : ": no TABLE seen yet");
    if (e)
        return wgw_conn_close(c, 0, "bad first header: %s (type %u %s)", wio_err_name(e), h.type,
                              wio_type_name(h.type));
    if (!reg)
        return hello(c, &h);
    c->pbid = h.src;
    c->body_len = h.plen;
    c->body = malloc(c->body_len + 1);
    if (!c->body)
        return wgw_conn_close(c, -1, "out of memory");
    c->st = WGW_REG_IN;
    snprintf(c->what, sizeof c->what, "master %s:%u (PB %u)", impi_ipstr(wgw_opts.master_ip),
             wgw_opts.master_port, c->pbid);
    return c->body_len ? 0 : wgw_route_register(c);
}

/* Main thread: remember PB r's real addresses (replacing an earlier run's); 0 or -1. */
static int remember(const struct wio_register *r)
{
    struct reg *g, **pp;
    for (pp = &regs; *pp; pp = &(*pp)->next) {
        if ((*pp)->pbid == r->pbid)
            break;
    }
    if (!*pp) {
        *pp = calloc(1, sizeof **pp);
        if (!*pp)
            return -1;
    }
    g = *pp;
    struct wio_addr *a = malloc((size_t)r->nprocs * sizeof *a);
    if (!a)
        return -1;
    for (uint32_t i = 0; i < r->nprocs; i++)
        wio_payload_addr(r->addrs, i, &a[i]);
    free(g->addrs);
    g->addrs = a;
    g->pbid = r->pbid;
    g->npb = r->npb;
    g->nprocs = r->nprocs;
    return 0;
}

/* Main thread: see wgw.h. */
int wgw_route_register(struct wgw_conn *c)
{
    struct wio_register r;
    struct wio_hdr h;
    wio_hdr_decode(c->hdr, &h);
    int e = wio_register_decode(c->body, c->body_len, &r);
    if (e)
        return wgw_conn_close(c, 0, "bad REGISTER: %s", wio_err_name(e));
    if (r.pbid != h.src)
        return wgw_conn_close(c, 0, "bad REGISTER: PB %u in the header, %u in the payload", h.src,
                              r.pbid);
    /* Every process of the PB is reachable at the gateway's public address. */
    struct wio_addr *pub = malloc((size_t)r.nprocs * sizeof *pub);
    size_t cap = wio_register_size(r.nprocs);
    uint8_t *payload = malloc(cap), *m = NULL;
    if (pub && payload && !remember(&r)) {
        for (uint32_t i = 0; i < r.nprocs; i++)
            pub[i] = leg_addr(WGW_PUB);
        size_t n = wio_register_encode(r.pbid, r.npb, r.nprocs, pub, payload, cap);
        m = n ? message(h, payload, n) : NULL;
    }
    free(pub);
    free(payload);
    if (!m)
        return wgw_conn_close(c, -1, "out of memory");
    wgw_conn_put(c, 1, m, WIO_HDR + cap);
    free(c->body);
    c->body = NULL;
    c->hdr_have = 0; /* now the master's reply header */
    c->st = WGW_REG_UP;
    wgw_stats.registered++;
    impi_log(0, "conn %llu: PB %u of %u (%u processes) registers as %s:%u",
             (unsigned long long)c->id, r.pbid, r.npb, r.nprocs, impi_ipstr(wgw_opts.ip[WGW_PUB]),
             wgw_opts.port[WGW_PUB]);
    if (wgw_conn_open(c, WGW_PUB, wgw_opts.master_ip, wgw_opts.master_port))
        wgw_conn_retry(c, errno);
    return 0;
}

/* Main thread: see wgw.h. */
int wgw_route_reply_hdr(struct wgw_conn *c)
{
    struct wio_hdr h;
    wio_hdr_decode(c->hdr, &h);
    struct wio_conn_view v = {
        .phase = WIO_PH_CLIENT, .peer = 0, .self = c->pbid, .nprocs = WIO_MAX_PROCS};
    int e = wio_hdr_check(&h, &v, NULL);
    if (e)
        return wgw_conn_close(c, 1, "bad reply header from the master: %s (type %u %s)",
                              wio_err_name(e), h.type, wio_type_name(h.type));
    c->body_len = h.plen;
    c->body_have = 0;
    c->body = malloc(c->body_len + 1);
    return c->body ? 0 : wgw_conn_close(c, -1, "out of memory");
}

/* Main thread: is PB pb's block of t (starting at universe index first) a registration
 * of ours, every entry at our public address? Returns it, or NULL. */
static const struct reg *ours(const struct wio_table *t, uint32_t pb, uint32_t first)
{
    const struct reg *g = regs;
    while (g && g->pbid != pb)
        g = g->next;
    if (!g || g->npb != t->npb || g->nprocs != wio_table_nprocs(t, pb))
        return NULL;
    struct wio_addr pub = leg_addr(WGW_PUB), a;
    for (uint32_t i = 0; i < g->nprocs; i++) {
        wio_payload_addr(t->addrs, first + i, &a);
        if (memcmp(a.ip, pub.ip, 4) || a.port != pub.port)
            return NULL;
    }
    return g;
}

/* Main thread: make t the real table (our PBs at their private addresses) and fill
 * out[total] with what the private side sees (everything else at our private address).
 * Returns 0, or -1 when out of memory or when PB `pbid` is not ours in t. */
static int retable(const struct wio_table *t, uint32_t pbid, struct wio_addr *out, uint32_t *nprocs)
{
    struct wio_addr *addr = malloc((size_t)t->total * sizeof *addr);
    uint8_t *priv = calloc(t->total, 1);
    bool mine = false;
    if (!addr || !priv) {
        free(addr);
        free(priv);
        return -1;
    }
    for (uint32_t pb = 0, first = 0; pb < t->npb; first += nprocs[pb++]) {
        nprocs[pb] = wio_table_nprocs(t, pb);
        const struct reg *g = ours(t, pb, first);
        mine |= g && pb == pbid;
        for (uint32_t i = 0; i < nprocs[pb]; i++) {
            if (g)
                addr[first + i] = g->addrs[i];
            else
                wio_payload_addr(t->addrs, first + i, &addr[first + i]);
            priv[first + i] = g != NULL;
            out[first + i] = g ? g->addrs[i] : leg_addr(WGW_PRIV);
        }
    }
    free(tab.addr);
    free(tab.priv);
    tab.addr = addr;
    tab.priv = priv;
    tab.total = t->total;
    return mine ? 0 : -2;
}

/* Main thread: see wgw.h. */
int wgw_route_reply(struct wgw_conn *c)
{
    struct wio_hdr h;
    wio_hdr_decode(c->hdr, &h);
    uint8_t *m = NULL;
    size_t mlen = WIO_HDR + c->body_len;
    if (h.type == WIO_T_REFUSE) {
        char text[WIO_REFUSE_MAX + 1];
        int e = wio_refuse_decode(c->body, c->body_len, text, sizeof text);
        if (e)
            return wgw_conn_close(c, 1, "bad REFUSE from the master: %s", wio_err_name(e));
        impi_log(0, "conn %llu: the master refuses PB %u: %s", (unsigned long long)c->id, c->pbid,
                 text);
        wgw_stats.refused++;
        m = message(h, c->body, c->body_len);
    } else {
        struct wio_table t;
        int e = wio_table_decode(c->body, c->body_len, &t);
        if (e)
            return wgw_conn_close(c, 1, "bad TABLE from the master: %s", wio_err_name(e));
        struct wio_addr *out = malloc((size_t)t.total * sizeof *out);
        uint32_t *nprocs = malloc((size_t)t.npb * sizeof *nprocs);
        uint8_t *payload = malloc(c->body_len);
        e = out && nprocs && payload ? retable(&t, c->pbid, out, nprocs) : -1;
        size_t n = e ? 0 : wio_table_encode(t.npb, nprocs, out, payload, c->body_len);
        m = n ? message(h, payload, n) : NULL;
        free(out);
        free(nprocs);
        free(payload);
        if (e == -2)
            return wgw_conn_close(c, 1, "the master's TABLE does not list PB %u at %s:%u", c->pbid,
                                  impi_ipstr(wgw_opts.ip[WGW_PUB]), wgw_opts.port[WGW_PUB]);
        wgw_stats.tables++;
        impi_log(0, "conn %llu: TABLE for PB %u: %u PBs, %u processes", (unsigned long long)c->id,
                 c->pbid, t.npb, t.total);
    }
    if (!m || wgw_conn_forward(c)) {
        free(m);
        return wgw_conn_close(c, -1, "out of memory");
    }
    wgw_conn_put(c, 0, m, mlen);
    free(c->body);
    c->body = NULL;
    return 0;
}
