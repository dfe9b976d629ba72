/*
 * colls_reduce.c: MPI conformance of the reducing blocking collectives: Reduce (every
 * root), Allreduce, Reduce_scatter, Reduce_scatter_block, Scan, Exscan, with counts 0 ..
 * 100000 and MPI_IN_PLACE; the predefined reductions on several C types, MAXLOC/MINLOC with
 * ties, user-defined commutative and non-commutative (2x2 matrix product) reductions. First
 * on MPI_COMM_WORLD, then on a communicator of all ranks but the last. Expected values are
 * computed locally. Only rank 0 prints: one line per check, then
 * "# conformance colls_reduce: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "colls_common.h"

/* Reduce (every root) and Allreduce with MPI_SUM on ints, from separate buffers and with
 * MPI_IN_PLACE. */
static void check_reduce(int all)
{
    int *in = ints(BIGN), *out = ints(BIGN);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            if (all && root > 0)
                break;
            for (int j = 0; j <= n; j++)
                in[j] = j < n ? v(R, j, 2) : SENT, out[j] = ip ? in[j] : SENT;
            void *sb = ip && (all || R == root) ? MPI_IN_PLACE : in;
            if (all)
                MPI_Allreduce(sb, out, n, MPI_INT, MPI_SUM, C);
            else
                MPI_Reduce(sb, out, n, MPI_INT, MPI_SUM, root, C);
            if (!all && R != root)
                continue;
            for (int j = 0; j < n; j++) {
                int want = 0;
                for (int r = 0; r < S; r++)
                    want += v(r, j, 2);
                if (out[j] != want) {
                    fail("%s%s, root %d, count %d: element %d is %d, expected %d",
                         all ? "Allreduce" : "Reduce", ip ? " in place" : "", root, n, j, out[j],
                         want);
                    break;
                }
            }
            EXPECT(out[n] == SENT, "root %d count %d: wrote past the end", root, n);
        }
    free(in), free(out);
    rep(all ? "Allreduce SUM: counts 0..100000, also MPI_IN_PLACE"
            : "Reduce SUM: every root, counts 0..100000, also MPI_IN_PLACE");
}

/* Predefined reductions on C types. The expected value folds the ranks' inputs in rank
 * order with the C operator; inputs are small (signed results cannot overflow; unsigned
 * ones wrap the same way in MPI and in C; floating sums of integers are exact). */
#define OPN 6
static int opval(MPI_Op op, int r, int j)
{
    return op == MPI_PROD ? (r + j) % 3 + 1 : (r * 7 + j * 3) % 11 - 5;
}
#define ARITH(a, b)                                                                                \
    (op == MPI_SUM    ? a + b                                                                      \
     : op == MPI_PROD ? a * b                                                                      \
     : op == MPI_MAX  ? (a > b ? a : b)                                                            \
                      : (a < b ? a : b))
#define BITS(a, b)                                                                                 \
    (op == MPI_LAND   ? a && b                                                                     \
     : op == MPI_LOR  ? a || b                                                                     \
     : op == MPI_LXOR ? !a != !b                                                                   \
     : op == MPI_BAND ? a & b                                                                      \
     : op == MPI_BOR  ? a | b                                                                      \
                      : a ^ b)
#define DEF_OPTEST(NAME, T, EXPR, ADJ)                                                             \
    static void NAME(MPI_Datatype mt, MPI_Op op, const char *tname, const char *oname)             \
    {                                                                                              \
        T in[OPN], out[OPN], want[OPN];                                                            \
        for (int j = 0; j < OPN; j++) {                                                            \
            in[j] = (T)(opval(op, R, j) + ADJ);                                                    \
            want[j] = (T)(opval(op, 0, j) + ADJ);                                                  \
            for (int r = 1; r < S; r++) {                                                          \
                T a = want[j], b = (T)(opval(op, r, j) + ADJ);                                     \
                want[j] = (T)(EXPR(a, b));                                                         \
            }                                                                                      \
        }                                                                                          \
        for (int root = -1; root < S; root += S) { /* Allreduce, then Reduce to the last */        \
            memset(out, 0x5a, sizeof out);                                                         \
            if (root < 0)                                                                          \
                MPI_Allreduce(in, out, OPN, mt, op, C);                                            \
            else                                                                                   \
                MPI_Reduce(in, out, OPN, mt, op, root, C);                                         \
            for (int j = 0; j < OPN && (root < 0 || R == root); j++)                               \
                if (out[j] != want[j]) {                                                           \
                    fail("%s on %s, %s: element %d wrong", oname, tname,                           \
                         root < 0 ? "Allreduce" : "Reduce", j);                                    \
                    break;                                                                         \
                }                                                                                  \
        }                                                                                          \
    }
