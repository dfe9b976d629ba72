/*
 * colls_big.c: MPI conformance of the collectives, blocking and non-blocking, with
 * messages from 0 B to 4 MiB (0, 1, 3, 4 KiB + 5, 64 KiB, 1 MiB + 7, 4 MiB: around the
 * eager/rendezvous and pipelining thresholds a library may have, odd tails included):
 * Bcast of bytes (every root up to 64 KiB, fewer above), Allreduce of ints and of doubles
 * (exact sums), Reduce, Allgather and Alltoall (the size divided among the blocks),
 * Gatherv and Scatterv (uneven counts, zeros, gaps). On the world, then up to 1 MiB + 7 on
 * all ranks but the last in reverse order (odd where the world is even: segment and
 * pipeline arithmetic that only works for powers of two shows). Non-contiguous datatypes:
 * Ibcast of a vector type, Iallgather from a vector type into an interleaving resized one.
 * A non-commutative user op (2x2 matrix product, up to 1 MiB of matrices) in Reduce,
 * Allreduce and Scan, blocking and not, on the reversed communicator. Every element is
 * checked (coll_call.h); a rank holds at most about 10 MiB of buffers at a time.
 * Only rank 0 prints: one line per check, then "# conformance colls_big: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "colls_common.h"
#include "coll_call.h"

static const int sizes[7] = {0, 1, 3, 4096 + 5, 65536, (1 << 20) + 7, 4 << 20};
static int how; /* the next way of completion (ranks start at their number) */

/* Elements of es bytes in a message of sizes[i] bytes (the odd sizes stay odd). */
static int elems(int i, int es)
{
    return sizes[i] <= 3 ? sizes[i] : (sizes[i] / es) | (sizes[i] % 2);
}

/* One kind through the sizes up to sizes[last]: every root up to 64 KiB, the first and the
 * last at 1 MiB + 7, the middle one at 4 MiB; the blocked kinds divide the elements among
 * the S blocks. */
static void sweep(int kind, int flags, int last)
{
    int es = flags & CALL_BYTE ? 1 : flags & CALL_DOUBLE ? (int)sizeof(double) : (int)sizeof(int);
    for (int i = 0; C != MPI_COMM_NULL && i <= last; i++)
        for (int root = 0; root < (rooted(kind) ? S : 1); root++) {
            if ((i == 5 && root != 0 && root != S - 1) || (i == 6 && root != S / 2))
                continue;
            int n = elems(i, es);
            call_run(kind, root, blocked(kind) && n > 3 ? n / S : n, i * 17 + root, flags, how++);
        }
    char name[160];
    snprintf(name, sizeof name, "%s of %s: 0 B .. %s%s", mpi_name(kind, flags & CALL_NB),
             flags & CALL_BYTE                         ? "bytes"
             : flags & CALL_DOUBLE                     ? "doubles (SUM)"
             : kind == K_REDUCE || kind == K_ALLREDUCE ? "ints (SUM)"
                                                       : "ints",
             last == 6 ? "4 MiB" : "1 MiB + 7", rooted(kind) ? ", every root up to 64 KiB" : "");
    rep(name);
}

/* Every kind of sweep, blocking and not. */
static void sweeps(int last)
{
    static const int k[8][2] = {{K_BCAST, CALL_BYTE}, {K_ALLREDUCE, 0}, {K_ALLREDUCE, CALL_DOUBLE},
                                {K_REDUCE, 0},        {K_ALLGATHER, 0}, {K_ALLTOALL, 0},
                                {K_GATHERV, 0},       {K_SCATTERV, 0}};
    for (int i = 0; i < 8; i++)
        for (int nb = 0; nb < 2; nb++)
            sweep(k[i][0], k[i][1] | (nb ? CALL_NB : 0), last);
}

/* Ibcast of count vectors of 1024 blocks of 3 ints with a stride of 5: the gaps between the
 * blocks and between the vectors (extent 5118 ints) must stay as they were. */
