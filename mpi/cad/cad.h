/*
 * cad.h: CAD graphs (Collective Algorithm Design, the KACC paper, docs/architecture.md §3.9
 * and §3.10): one rank's part of a non-blocking collective as a DAG of SEND, RECV and CALC
 * nodes between a START and an END node.
 *
 * The graph is one block of caller memory that holds no pointers, only indices and
 * addresses as integers, so the same bytes can be copied to a kernel module:
 *
 *   offset 0                    struct cad_graph       (128 bytes: header, owner, run state)
 *   CAD_HDR_SIZE                struct cad_node [node_cap]   (64 bytes each)
 *   + 64 * node_cap             struct cad_edge [edge_cap]   (4 bytes: the edges as connected)
 *   + 4 * edge_cap              uint16_t succ [edge_cap]     (CSR successor lists, by finalize)
 *
 * Node 0 is START and node 1 is END (cad_init makes them). Life of a graph:
 *
 *   build     cad_init, cad_send / cad_recv / cad_calc / cad_calc_user, cad_connect
 *   seal      cad_finalize: builds the successor lists, then cad_validate; nothing runs
 *             unless the graph validated (cad_issue refuses otherwise)
 *   run       cad_issue, then the executor loops: cad_next_ready -> post the SEND/RECV,
 *             run the CALC (cad_calc_run) -> cad_complete when the operation completes
 *   finish    cad_complete reports CAD_FINISHED once END has run; cad_query / cad_wait
 *
 * Dependencies are explicit, as in the paper: the builder connects START to the nodes that
 * may run at once and the last nodes to END. cad_finalize adds no edges: a node the builder
 * forgot to connect is almost always a missing dependency in the algorithm, and the
 * validator names it ("not reachable from START") instead of letting it run early.
 *
 * Successors become ready in the order they were connected, and the ready queue is FIFO, so
 * an executor that posts in ready order posts the receives hanging off one node in connect
 * order. Builders should still give concurrent messages between the same pair of ranks
 * distinct tags: completions (and hence the sends they trigger) may come in any order.
 *
 * Concurrency: every run-side call on one graph (cad_issue, cad_next_ready, cad_complete,
 * cad_defer, cad_next_deferred, cad_cancel) must be serialised by the caller, e.g. by the
 * executor's per-graph lock taken with interrupts masked on the local CPU. None of them
 * sleeps, allocates or recurses; cad_complete costs O(successors of the node). Only
 * cad_query (and cad_wait, which polls it) may run without that lock.
 *
 * Freestanding C: <stddef.h>, <stdint.h>, <string.h> only; the caller owns all memory.
 */
#ifndef MPI_CAD_H
#define MPI_CAD_H
#include <stddef.h>
#include <stdint.h>

#define CAD_MAGIC     0x31444143u /* "CAD1" in memory order */
#define CAD_VERSION   1
#define CAD_HDR_SIZE  128
#define CAD_NODE_SIZE 64
#define CAD_MAX_NODES 0xffffu /* indices are uint16_t; 0xffff itself is CAD_NIL */
#define CAD_MAX_EDGES (1u << 24)
#define CAD_NIL       0xffffu
#define CAD_MSG_LEN   96

/* The two fixed nodes, as the paper's START and END handles for cad_connect. */
#define CAD_NODE_START 0
#define CAD_NODE_END   1

/* Node types (cad_node.type). 0 is never valid, so a zeroed record is caught. */
#define CAD_START 1
#define CAD_END   2
#define CAD_SEND  3
#define CAD_RECV  4
#define CAD_CALC  5

/* Node run states (cad_node.state), written by the run-side calls only. */
#define CAD_NS_IDLE      0 /* waiting for predecessors */
#define CAD_NS_READY     1 /* in the ready queue */
#define CAD_NS_ACTIVE    2 /* taken by the executor, not yet completed */
#define CAD_NS_DEFERRED  3 /* a user-op CALC waiting for the owning rank's context */
#define CAD_NS_DONE      4
#define CAD_NS_CANCELLED 5 /* dropped by cad_cancel before it started */

/* Graph run states, as cad_query returns them; finished iff >= CAD_Q_DONE. */
#define CAD_Q_IDLE       0 /* never issued */
#define CAD_Q_RUNNING    1
#define CAD_Q_CANCELLING 2 /* cancelled; operations still posted (see cad_cancel) */
#define CAD_Q_DONE       3
#define CAD_Q_CANCELLED  4

/* Predefined reduction ops (cad_node.c.op), MPI's set; CAD_OP_USER runs a user function. */
#define CAD_OP_SUM    1
#define CAD_OP_PROD   2
#define CAD_OP_MIN    3
#define CAD_OP_MAX    4
#define CAD_OP_LAND   5
#define CAD_OP_LOR    6
#define CAD_OP_LXOR   7
#define CAD_OP_BAND   8
#define CAD_OP_BOR    9
#define CAD_OP_BXOR   10
#define CAD_OP_MINLOC 11
#define CAD_OP_MAXLOC 12
#define CAD_OP_USER   13
#define CAD_OP_COUNT  14

