/* pvas_net.h: application sockets (pvas_abi_net.c), private to unikernel/pvas/. */
#ifndef UK_PVAS_NET_H
#define UK_PVAS_NET_H

struct pvas_task;
struct uk_net_abi;

extern const struct uk_net_abi pvas_net_abi;
/* Scheduler context: abort every socket task `t` still owns. */
void pvas_net_task_exited(struct pvas_task *t);

#endif