static void check_vector_bcast(void)
{
    enum { NB = 1024, BL = 3, ST = 5, EXT = (NB - 1) * ST + BL };
    static const int cnts[4] = {0, 1, 3, 86}; /* 86: a little over 1 MiB of data */
    MPI_Datatype vec;
    MPI_Type_vector(NB, BL, ST, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *b = ints((size_t)86 * EXT);
    for (int k = 0; k < 4; k++)
        for (int root = 0; root < S; root++) {
            int n = cnts[k], len = n * EXT, ok = 1;
            if (k == 3 && root != 0 && root != S - 1)
                continue;
                /* data index d of int i: vector e, block q, element t; -1 in a gap */
#define DIDX(i) ((i) % EXT % ST < BL ? (i) / EXT * NB * BL + (i) % EXT / ST * BL + (i) % ST : -1)
            for (int i = 0; i <= len; i++)
                b[i] = R == root && i < len && DIDX(i) >= 0 ? v(root, DIDX(i), 20 + k) : SENT;
            MPI_Request rq;
            MPI_Ibcast(b, n, vec, root, C, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            for (int i = 0; i <= len && ok; i++) {
                int want = i < len && DIDX(i) >= 0 ? v(root, DIDX(i), 20 + k) : SENT;
                ok = b[i] == want;
                EXPECT(ok, "Ibcast of %d vectors, root %d: int %d is %d, expected %d", n, root, i,
                       b[i], want);
            }
#undef DIDX
        }
    free(b);
    MPI_Type_free(&vec);
    rep("Ibcast of a vector type (1024 x 3 ints, stride 5): counts 0..86 (1 MiB), every root "
        "below 86");
}

/* Iallgather of one vector (nb blocks of 3 ints, stride 5) from each rank, received as one
 * element of a vector type of single ints with a stride of S resized to the extent of one
 * int: rank r's data lands at r, r + S, r + 2S, ... (the ranks' data interleaved). */
static void check_vector_allgather(void)
{
    static const int nbs[3] = {1, 1024, 21846}; /* 21846: 256 KiB from each rank */
    for (int k = 0; k < 3; k++) {
        int nb = nbs[k], m = nb * 3, ext = (nb - 1) * 5 + 3, ok = 1;
        MPI_Datatype sv, rv, rvr;
        MPI_Type_vector(nb, 3, 5, MPI_INT, &sv);
        MPI_Type_vector(m, 1, S, MPI_INT, &rv);
        MPI_Type_create_resized(rv, 0, sizeof(int), &rvr);
        MPI_Type_commit(&sv), MPI_Type_commit(&rvr);
        int *in = ints(ext), *out = ints((size_t)S * m);
        for (int i = 0; i < ext; i++)
            in[i] = i % 5 < 3 ? v(R, i / 5 * 3 + i % 5, 30 + k) : SENT;
        MPI_Request rq;
        MPI_Iallgather(in, 1, sv, out, 1, rvr, C, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int i = 0; i <= S * m && ok; i++) {
            int want = i < S * m ? v(i % S, i / S, 30 + k) : SENT;
            ok = out[i] == want;
            EXPECT(ok, "Iallgather of %d ints: int %d is %d, expected %d", m, i, out[i], want);
        }
        free(in), free(out);
        MPI_Type_free(&sv), MPI_Type_free(&rv), MPI_Type_free(&rvr);
    }
    rep("Iallgather from a vector type into an interleaving resized vector type: 3 ints .. "
        "256 KiB per rank");
}

/* colls_common.h's matrix product over M = 1, 3, 65536 (1 MiB) matrices per rank, blocking
 * and not: Reduce (first and last root), Allreduce or Scan (which = 0, 1, 2). */
static void check_noncommutative(int which)
{
    static const int ms[3] = {1, 3, 65536}, kinds[3] = {K_REDUCE, K_ALLREDUCE, K_SCAN};
    MPI_Op mm;
    MPI_Datatype m4;
    MPI_Op_create(matmul, 0, &mm);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &m4);
    MPI_Type_commit(&m4);
    for (int k = 0; C != MPI_COMM_NULL && k < 3; k++)
        for (int nb = 0; nb < 2; nb++)
            for (int root = 0; root < S; root += which == 0 && S > 1 ? S - 1 : S) {
                int m = ms[k], mine = which > 0 || R == root;
                unsigned *a = malloc(m * 4 * sizeof(unsigned)), w[4];
                unsigned *b = malloc((m * 4 + 1) * sizeof(unsigned));
                for (int j = 0; j < m; j++)
                    mat(R, j, a + 4 * j);
                b[m * 4] = 12345;
                MPI_Request rq = MPI_REQUEST_NULL;
                if (which == 0)
                    nb ? MPI_Ireduce(a, b, m, m4, mm, root, C, &rq)
                       : MPI_Reduce(a, b, m, m4, mm, root, C);
                else if (which == 1)
                    nb ? MPI_Iallreduce(a, b, m, m4, mm, C, &rq)
                       : MPI_Allreduce(a, b, m, m4, mm, C);
                else
                    nb ? MPI_Iscan(a, b, m, m4, mm, C, &rq) : MPI_Scan(a, b, m, m4, mm, C);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
                for (int j = 0; j < m && mine; j++) {
                    prod(0, which == 2 ? R + 1 : S, j, w);
                    if (memcmp(w, b + 4 * j, sizeof w)) {
                        fail("%s of %d matrices, root %d: matrix %d is wrong",
                             mpi_name(kinds[which], nb), m, root, j);
                        break;
                    }
                }
                EXPECT(!mine || b[m * 4] == 12345, "%d matrices, root %d: past the end", m, root);
                free(a), free(b);
            }
    MPI_Op_free(&mm);
    MPI_Type_free(&m4);
    char name[120];
    snprintf(name, sizeof name, "%s of a non-commutative op (2x2 matrices), 16 B .. 1 MiB%s",
             which == 0   ? "Reduce and Ireduce"
             : which == 1 ? "Allreduce and Iallreduce"
                          : "Scan and Iscan",
             which == 0 ? ", first and last root" : "");
    rep(name);
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "colls_big"))
        return 1;
    how = me;
    char name[40];
    C = MPI_COMM_WORLD, R = me, S = np;
    snprintf(name, sizeof name, "world of %d", np);
    CN = name;
    sweeps(6);
    check_vector_bcast();
    check_vector_allgather();
    /* All ranks but the last, in reverse order: an odd size when the world's is even (the
     * suite's are powers of two), up to 1 MiB + 7; and for the non-commutative op, an
     * implementation that folds in world order, or that reorders operands, gets another
     * product. */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me == np - 1 ? MPI_UNDEFINED : 0, -me, &sub);
    C = sub, R = -1, S = np - 1;
    if (sub != MPI_COMM_NULL)
        MPI_Comm_rank(sub, &R), MPI_Comm_size(sub, &S);
    snprintf(name, sizeof name, "ranks %d..0", np - 2);
    sweeps(5);
    for (int which = 0; which < 3; which++)
        check_noncommutative(which);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    return finish("colls_big");
}
