/*
 * ksock.c: see uk/ksock.h. A thin layer over lwIP's raw TCP API.
 *
 * Locking: ks_enter() takes the lwIP lock unless this CPU holds it already (we are inside
 * a ksock callback, which lwIP runs under the lock). Since the lock masks interrupts, an
 * interrupt handler can never find its own CPU holding it; another CPU holding it is
 * waited for.
 *
 * Lifetime: the lwIP pcb and the struct ksock are detached (tcp_arg NULL) before either
 * goes away, so lwIP never calls back into a released socket and the user never sees a
 * freed pcb. lwIP frees the pcb itself before calling the err callback.
 */
#include <string.h>
#include "net_internal.h"
#include "uk/ksock.h"
#include "lwip/tcp.h"
/* lwIP internals used here, each because lwIP has no API for it:
 *   tcp_priv.h's TCP_SLOW_INTERVAL and pcb->rto: the initial SYN retransmission timeout
 *     (ksock_connect shortens it; lwIP offers no setter);
 *   pcb->tmr: lwIP stamps it with tcp_ticks on every segment from the peer, including
 *     pure ACKs and zero-window probe answers that reach no callback; it is the only
 *     "last heard" clock that sees a slow but live peer (ks_lwip_poll).
 * Both fields are in lwIP 2.1's public struct tcp_pcb; a new lwIP is checked here. */
#include "lwip/priv/tcp_priv.h"
#include "lwip_port.h"
#include "uk/console.h"
#include "uk/net_prof.h"
#include "uk/time.h"
#include "arch/x86_64/io.h" /* halt() while a task waits to connect */

#define KSOCK_MAX 64

struct ksock {
    int used;
    int listener;
    struct tcp_pcb *pcb; /* NULL once detached from lwIP */
    const struct ksock_ops *ops;
    void *arg;
    ksock_accept_fn accept;
    int connected, err, expect_data;
    uint32_t timeout_ms;
    uint64_t last_heard_ns; /* when the watchdog last saw a segment from the peer */
    uint32_t seen_tmr;      /* pcb->tmr at that time */
    uint32_t peer;
    const void *owner; /* ksock_set_owner: whose sockets ksock_abort_owned ends */
};

uint32_t ksock_default_timeout_ms = 10000;
static struct ksock ks_pool[KSOCK_MAX];
/* The pcb whose callback is running, and whether the user aborted it from inside: lwIP
 * must then get ERR_ABRT back. Only touched under the lwIP lock. */
static struct tcp_pcb *ks_cb_pcb;
static int ks_cb_aborted;

/* Any context: take the lwIP lock unless this CPU holds it; returns 1 if taken. */
static int ks_enter(void)
{
    if (lwip_core_locked())
        return 0;
    lwip_lock();
    return 1;
}

/* Any context: undo ks_enter(). */
static void ks_leave(int took)
{
    if (took)
        lwip_unlock();
}

/* Under the lwIP lock. */
static struct ksock *ks_alloc(void)
{
    for (int i = 0; i < KSOCK_MAX; i++)
        if (!ks_pool[i].used) {
            memset(&ks_pool[i], 0, sizeof ks_pool[i]);
            ks_pool[i].used = 1;
            ks_pool[i].timeout_ms = ksock_default_timeout_ms;
            ks_pool[i].last_heard_ns = time_ns();
            return &ks_pool[i];
        }
    return 0;
}

/* Under the lwIP lock: cut the link to lwIP's pcb (it stays lwIP's). */
static void ks_detach(struct ksock *s)
{
    if (!s->pcb)
        return;
    tcp_arg(s->pcb, 0);
    if (!s->listener) {
        tcp_recv(s->pcb, 0);
        tcp_sent(s->pcb, 0);
        tcp_poll(s->pcb, 0, 0);
        tcp_err(s->pcb, 0); /* lwIP refuses an err callback on a listening pcb */
    }
    s->pcb = 0;
}

/* Under the lwIP lock: the connection ended with `err`; tell the user once. */
static void ks_fail(struct ksock *s, int err)
{
    if (s->err)
        return;
    s->err = err;
    s->connected = 0;
    if (s->ops && s->ops->event)
        s->ops->event(s, s->arg, KSOCK_EV_ERROR, err);
}