/*
 * Element types (cad_node.c.dtype): MPI's basic C types by representation; the library
 * maps MPI_INT to CAD_T_INT32, MPI_LONG to CAD_T_INT64 and so on. Which ops a type takes
 * follows MPI's table: integers take all but MINLOC/MAXLOC, floating types the arithmetic
 * and MIN/MAX, complex types SUM/PROD, BOOL the logical ops, BYTE the bitwise ops, the
 * value-index pairs (C struct layout) only MINLOC/MAXLOC. CAD_T_DERIVED (only with
 * CAD_OP_USER) means the user-op table knows the datatype and c.bytes gives the span.
 */
#define CAD_T_INT8                  1
#define CAD_T_INT16                 2
#define CAD_T_INT32                 3
#define CAD_T_INT64                 4
#define CAD_T_UINT8                 5
#define CAD_T_UINT16                6
#define CAD_T_UINT32                7
#define CAD_T_UINT64                8
#define CAD_T_FLOAT                 9
#define CAD_T_DOUBLE                10
#define CAD_T_LONG_DOUBLE           11
#define CAD_T_C_FLOAT_COMPLEX       12
#define CAD_T_C_DOUBLE_COMPLEX      13
#define CAD_T_C_LONG_DOUBLE_COMPLEX 14
#define CAD_T_BOOL                  15
#define CAD_T_BYTE                  16
#define CAD_T_FLOAT_INT             17
#define CAD_T_DOUBLE_INT            18
#define CAD_T_LONG_INT              19
#define CAD_T_2INT                  20
#define CAD_T_SHORT_INT             21
#define CAD_T_LONG_DOUBLE_INT       22
#define CAD_T_DERIVED               23
#define CAD_T_COUNT                 24

/* Errors, returned negated (like MPE_E*) and stored in cad_error.code (positive). */
#define CAD_OK       0
#define CAD_EINVAL   1 /* bad argument to an API call */
#define CAD_ENOSPC   2 /* node or edge capacity exhausted */
#define CAD_EFORMAT  3 /* header: magic, version, sizes, owner, partition */
#define CAD_ENODE    4 /* node type unknown, or START/END not where they must be */
#define CAD_EINDEX   5 /* edge index out of range, or successor list out of the edge array */
#define CAD_EEDGE    6 /* self edge, duplicate edge, edge into START or out of END */
#define CAD_ECYCLE   7
#define CAD_EUNREACH 8  /* not reachable from START */
#define CAD_ENOEND   9  /* does not reach END */
#define CAD_EPEER    10 /* peer rank not in the communicator */
#define CAD_ETAG     11
#define CAD_EBUF     12 /* buffer not inside the owning rank's partition */
#define CAD_EOP      13 /* unknown op, or user-op index out of the table */
#define CAD_ETYPE    14 /* unknown type */
#define CAD_EOPTYPE  15 /* op not defined on the type */
#define CAD_ECOUNT   16 /* element count overflows, or byte size inconsistent with it */
#define CAD_ESTATE   17 /* call not allowed in the graph's or node's current state */

/* cad_complete: END has run (or a cancel has settled); wake whoever waits. */
#define CAD_FINISHED      1
/* cad_calc_run: a user op, to be run in the owning rank's own context (cad_defer). */
#define CAD_CALC_DEFERRED 1

/* One node: 64 bytes, no pointers. Fields not used by the node's type are zero. */
struct cad_node {
    uint8_t type;        /* CAD_START .. CAD_CALC */
    uint8_t state;       /* CAD_NS_*; the validator also uses it as scratch */
    uint16_t link;       /* next in the ready or deferred queue (CAD_NIL ends it); scratch */
    uint32_t npred;      /* predecessors, by cad_finalize */
    uint32_t pending;    /* run: predecessors not yet completed; scratch */
    uint32_t first_succ; /* successors are succ[first_succ .. first_succ + nsucc) */
    uint32_t nsucc;
    uint32_t mark; /* validator scratch */
    union {
        struct cad_xfer { /* SEND and RECV */
            int32_t peer; /* rank in the communicator */
            int32_t tag;
            uint32_t ctx; /* communicator context id */
            uint32_t reserved;
            uint64_t addr;  /* SEND reads, RECV writes [addr, addr + bytes) */
            uint64_t bytes; /* RECV: capacity */
        } x;
        struct cad_calcop {   /* CALC: inout[i] = in[i] op inout[i], MPI's operand order */
            uint8_t op;       /* CAD_OP_* */
            uint8_t dtype;    /* CAD_T_* */
            uint16_t user_op; /* CAD_OP_USER: index into the graph's user-op table */
            uint32_t reserved;
            uint64_t count; /* elements */
            uint64_t in, inout;
            uint64_t bytes; /* span of each buffer: count * type size (CAD_T_DERIVED: given) */
        } c;
    } u;
};

