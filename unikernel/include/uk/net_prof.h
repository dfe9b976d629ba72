/*
 * net_prof.h: where the time of a cross-node message goes, by the guest TSC at
 * fixed points of the path, from the NIC interrupt that brings a message to the frame the
 * woken rank sends back. Off unless built with -DNET_PROF=1 (then every mark is a TSC
 * read and a store; off, nothing at all), e.g. a kernel of its own:
 *   make B=build/prof OPT="-O2 -g -DNET_PROF=1" build/prof/uk/ukernel.elf
 *   UKRUN_KERNEL=build/prof/uk/ukernel.elf qemu/ukrun -n 2 --nodes 2 -v app.uk
 * With it on, mpe_job_end prints per node "netprof: STEP median_us M mean_us A share S%",
 * one line per step: the time from the previous mark to this one, over the cycles that
 * went through every mark in order (a mark out of order, from an ACK, a timer or a
 * control header, is ignored; a cycle that misses a mark never completes).
 */
#ifndef UK_NET_PROF_H
#define UK_NET_PROF_H
#include <stdint.h>

#ifndef NET_PROF
#define NET_PROF 0
#endif

/* The marks, in path order. */
enum net_prof_step {
    NP_IRQ,      /* NIC interrupt entry (its TSC stamped by the entry code) */
    NP_LOCKED,   /* ISR ack, lwIP lock taken */
    NP_FRAME,    /* virtq used entry taken, frame checked: net_rx_frame */
    NP_TCP_RECV, /* pbuf copy, ethernet, IP, TCP input: tcp_recv callback */
    NP_ENGINE,   /* page table switch: mpe_net_rx called */
    NP_WAKE,     /* header parse, matching, completion: the rank is woken */
    NP_ENG_DONE, /* task_wake and the rest of the engine: mpe_net_rx returns */
    NP_IRQ_DONE, /* tcp_recved, pbuf free, lwIP unlock, rx tail */
    NP_RESUMED,  /* interrupt return, scheduler switch: the rank runs again */
    NP_SEND,     /* MPI_Recv return, MPI_Send, engine isend: ksock_send */
    NP_LINKOUT,  /* tcp_write, tcp_output, IP, ARP: netif linkoutput */
    NP_NOTIFY,   /* copy to a TX buffer, ring published: the notify starts */
    NP_KICKED,   /* the virtio notify (an I/O write QEMU handles) returned */
    NP_STEPS
};

#if NET_PROF
/* Any context: mark step s now (NP_IRQ: at tsc, the interrupt's entry stamp). */
void net_prof_mark(enum net_prof_step s, uint64_t tsc);
/* Task context: print the table (one line per step). */
void net_prof_print(int node);
#else
static inline void net_prof_mark(enum net_prof_step s, uint64_t tsc)
{
    (void)s, (void)tsc;
}
static inline void net_prof_print(int node)
{
    (void)node;
}
#endif

#endif
