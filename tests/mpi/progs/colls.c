/*
 * colls.c: MPI conformance of the blocking collectives: Barrier, Bcast, Reduce, Allreduce,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v), Reduce_scatter(_block), Scan, Exscan,
 * with every root, counts 0 .. 100000, MPI_IN_PLACE, the predefined reductions on several
 * types, MAXLOC/MINLOC with ties, user-defined commutative and non-commutative reductions,
 * and derived datatypes; first on MPI_COMM_WORLD, then again on a communicator of all ranks
 * but the last (odd when the world is even). Expected values are computed locally.
 * Only rank 0 prints: one line per check, then "# conformance colls: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- check harness (the same in every program of tests/mpi/progs/) ------------------- */
#define TAG_REPORT 32000 /* used by no check */
static int me, np;       /* rank and size in MPI_COMM_WORLD */
static int nchecks, nfailed;
static int bad;       /* failures of the current check on this rank */
static char why[160]; /* the first one's description */

/* Any rank, inside a check: records a failure (the first reason is kept). */
static void fail(const char *fmt, ...)
{
    if (bad++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
}
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail(__VA_ARGS__);                                                                     \
    } while (0)

/* Every rank, at the end of each check: sends its verdict to rank 0 with plain MPI_Send
 * (no collective: a broken collective must not hide or fake a result); rank 0 prints one
 * line and then releases the others. So no rank starts a check before all finished the
 * previous one, and only rank 0 can receive a verdict early: rank 0 never posts an
 * MPI_ANY_TAG receive or probe in a check (it could take a verdict). */