/* One edge as connected: `from` runs before `to`. */
struct cad_edge {
    uint16_t from, to;
};

/* Who owns the graph: checked by the validator against every node. */
struct cad_owner {
    int32_t rank;                  /* the owner's rank in the communicator */
    int32_t comm_size;             /* peers must be in [0, comm_size) */
    uint64_t part_base, part_size; /* the owner's partition: buffers must lie inside */
    uint32_t nuser;                /* entries in the owner's user-op table for this graph */
    uint32_t reserved;
};

/* The header: 128 bytes at the start of the block. */
struct cad_graph {
    uint32_t magic;
    uint16_t version;
    uint16_t node_size; /* sizeof(struct cad_node): catches a mismatched build */
    uint32_t hdr_size;
    uint32_t flags; /* CAD_F_* */
    uint64_t bytes; /* size of the block the graph was laid out in */
    uint32_t nnodes, node_cap;
    uint32_t nedges, edge_cap;
    struct cad_owner own; /* 32 bytes */
    int32_t build_err;    /* first error of a build call (positive code), kept for finalize */
    int32_t build_node;   /* ... and the node it concerns (-1: none) */
    /* Run state: the run-side calls, under the caller's lock; `run` is read lock-free. */
    uint32_t run;     /* CAD_Q_* */
    uint32_t ndone;   /* nodes completed in this run (START and END included) */
    uint32_t nactive; /* nodes taken by the executor and not completed (ACTIVE/DEFERRED) */
    uint16_t ready_head, ready_tail;
    uint16_t defer_head, defer_tail;
    uint32_t issues; /* times issued (a graph may be issued again once finished) */
    uint8_t reserved[24];
};

/* The layout is the format: a kernel module compiled separately reads the same bytes. */
_Static_assert(sizeof(struct cad_node) == CAD_NODE_SIZE, "cad_node is part of the format");
_Static_assert(offsetof(struct cad_node, u) == 24, "cad_node is part of the format");
_Static_assert(offsetof(struct cad_node, u.x.addr) == 40, "cad_node is part of the format");
_Static_assert(offsetof(struct cad_node, u.c.in) == 40, "cad_node is part of the format");
_Static_assert(sizeof(struct cad_graph) == CAD_HDR_SIZE, "cad_graph is part of the format");
_Static_assert(offsetof(struct cad_graph, own) == 40, "cad_graph is part of the format");
_Static_assert(offsetof(struct cad_graph, run) == 80, "cad_graph is part of the format");

#define CAD_F_FINAL 1u /* successor lists built */
#define CAD_F_VALID 2u /* cad_validate accepted it since the last change */

struct cad_error {
    int node;              /* the node concerned, or -1 for the graph as a whole */
    int code;              /* CAD_E* (positive) */
    char msg[CAD_MSG_LEN]; /* "node 7 (RECV): ..." */
};

/* The nodes, edges and successor lists of a graph whose header has been checked. */
static inline struct cad_node *cad_nodes(struct cad_graph *g)
{
    return (struct cad_node *)((char *)g + CAD_HDR_SIZE);
}
static inline struct cad_edge *cad_edges(struct cad_graph *g)
{
    return (struct cad_edge *)((char *)cad_nodes(g) + (size_t)g->node_cap * CAD_NODE_SIZE);
}
static inline uint16_t *cad_succ(struct cad_graph *g)
{
    return (uint16_t *)((char *)cad_edges(g) + (size_t)g->edge_cap * sizeof(struct cad_edge));
}

/* --- build (the owning rank's task context) ------------------------------------------ */

/* Any context: bytes of the block for a graph of this capacity (0 if out of limits). */
size_t cad_bytes(uint32_t node_cap, uint32_t edge_cap);

/* InitCAD. An empty graph (START and END, no edges) in `mem` (8-byte aligned, at least
 * cad_bytes(node_cap, edge_cap) long). NULL if the block or the capacities do not fit. */
struct cad_graph *cad_init(void *mem, size_t bytes, uint32_t node_cap, uint32_t edge_cap,
                           const struct cad_owner *own);

/* MakeSendNode / MakeRecvNode: the new node's index, or a negative CAD_E* (also recorded in
 * the graph, so that cad_finalize fails even if the builder ignored the return value). */
int cad_send(struct cad_graph *g, const void *buf, uint64_t bytes, int peer, int tag, uint32_t ctx);
int cad_recv(struct cad_graph *g, void *buf, uint64_t bytes, int peer, int tag, uint32_t ctx);