/* lwIP err callback: the pcb is already freed. */
static void ks_lwip_err(void *arg, err_t e)
{
    struct ksock *s = arg;
    if (!s)
        return;
    s->pcb = 0;
    ks_fail(s, e == ERR_RST   ? (s->connected ? KSOCK_ERESET : KSOCK_EREFUSED)
               : e == ERR_MEM ? KSOCK_ENOMEM
                              : KSOCK_ERESET);
}

/* lwIP recv callback, usually in the NIC interrupt. */
static err_t ks_lwip_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t e)
{
    struct ksock *s = arg;
    if (!s) {
        if (p) {
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
        }
        return ERR_OK;
    }
    net_prof_mark(NP_TCP_RECV, 0);
    uint64_t entry = net_rx_irq_entry_take();
    if (entry && p)
        net_latency_record(rdtsc() - entry);
    s->last_heard_ns = time_ns();
    if (!p) {
        if (s->ops && s->ops->event)
            s->ops->event(s, s->arg, KSOCK_EV_EOF, 0);
        return ERR_OK;
    }
    /* Hazard: acknowledge the bytes before the user sees them, not after. The user may
     * ksock_close() inside its callback (WaitIO answers HELLO_NO, then closes), and
     * lwIP's tcp_close sends a RST, dropping the answer queued, when bytes received are
     * not yet tcp_recved. The user takes them all in the call (ksock.h), so the window
     * may reopen now; and after the call the pcb may be gone (closed or aborted).
     * tests/uk/net_close.c fails if this moves below the loop. */
    tcp_recved(pcb, p->tot_len);
    ks_cb_pcb = pcb;
    ks_cb_aborted = 0;
    for (struct pbuf *q = p; q && s->ops && s->ops->recv && s->pcb == pcb; q = q->next)
        s->ops->recv(s, s->arg, q->payload, q->len);
    ks_cb_pcb = 0;
    pbuf_free(p);
    return ks_cb_aborted ? ERR_ABRT : ERR_OK;
}

/* lwIP sent callback: the peer acknowledged `len` bytes. */
static err_t ks_lwip_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct ksock *s = arg;
    if (!s)
        return ERR_OK;
    s->last_heard_ns = time_ns();
    ks_cb_pcb = pcb;
    ks_cb_aborted = 0;
    if (s->ops && s->ops->event)
        s->ops->event(s, s->arg, KSOCK_EV_SENT, 0);
    ks_cb_pcb = 0;
    return ks_cb_aborted ? ERR_ABRT : ERR_OK;
}

/* lwIP poll callback, every 500 ms: the dead-peer watchdog. "Heard" means any segment
 * from the peer (lwIP stamps pcb->tmr with tcp_ticks on each one), so pure ACKs and
 * answers to zero-window probes count: a slow but live reader is never declared dead. */
static err_t ks_lwip_poll(void *arg, struct tcp_pcb *pcb)
{
    struct ksock *s = arg;
    if (!s || !s->connected)
        return ERR_OK;
    uint64_t now = time_ns();
    if (pcb->tmr != s->seen_tmr) {
        s->seen_tmr = pcb->tmr;
        s->last_heard_ns = now;
    }
    int waiting = pcb->unacked != 0 || pcb->unsent != 0 || s->expect_data;
    if (!waiting)
        s->last_heard_ns = now; /* idle by choice is not silence */
    if (!s->timeout_ms || now - s->last_heard_ns < (uint64_t)s->timeout_ms * 1000000u)
        return ERR_OK;
    ks_detach(s);
    tcp_abort(pcb);
    ks_fail(s, KSOCK_ETIMEDOUT);
    return ERR_ABRT;
}

/* Under the lwIP lock: wire `s` to `pcb`. */
static void ks_attach(struct ksock *s, struct tcp_pcb *pcb)
{
    s->pcb = pcb;
    tcp_arg(pcb, s);
    tcp_recv(pcb, ks_lwip_recv);
    tcp_sent(pcb, ks_lwip_sent);
    tcp_err(pcb, ks_lwip_err);
    tcp_poll(pcb, ks_lwip_poll, 1);
    tcp_nagle_disable(pcb); /* MPI messages are latency-bound; we batch ourselves */
    s->peer = lwip_ntohl(ip4_addr_get_u32(&pcb->remote_ip));
}