static void report(const char *name)
{
    struct {
        int bad;
        char why[sizeof why];
    } v;
    nchecks++;
    if (me == 0) {
        int nbad = bad ? 1 : 0, first = bad ? 0 : -1;
        char fwhy[sizeof why];
        memcpy(fwhy, why, sizeof why);
        for (int r = 1; r < np; r++) {
            MPI_Recv(&v, sizeof v, MPI_BYTE, r, TAG_REPORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (v.bad) {
                if (first < 0) {
                    first = r;
                    memcpy(fwhy, v.why, sizeof why);
                    fwhy[sizeof fwhy - 1] = 0;
                }
                nbad++;
            }
        }
        if (nbad) {
            nfailed++;
            printf("not ok %d - %s (rank %d: %s; %d of %d ranks failed)\n", nchecks, name, first,
                   fwhy, nbad, np);
        } else {
            printf("ok %d - %s\n", nchecks, name);
        }
        fflush(stdout);
        for (int r = 1; r < np; r++)
            MPI_Send(&nfailed, 1, MPI_INT, r, TAG_REPORT, MPI_COMM_WORLD);
    } else {
        v.bad = bad;
        memcpy(v.why, why, sizeof why);
        MPI_Send(&v, sizeof v, MPI_BYTE, 0, TAG_REPORT, MPI_COMM_WORLD);
        MPI_Recv(&nfailed, 1, MPI_INT, 0, TAG_REPORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    bad = 0;
    why[0] = 0;
}

/* main's start: MPI_Init and the size check (at least 2 ranks). */
static int start(int *argc, char ***argv, const char *prog)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) {
        if (me == 0)
            printf("# conformance %s: needs at least 2 ranks\n", prog);
        MPI_Finalize();
        return 0;
    }
    return 1;
}

/* main's end: the closing line; the exit code is nonzero on every rank if a check failed. */
static int finish(const char *prog)
{
    if (me == 0) {
        printf("# conformance %s: %d checks, %d failed\n", prog, nchecks, nfailed);
        fflush(stdout);
    }
    MPI_Finalize();
    return nfailed != 0;
}
/* --- end of the harness ----------------------------------------------------------------- */

static MPI_Comm C;     /* the communicator under test (MPI_COMM_NULL: not a member) */
static int R, S;       /* rank and size in C */
static const char *CN; /* its name in the check lines */
#define SENT (-777777) /* receive buffers are filled with it: must stay where no data goes */
#define BIGN 100000

/* Contribution j of rank r to a collective with `salt` (negative values included). */
static int v(int r, int j, int salt)
{
    return (r * 7919 + j * 31 + salt * 101) % 65536 - 1000;
}
static int *ints(size_t n)
{
    int *p = malloc((n + 1) * sizeof(int));
    for (size_t i = 0; i <= n; i++)
        p[i] = SENT;
    return p;
}
static void rep(const char *what)
{
    char name[200];
    snprintf(name, sizeof name, "%s [%s]", what, CN);
    report(name);
}
/* The counts tried: 0, 1, 7, 1000 with every root; BIGN with the first and last root. */
static const int counts[5] = {0, 1, 7, 1000, BIGN};
#define FOR_COUNTS_ROOTS(n, root)                                                                  \
    for (int k_ = 0, n = 0; k_ < 5; k_++)                                                          \
        for (int root = 0; root < S && (n = counts[k_], 1); root++)                                \
            if (k_ < 4 || root == 0 || root == S - 1)
/* Checks got[0..n-1] against v(src, j, salt) (or SENT when src < 0). */
static int same(const int *got, int n, int src, int salt, const char *what, int root)
{
    for (int j = 0; j < n; j++) {
        int want = src < 0 ? SENT : v(src, j, salt);
        if (got[j] != want) {
            fail("%s, root %d, count %d: element %d is %d, expected %d", what, root, n, j, got[j],
                 want);
            return 0;
        }
    }
    return 1;
}

/* Barrier: a rank leaves it only after all entered, so a message the last (first) rank
 * sends after its barrier cannot have arrived before the receiver entered: tests made
 * before entering must all fail. Then 50 barriers in a row. */
static void check_barrier(void)
{
    for (int round = 0; C != MPI_COMM_NULL && round < 2; round++) {
        int s = round ? S - 1 : 0, x = 1, flag = 0;
        if (R == s) {
            MPI_Barrier(C);
            for (int d = 0; d < S; d++)
                if (d != s)
                    MPI_Send(&x, 1, MPI_INT, d, 77, C);
        } else {
            MPI_Request r;
            MPI_Irecv(&x, 1, MPI_INT, s, 77, C, &r);
            for (int i = 0; i < 20; i++) {
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                EXPECT(!flag, "a message sent after the barrier by %d came before it", s);
            }
            MPI_Barrier(C);
            if (!flag)
                MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    for (int i = 0; C != MPI_COMM_NULL && i < 50; i++)
        MPI_Barrier(C);
    rep("Barrier: nobody leaves before all entered; 50 in a row");
}

static void check_bcast(void)
{
    int *b = ints(BIGN);
    if (C != MPI_COMM_NULL)
        FOR_COUNTS_ROOTS(n, root)
        {
            for (int j = 0; j <= n; j++)
                b[j] = R == root && j < n ? v(root, j, 1) : SENT;
            MPI_Bcast(b, n, MPI_INT, root, C);
            if (same(b, n, root, 1, "Bcast", root))
                same(b + n, 1, -1, 0, "Bcast past the end", root);
        }
    free(b);
    rep("Bcast: every root, counts 0..100000");
}

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

/* Gather (all = 0) and Allgather (all = 1): block r of the result is rank r's data; with
 * MPI_IN_PLACE the root's (every rank's) own block is already in place. */
static void check_gather(int all)
{
    int *in = ints(BIGN), *out = ints((size_t)S * BIGN);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            if (all && root > 0)
                break;
            int m = n == BIGN ? BIGN / S : n, me_root = all || R == root;
            for (int j = 0; j < m; j++)
                in[j] = v(R, j, 3);
            for (int j = 0; j <= S * m; j++)
                out[j] = SENT;
            if (ip && me_root)
                memcpy(out + R * m, in, m * sizeof(int));
            void *sb = ip && me_root ? MPI_IN_PLACE : in;
            if (all)
                MPI_Allgather(sb, m, MPI_INT, out, m, MPI_INT, C);
            else
                MPI_Gather(sb, m, MPI_INT, out, m, MPI_INT, root, C);
            for (int r = 0; r < S && me_root; r++)
                if (!same(out + r * m, m, r, 3, all ? "Allgather" : "Gather", root))
                    break;
            EXPECT(!me_root || out[S * m] == SENT, "root %d count %d: past the end", root, m);
        }
    free(in), free(out);
    rep(all ? "Allgather: counts 0..100000 in all, also MPI_IN_PLACE"
            : "Gather: every root, counts 0..100000 in all, also MPI_IN_PLACE");
}

/* Scatter: rank r gets block r of the root's buffer (in place: the root keeps its own). */
static void check_scatter(void)
{
    int *in = ints((size_t)S * BIGN), *out = ints(BIGN);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            int m = n == BIGN ? BIGN / S : n;
            for (int r = 0; r < S; r++)
                for (int j = 0; j < m; j++)
                    in[r * m + j] = v(r, j, 4);
            for (int j = 0; j <= m; j++)
                out[j] = SENT;
            if (ip && R == root)
                MPI_Scatter(in, m, MPI_INT, MPI_IN_PLACE, m, MPI_INT, root, C);
            else
                MPI_Scatter(in, m, MPI_INT, out, m, MPI_INT, root, C);
            if (!(ip && R == root) && same(out, m, R, 4, "Scatter", root))
                same(out + m, 1, -1, 0, "Scatter past the end", root);
            if (ip && R == root)
                same(in + R * m, m, R, 4, "Scatter in place (root's block)", root);
        }
    free(in), free(out);
    rep("Scatter: every root, counts 0..100000 in all, also MPI_IN_PLACE");
}

/* The v-variants' layout: rank r has c(r) = 0 (r % 3 == 1) or n + r elements, placed in
 * reverse rank order with a gap of 2 after each block (the gaps must stay untouched). */
static int vcount(int r, int n)
{
    return r % 3 == 1 ? 0 : n + r;
}
static int vlayout(int n, int *cnt, int *dis)
{
    int off = 0;
    for (int r = S - 1; r >= 0; r--)
        cnt[r] = vcount(r, n), dis[r] = off, off += cnt[r] + 2;
    return off;
}
/* Checks a v-layout buffer: block r holds v(r, ., salt) and everything else SENT. */
static void vsame(const int *b, int total, const int *cnt, const int *dis, int salt,
                  const char *what, int root)
{
    for (int r = 0; r < S; r++)
        if (!same(b + dis[r], cnt[r], r, salt, what, root))
            return;
    for (int r = 0; r < S; r++)
        if (!same(b + dis[r] + cnt[r], 2, -1, 0, what, root))
            return;
    (void)total;
}

/* Gatherv, Scatterv, Allgatherv (which = 0, 1, 2) with the v-layout, also in place. */
static void check_v(int which)
{
    static const char *names[3] = {"Gatherv", "Scatterv", "Allgatherv"};
    int *cnt = malloc(S * sizeof(int)), *dis = malloc(S * sizeof(int));
    int *mine = ints(BIGN + S), *all = ints((size_t)BIGN + S * (S + 2));
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        FOR_COUNTS_ROOTS(n, root)
        {
            if (which == 2 && root > 0)
                break;
            int m = n == BIGN ? BIGN / S : n, total = vlayout(m, cnt, dis), c = cnt[R];
            int at_root = which == 2 || R == root, inplace = ip && at_root;
            for (int j = 0; j <= total; j++)
                all[j] = SENT;
            for (int j = 0; j <= c; j++)
                mine[j] = j < c && which != 1 ? v(R, j, 5) : SENT;
            if (which == 1 && R == root) /* the root's send buffer in the v-layout */
                for (int r = 0; r < S; r++)
                    for (int j = 0; j < cnt[r]; j++)
                        all[dis[r] + j] = v(r, j, 5);
            else if (inplace)
                memcpy(all + dis[R], mine, c * sizeof(int));
            if (which == 0)
                MPI_Gatherv(inplace ? MPI_IN_PLACE : mine, c, MPI_INT, all, cnt, dis, MPI_INT, root,
                            C);
            else if (which == 1)
                MPI_Scatterv(all, cnt, dis, MPI_INT, inplace ? MPI_IN_PLACE : mine, c, MPI_INT,
                             root, C);
            else
                MPI_Allgatherv(inplace ? MPI_IN_PLACE : mine, c, MPI_INT, all, cnt, dis, MPI_INT,
                               C);
            if (which != 1 && at_root)
                vsame(all, total, cnt, dis, 5, names[which], root);
            if (which == 1 && !inplace && same(mine, c, R, 5, names[1], root))
                same(mine + c, 1, -1, 0, "Scatterv past the end", root);
        }
    free(cnt), free(dis), free(mine), free(all);
    char name[120];
    snprintf(name, sizeof name,
             "%s: %scounts 0 and n+r in reverse order with gaps, n 0..100000, also MPI_IN_PLACE",
             names[which], which == 2 ? "" : "every root, ");
    rep(name);
}

/* Alltoall: block d of rank s's send buffer goes to block s of rank d's receive buffer. */
static void check_alltoall(void)
{
    int *in = ints((size_t)BIGN + 8), *out = ints((size_t)BIGN + 8);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        for (int k = 0; k < 5; k++) {
            int m = k == 4 ? BIGN / S : counts[k];
            for (int d = 0; d < S; d++)
                for (int j = 0; j < m; j++)
                    in[d * m + j] = v(R, d * m + j, 6);
            for (int j = 0; j <= S * m; j++)
                out[j] = ip && j < S * m ? in[j] : SENT;
            MPI_Alltoall(ip ? MPI_IN_PLACE : in, m, MPI_INT, out, m, MPI_INT, C);
            for (int s = 0; s < S; s++)
                for (int j = 0; j < m; j++)
                    if (out[s * m + j] != v(s, R * m + j, 6)) {
                        fail("Alltoall%s count %d: block %d element %d is %d",
                             ip ? " in place" : "", m, s, j, out[s * m + j]);
                        s = S;
                        break;
                    }
            EXPECT(out[S * m] == SENT, "Alltoall count %d: past the end", m);
        }
    free(in), free(out);
    rep("Alltoall: counts 0..100000/size per pair, also MPI_IN_PLACE");
}

/* Alltoallv with symmetric counts c(s,d) = ((s + d) % 4) * m (zeros included), blocks in
 * reverse order with gaps on both sides; in place too. */
static void check_alltoallv(void)
{
    int *sc = malloc(S * sizeof(int)), *sd = malloc(S * sizeof(int));
    int *rc = malloc(S * sizeof(int)), *rd = malloc(S * sizeof(int));
    int *in = ints((size_t)3 * BIGN / 2 + 3 * S), *out = ints((size_t)3 * BIGN / 2 + 3 * S);
    for (int ip = 0; C != MPI_COMM_NULL && ip < 2; ip++)
        for (int k = 0; k < 5; k++) {
            int m = k == 4 ? BIGN / S / 2 : counts[k], so = 0, ro = 0;
            for (int d = S - 1; d >= 0; d--) {
                sc[d] = rc[d] = (R + d) % 4 * m;
                sd[d] = so, so += sc[d] + 1;
                rd[d] = ro, ro += rc[d] + 3;
            }
            for (int j = 0; j <= so; j++)
                in[j] = SENT;
            for (int j = 0; j <= ro; j++)
                out[j] = SENT;
            for (int d = 0; d < S; d++)
                for (int j = 0; j < sc[d]; j++)
                    in[sd[d] + j] = out[rd[d] + j] = v(R, d * 7 + j, 7);
            if (!ip)
                for (int j = 0; j <= ro; j++)
                    out[j] = SENT;
            MPI_Alltoallv(ip ? MPI_IN_PLACE : in, sc, sd, MPI_INT, out, rc, rd, MPI_INT, C);
            for (int s = 0; s < S; s++) {
                for (int j = 0; j < rc[s]; j++)
                    if (out[rd[s] + j] != v(s, R * 7 + j, 7)) {
                        fail("Alltoallv%s m %d: from %d element %d is %d", ip ? " in place" : "", m,
                             s, j, out[rd[s] + j]);
                        s = S;
                        break;
                    }
                if (s < S && !same(out + rd[s] + rc[s], 3, -1, 0, "Alltoallv gap", -1))
                    break;
            }
        }
    free(sc), free(sd), free(rc), free(rd), free(in), free(out);
    rep("Alltoallv: counts 0..3m with zeros, reverse order with gaps, also MPI_IN_PLACE");
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
/* A non-commutative one: 2x2 matrices of unsigned (wrapping) multiplied, inout = in x
 * inout, so the result is M(0) x M(1) x ... x M(S-1) in rank order. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}
static void mat(int r, int j, unsigned *m) /* [[r*3+j+2, 1], [1, 0]]: no two commute */
{
    m[0] = (unsigned)(r * 3 + j + 2), m[1] = 1, m[2] = 1, m[3] = 0;
}
/* The product of the matrices of ranks lo..hi-1 for element j (identity if empty). */
static void prod(int lo, int hi, int j, unsigned *p)
{
    unsigned id[4] = {1, 0, 0, 1}, m[4];
    memcpy(p, id, sizeof id);
    for (int r = hi - 1; r >= lo; r--) { /* p = M(r) x p, from the right end */
        int one = 1;
        mat(r, j, m);
        matmul(m, p, &one, NULL);
    }
}

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

/* Derived datatypes in collectives: Bcast of a vector type, Allgather sent as one
 * contiguous(7) and received as 7 ints, Alltoall of resized column types (a distributed
 * transpose of an S x S matrix of one row per rank). */
static void check_derived(void)
{
    MPI_Datatype vec, c7, col, colr;
    int *row = ints(64), *t = ints(64), b[40], g[7 * 64 + 1];
    if (C != MPI_COMM_NULL) {
        MPI_Type_vector(5, 2, 4, MPI_INT, &vec);
        MPI_Type_contiguous(7, MPI_INT, &c7);
        MPI_Type_vector(1, 1, 1, MPI_INT, &col);
        MPI_Type_create_resized(col, 0, sizeof(int), &colr);
        MPI_Type_commit(&vec), MPI_Type_commit(&c7), MPI_Type_commit(&colr);
        for (int root = 0; root < S; root++) {
            for (int j = 0; j < 40; j++)
                b[j] = R == root ? v(root, j, 11) : SENT;
            MPI_Bcast(b, 2, vec, root, C);
            for (int j = 0; j < 36; j++)
                EXPECT(b[j] == (j % 18 % 4 < 2 || R == root ? v(root, j, 11) : SENT),
                       "Bcast of vectors, root %d: int %d is %d", root, j, b[j]);
        }
        int mine[7];
        for (int j = 0; j < 7; j++)
            mine[j] = v(R, j, 12);
        g[7 * S] = SENT;
        MPI_Allgather(mine, 1, c7, g, 7, MPI_INT, C);
        for (int r = 0; r < S; r++)
            same(g + 7 * r, 7, r, 12, "Allgather contiguous(7) to ints", -1);
        EXPECT(g[7 * S] == SENT, "Allgather: past the end");
        for (int j = 0; j < S; j++)
            row[j] = R * 100 + j;
        MPI_Alltoall(row, 1, colr, t, 1, colr, C);
        for (int j = 0; j < S; j++)
            EXPECT(t[j] == j * 100 + R, "Alltoall transpose: element %d is %d", j, t[j]);
        MPI_Type_free(&vec), MPI_Type_free(&c7), MPI_Type_free(&col), MPI_Type_free(&colr);
    }
    free(row), free(t);
    rep("derived types: Bcast of vectors, Allgather contiguous(7) as ints, Alltoall");
}

static void all_checks(void)
{
    check_barrier();
    check_bcast();
    check_reduce(0);
    check_reduce(1);
    check_predefined_ops(0);
    check_predefined_ops(1);
    check_loc();
    check_gather(0);
    check_gather(1);
    check_scatter();
    for (int which = 0; which < 3; which++)
        check_v(which);
    check_alltoall();
    check_alltoallv();
    check_reduce_scatter(0);
    check_reduce_scatter(1);
    check_scan(0);
    check_scan(1);
    check_user_ops();
    check_derived();
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "colls"))
        return 1;
    char name[40];
    C = MPI_COMM_WORLD, R = me, S = np;
    snprintf(name, sizeof name, "world of %d", np);
    CN = name;
    all_checks();
    /* All ranks but the last: odd when the world is even, and ranks of it are placed
     * unlike the world's (the last node has fewer). */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, me == np - 1 ? MPI_UNDEFINED : 0, me, &sub);
    C = sub, R = -1, S = np - 1;
    if (sub != MPI_COMM_NULL)
        MPI_Comm_rank(sub, &R), MPI_Comm_size(sub, &S);
    snprintf(name, sizeof name, "ranks 0..%d", np - 2);
    all_checks();
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    return finish("colls");
}
