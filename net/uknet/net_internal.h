/* net_internal.h: shared between the files of net/uknet/ only. */
#ifndef NET_INTERNAL_H
#define NET_INTERNAL_H
#include <stdint.h>
#include "uk/net.h"

int net_node_parse(struct net_node *n);
/* ksock.c: default idle timeout (ms) for new sockets, set by net_init(). */
extern uint32_t ksock_default_timeout_ms;

#endif
