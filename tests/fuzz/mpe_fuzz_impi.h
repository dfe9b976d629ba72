/*
 * mpe_fuzz_impi.h: the scene of the engine's IMPI receive-parser fuzz target
 * (mpe_fuzz_impi.c), shared with the program that writes its seeds (mpe_fuzz_impi_seeds.c).
 *
 * MPI_COMM_WORLD of 4 ranks in 2 IMPI clients: client 0, "LAM", is host 0 running world
 * ranks 0 and 1 (played by the input); client 1 is one simulated node, host 1, running
 * ranks 2 and 3 (the engine under test). After set-up the node has posted the receives
 * below and sent the messages below, and the input is what host 0 says next:
 *
 *   byte 0    bits 0-6: how the rest is cut into mpe_impi_rx() calls: 0 in one piece,
 *             else pieces of 1..n bytes (a random sequence seeded with n); bit 7: when a
 *             piece ends inside a first packet's payload, rank 2 or 3 (in turn) posts a
 *             wildcard receive (once per packet)
 *   byte 1..  the packet stream from host 0 to host 1
 *
 * Whatever the node sends is read and dropped. At the end ranks 2 and 3 post one more
 * wildcard receive each: at most MFI_LATE receives are posted after the set-up in all.
 */
#ifndef TESTS_MPE_FUZZ_IMPI_H
#define TESTS_MPE_FUZZ_IMPI_H
#include "impi_wire.h"

#define MFI_WORLD   4
#define MFI_HOSTS   2
#define MFI_CTX     0    /* MPI_COMM_WORLD's point-to-point context */
#define MFI_MAXLEN  2000 /* payload per packet: long messages take a few */
#define MFI_ACKMARK 3
#define MFI_HIWATER 6
#define MFI_POOL    (64u << 10) /* unexpected payloads: a few long first packets fill it */

/* Receives the node posts: {rank, source, tag, capacity}; source -1, tag -2: wildcards. */
#define MFI_RECVS                                                                                  \
    {                                                                                              \
        {2, 0, 1, 64}, {2, 1, -2, 5000}, {3, 1, 2, 10000},                                         \
        {                                                                                          \
            3, -1, 3, 16                                                                           \
        }                                                                                          \
    }
#define MFI_NRECVS 4
#define MFI_LATE   8

/* Sends: rank 3 to rank 0 an MPI_Ssend of MFI_SSEND_LEN (DATASYNC, srqid MFI_HANDLE0) and a
 * long message of MFI_LONG_LEN (DATASYNC, srqid MFI_HANDLE0 + 1); rank 2 to rank 1
 * MFI_NDATA short DATA (an ackmark's worth: host 0 may send one PROTOACK for them). */
#define MFI_SSEND_LEN 100
#define MFI_LONG_LEN  5000
#define MFI_NDATA     MFI_ACKMARK
/* The first handle a handle table gives (slot 0, generation 1): our first DATASYNC's
 * srqid, and the drqid of our SYNCACK to the first long message we receive. */
#define MFI_HANDLE0   0x10000u

/* Host h's address 10.0.1.(h + 1); pids 500 + world rank. */
static inline void mfi_procs(struct impi_proc *procs)
{
    for (int w = 0; w < MFI_WORLD; w++) {
        impi_hostid_from_ipv4(procs[w].hostid, 0x0a000101u + (w >= 2));
        procs[w].pid = 500 + w;
    }
}

#endif
