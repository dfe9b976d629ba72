/*
 * cad_sim.h: test helpers for mpi/cad/: the graphs of real collectives (as the collective
 * layer will build them), and a simulator that runs one graph per rank of a small job with
 * MPI matching between them, completing operations in a chosen or random order and
 * checking the ready-set invariants after every step.
 */
#ifndef CAD_SIM_H
#define CAD_SIM_H
#include "cad.h"

#define SIM_RANKS 16
#define SIM_PART  (64 * 1024) /* each rank's partition */

/* The order the simulator completes outstanding operations in. */
enum sim_order { SIM_FIFO, SIM_LIFO, SIM_RANDOM };

/* How messages move: EAGER copies the data when the SEND starts (and completes the SEND
 * without the receiver); RENDEZVOUS copies only once both sides are posted and matched, at
 * a later step, so a node that changes a buffer still being sent shows up as wrong data. */
enum sim_proto { SIM_EAGER, SIM_RENDEZVOUS };

/* A user op as the owner's table holds it. */
typedef void (*sim_user_fn)(const void *in, void *inout, uint64_t count, int dtype);

struct sim_rank {
    struct cad_graph *g;
    char *part; /* the rank's partition: buffers come from here */
    size_t used;
    int finished;
    int *started; /* per node: times the executor took it */
};

struct sim {
    int n;
    struct sim_rank r[SIM_RANKS];
    enum sim_order order;
    enum sim_proto proto;
    int calc_inline; /* run CALC nodes as they become ready, as the interrupt would */
    sim_user_fn user[4];
    uint32_t nuser;
    uint64_t rng;
    long steps; /* completions processed */
};

/* A job of n ranks, each with an empty graph of the given capacity and its partition. */
void sim_init(struct sim *s, int n, uint32_t node_cap, uint32_t edge_cap, uint64_t seed);
void sim_free(struct sim *s);
/* Bytes from rank r's partition (8-byte aligned, zeroed). */
void *sim_alloc(struct sim *s, int r, size_t bytes);
/* Finalize every rank's graph (fails the test with the validator's message if one fails),
 * run them all to the end and check every invariant on the way. */
void sim_run(struct sim *s);

/* Ready-set logic alone on one validated graph: take ready nodes and complete any active
 * one in the chosen order, without moving data; checks the invariants after every step. */
void sim_ready_only(struct cad_graph *g, enum sim_order order, uint64_t *rng);

/* The invariants of a run, checked against the edges as connected: every node that is
 * ready, active, deferred or done has all predecessors done; every idle node's pending
 * count equals its predecessors not done; ndone and nactive match the states. */
void sim_check_states(struct cad_graph *g);

uint64_t sim_rand(uint64_t *rng);
struct cad_owner sim_owner(int rank, int size, uint64_t base, uint64_t part_size, uint32_t nuser);

/* Collective graphs for one rank (0 or a negative CAD_E* from the build calls). */
int coll_bcast_binomial(struct cad_graph *g, void *buf, uint64_t bytes, int root, int rank, int n,
                        int tag, uint32_t ctx);
int coll_bcast_chain(struct cad_graph *g, char *buf, uint64_t bytes, uint64_t chunk, int root,
                     int rank, int n, int tag, uint32_t ctx);
/* Recursive doubling (with the usual fold of the ranks beyond the largest power of two):
 * buf holds this rank's contribution and receives the result; tmp is scratch of the same
 * size. user_op >= 0 uses that entry of the user-op table instead of `op`. */
int coll_allreduce_rd(struct cad_graph *g, void *buf, void *tmp, uint64_t count, int op, int dtype,
                      int user_op, int rank, int n, int tag, uint32_t ctx);

#endif
