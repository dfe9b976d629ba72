/*
 * pvas_abi_net.c: the kernel side of struct uk_net_abi (uk/abi.h): ksock for libraries
 * inside an application (libwaitio), with every socket owned by the task that opened it.
 *
 * Ownership: a socket opened through this table belongs to the calling task, and so does
 * every socket its listeners accept (ksock_set_owner). pvas_net_task_exited() aborts them
 * all when the task ends, before its partition can be reused, so the kernel never calls
 * into the code or data of a finished task.
 */
#include "pvas/pvas_net.h"
#include "pvas/pvas.h"
#include "kernel/sched.h"
#include "uk/abi.h"
#include "uk/ksock.h"
#include "uk/net.h"

/* Any context after net_init; 0 when the node has no network. */
static uint32_t net_abi_local_ip(void)
{
    return net_up() ? net_node()->ip : 0;
}

/* Any context: a whole dotted quad, nothing after it. */
static int net_abi_parse_ip(const char *s, uint32_t *ip)
{
    const char *end;
    return net_parse_ip(s, ip, &end) == 0 && *end == 0 ? 0 : -1;
}

/* Any context: listen owned by `owner` (a task token, i.e. its struct task, which is its
 * struct pvas_task). The owner is set under the lock that lwIP's accept callback runs
 * under, so no connection is accepted without one. */
static struct ksock *net_abi_listen(uint16_t port, ksock_accept_fn fn, void *arg, void *owner)
{
    int t = ksock_lock();
    struct ksock *s = ksock_listen(port, fn, arg);
    if (s)
        ksock_set_owner(s, owner);
    ksock_unlock(t);
    return s;
}

/* Any context: connect owned by `owner` (under the lock for the same reason). */
static struct ksock *net_abi_connect(uint32_t ip, uint16_t port, const struct ksock_ops *ops,
                                     void *arg, void *owner)
{
    int t = ksock_lock();
    struct ksock *s = ksock_connect(ip, port, ops, arg);
    if (s)
        ksock_set_owner(s, owner);
    ksock_unlock(t);
    return s;
}

static void *net_abi_task_self(void)
{
    return task_current();
}

static void net_abi_task_wake(void *task)
{
    if (task)
        task_wake(task);
}

const struct uk_net_abi pvas_net_abi = {
    .local_ip = net_abi_local_ip,
    .parse_ip = net_abi_parse_ip,
    .listen = net_abi_listen,
    .connect = net_abi_connect,
    .set_ops = ksock_set_ops,
    .send = ksock_send,
    .close = ksock_close,
    .abort = ksock_abort,
    .connected = ksock_connected,
    .error = ksock_error,
    .peer_ip = ksock_peer_ip,
    .strerror = ksock_strerror,
    .lock = ksock_lock,
    .unlock = ksock_unlock,
    .task_self = net_abi_task_self,
    .task_block = task_block,
    .task_wake = net_abi_task_wake,
};

/* Scheduler context of the CPU `t` exited on (never inside a ksock callback). The owner
 * tokens are task_self()'s: &t->task, which is t. */
void pvas_net_task_exited(struct pvas_task *t)
{
    if (net_up())
        ksock_abort_owned(&t->task);
}
