/*
 * cad_graphs.c: CAD graphs a program builds itself (mpix.h's MPIX_Cad_start), valid and
 * not. A valid one (a ring: receive from the left, add, send on, with a CALC) must run
 * and give the right sum; each invalid one (a cycle, a dangling node, a buffer outside the
 * rank's partition, a peer not in the communicator, an owner that is not the caller) must
 * be refused before anything runs, with the validator's message naming the node, and the
 * job must go on: a collective afterwards still works. Rank 0 prints what it saw; any
 * rank prints "BAD" on a failure.
 */
#include <mpi.h>
#include <mpix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cad.h>

#define NODES 16
#define EDGES 32

static int me, n, bad;
static _Alignas(8) unsigned char mem[4][8192];

static struct cad_graph *fresh(int k, int owner)
{
    struct cad_owner own = {.rank = owner, .comm_size = n, .part_size = ~0ull >> 1};
    return cad_init(mem[k], sizeof mem[k], NODES, EDGES, &own);
}

/* The valid ring: acc = my rank + 1; recv left's running sum into `in`; acc = in + acc; send acc
 * right. Rank 0 starts the ring and finally receives the total from rank n-1. */
static void ring(void)
{
    static long in, acc;
    acc = me + 1;
    struct cad_graph *g = fresh(0, me);
    int left = (me + n - 1) % n, right = (me + 1) % n;
    if (me == 0) {
        int s = cad_send(g, &acc, sizeof acc, right, 5, 0);
        int r = cad_recv(g, &in, sizeof in, left, 5, 0);
        cad_connect(g, CAD_NODE_START, s);
        cad_connect(g, CAD_NODE_START, r);
        cad_connect(g, s, CAD_NODE_END);
        cad_connect(g, r, CAD_NODE_END);
    } else {
        int r = cad_recv(g, &in, sizeof in, left, 5, 0);
        int c = cad_calc(g, CAD_OP_SUM, CAD_T_INT64, &in, &acc, 1);
        int s = cad_send(g, &acc, sizeof acc, right, 5, 0);
        cad_connect(g, CAD_NODE_START, r);
        cad_connect(g, r, c);
        cad_connect(g, c, s);
        cad_connect(g, s, CAD_NODE_END);
    }
    struct cad_error e;
    MPI_Request q;
    if (cad_finalize(g, &e) < 0 || MPIX_Cad_start(g, sizeof mem[0], MPI_COMM_WORLD, &q) ||
        MPI_Wait(&q, MPI_STATUS_IGNORE)) {
        printf("BAD ring graph did not run: %s\n", e.msg);
        bad = 1;
        return;
    }
    long want = (long)n * (n + 1) / 2;
    if (me == 0 && in != want) {
        printf("BAD ring sum %ld, want %ld\n", in, want);
        bad = 1;
    }
    if (me == 0)
        printf("cad: ring graph of %d ranks: sum %ld ok\n", n, in);
}

/* A graph the validator must refuse: both cad_finalize (the library's check) and the
 * kernel's (MPIX_Cad_start) must say so, with `want` in the message. */
static void refused(const char *what, struct cad_graph *g, const char *want)
{
    struct cad_error e = {0};
    char why[128] = "";
    MPI_Request q = MPI_REQUEST_NULL;
    int fin = cad_finalize(g, &e);
    int rc = MPIX_Cad_start(g, sizeof mem[0], MPI_COMM_WORLD, &q);
    MPIX_Cad_error(why, sizeof why);
    if (rc != MPI_ERR_ARG || q != MPI_REQUEST_NULL || !strstr(why, want) ||
        (fin == 0) != (strstr(what, "partition") != 0 || strstr(what, "owner") != 0)) {
        printf("BAD %s: finalize %d (%s), start %d (%s)\n", what, fin, e.msg, rc, why);
        bad = 1;
        return;
    }
    if (me == 0)
        printf("cad: %s refused: %s\n", what, why);
}

static void invalid(void)
{
    static long x, y;
    int peer = (me + 1) % n;
    /* A cycle: a -> b -> a (and both hang off START and reach END). */
    struct cad_graph *g = fresh(1, me);
    int a = cad_send(g, &x, sizeof x, peer, 1, 0), b = cad_recv(g, &y, sizeof y, peer, 1, 0);
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, a, b);
    cad_connect(g, b, a);
    cad_connect(g, b, CAD_NODE_END);
    refused("cycle", g, "cycle");
    /* A dangling node: made, never connected. */
    g = fresh(1, me);
    a = cad_send(g, &x, sizeof x, peer, 1, 0);
    cad_recv(g, &y, sizeof y, peer, 1, 0);
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, a, CAD_NODE_END);
    refused("dangling node", g, "not reachable from START");
    /* A buffer outside the partition (the library cannot tell; the kernel can). */
    g = fresh(1, me);
    a = cad_recv(g, (void *)0x1000, 64, peer, 1, 0);
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, a, CAD_NODE_END);
    refused("buffer outside the partition", g, "outside partition");
    /* A peer beyond the communicator. */
    g = fresh(1, me);
    a = cad_send(g, &x, sizeof x, n + 3, 1, 0);
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, a, CAD_NODE_END);
    refused("bad rank", g, "not in the communicator");
    /* Someone else's graph. */
    g = fresh(1, (me + 1) % n);
    a = cad_send(g, &x, sizeof x, me, 1, 0);
    cad_connect(g, CAD_NODE_START, a);
    cad_connect(g, a, CAD_NODE_END);
    if (n > 1)
        refused("owner not the caller", g, "owner is not the calling rank");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ring();
    invalid();
    int v = me, sum = 0;
    if (MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) || sum != n * (n - 1) / 2) {
        printf("BAD allreduce after the refusals: %d\n", sum);
        bad = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("cad: job went on after the refusals: %s\n", bad ? "BAD" : "ok");
    MPI_Finalize();
    return bad;
}
