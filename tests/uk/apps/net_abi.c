/*
 * net_abi.c: application sockets (uk_abi->net) belong to the task that opened them, and
 * die with it. Job: 2 nodes x 2 ranks.
 *
 *   rank 0 (node 0) listens on PORT_OWNED, takes one connection from rank 2, reads its
 *           byte and exits with both sockets still open;
 *   rank 2 (node 1) connects to PORT_OWNED and sends a byte; then connects again until the
 *           node refuses: once rank 0 has ended, the kernel must have closed the dead
 *           task's listener (one left behind would keep accepting into the finished
 *           task's code, and this loop would never end: the case's timeout fails it);
 *           then it connects to rank 1's PORT_DONE;
 *   rank 1 (node 0) keeps node 0 up until rank 2 has checked (its connection to PORT_DONE);
 *   rank 3 has nothing to do.
 * Callbacks run in the NIC interrupt: they only set flags and wake the waiting task.
 */
#include <stdio.h>
#include <uk/ksock.h>
#include <ukapp.h>

#define PORT_OWNED 7300
#define PORT_DONE  7301
#define NODE0_IP   0x0a000001 /* 10.0.0.1, qemu/uknodes' node 0 */

static const struct uk_net_abi *net;
static void *waiter;
static volatile int got_byte, connected, failed, fail_err, accepted;

/* NIC interrupt: a byte arrived. */
static void on_recv(struct ksock *s, void *arg, const void *data, size_t len)
{
    got_byte = 1;
    net->task_wake(waiter);
}

/* NIC interrupt: connected, or the connection failed. */
static void on_event(struct ksock *s, void *arg, enum ksock_event ev, int err)
{
    if (ev == KSOCK_EV_CONNECTED)
        connected = 1;
    if (ev == KSOCK_EV_ERROR)
        failed = 1, fail_err = err;
    net->task_wake(waiter);
}

static const struct ksock_ops ops = {.recv = on_recv, .event = on_event};

/* NIC interrupt: a connection for one of our listeners. */
static void on_accept(struct ksock *l, void *arg, struct ksock *s)
{
    accepted++;
    net->set_ops(s, &ops, 0);
    net->task_wake(waiter);
}

/* Task: sleep until *flag or *flag2 is set (wake-ups are never lost: task_block returns at
 * once after a task_wake that came before it). */
static void wait_for(volatile int *flag, volatile int *flag2)
{
    while (!*flag && !(flag2 && *flag2))
        net->task_block();
}

/* Task: connect to node 0's `port`: the socket, or NULL if refused. */
static struct ksock *try_connect(uint16_t port)
{
    connected = failed = 0;
    struct ksock *s = net->connect(NODE0_IP, port, &ops, 0, waiter);
    if (!s)
        return 0;
    wait_for(&connected, &failed);
    if (connected)
        return s;
    net->close(s);
    return 0;
}

int main(void)
{
    int r = uk_rank();
    net = uk_abi->net;
    waiter = net->task_self();
    if (r == 0 || r == 1) {
        if (!net->listen(r == 0 ? PORT_OWNED : PORT_DONE, on_accept, 0, waiter)) {
            printf("net_abi: FAIL listen\n");
            return 1;
        }
        wait_for(r == 0 ? &got_byte : &accepted, 0);
        if (r == 0)
            printf("net_abi: rank 0 got its byte, exits with its sockets open\n");
        return 0;
    }
    if (r != 2)
        return 0;
    struct ksock *s;
    while (!(s = try_connect(PORT_OWNED))) /* rank 0 may not listen yet */
        uk_yield();
    if (net->send(s, "x", 1) != 1) {
        printf("net_abi: FAIL send\n");
        return 1;
    }
    int reconnects = 0;
    while ((s = try_connect(PORT_OWNED))) { /* until rank 0's end closed its listener */
        net->close(s);
        reconnects++;
        uk_yield();
    }
    printf("net_abi: refused (%s) after rank 0 ended, %d connections before\n",
           net->strerror(fail_err), reconnects);
    while (!(s = try_connect(PORT_DONE)))
        uk_yield();
    net->close(s);
    printf("net_abi: ok\n");
    return 0;
}