/* MakeCalcNode: inout[i] = in[i] op inout[i] for `count` elements of `dtype`. */
int cad_calc(struct cad_graph *g, int op, int dtype, const void *in, void *inout, uint64_t count);
/* MakeCalcNode with a user op: entry `user_op` of the owner's table, run in the owning rank's
 * context. `bytes` is each buffer's span (needed for CAD_T_DERIVED, checked otherwise). */
int cad_calc_user(struct cad_graph *g, int user_op, int dtype, const void *in, void *inout,
                  uint64_t count, uint64_t bytes);

/* ConnectNode(A, B): B runs after A. 0 or a negative CAD_E* (recorded like above). */
int cad_connect(struct cad_graph *g, int a, int b);

/* Build the successor lists (connect order kept) and predecessor counts, then validate.
 * 0, or a negative CAD_E* with *err (if given) saying which node and why. */
int cad_finalize(struct cad_graph *g, struct cad_error *err);
/* cad_finalize without the validation, for a graph whoever runs it validates anyway (the
 * library's own collectives: the kernel's cad_issue validates every graph against the
 * rank's partition, so checking it in the library too would walk it twice per call). */
int cad_seal(struct cad_graph *g, struct cad_error *err);

/* Any context, but O(nodes + edges): run it when a graph is handed over (a kernel module on
 * its own copy of the bytes), not per interrupt. Checks a finalized graph held in `bytes`
 * bytes of memory: header and layout, node contents, successor lists, acyclic, every node
 * reachable from START and reaching END. Writes only scratch fields (state, link, pending,
 * mark) and the VALID flag, so it must not run concurrently with a run of the graph. The
 * flag is what cad_issue trusts: bytes changed after validation are not caught, so
 * whoever receives a graph from an untrusted party validates it after copying it. */
int cad_validate(struct cad_graph *g, size_t bytes, struct cad_error *err);

/* Any context: whether `op` is defined on `dtype`, and the size of one element (0 for
 * unknown types and CAD_T_DERIVED). */
int cad_op_defined(int op, int dtype);
size_t cad_type_size(int dtype);

/* --- run (see "Concurrency" above) ---------------------------------------------------- */

/* IssueCAD. Reset the run state, complete START and queue the nodes that follow it. 0 if
 * running, CAD_FINISHED if the graph is already done (START -> END only), negative CAD_E*
 * if the graph is not validated or still running. */
int cad_issue(struct cad_graph *g);

/* The next ready node, now ACTIVE (the executor starts it), or -1 if none is ready. */
int cad_next_ready(struct cad_graph *g);

/* An ACTIVE node's operation completed: fire the successors whose predecessors have all
 * completed (they join the ready queue; END completes on the spot). CAD_FINISHED when the
 * graph just finished, 0 otherwise, -CAD_ESTATE if the node was not ACTIVE. */
int cad_complete(struct cad_graph *g, int node);

/* A user-op CALC that cad_calc_run deferred: park it for the owning rank's context, which
 * takes it with cad_next_deferred (ACTIVE again), runs it and calls cad_complete. */
int cad_defer(struct cad_graph *g, int node);
int cad_next_deferred(struct cad_graph *g);

/* QueryCAD: the run state (CAD_Q_*); finished iff >= CAD_Q_DONE. Lock-free. */
int cad_query(const struct cad_graph *g);

/* Task context: until finished, call block(arg) (which sleeps until a wake-up and may
 * return spuriously). Returns the final CAD_Q_* state. */
int cad_wait(const struct cad_graph *g, void (*block)(void *), void *arg);

/* Stop a running graph: ready and deferred nodes are dropped (CANCELLED), no successor
 * fires any more. Returns how many nodes are still ACTIVE: the executor cancels their
 * operations (or lets them finish) and calls cad_complete for each; the graph is
 * CAD_Q_CANCELLED once none is left (at once if the return is 0). */
int cad_cancel(struct cad_graph *g);

/* The caller owns the memory: this only poisons the header so a stale use is caught. The
 * graph must not be running. */
int cad_free(struct cad_graph *g);

/* Any context, interrupt included (the FPU state must be saved by the caller's entry
 * path): run a CALC node's predefined op in place. 0 when done, CAD_CALC_DEFERRED for a
 * user op (the caller defers it), negative CAD_E* for an op/type the graph should not
 * have passed validation with. */
int cad_calc_run(const struct cad_node *n);

/* Any context: the same kernels on plain buffers (the library's MPI_Reduce_local and
 * friends use them too, so each loop exists once): inout[i] = in[i] op inout[i] for
 * `count` elements of `dtype`, laid out as cad.h's types. 0, or -CAD_EOPTYPE where the
 * op is not defined on the type (cad_op_defined). */
int cad_calc_apply(int op, int dtype, const void *in, void *inout, uint64_t count);

#endif
