// SPDX-License-Identifier: GPL-2.0
/*
 * o2g_sock.c: taking a process's TCP socket over and giving it back.
 *
 * A socket is o2g's while sk_user_data holds its o2g_conn and our sk_data_ready and
 * sk_state_change are installed; both change together under sk_callback_lock, and the
 * callbacks (o2g_rx.c) read the connection under its read side.
 *
 * What a hostile owner can do to the socket after ATTACH, and why it is safe:
 *   - Disconnect it (connect with AF_UNSPEC) and listen on it: every child the listener
 *     accepts is a copy of it (sk_clone_lock), callbacks included. The connection is
 *     stored with SK_USER_DATA_NOCOPY, so a child gets no pointer to it; a child's first
 *     callback finds none, puts the kernel's own callbacks back on the child and runs
 *     them (o2g_sock_orphan). The listener itself is still attached: its callbacks see
 *     TCP_LISTEN, end the connection and wake its accept() as the kernel would.
 *   - Stack another layer on it (a ULP such as kTLS saves our callbacks and calls them):
 *     at detach ours are no longer installed, so nothing is restored over the other
 *     layer's, and since it keeps pointers into this module's text the module pins
 *     itself until reboot (o2g_sock_release). Callbacks with no connection call the
 *     kernel's defaults directly, never sk->sk_data_ready (which is the other layer's,
 *     and would call us back).
 * ATTACH accepts only sockets that run the kernel's own callbacks with no user data and
 * no ULP, so the callbacks it replaces are always the defaults captured at module load.
 */
#include <linux/module.h>
#include <linux/net.h>
#include <net/inet_connection_sock.h>
#include <net/tcp.h>

#include "o2g.h"

struct o2g_sk_dfl o2g_sk_dfl;
static atomic_t o2g_pinned_self = ATOMIC_INIT(0);

/* Module init: the kernel's own TCP callbacks, read from a socket made for the purpose
 * (sock_def_readable and sock_def_wakeup are not exported).
 */
int o2g_sock_init(void)
{
	struct socket *s;
	int err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &s);

	if (err)
		return err;
	o2g_sk_dfl.data_ready = s->sk->sk_data_ready;
	o2g_sk_dfl.state_change = s->sk->sk_state_change;
	sock_release(s);
	return 0;
}

/* Process context, f->mutex held, c not yet visible to callbacks: make sk's callbacks
 * ours for c. Refuses what is not a connected TCP socket running the kernel's own
 * callbacks: -EINVAL (not TCP), -ENOTCONN (not ESTABLISHED), -EOPNOTSUPP (a ULP on it),
 * -EBUSY (someone else's callbacks or user data: kcm, sockmap, another o2g file).
 */
int o2g_sock_take(struct sock *sk, struct o2g_conn *c)
{
	int err = 0;

	lock_sock(sk); /* no state change, listen or setsockopt(TCP_ULP) meanwhile */
	write_lock_bh(&sk->sk_callback_lock);
	if ((sk->sk_family != AF_INET && sk->sk_family != AF_INET6) || sk->sk_type != SOCK_STREAM ||
	    sk->sk_protocol != IPPROTO_TCP)
		err = -EINVAL;
	else if (sk->sk_state != TCP_ESTABLISHED)
		err = -ENOTCONN;
	else if (inet_csk(sk)->icsk_ulp_ops)
		err = -EOPNOTSUPP;
	else if (sk->sk_user_data || sk->sk_data_ready != o2g_sk_dfl.data_ready ||
		 sk->sk_state_change != o2g_sk_dfl.state_change)
		err = -EBUSY;
	if (!err) {
		__rcu_assign_sk_user_data_with_flags(sk, c, SK_USER_DATA_NOCOPY);
		sk->sk_data_ready = o2g_data_ready;
		sk->sk_state_change = o2g_state_change;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
	return err;
}

/* Process context, f->mutex held: sk is no longer c's. The kernel's callbacks come back
 * where ours are still installed; where another layer replaced ours it may call into this
 * module later, so the module stays loaded for good (one reference, taken once).
 */
void o2g_sock_release(struct sock *sk)
{
	bool wrapped = false;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_data_ready == o2g_data_ready)
		sk->sk_data_ready = o2g_sk_dfl.data_ready;
	else
		wrapped = true;
	if (sk->sk_state_change == o2g_state_change)
		sk->sk_state_change = o2g_sk_dfl.state_change;
	else
		wrapped = true;
	rcu_assign_sk_user_data(sk, NULL);
	write_unlock_bh(&sk->sk_callback_lock);
	/* Hazard: a backlog run of release_sock in another task may still be inside one of
	 * our callbacks; taking the socket lock waits it out. Softirq callers run under RCU,
	 * which module unload waits for.
	 */
	lock_sock(sk);
	release_sock(sk);
	if (wrapped && atomic_cmpxchg(&o2g_pinned_self, 0, 1) == 0) {
		__module_get(THIS_MODULE);
		pr_warn("o2g: another layer wrapped a socket's callbacks: module pinned\n");
	}
}

/* Softirq or process context, socket locked, sk_callback_lock not held: our callbacks
 * ran on a socket with no connection of ours (a listener's child cloned from an attached
 * socket). Where they are still installed, the kernel's own come back.
 */
void o2g_sock_orphan(struct sock *sk)
{
	write_lock_bh(&sk->sk_callback_lock);
	if (!o2g_conn_of(sk)) {
		if (sk->sk_data_ready == o2g_data_ready)
			sk->sk_data_ready = o2g_sk_dfl.data_ready;
		if (sk->sk_state_change == o2g_state_change)
			sk->sk_state_change = o2g_sk_dfl.state_change;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}
