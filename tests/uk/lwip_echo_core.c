/*
 * lwip_echo_core.c: see lwip_echo_core.h. All callbacks run under the lwIP lock (they are
 * called from netif_poll_all() / sys_check_timeouts() / tcp_* inside lwip_echo_step()).
 * No allocation besides lwIP's own: the test must run in the kernel too.
 */
#include <string.h>
#include "lwip/ip_addr.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "lwip_port.h"
#include "lwip_echo_core.h"

struct lwip_echo {
    struct lwip_echo_result *res;
    size_t total;
    struct tcp_pcb *listener, *server, *client;
    uint32_t gen;        /* PRNG state for the data the client sends */
    size_t server_bytes; /* bytes the server echoed */
    int client_connected, client_closed, server_closed;
};

/* Under the lwIP lock: running checksum (FNV-1a) over `len` bytes. */
static uint32_t lwip_echo_sum(uint32_t h, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Under the lwIP lock: the next byte of the deterministic test stream. */
static uint8_t lwip_echo_byte(struct lwip_echo *e)
{
    e->gen = e->gen * 1103515245u + 12345u;
    return (uint8_t)(e->gen >> 16);
}

/* Under the lwIP lock: marks the run failed with `why` (first failure wins). */
static void lwip_echo_fail(struct lwip_echo *e, const char *why)
{
    if (!e->res->error)
        e->res->error = why;
}

/* lwIP callback: the server side got data (p) or the client's FIN (p == NULL). Echo every
 * byte back; if the send queue is full, refuse the pbuf (ERR_MEM) and lwIP offers it
 * again later, so no byte is lost or reordered. */
static err_t lwip_echo_server_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct lwip_echo *e = arg;

    if (!p) {
        if (tcp_close(pcb) != ERR_OK)
            lwip_echo_fail(e, "server tcp_close failed");
        e->server = NULL;
        e->server_closed = 1;
        return ERR_OK;
    }
    if (tcp_sndbuf(pcb) < p->tot_len || tcp_sndqueuelen(pcb) + pbuf_clen(p) + 1 >= TCP_SND_QUEUELEN)
        return ERR_MEM;
    for (struct pbuf *q = p; q; q = q->next) {
        if (tcp_write(pcb, q->payload, q->len, TCP_WRITE_FLAG_COPY) != ERR_OK) {
            lwip_echo_fail(e, "server tcp_write failed");
            break;
        }
    }
    e->server_bytes += p->tot_len;
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    tcp_output(pcb);
    return ERR_OK;
}

/* lwIP callback: a connection on either pcb died (reset, out of memory), or was aborted by
 * lwip_echo_run's clean-up after a failure, which cleared its arg first (nothing to say). */
static void lwip_echo_err(void *arg, err_t err)
{
    struct lwip_echo *e = arg;

    if (!e)
        return;
    lwip_echo_fail(e, "connection error callback");
    /* The pcb is already freed by lwIP: forget it. */
    e->server = NULL;
    e->client = NULL;
}

/* lwIP callback: the listener accepted the client's connection. */
static err_t lwip_echo_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct lwip_echo *e = arg;

    if (err != ERR_OK || !pcb || e->server) {
        lwip_echo_fail(e, "accept failed");
        return ERR_VAL;
    }
    e->server = pcb;
    tcp_arg(pcb, e);
    tcp_recv(pcb, lwip_echo_server_recv);
    tcp_err(pcb, lwip_echo_err);
    return ERR_OK;
}

/* lwIP callback: the client got echoed data (p) or the server's FIN (p == NULL). */
static err_t lwip_echo_client_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct lwip_echo *e = arg;

    if (!p) {
        e->client_closed = 1;
        e->client = NULL;
        if (tcp_close(pcb) != ERR_OK)
            lwip_echo_fail(e, "client tcp_close after FIN failed");
        return ERR_OK;
    }
    /* Sampled here too: over loopback a whole exchange can happen in one poll. */
    if (pcb->snd_wnd > e->res->peer_wnd)
        e->res->peer_wnd = pcb->snd_wnd;
    for (struct pbuf *q = p; q; q = q->next)
        e->res->echo_sum = lwip_echo_sum(e->res->echo_sum, q->payload, q->len);
    e->res->echoed += p->tot_len;
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    if (e->res->echoed > e->total)
        lwip_echo_fail(e, "more bytes echoed than sent");
    /* Everything is back: half-close; the server answers with its own FIN. */
    if (e->res->echoed == e->total && tcp_shutdown(pcb, 0, 1) != ERR_OK)
        lwip_echo_fail(e, "client shutdown failed");
    return ERR_OK;
}

