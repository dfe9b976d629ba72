/*
 * cad_sim.h: test helpers for mpi/cad/: a simulator that runs one graph per rank of a small
 * job with MPI matching between them, completing operations in a chosen or random order
 * and checking the ready-set invariants after every step, and a helper that builds a
 * rank's graph of a real collective with the builders of cad_alg.h, the way the library
 * will (plan, scratch, build, local copies).
 */
#ifndef CAD_SIM_H
#define CAD_SIM_H
#include "cad.h"
#include "cad_alg.h"

#define SIM_RANKS 16
#define SIM_PART  (64 * 1024) /* each rank's partition, unless sim_init_part says */

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
    size_t part_size;
    struct sim_rank r[SIM_RANKS];
    enum sim_order order;
    enum sim_proto proto;
    int calc_inline; /* run CALC nodes as they become ready, as the interrupt would */
    int quick;       /* big graphs: check the ready-set invariants only when a rank ends */
    sim_user_fn user[4];
    uint32_t nuser;
    uint64_t rng;
    long steps; /* completions processed */
};

/* A job of n ranks, each with an empty graph of the given capacity and its partition
 * (SIM_PART bytes, or part_bytes). */
void sim_init(struct sim *s, int n, uint32_t node_cap, uint32_t edge_cap, uint64_t seed);
void sim_init_part(struct sim *s, int n, uint32_t node_cap, uint32_t edge_cap, uint64_t seed,
                   size_t part_bytes);
void sim_free(struct sim *s);
/* Replace rank r's graph by an empty one of the given capacity. */
void sim_regraph(struct sim *s, int r, uint32_t node_cap, uint32_t edge_cap);
/* Rank r's part of collective c, as the library does it: cad_alg_plan (must succeed; it
 * writes c->alg), a graph of exactly the plan's capacity, the plan's scratch from r's
 * partition (filled with garbage, followed by SIM_GUARD guard bytes of 0xcd that
 * sim_guard_ok checks), cad_alg_build, then the plan's local copies. The build must use
 * the capacities exactly. Returns the scratch (NULL if none) and the plan in *p. */
#define SIM_GUARD 32
void *sim_coll(struct sim *s, int r, struct cad_coll *c, struct cad_plan *p);
int sim_guard_ok(const void *end);
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

#endif