DEF_OPTEST(a_int, int, ARITH, 0)
DEF_OPTEST(a_long, long, ARITH, 0)
DEF_OPTEST(a_llong, long long, ARITH, 0)
DEF_OPTEST(a_short, short, ARITH, 0)
DEF_OPTEST(a_unsigned, unsigned, ARITH, 0)
/* Values >= 2^63 would show that Open MPI 4.1.2-4.1.4 compares MPI_UNSIGNED_LONG as
 * signed in MAX/MIN (open-mpi/ompi#10525): kept out of the reference's way with values
 * 0..10; unsigned long long covers the top bit. */
DEF_OPTEST(a_ulong, unsigned long, ARITH, 5)
DEF_OPTEST(a_ullong, unsigned long long, ARITH, 0)
DEF_OPTEST(a_uchar, unsigned char, ARITH, 0)
DEF_OPTEST(a_float, float, ARITH, 0)
DEF_OPTEST(a_double, double, ARITH, 0)
DEF_OPTEST(b_int, int, BITS, 0)
DEF_OPTEST(b_long, long, BITS, 0)
DEF_OPTEST(b_unsigned, unsigned, BITS, 0)
DEF_OPTEST(b_ushort, unsigned short, BITS, 0)
DEF_OPTEST(b_uchar, unsigned char, BITS, 0)