/* lwIP callback: the client's connect completed. */
static err_t lwip_echo_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct lwip_echo *e = arg;

    e->client_connected = 1;
    return ERR_OK;
}

/* Under the lwIP lock: queue as much of the stream as the send buffer takes, in chunks of
 * 1..8 KiB (varied so segment boundaries move). Data is copied into lwIP (FLAG_COPY). */
static void lwip_echo_client_send(struct lwip_echo *e)
{
    uint8_t chunk[8192];

    if (e->client && e->client->snd_wnd > e->res->peer_wnd)
        e->res->peer_wnd = e->client->snd_wnd;
    while (e->client && e->res->sent < e->total) {
        size_t n = 1 + (e->res->sent * 7919u) % sizeof(chunk);
        uint32_t gen = e->gen;

        if (n > e->total - e->res->sent)
            n = e->total - e->res->sent;
        if (n > tcp_sndbuf(e->client))
            n = tcp_sndbuf(e->client);
        if (n == 0 || tcp_sndqueuelen(e->client) + 8 >= TCP_SND_QUEUELEN)
            break;
        for (size_t i = 0; i < n; i++)
            chunk[i] = lwip_echo_byte(e);
        if (tcp_write(e->client, chunk, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK) {
            e->gen = gen; /* not queued: regenerate the same bytes next time */
            break;
        }
        e->res->sent_sum = lwip_echo_sum(e->res->sent_sum, chunk, n);
        e->res->sent += n;
    }
    if (e->client)
        tcp_output(e->client);
}

/* Task context, lock not held: one round of the event loop. */
static void lwip_echo_step(struct lwip_echo *e)
{
    lwip_lock();
    netif_poll_all();
    sys_check_timeouts();
    if (e->client_connected)
        lwip_echo_client_send(e);
    lwip_unlock();
}

/* Task context, lock not held: sets up listener and client (see lwip_echo_core.h). */
static int lwip_echo_start(struct lwip_echo *e, uint16_t port)
{
    ip_addr_t lo;
    struct tcp_pcb *l;

    IP_ADDR4(&lo, 127, 0, 0, 1);
    lwip_lock();
    l = tcp_new();
    if (!l || tcp_bind(l, &lo, port) != ERR_OK) {
        lwip_unlock();
        return -1;
    }
    e->listener = tcp_listen(l);
    if (!e->listener) {
        tcp_close(l);
        lwip_unlock();
        return -1;
    }
    tcp_arg(e->listener, e);
    tcp_accept(e->listener, lwip_echo_accept);
    e->client = tcp_new();
    if (!e->client) {
        lwip_unlock();
        return -1;
    }
    tcp_arg(e->client, e);
    tcp_recv(e->client, lwip_echo_client_recv);
    tcp_err(e->client, lwip_echo_err);
    if (tcp_connect(e->client, &lo, port, lwip_echo_connected) != ERR_OK) {
        lwip_unlock();
        return -1;
    }
    lwip_unlock();
    return 0;
}

/* Task context, lock not held; see lwip_echo_core.h. */
int lwip_echo_run(size_t total, uint16_t port, uint32_t timeout_ms, struct lwip_echo_result *res)
{
    struct lwip_echo e;
    u32_t start;

    memset(res, 0, sizeof(*res));
    memset(&e, 0, sizeof(e));
    e.res = res;
    e.total = total;
    e.gen = 12345;
    res->sent_sum = res->echo_sum = 2166136261u;

    lwip_port_init();
    if (lwip_echo_start(&e, port) != 0)
        lwip_echo_fail(&e, "could not set up listener and client");

    start = sys_now();
    while (!res->error && !(e.client_closed && e.server_closed)) {
        if ((u32_t)(sys_now() - start) > timeout_ms) {
            lwip_echo_fail(&e, "timeout");
            break;
        }
        lwip_echo_step(&e);
    }
    /* A few more rounds: the last ACKs, so no pcb is left but TIME_WAIT. */
    for (int i = 0; i < 16; i++)
        lwip_echo_step(&e);

    lwip_lock();
    if (e.listener)
        tcp_close(e.listener);
    if (e.client) {
        tcp_arg(e.client, NULL);
        tcp_abort(e.client);
    }
    if (e.server) {
        tcp_arg(e.server, NULL);
        tcp_abort(e.server);
    }
    lwip_unlock();

    res->closed = e.client_closed && e.server_closed;
    if (!res->error && (res->echoed != total || res->sent != total))
        lwip_echo_fail(&e, "byte count mismatch");
    if (!res->error && res->sent_sum != res->echo_sum)
        lwip_echo_fail(&e, "checksum mismatch");
    if (!res->error && e.server_bytes != total)
        lwip_echo_fail(&e, "server echo count mismatch");
    return res->error ? -1 : 0;
}
