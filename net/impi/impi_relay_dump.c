/*
 * impi_relay_dump.c: the relay's state on demand (`kill -USR1 <relay>`), for a job that
 * hangs: where bytes wait (each connection's counters, buffered input, queued output,
 * whether EPOLLOUT is armed), the trunk links' end markers, and the per-pair flow-control
 * state. Read it with the peers' socket queues (`ss -tnpi` in each namespace): data queued
 * nowhere means a peer is not reading or not sending.
 */
#include "impi_relay_run.h"
#include "impi_util.h"

/* One connection's line (rc may be NULL: not created yet). */
static void dump_conn(const char *what, const struct rconn *rc)
{
    if (!rc) {
        impi_log(0, "dump: %s: none", what);
        return;
    }
    const struct impi_conn *c = &rc->c;
    impi_log(0, "dump: %s: fd %d%s rx %llu tx %llu in %zu out %zu%s%s fini rx %d tx %d", c->name,
             c->fd, rc->connecting ? " connecting" : "", (unsigned long long)c->rx_bytes,
             (unsigned long long)c->tx_bytes, c->in ? impi_conn_avail(c) : 0, impi_conn_pending(c),
             c->want_out ? " EPOLLOUT" : "", c->eof ? " eof" : "", rc->fini_rx, rc->fini_tx);
}

/* The flow-control state of the pairs whose sender is on side s. */
static void dump_pairs(enum rside s)
{
    int32_t na = relay.m.in.nprocs, nb = relay.m.out.nprocs;
    for (int32_t i = 0; i < na; i++)
        for (int32_t j = 0; j < nb; j++) {
            size_t pair = s == SIDE_IN ? (size_t)i * (size_t)nb + (size_t)j
                                       : (size_t)j * (size_t)na + (size_t)i;
            if (!relay.st.pair_pkts[s][pair])
                continue;
            impi_log(0,
                     "dump: pair %s%d -> %s%d: %llu counted packets taken, %llu PROTOACKs "
                     "sent, %u towards the next",
                     s == SIDE_IN ? "A" : "B", s == SIDE_IN ? i : j, s == SIDE_IN ? "B" : "A",
                     s == SIDE_IN ? j : i, (unsigned long long)relay.st.pair_pkts[s][pair],
                     (unsigned long long)relay.st.pair_acks[s][pair], relay.rx[s][pair].count);
        }
}

/* Main thread: see impi_relay_run.h. */
void relay_dump(void)
{
    impi_log(0, "dump: trunk %d of %d, tables %s, dance %s, ackmark %u hiwater %u", relay.self,
             relay.m.K, relay.m.complete ? "complete" : "incomplete",
             relay.dance_started ? "started" : "not started", relay.fc.ackmark, relay.fc.hiwater);
    if (relay.self == 0) {
        dump_conn("client A", relay.client);
        dump_conn("server", relay.server);
    }
    for (int k = 0; k < relay.m.K; k++) {
        const struct relay_link *l = &relay.link[k];
        if (k == relay.self)
            continue;
        dump_conn("trunk link", l->rc);
        impi_log(0,
                 "dump: link %d: end markers sent %d/%d received %d/%d, packets sent %llu/%llu "
                 "received %llu/%llu (A->B/B->A)",
                 k, l->done_tx[SIDE_IN], l->done_tx[SIDE_OUT], l->done_rx[SIDE_IN],
                 l->done_rx[SIDE_OUT], (unsigned long long)l->pkts_tx[SIDE_IN],
                 (unsigned long long)l->pkts_tx[SIDE_OUT], (unsigned long long)l->pkts_rx[SIDE_IN],
                 (unsigned long long)l->pkts_rx[SIDE_OUT]);
    }
    for (int i = 0; i < relay.npending; i++)
        if (relay.pending[i]->c.fd >= 0)
            dump_conn("pending", relay.pending[i]);
    if (!relay.dance_started)
        return;
    for (int s = SIDE_IN; s <= SIDE_OUT; s++) {
        for (int h = 0; h < relay_nslots((enum rside)s); h++)
            dump_conn("host", relay.hosts[s][h]);
    }
    dump_pairs(SIDE_IN);
    dump_pairs(SIDE_OUT);
}
