/*
 * limits.c: mpibench's `limits` mode, the floors a same-node MPI message is measured
 * against (issue 16), taken by the same program in the same job as its ping-pong:
 *
 *   flagpp   ranks A and B flip two flags in shared memory, no MPI and no engine: the
 *            floor of a small same-node message. Only where the ranks of a node share one
 *            address space (our unikernel: PVAS), i.e. built with -DMPIBENCH_SAS; elsewhere
 *            it prints "n/a".
 *   memcpy   rank A copies MAXMSG bytes between two private buffers: the floor of a large
 *            same-node message (one copy).
 *   copypp   the flag ping-pong where each turn first copies MAXMSG bytes from its rank's
 *            buffer into the other rank's, as a one-copy MPI ping-pong does: the same copy,
 *            but of bytes the other CPU wrote last, into bytes the other CPU read last
 *            (what the host's caches make of that is part of the floor). -DMPIBENCH_SAS.
 *
 *   split    where a small message's time goes (issue 16's breakdown): the median MPI_Send
 *            of 0 bytes in the ping-pong (the receive is posted: the sender matches it,
 *            copies, completes it), the same MPI_Send to itself by rank A alone (the same
 *            path with every cache line its own: the instructions), and the receiver's
 *            notice (from the send's return at A to the receive's return at B, on the
 *            clock both ranks of a node read). The ping-pong's send less the send to
 *            itself is what the sender loses taking the receiver's lines from the other CPU.
 *   cost     what the steps of a message cost on this machine, rank A alone: an empty
 *            loop iteration, a function call through a pointer (under QEMU's TCG each
 *            return is an indirect jump it must look up), a locked read-modify-write and
 *            a full fence (MPI's handshakes), in ns, each the best of COST_BLOCKS blocks
 *            of COST_ITERS, the loop's own cost taken off the others. They turn an
 *            instruction and call count (tests/bench/pathcost.bench.sh) into time.
 *
 * Each sample is timed on its own with MPI_Wtime, as pingpong's are, so the ratios compare
 * like with like. Rank 0 prints
 *   limit flagpp iters=N half_rtt_us=X min_us=Y          (or: limit flagpp n/a)
 *   limit memcpy bytes=N iters=N us=X MBps=Y
 *   limit copypp bytes=N iters=N half_rtt_us=X MBps=Y    (only with -DMPIBENCH_SAS)
 *   limit split iters=N pp_send_us=X self_send_us=Y notice_us=Z
 *   limit cost loop_ns=W call_ns=X atomic_ns=Y fence_ns=Z
 */
#include "mpibench.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLAG_LINE   64 /* the two flags on cache lines of their own */
#define COST_ITERS  20000
#define COST_BLOCKS 7

enum { COST_LOOP, COST_CALL, COST_ATOMIC, COST_FENCE, COST_N };

static __attribute__((noinline)) void cost_nothing(void)
{
    __asm__ volatile("");
}

/* Rank A alone: ns per iteration of COST_ITERS steps of `kind`, the best of COST_BLOCKS. */
static double cost_of(int kind)
{
    static void (*volatile fn)(void) = cost_nothing;
    uint64_t word = 0;
    double best = 0;
    for (int b = 0; b < COST_BLOCKS; b++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < COST_ITERS; i++) {
            if (kind == COST_CALL)
                fn();
            else if (kind == COST_ATOMIC)
                __atomic_fetch_add(&word, 1, __ATOMIC_SEQ_CST);
            else if (kind == COST_FENCE)
                __atomic_thread_fence(__ATOMIC_SEQ_CST);
            __asm__ volatile("" ::: "memory");
        }
        double ns = (MPI_Wtime() - t0) * 1e9 / COST_ITERS;
        if (b == 0 || ns < best)
            best = ns;
    }
    return best;
}

#ifdef MPIBENCH_SAS
/* Collective over MPI_COMM_WORLD (A and B measure, the others wait at the barrier):
 * median and minimum half round trip of `it` flag exchanges into res[0..1] at A, each
 * turn first copying `bytes` (0: none) from its rank's buf into the other rank's. The
 * flags live in A's heap; B reaches them, and A's buf, through the address space the
 * ranks share.
 * Memory order: each side publishes its flag with a release store (after its copy) and
 * waits for the other's with acquire loads (before its copy overwrites what the other
 * read); a store followed by the load of the other flag may be reordered, which only
 * delays when the store is seen: each side waits for an answer to its own store, so no
 * exchange can be skipped or counted twice. */
static void flagpp(int it, int warm, int a, int b, size_t bytes, double *t, double *res)
{
    uint64_t addr = 0, abuf = (uintptr_t)buf, bbuf = (uintptr_t)buf;
    char *mem = NULL;
    if (rank == a) {
        mem = calloc(4, FLAG_LINE); /* two lines, aligned by hand */
        addr = ((uintptr_t)mem + FLAG_LINE - 1) & ~(uintptr_t)(FLAG_LINE - 1);
    }
    MPI_Bcast(&addr, sizeof addr, MPI_BYTE, a, MPI_COMM_WORLD);
    MPI_Bcast(&abuf, sizeof abuf, MPI_BYTE, a, MPI_COMM_WORLD);
    MPI_Bcast(&bbuf, sizeof bbuf, MPI_BYTE, b, MPI_COMM_WORLD);
    uint64_t *ping = (uint64_t *)(uintptr_t)addr, *pong = ping + FLAG_LINE / sizeof *ping;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < it; i++) {
        uint64_t seq = (uint64_t)(i + warm + 1);
        if (rank == a) {
            double t0 = MPI_Wtime();
            memcpy((char *)(uintptr_t)bbuf, buf, bytes);
            __atomic_store_n(ping, seq, __ATOMIC_RELEASE);
            while (__atomic_load_n(pong, __ATOMIC_ACQUIRE) != seq)
                ;
            if (i >= 0)
                t[i] = (MPI_Wtime() - t0) * 0.5e6;
        } else if (rank == b) {
            while (__atomic_load_n(ping, __ATOMIC_ACQUIRE) != seq)
                ;
            memcpy((char *)(uintptr_t)abuf, buf, bytes);
            __atomic_store_n(pong, seq, __ATOMIC_RELEASE);
        }
    }
    if (rank == a) {
        res[0] = median(t, it);
        res[1] = t[0];
    }
    MPI_Barrier(MPI_COMM_WORLD); /* B is done with A's memory */
    free(mem);
}
#endif