static void check_predefined_ops(int bits)
{
    static const char *an[4] = {"SUM", "PROD", "MAX", "MIN"};
    static const char *bn[6] = {"LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR"};
    MPI_Op aop[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    MPI_Op bop[6] = {MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    for (int o = 0; C != MPI_COMM_NULL && o < (bits ? 6 : 4); o++) {
        if (!bits) {
            MPI_Op op = aop[o];
            a_int(MPI_INT, op, "int", an[o]), a_long(MPI_LONG, op, "long", an[o]);
            a_llong(MPI_LONG_LONG, op, "long long", an[o]), a_short(MPI_SHORT, op, "short", an[o]);
            a_unsigned(MPI_UNSIGNED, op, "unsigned", an[o]);
            a_ulong(MPI_UNSIGNED_LONG, op, "unsigned long", an[o]);
            a_ullong(MPI_UNSIGNED_LONG_LONG, op, "unsigned long long", an[o]);
            a_uchar(MPI_UNSIGNED_CHAR, op, "unsigned char", an[o]);
            a_float(MPI_FLOAT, op, "float", an[o]), a_double(MPI_DOUBLE, op, "double", an[o]);
        } else {
            MPI_Op op = bop[o];
            b_int(MPI_INT, op, "int", bn[o]), b_long(MPI_LONG, op, "long", bn[o]);
            b_unsigned(MPI_UNSIGNED, op, "unsigned", bn[o]);
            b_ushort(MPI_UNSIGNED_SHORT, op, "unsigned short", bn[o]);
            if (o >= 3) /* the bitwise ones are defined on MPI_BYTE too */
                b_uchar(MPI_BYTE, op, "byte", bn[o]);
            else
                b_uchar(MPI_UNSIGNED_CHAR, op, "unsigned char", bn[o]);
        }
    }
    rep(bits ? "LAND/LOR/LXOR/BAND/BOR/BXOR on int, long, unsigned, unsigned short, char, byte"
             : "SUM/PROD/MAX/MIN on int, long, long long, short, unsigned, ulong, ullong, uchar, "
               "float, double");
}

/* MAXLOC and MINLOC on the pair types, values with many ties: the lowest index wins. */
#define DEF_LOCTEST(NAME, VT)                                                                      \
    static void NAME(MPI_Datatype mt, const char *tname)                                           \
    {                                                                                              \
        struct {                                                                                   \
            VT v;                                                                                  \
            int i;                                                                                 \
        } in[OPN], out[OPN];                                                                       \
        for (int m = 0; m < 2; m++) {                                                              \
            for (int j = 0; j < OPN; j++)                                                          \
                in[j].v = (VT)((R * 5 + j * 3) % 4 - 1), in[j].i = R;                              \
            MPI_Allreduce(in, out, OPN, mt, m ? MPI_MINLOC : MPI_MAXLOC, C);                       \
            for (int j = 0; j < OPN; j++) {                                                        \
                VT best = (VT)((j * 3) % 4 - 1);                                                   \
                int at = 0;                                                                        \
                for (int r = 1; r < S; r++) {                                                      \
                    VT x = (VT)((r * 5 + j * 3) % 4 - 1);                                          \
                    if (m ? x < best : x > best)                                                   \
                        best = x, at = r;                                                          \
                }                                                                                  \
                EXPECT(out[j].v == best && out[j].i == at, "%s on %s, element %d: index %d",       \
                       m ? "MINLOC" : "MAXLOC", tname, j, out[j].i);                               \
            }                                                                                      \
        }                                                                                          \
    }
DEF_LOCTEST(loc_2int, int)
DEF_LOCTEST(loc_double_int, double)
DEF_LOCTEST(loc_float_int, float)
DEF_LOCTEST(loc_long_int, long)
DEF_LOCTEST(loc_short_int, short)

static void check_loc(void)
{
    if (C != MPI_COMM_NULL) {
        loc_2int(MPI_2INT, "2INT"), loc_double_int(MPI_DOUBLE_INT, "DOUBLE_INT");
        loc_float_int(MPI_FLOAT_INT, "FLOAT_INT"), loc_long_int(MPI_LONG_INT, "LONG_INT");
        loc_short_int(MPI_SHORT_INT, "SHORT_INT");
    }
    rep("MAXLOC/MINLOC on 2INT, DOUBLE_INT, FLOAT_INT, LONG_INT, SHORT_INT with ties");
}

/* Reduce_scatter (block = 0: counts r % 3 * m, zeros included) and Reduce_scatter_block
 * (block = 1: m each) with SUM: rank r gets its block of the element-wise sum; in place
 * too (the input is then the receive buffer). */
static void check_reduce_scatter(int block)
{
    int *cnt = malloc(S * sizeof(int));
    int *in = ints((size_t)2 * BIGN + 2), *out = ints((size_t)2 * BIGN + 2);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        for (int k = 0; k < 5; k++) {
            int m = k == 4 ? BIGN / S : counts[k], total = 0, off = 0;
            for (int r = 0; r < S; r++) {
                cnt[r] = block ? m : r % 3 * m;
                off += r < R ? cnt[r] : 0;
                total += cnt[r];
            }
            for (int j = 0; j <= total; j++)
                in[j] = j < total ? v(R, j, 8) : SENT;
            void *sb = ip ? MPI_IN_PLACE : in, *rb = ip ? in : out;
            for (int j = 0; j <= cnt[R]; j++)
                out[j] = SENT;
            if (block)
                MPI_Reduce_scatter_block(sb, rb, m, MPI_INT, MPI_SUM, C);
            else
                MPI_Reduce_scatter(sb, rb, cnt, MPI_INT, MPI_SUM, C);
            int *res = ip ? in : out;
            for (int j = 0; j < cnt[R]; j++) {
                int want = 0;
                for (int r = 0; r < S; r++)
                    want += v(r, off + j, 8);
                if (res[j] != want) {
                    fail("%s%s m %d: element %d is %d, expected %d",
                         block ? "Reduce_scatter_block" : "Reduce_scatter", ip ? " in place" : "",
                         m, j, res[j], want);
                    break;
                }
            }
            EXPECT(ip || out[cnt[R]] == SENT, "m %d: past the end", m);
        }
    free(cnt), free(in), free(out);
    rep(block ? "Reduce_scatter_block SUM: counts 0..100000/size, also MPI_IN_PLACE"
              : "Reduce_scatter SUM: counts r%3*m with zeros, also MPI_IN_PLACE");
}

/* Scan (inclusive) and Exscan (exclusive; rank 0's result is undefined and not looked
 * at) with SUM, also in place. */
static void check_scan(int ex)
{
    int *in = ints(BIGN), *out = ints(BIGN);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        for (int k = 0; k < 5; k++) {
            int n = counts[k];
            for (int j = 0; j <= n; j++)
                in[j] = j < n ? v(R, j, 9) : SENT, out[j] = ip ? in[j] : SENT;
            if (ex)
                MPI_Exscan(ip ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, C);
            else
                MPI_Scan(ip ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, C);
            for (int j = 0; j < n && (R > 0 || !ex); j++) {
                int want = 0;
                for (int r = 0; r < R + !ex; r++)
                    want += v(r, j, 9);
                if (out[j] != want) {
                    fail("%s%s count %d: element %d is %d, expected %d", ex ? "Exscan" : "Scan",
                         ip ? " in place" : "", n, j, out[j], want);
                    break;
                }
            }
            EXPECT(out[n] == SENT, "count %d: past the end", n);
        }
    free(in), free(out);
    rep(ex ? "Exscan SUM: counts 0..100000, also MPI_IN_PLACE"
           : "Scan SUM: counts 0..100000, also MPI_IN_PLACE");
}

/* A commutative user op, inout = in + inout + 1: over S ranks it must be applied exactly
 * S - 1 times per element (there is no identity to start from), so results show it. */
static void plus1(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i] + 1;
}
/* The non-commutative one is colls_common.h's matrix product. */

static void check_user_ops(void)
{
    MPI_Op p1, mm;
    MPI_Datatype m4;
    int com = -1;
    MPI_Op_create(plus1, 1, &p1);
    MPI_Op_create(matmul, 0, &mm);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &m4);
    MPI_Type_commit(&m4);
    MPI_Op_commutative(mm, &com);
    EXPECT(com == 0, "Op_commutative of the matrix op: %d", com);
    MPI_Op_commutative(p1, &com);
    EXPECT(com == 1, "Op_commutative of plus1: %d", com);
    MPI_Op_commutative(MPI_SUM, &com);
    EXPECT(com == 1, "Op_commutative of MPI_SUM: %d", com);
    enum { M = 5 };
    for (int root = 0; C != MPI_COMM_NULL && root < S; root++) {
        int in[1000], out[1001];
        for (int j = 0; j < 1000; j++)
            in[j] = v(R, j, 10) % 1000;
        out[1000] = SENT;
        MPI_Reduce(in, out, 1000, MPI_INT, p1, root, C);
        for (int j = 0; j < 1000 && R == root; j++) {
            int want = S - 1;
            for (int r = 0; r < S; r++)
                want += v(r, j, 10) % 1000;
            if (out[j] != want) {
                fail("plus1 Reduce root %d: element %d is %d, expected %d", root, j, out[j], want);
                break;
            }
        }
        unsigned a[M * 4], b[M * 4 + 1], w[4];
        for (int j = 0; j < M; j++)
            mat(R, j, a + 4 * j);
        b[M * 4] = 12345;
        MPI_Reduce(a, b, M, m4, mm, root, C);
        for (int j = 0; j < M && R == root; j++) {
            prod(0, S, j, w);
            EXPECT(!memcmp(w, b + 4 * j, sizeof w), "matrix Reduce root %d: element %d wrong", root,
                   j);
        }
        EXPECT(R != root || b[M * 4] == 12345, "matrix Reduce root %d: past the end", root);
    }
    for (int f = 0; C != MPI_COMM_NULL && f < 4; f++) { /* Allreduce, Scan, Exscan, RS_block */
        unsigned a[M * 4 * 8], b[M * 4 * 8], w[4];
        int per = f == 3 ? M : 0, n = f == 3 ? M * S : M;
        if (n * 4 > M * 4 * 8)
            n = M, per = 0, f = 3; /* too many ranks for the block variant: skip it */
        for (int j = 0; j < n; j++)
            mat(R, j, a + 4 * j);
        memset(b, 0, sizeof b);
        if (f == 0)
            MPI_Allreduce(a, b, n, m4, mm, C);
        else if (f == 1)
            MPI_Scan(a, b, n, m4, mm, C);
        else if (f == 2)
            MPI_Exscan(a, b, n, m4, mm, C);
        else if (per)
            MPI_Reduce_scatter_block(a, b, per, m4, mm, C);
        for (int j = 0; j < (per ? per : n) && (per || f < 3); j++) {
            int hi = f == 0 || f == 3 ? S : f == 1 ? R + 1 : R, jj = per ? R * per + j : j;
            if (f == 2 && R == 0)
                break;
            prod(0, hi, jj, w);
            EXPECT(!memcmp(w, b + 4 * j, sizeof w), "matrix %s: element %d wrong",
                   f == 0   ? "Allreduce"
                   : f == 1 ? "Scan"
                   : f == 2 ? "Exscan"
                            : "Reduce_scatter_block",
                   j);
        }
    }
    MPI_Op_free(&p1);
    MPI_Op_free(&mm);
    EXPECT(mm == MPI_OP_NULL, "Op_free did not set MPI_OP_NULL");
    MPI_Type_free(&m4);
    rep("user ops: commutative (Reduce, every root) and 2x2 matrix product in rank order "
        "(Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block)");
}

static void all_checks(void)
{
    check_reduce(0);
    check_reduce(1);
    check_predefined_ops(0);
    check_predefined_ops(1);
    check_loc();
    check_reduce_scatter(0);
    check_reduce_scatter(1);
    check_scan(0);
    check_scan(1);
    check_user_ops();
}

int main(int argc, char **argv)
{
    return run_world_and_sub(&argc, &argv, "colls_reduce", all_checks);
}
