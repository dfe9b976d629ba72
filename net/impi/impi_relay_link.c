/*
 * impi_relay_link.c: the links between trunk relays, and why packets cross them.
 *
 * LAM's impid assumes that every packet from proc p reaches it on its connection to
 * host(p), the host that owns p in its startup tables; between LAM hosts that always holds.
 * Destination-based trunking alone breaks it: a packet from A's proc i to B's proc j
 * enters the relay that owns j in A's view (LAM routes by destination), but B's tables say
 * that i lives on the relay that owns i. impid then answers on the wrong connection
 * (PROTOACKs go to host(src)) from inside its reads, and two of its reentrancy bugs turn
 * that into a blocking read on a socket with nothing to read: the hang of the trunked
 * all-to-all (README, "Trunking"). So a relay hands a packet to its receiver only if it
 * owns the packet's source in the receiver's view; any other packet crosses the link to
 * the relay that does (one more store-and-forward hop, same order: one FIFO per hop).
 *
 * Links: one TCP connection per pair of relays, the trunk control connection between the
 * master and each secondary, and between two secondaries one the higher index opens to the
 * lower one's control listener (CT_LINK). Records as on the control connection:
 *   CT_PKT  from side, host index on the other side, the packet with its ids already
 *           rewritten for that side (the receiving relay only queues it);
 *   CT_DONE side: every host of that side has sent FINI to the sender, which has
 *           forwarded everything before it. FINI per hop needs it: a relay may FINI one
 *           side only when no packet for it can still come, directly or over a link.
 * A link closes once both ends sent and received CT_DONE for both sides.
 */
#include "impi_relay_run.h"
#include "impi_util.h"
#include <string.h>

/* CT_PKT's fields before the packet: the side it came from, the host it goes to. */
#define LINK_PKT_FIELDS (2 * CT_INT_LEN)

/* Main thread: see impi_relay_run.h. */
void relay_link_set(int k, struct rconn *rc)
{
    relay.link[k].rc = rc;
    rc->trunk = k;
    snprintf(rc->c.name, sizeof rc->c.name, "trunk link %d-%d", relay.self, k);
}

/* Main thread: see impi_relay_run.h. */
bool relay_links_ready(void)
{
    for (int k = 0; k < relay.m.K; k++)
        if (k != relay.self && !relay.link[k].rc)
            return false;
    return true;
}

/* Main thread: see impi_relay_run.h. */
uint8_t *relay_link_reserve(int k, enum rside from, int host, size_t fr)
{
    struct relay_link *l = &relay.link[k];
    if (impi_conn_pending(&l->rc->c) > RELAY_QUEUE_LIMIT)
        relay_fail("%s: more than 1 GiB queued; the other trunk stopped reading", l->rc->c.name);
    uint8_t *o = impi_conn_reserve(&l->rc->c, CT_HDR_LEN + LINK_PKT_FIELDS + fr);
    if (!o)
        relay_fail("out of memory");
    impi_put32(o, CT_PKT);
    impi_put32(o + CT_INT_LEN, (uint32_t)(LINK_PKT_FIELDS + fr));
    impi_put32(o + CT_HDR_LEN, (uint32_t)from);
    impi_put32(o + CT_HDR_LEN + CT_INT_LEN, (uint32_t)host);
    l->pkts_tx[from]++;
    l->bytes_tx[from] += fr;
    return o + CT_HDR_LEN + LINK_PKT_FIELDS;
}

/* A CT_PKT from trunk k (fields p[0..len)): queue the packet for its host. The other relay
 * has checked and rewritten it; it is checked again here only as far as our own state needs
 * (a whole packet, a real host, no FINI sent there yet). */
static void link_packet(int k, const uint8_t *p, uint32_t len)
{
    struct relay_link *l = &relay.link[k];
    if (len < LINK_PKT_FIELDS)
        relay_fail("%s: short packet record", l->rc->c.name);
    uint32_t from = impi_get32(p), host = impi_get32(p + CT_INT_LEN);
    const uint8_t *f = p + LINK_PKT_FIELDS;
    size_t fr = len - LINK_PKT_FIELDS, whole;
    if (from != SIDE_IN && from != SIDE_OUT)
        relay_fail("%s: bad side %u", l->rc->c.name, from);
    enum rside to = from == SIDE_IN ? SIDE_OUT : SIDE_IN;
    uint32_t nh = (uint32_t)relay_nslots(to);
    struct impi_pkt pk;
    if (host >= nh || impi_frame(f, fr, relay.m.maxlen, &pk, &whole) || whole != fr)
        relay_fail("%s: bad packet record (host %u, %zu bytes)", l->rc->c.name, host, fr);
    if (l->done_rx[from])
        relay_fail("%s: packet after its end marker", l->rc->c.name);
    struct rconn *out = relay.hosts[to][host];
    if (out->fini_tx)
        relay_fail("%s: packet for %s after its FINI", l->rc->c.name, out->c.name);
    if (impi_conn_pending(&out->c) > RELAY_QUEUE_LIMIT)
        relay_fail("%s: more than 1 GiB queued; the peer stopped reading", out->c.name);
    if (impi_conn_send(&out->c, f, fr))
        relay_fail("out of memory");
    l->pkts_rx[from]++;
    l->bytes_rx[from] += fr;
    impi_log(3, "%s: %s from trunk %d for %s queued %zu", from == SIDE_IN ? "A->B" : "B->A",
             impi_pkt_type_name(pk.type), k, out->c.name, impi_conn_pending(&out->c));
    relay_flush(out);
}