/* Collective over MPI_COMM_WORLD (A and B measure, the others wait at the barrier): the
 * `split` figures of the file comment into res[0..2] at A, in us: ping-pong send, send to
 * itself, notice; medians of `it` samples each. */
static void split(int it, int warm, int a, int b, double *res)
{
    double *send = malloc(sizeof(double) * 3 * (size_t)it), *self = send + it;
    double *notice = self + it, at = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warm; i < it && (rank == a || rank == b); i++) {
        if (rank == a) {
            double t0 = MPI_Wtime();
            MPI_Send(buf, 0, MPI_BYTE, b, TAG_PP, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            MPI_Recv(buf, 0, MPI_BYTE, b, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* when B's receive returned, sent after the round trip */
            MPI_Recv(&at, 1, MPI_DOUBLE, b, TAG_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= 0) {
                send[i] = (t1 - t0) * 1e6;
                notice[i] = (at - t1) * 1e6;
            }
        } else {
            MPI_Recv(buf, 0, MPI_BYTE, a, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            at = MPI_Wtime();
            MPI_Send(buf, 0, MPI_BYTE, a, TAG_PP, MPI_COMM_WORLD);
            MPI_Send(&at, 1, MPI_DOUBLE, a, TAG_RES, MPI_COMM_WORLD);
        }
    }
    for (int i = -warm; i < it && rank == a; i++) {
        MPI_Request r;
        MPI_Irecv(buf, 0, MPI_BYTE, a, TAG_PP, MPI_COMM_WORLD, &r);
        double t0 = MPI_Wtime();
        MPI_Send(buf, 0, MPI_BYTE, a, TAG_PP, MPI_COMM_WORLD);
        if (i >= 0)
            self[i] = (MPI_Wtime() - t0) * 1e6;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (rank == a) {
        res[0] = median(send, it);
        res[1] = median(self, it);
        res[2] = median(notice, it);
    }
    free(send);
}

/* Collective over MPI_COMM_WORLD; see mpibench.c for iters. Rank 0 prints. */
void bench_limits(int iters, int a, int b)
{
    int it = iters < 10 ? 10 : iters, warm = it / 10 < 200 ? 200 : it / 10;
    double *t = malloc(sizeof(double) * (size_t)it), res[2] = {0, 0};
#ifdef MPIBENCH_SAS
    flagpp(it, warm, a, b, 0, t, res);
    to_rank0(res, 2, a);
    if (rank == 0)
        printf("limit flagpp iters=%d half_rtt_us=%.3f min_us=%.3f\n", it, res[0], res[1]);
#else
    (void)b;
    if (rank == 0)
        printf("limit flagpp n/a\n");
#endif
    int cit = iters / 20 < 10 ? 10 : iters / 20;
    res[0] = res[1] = 0;
    if (rank == a) {
        char *src = malloc(MAXMSG), *dst = malloc(MAXMSG);
        memset(src, 1, MAXMSG);
        memset(dst, 2, MAXMSG); /* both buffers touched: no page faults in the samples */
        for (int i = -2; i < cit; i++) {
            double t0 = MPI_Wtime();
            memcpy(dst, i & 1 ? src : buf, MAXMSG);
            if (i >= 0)
                t[i] = (MPI_Wtime() - t0) * 1e6;
        }
        res[0] = median(t, cit);
        res[1] = dst[MAXMSG - 1]; /* the copies are used */
        free(src);
        free(dst);
    }
    to_rank0(res, 2, a);
    if (rank == 0)
        printf("limit memcpy bytes=%d iters=%d us=%.2f MBps=%.1f\n", MAXMSG, cit, res[0],
               MAXMSG / res[0]);
#ifdef MPIBENCH_SAS
    flagpp(cit, 2, a, b, MAXMSG, t, res);
    to_rank0(res, 2, a);
    if (rank == 0)
        printf("limit copypp bytes=%d iters=%d half_rtt_us=%.2f MBps=%.1f\n", MAXMSG, cit, res[0],
               MAXMSG / res[0]);
#endif
    double sp[3] = {0, 0, 0};
    split(it, warm, a, b, sp);
    to_rank0(sp, 3, a);
    if (rank == 0)
        printf("limit split iters=%d pp_send_us=%.3f self_send_us=%.3f notice_us=%.3f\n", it, sp[0],
               sp[1], sp[2]);
    double c[COST_N] = {0};
    if (rank == a)
        for (int k = 0; k < COST_N; k++)
            c[k] = cost_of(k) - (k == COST_LOOP ? 0 : c[COST_LOOP]);
    to_rank0(c, COST_N, a);
    if (rank == 0)
        printf("limit cost loop_ns=%.1f call_ns=%.1f atomic_ns=%.1f fence_ns=%.1f\n", c[COST_LOOP],
               c[COST_CALL], c[COST_ATOMIC], c[COST_FENCE]);
    fflush(stdout);
    free(t);
}