/* lwIP connected callback (NIC interrupt, lwIP lock held). */
static err_t ks_lwip_connected(void *arg, struct tcp_pcb *pcb, err_t e)
{
    struct ksock *s = arg;
    if (!s)
        return ERR_OK;
    s->connected = 1;
    s->last_heard_ns = time_ns();
    if (s->ops && s->ops->event)
        s->ops->event(s, s->arg, KSOCK_EV_CONNECTED, 0);
    return ERR_OK;
}

/* lwIP accept callback (NIC interrupt, lwIP lock held): a new socket for the user. */
static err_t ks_lwip_accept(void *arg, struct tcp_pcb *pcb, err_t e)
{
    struct ksock *l = arg;
    if (!l || e != ERR_OK || !pcb)
        return ERR_VAL;
    struct ksock *s = ks_alloc();
    if (!s) {
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    ks_attach(s, pcb);
    s->connected = 1;
    s->owner = l->owner;
    ks_cb_pcb = pcb;
    ks_cb_aborted = 0;
    l->accept(l, l->arg, s);
    ks_cb_pcb = 0;
    /* The user may have refused it (ksock_abort/close inside the callback): lwIP must
     * then not touch the pcb again. */
    return ks_cb_aborted ? ERR_ABRT : ERR_OK;
}

/* Any context. */
struct ksock *ksock_listen(uint16_t port, ksock_accept_fn fn, void *arg)
{
    int t = ks_enter();
    struct ksock *s = ks_alloc();
    struct tcp_pcb *pcb = s ? tcp_new() : 0;
    struct tcp_pcb *lp = 0;
    if (pcb && tcp_bind(pcb, IP4_ADDR_ANY, port) == ERR_OK)
        lp = tcp_listen(pcb); /* frees pcb on success */
    if (!lp) {
        if (pcb)
            tcp_close(pcb);
        if (s)
            s->used = 0;
        s = 0;
    } else {
        s->listener = 1;
        s->pcb = lp;
        s->accept = fn;
        s->arg = arg;
        tcp_arg(lp, s);
        tcp_accept(lp, ks_lwip_accept);
    }
    ks_leave(t);
    return s;
}

/* Any context. */
struct ksock *ksock_connect(uint32_t ip, uint16_t port, const struct ksock_ops *ops, void *arg)
{
    int t = ks_enter();
    struct ksock *s = ks_alloc();
    struct tcp_pcb *pcb = s ? tcp_new() : 0;
    if (!pcb) {
        /* The caller names the peer; the console says which pool refused it. */
        kprintf("ksock: connect to %u.%u.%u.%u:%u: %s\n", ip >> 24, (ip >> 16) & 0xff,
                (ip >> 8) & 0xff, ip & 0xff, port,
                s ? "lwIP has no free TCP PCB" : "all sockets of the pool in use");
        if (s)
            s->used = 0;
        ks_leave(t);
        return 0;
    }
    s->ops = ops;
    s->arg = arg;
    ks_attach(s, pcb);
    /* lwIP's first SYN timeout is 3 s, tuned for the Internet; on one L2 segment 1 s
     * keeps start-up short when a peer boots a little later than we do. */
    pcb->rto = 1000 / TCP_SLOW_INTERVAL;
    ip4_addr_t a;
    ip4_addr_set_u32(&a, lwip_htonl(ip));
    s->peer = ip;
    err_t e = tcp_connect(pcb, &a, port, ks_lwip_connected);
    if (e != ERR_OK) {
        kprintf("ksock: connect to %u.%u.%u.%u:%u: lwIP error %d\n", ip >> 24, (ip >> 16) & 0xff,
                (ip >> 8) & 0xff, ip & 0xff, port, (int)e);
        ks_detach(s);
        tcp_abort(pcb);
        s->used = 0;
        s = 0;
    }
    ks_leave(t);
    return s;
}

/* Any context. */
void ksock_set_ops(struct ksock *s, const struct ksock_ops *ops, void *arg)
{
    int t = ks_enter();
    s->ops = ops;
    s->arg = arg;
    ks_leave(t);
}

/* Any context. */
long ksock_send(struct ksock *s, const void *data, size_t len)
{
    long r;
    net_prof_mark(NP_SEND, 0);
    int t = ks_enter();
    if (!s->pcb || !s->connected) {
        r = -(s->err ? s->err : KSOCK_ECLOSED);
    } else {
        size_t n = len < tcp_sndbuf(s->pcb) ? len : tcp_sndbuf(s->pcb);
        if (n > 0xffff)
            n = 0xffff; /* tcp_write takes a u16_t length */
        err_t e = ERR_MEM;
        while (n > 0 && (e = tcp_write(s->pcb, data, (u16_t)n, TCP_WRITE_FLAG_COPY)) == ERR_MEM)
            n = n > TCP_MSS ? n / 2 : 0; /* segment queue or heap full: try less */
        if (n > 0 && e != ERR_OK) {
            r = -KSOCK_ERESET;
        } else {
            r = (long)n;
            tcp_output(s->pcb);
        }
    }
    ks_leave(t);
    return r;
}

/* Any context. */
int ksock_close(struct ksock *s)
{
    int t = ks_enter();
    struct tcp_pcb *pcb = s->pcb;
    int listener = s->listener;
    ks_detach(s);
    if (pcb && tcp_close(pcb) != ERR_OK && !listener) {
        tcp_abort(pcb);
        if (pcb == ks_cb_pcb)
            ks_cb_aborted = 1;
    }
    s->used = 0;
    ks_leave(t);
    return 0;
}

/* Any context. */
void ksock_abort(struct ksock *s)
{
    int t = ks_enter();
    struct tcp_pcb *pcb = s->pcb;
    ks_detach(s);
    if (pcb) {
        if (s->listener) {
            tcp_close(pcb);
        } else {
            tcp_abort(pcb);
            if (pcb == ks_cb_pcb)
                ks_cb_aborted = 1;
        }
    }
    s->used = 0;
    ks_leave(t);
}

/* Any context. */
void ksock_set_owner(struct ksock *s, const void *owner)
{
    int t = ks_enter();
    s->owner = owner;
    ks_leave(t);
}

/* Any context but inside a callback of one of `owner`'s sockets. */
void ksock_abort_owned(const void *owner)
{
    int t = ks_enter();
    for (int i = 0; i < KSOCK_MAX; i++)
        if (ks_pool[i].used && ks_pool[i].owner == owner)
            ksock_abort(&ks_pool[i]);
    ks_leave(t);
}

/* Any context (a plain store; read by the watchdog under the lock). */
void ksock_set_timeout(struct ksock *s, uint32_t ms)
{
    s->timeout_ms = ms;
}

/* Any context. */
void ksock_expect_data(struct ksock *s, int on)
{
    int t = ks_enter();
    if (on && !s->expect_data)
        s->last_heard_ns = time_ns();
    s->expect_data = on;
    ks_leave(t);
}

/* Task context; see uk/ksock.h. */
struct ksock *ksock_connect_wait(uint32_t ip, uint16_t port, const struct ksock_ops *ops, void *arg,
                                 uint64_t deadline_ns, uint32_t retry_us)
{
    for (;;) {
        struct ksock *s = ksock_connect(ip, port, ops, arg);
        while (s && !ksock_connected(s) && !ksock_error(s))
            halt();
        if (s && ksock_connected(s))
            return s;
        if (s)
            ksock_abort(s);
        if (time_ns() > deadline_ns)
            return 0;
        udelay(retry_us);
    }
}

/* Any context. */
int ksock_flushed(struct ksock *s)
{
    int t = ks_enter();
    int r = !s->pcb || (!s->pcb->unacked && !s->pcb->unsent);
    ks_leave(t);
    return r;
}

void ksock_ack_now(struct ksock *s)
{
    int t = ks_enter();
    if (s->pcb) {
        tcp_ack_now(s->pcb);
        tcp_output(s->pcb);
    }
    ks_leave(t);
}

int ksock_lock(void)
{
    return ks_enter();
}

void ksock_unlock(int token)
{
    ks_leave(token);
}

int ksock_connected(struct ksock *s)
{
    return s->connected && s->pcb;
}

/* Any context. */
int ksock_error(struct ksock *s)
{
    return s->err;
}

/* Any context. */
uint32_t ksock_peer_ip(struct ksock *s)
{
    return s->peer;
}

/* Any context. */
const char *ksock_strerror(int err)
{
    switch (err) {
    case 0:
        return "no error";
    case KSOCK_ECLOSED:
        return "not connected";
    case KSOCK_EREFUSED:
        return "connection refused";
    case KSOCK_ETIMEDOUT:
        return "peer not responding (timed out)";
    case KSOCK_ENOMEM:
        return "out of memory";
    case KSOCK_ERESET:
        return "connection reset";
    default:
        return "unknown error";
    }
}