/* Main thread: see impi_relay_run.h. */
void relay_link_record(struct rconn *rc, uint32_t type, const uint8_t *p, uint32_t len)
{
    int k = rc->trunk;
    if (type == CT_PKT) {
        link_packet(k, p, len);
        return;
    }
    uint32_t s = len == CT_INT_LEN ? impi_get32(p) : UINT32_MAX;
    if (s != SIDE_IN && s != SIDE_OUT)
        relay_fail("%s: bad end marker", rc->c.name);
    if (relay.link[k].done_rx[s])
        relay_fail("%s: second end marker", rc->c.name);
    relay.link[k].done_rx[s] = true;
    impi_log(1, "%s: every %s host has finished at trunk %d", rc->c.name,
             s == SIDE_IN ? "private" : "external", k);
    relay_fini_check();
}

/* Main thread: see impi_relay_run.h. */
void relay_links_side_done(enum rside s)
{
    uint8_t b[CT_INT_LEN];
    impi_put32(b, (uint32_t)s);
    for (int k = 0; k < relay.m.K; k++) {
        struct relay_link *l = &relay.link[k];
        if (k == relay.self || l->done_tx[s])
            continue;
        l->done_tx[s] = true;
        relay_ctrl_send(l->rc, CT_DONE, b, sizeof b);
    }
}

/* Main thread: see impi_relay_run.h. */
bool relay_links_done_rx(enum rside s)
{
    for (int k = 0; k < relay.m.K; k++)
        if (k != relay.self && !relay.link[k].done_rx[s])
            return false;
    return true;
}

/* Whether link l has exchanged both end markers both ways (nothing more goes either way). */
static bool link_done(const struct relay_link *l)
{
    return l->done_tx[SIDE_IN] && l->done_tx[SIDE_OUT] && l->done_rx[SIDE_IN] &&
           l->done_rx[SIDE_OUT];
}

/* Main thread: see impi_relay_run.h. */
void relay_link_eof(struct rconn *rc)
{
    struct relay_link *l = &relay.link[rc->trunk];
    if (!l->done_rx[SIDE_IN] || !l->done_rx[SIDE_OUT])
        relay_fail("%s closed before the end of the job", rc->c.name);
    if (impi_conn_pending(&rc->c))
        relay_fail("%s closed with %zu bytes still to send", rc->c.name, impi_conn_pending(&rc->c));
    impi_conn_close(&rc->c, relay.ep);
}

/* Main thread: see impi_relay_run.h. */
bool relay_links_finished(void)
{
    bool all = true;
    for (int k = 0; k < relay.m.K; k++) {
        struct relay_link *l = &relay.link[k];
        if (k == relay.self || !l->rc || l->rc->c.fd < 0)
            continue;
        if (link_done(l) && !impi_conn_pending(&l->rc->c))
            impi_conn_close(&l->rc->c, relay.ep);
        else
            all = false;
    }
    return all;
}

/* Main thread: see impi_relay_run.h. */
void relay_link_print_stats(void)
{
    for (int k = 0; k < relay.m.K; k++) {
        const struct relay_link *l = &relay.link[k];
        if (k == relay.self)
            continue;
        printf("impi-relay[%d]: link to trunk %d: sent private->global %llu packets %llu bytes, "
               "global->private %llu packets %llu bytes; received private->global %llu packets "
               "%llu bytes, global->private %llu packets %llu bytes\n",
               relay.self, k, (unsigned long long)l->pkts_tx[SIDE_IN],
               (unsigned long long)l->bytes_tx[SIDE_IN], (unsigned long long)l->pkts_tx[SIDE_OUT],
               (unsigned long long)l->bytes_tx[SIDE_OUT], (unsigned long long)l->pkts_rx[SIDE_IN],
               (unsigned long long)l->bytes_rx[SIDE_IN], (unsigned long long)l->pkts_rx[SIDE_OUT],
               (unsigned long long)l->bytes_rx[SIDE_OUT]);
    }
}
