/*
 * net_close.c: ksock_close from inside the recv callback is graceful (run by
 * tests/uk/net/run.sh, case close_in_recv, 2 nodes).
 *
 * Node 1 listens on NET_CLOSE_PORT. Node 0 connects and sends a request; node 1, inside
 * the recv callback that delivers it (NIC interrupt), queues an answer and closes, as
 * WaitIO does when it refuses a duplicate connection (HELLO_NO, then close). ksock.h
 * promises a FIN after the queued data, so node 0 must read the whole answer, then EOF.
 *
 * The hazard this guards: lwIP's tcp_close sends a RST, and drops what was queued, when
 * the application has not acknowledged (tcp_recved) every byte received. Inside the recv
 * callback the bytes being delivered are not yet acknowledged unless ksock does it first;
 * a broken ksock makes node 0 see "connection reset" and no answer.
 *
 * Exit: 0 good; 10 node 0 saw a reset, a short answer, or nothing in time; 5 set-up failed.
 */
#include <string.h>
#include "kernel/bootinfo.h"
#include "uk/console.h"
#include "uk/ksock.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#include "arch/x86_64/io.h"

#define NET_CLOSE_PORT    5003
#define NET_CLOSE_WAIT_MS 30000 /* a safety net only: the exchange takes milliseconds */

static const char close_req[] = "REQ?";
static const char close_ans[] = "ANSWER, THEN FIN";

/* State shared by the NIC interrupt (callbacks) and the task: flags and counts only. */
static struct {
    struct ksock *s;
    size_t got; /* bytes of the request (node 1) or the answer (node 0) */
    char ans[sizeof close_ans];
    volatile int done, err, bad;
} cl;

/* Node 1, NIC interrupt: the request; answer and close inside this very callback. */
static void server_rx(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)arg;
    size_t want = sizeof close_req - 1 - cl.got;
    if (cl.done || len > want || memcmp(data, close_req + cl.got, len)) {
        cl.bad = 1;
        return;
    }
    cl.got += len;
    if (cl.got < sizeof close_req - 1)
        return;
    if (ksock_send(s, close_ans, sizeof close_ans - 1) != (long)(sizeof close_ans - 1))
        cl.bad = 1;
    ksock_close(s);
    cl.s = 0;
    cl.done = 1;
}

/* Node 1, NIC interrupt: the connection ending before the request is a failure. */
static void server_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)arg, (void)err;
    if ((ev == KSOCK_EV_ERROR || ev == KSOCK_EV_EOF) && !cl.done)
        cl.bad = 1;
}

static const struct ksock_ops server_ops = {server_rx, server_event};

/* Node 1, NIC interrupt: the first client is served, any other refused. */
static void server_accept(struct ksock *l, void *arg, struct ksock *s)
{
    (void)l, (void)arg;
    if (cl.s || cl.done) {
        ksock_abort(s);
        return;
    }
    cl.s = s;
    ksock_set_ops(s, &server_ops, 0);
}

/* Node 0, NIC interrupt: the answer, byte-checked as it comes. */
static void client_rx(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)s, (void)arg;
    if (cl.got + len > sizeof close_ans - 1) {
        cl.bad = 1;
        return;
    }
    memcpy(cl.ans + cl.got, data, len);
    cl.got += len;
}

/* Node 0, NIC interrupt: EOF ends the test; an error before it fails it. */
static void client_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)arg;
    if (ev == KSOCK_EV_EOF)
        cl.done = 1;
    else if (ev == KSOCK_EV_ERROR)
        cl.err = err;
}

static const struct ksock_ops client_ops = {client_rx, client_event};

/* Task context: node 0's side. */
static int close_client(uint64_t end)
{
    cl.s = ksock_connect_wait(net_node()->peer_ip[1], NET_CLOSE_PORT, &client_ops, 0, end, 100000);
    if (!cl.s) {
        kprintf("close: node 0: cannot connect to node 1\n");
        return 10;
    }
    cl.err = 0; /* a refused attempt (node 1 not listening yet) reported it, retried since */
    if (ksock_send(cl.s, close_req, sizeof close_req - 1) != (long)(sizeof close_req - 1)) {
        kprintf("close: node 0: cannot send the request\n");
        return 5;
    }
    while (!cl.done && !cl.err && time_ns() < end)
        halt(); /* until the NIC or the timer interrupt */
    int whole = cl.got == sizeof close_ans - 1 && !memcmp(cl.ans, close_ans, cl.got);
    ksock_close(cl.s);
    if (cl.done && whole && !cl.bad) {
        kprintf("close: node 0: the whole answer (%zu bytes), then EOF\n", cl.got);
        return 0;
    }
    kprintf("close: node 0: ERROR: %s after %zu of %zu answer bytes\n",
            cl.err    ? ksock_strerror(cl.err)
            : cl.done ? "EOF"
                      : "nothing in time",
            cl.got, sizeof close_ans - 1);
    return 10;
}

KTEST(net_close)
{
    if (!net_up()) {
        kprintf("close: no network (boot with qemu/uknodes)\n");
        return 5;
    }
    int me = net_node()->id;
    uint64_t end = time_ns() + NET_CLOSE_WAIT_MS * 1000000ull;
    if (me == 0)
        return close_client(end);
    if (me != 1)
        return 0;
    struct ksock *l = ksock_listen(NET_CLOSE_PORT, server_accept, 0);
    if (!l) {
        kprintf("close: node 1: listen failed\n");
        return 5;
    }
    while (!cl.done && !cl.bad && time_ns() < end)
        halt();
    ksock_close(l);
    udelay(200000); /* the answer and the FIN leave before the VM stops */
    if (!cl.done || cl.bad) {
        kprintf("close: node 1: ERROR: %s\n",
                cl.bad ? "bad request, send refused, or the client gone" : "no request in time");
        return 10;
    }
    kprintf("close: node 1: answered and closed inside the recv callback\n");
    return 0;
}
