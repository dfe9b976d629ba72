/*
 * mpe_fuzz.h: the scene of the engine's receive-path fuzz target (mpe_fuzz_rx.c), shared
 * with the program that writes its seeds (mpe_fuzz_seeds.c).
 *
 * A job of 4 ranks on 2 nodes: node 0 runs ranks 0 and 1, node 1 (the engine under test)
 * runs ranks 2 and 3. After both HELLOs, node 1 has posted the receives below and sent an
 * eager message and a rendezvous one to node 0. The fuzz input is what node 0 says next:
 *
 *   byte 0    bits 0-6: how the rest is cut into mpe_net_rx() calls: 0 in one piece,
 *             else pieces of 1..n bytes (a random sequence seeded with n); bit 7: when a
 *             piece ends inside a payload, rank 2 or 3 (in turn) posts a wildcard receive
 *             (once per payload)
 *   byte 1..  the stream from node 0 to node 1, starting with sequence number 1
 *
 * At the end ranks 2 and 3 post one more wildcard receive each: at most MF_LATE receives
 * are posted after the set-up in all.
 */
#ifndef TESTS_MPE_FUZZ_H
#define TESTS_MPE_FUZZ_H

#define MF_NODES 2
#define MF_SIZE  4
#define MF_CTX   5

/* Receives node 1 posts: {rank, source, tag, capacity}; -1: wildcard. */
#define MF_RECVS                                                                                   \
    {                                                                                              \
        {2, 0, 1, 64}, {2, -1, -2, 40000}, {3, 1, 2, 100000},                                      \
        {                                                                                          \
            3, -1, 3, 16                                                                           \
        }                                                                                          \
    }
#define MF_NRECVS 4
#define MF_LATE   8

/* Sends from rank 3 to rank 0: an eager one (a descriptor and a slot credit spent, so that
 * a CREDIT can give them back) and MF_NRDV rendezvous ones (RTS handles MF_HANDLE0 + i). */
#define MF_EAGER_LEN 5000
#define MF_RDV_LEN   60000
#define MF_NRDV      3
/* The first handle a handle table gives (slot 0, generation 1): node 1's first RTS, and
 * its CTS to the first RTS it receives. */
#define MF_HANDLE0   0x10000u

#endif
