/*
 * vnic_echo.c: a TCP echo for round-trip measurements from a Linux process (the ukload
 * suite's vnicbench case, tests/kmod/ukload-init, client tests/kmod/vnicpeer.c -p): takes
 * one connection on VNIC_ECHO_PORT and sends every byte back from the recv callback (NIC
 * interrupt, lwIP lock held). Meant for ping-pong of small messages: if lwIP's send buffer
 * has no room for a whole echo, the bytes that did not fit are counted and the test fails
 * (no queueing here). Ends when the client closes, or after echo_wait_ms= (60000).
 * Exit: 0 good; 5 set-up failed; 6 an echo did not fit; 10 no client or connection error.
 */
#include "kernel/bootinfo.h"
#include "uk/console.h"
#include "uk/ksock.h"
#include "uk/ktest.h"
#include "uk/net.h"
#include "uk/time.h"
#include "arch/x86_64/io.h"
#include "drivers/vnet.h"

#define VNIC_ECHO_PORT 5003
#define NS_PER_MS      1000000ull

/* Flags and counters written by the callbacks (NIC interrupt), read by the task. */
static struct {
    struct ksock *s;
    uint64_t bytes, lost;
    volatile int eof, err;
} echo;

/* NIC interrupt, lwIP lock held: send it straight back. */
static void echo_rx(struct ksock *s, void *arg, const void *data, size_t len)
{
    (void)arg;
    long r = ksock_send(s, data, len);
    if (r < 0)
        echo.err = (int)-r;
    else
        echo.lost += len - (size_t)r;
    echo.bytes += len;
}

/* NIC interrupt: the connection's events. */
static void echo_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    (void)s, (void)arg;
    if (ev == KSOCK_EV_ERROR)
        echo.err = err;
    else if (ev == KSOCK_EV_EOF)
        echo.eof = 1;
}

static const struct ksock_ops echo_ops = {echo_rx, echo_event};

/* NIC interrupt: a client connected; only the first one is served. */
static void echo_accept(struct ksock *l, void *arg, struct ksock *s)
{
    (void)l, (void)arg;
    if (echo.s) {
        ksock_abort(s);
        return;
    }
    ksock_set_ops(s, &echo_ops, 0);
    echo.s = s;
}

/* Task context (the ktest runner). */
KTEST(vnic_echo)
{
    if (!net_up()) {
        kprintf("vnic_echo: no network\n");
        return 5;
    }
    struct ksock *l = ksock_listen(VNIC_ECHO_PORT, echo_accept, 0);
    if (!l) {
        kprintf("vnic_echo: listen failed\n");
        return 5;
    }
    kprintf("vnic_echo: listening on port %d\n", VNIC_ECHO_PORT);
    uint64_t end = time_ns() + cmdline_get_u64("echo_wait_ms", 60000) * NS_PER_MS;
    while (!echo.eof && !echo.err && time_ns() < end)
        halt(); /* until the NIC or the timer interrupt */
    int rc = 0;
    if (!echo.eof) {
        kprintf("vnic_echo: ERROR: %s\n",
                echo.err ? ksock_strerror(echo.err) : "no client or no end within echo_wait_ms");
        rc = 10;
    } else if (echo.lost) {
        kprintf("vnic_echo: %lu of %lu bytes did not fit the send buffer\n",
                (unsigned long)echo.lost, (unsigned long)echo.bytes);
        rc = 6;
    } else {
        kprintf("vnic_echo: %lu bytes echoed, %lu kicks\n", (unsigned long)echo.bytes,
                (unsigned long)vnet_get_stats()->kicks);
    }
    if (echo.s)
        ksock_close(echo.s);
    ksock_close(l);
    return rc;
}
