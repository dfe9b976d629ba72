/*
 * dtypes.c: MPI conformance of derived datatypes: the constructors (contiguous, vector,
 * hvector, indexed, hindexed, struct, resized) and nestings of them, their size, extent and
 * bounds, messages sent with one type and received with another of the same type signature,
 * MPI_Get_count / MPI_Get_elements, MPI_BOTTOM with absolute addresses, Pack/Unpack.
 * Only rank 0 prints: one line per check, then "# conformance dtypes: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int right(void)
{
    return (me + 1) % np;
}
static int left(void)
{
    return (me + np - 1) % np;
}
/* Value i of rank s's data (exact in a double as well). */
static int val(int s, int i)
{
    return s * 10000 + i + 1;
}
/* Sends `scount` of `stype` from sb to the right and receives `rcount` of `rtype` from the
 * left into rb; returns the receive status. */
static MPI_Status shift(void *sb, int scount, MPI_Datatype stype, void *rb, int rcount,
                        MPI_Datatype rtype)
{
    MPI_Status st;
    MPI_Sendrecv(sb, scount, stype, right(), 1, rb, rcount, rtype, left(), 1, MPI_COMM_WORLD, &st);
    return st;
}
/* Expects size, lb and extent of a type. */
static void shape(MPI_Datatype t, const char *what, int size, MPI_Aint lb, MPI_Aint extent)
{
    int s = -1;
    MPI_Aint l = -1, e = -1;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &l, &e);
    EXPECT(s == size && l == lb && e == extent,
           "%s: size %d lb %ld extent %ld, expected %d %ld %ld", what, s, (long)l, (long)e, size,
           (long)lb, (long)extent);
}
static void counts(MPI_Status *st, MPI_Datatype t, const char *what, int count, int elements)
{
    int c = -2, e = -2;
    MPI_Get_count(st, t, &c);
    MPI_Get_elements(st, t, &e);
    EXPECT(c == count && e == elements, "%s: count %d elements %d, expected %d %d", what, c, e,
           count, elements);
}

/* Predefined types: size is the C type's, lb 0, extent = size (the pair types: their C
 * struct). */
static void check_predefined(void)
{
    struct di {
        double d;
        int i;
    };
    shape(MPI_CHAR, "MPI_CHAR", 1, 0, 1);
    shape(MPI_BYTE, "MPI_BYTE", 1, 0, 1);
    shape(MPI_SHORT, "MPI_SHORT", sizeof(short), 0, sizeof(short));
    shape(MPI_INT, "MPI_INT", sizeof(int), 0, sizeof(int));
    shape(MPI_LONG, "MPI_LONG", sizeof(long), 0, sizeof(long));
    shape(MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long), 0, sizeof(long long));
    shape(MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned), 0, sizeof(unsigned));
    shape(MPI_FLOAT, "MPI_FLOAT", sizeof(float), 0, sizeof(float));
    shape(MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), 0, sizeof(double));
    shape(MPI_2INT, "MPI_2INT", 2 * sizeof(int), 0, 2 * sizeof(int));
    shape(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int), 0, sizeof(struct di));
    report("predefined types: size, lb and extent");
}

/* Contiguous: 2 x contiguous(5, MPI_INT) arrive as 10 MPI_INT, and 10 MPI_INT as 2 of the
 * contiguous type; 7 ints into contiguous(3): count MPI_UNDEFINED, 7 elements. */
static void check_contiguous(void)
{
    MPI_Datatype c5, c3;
    int a[10], b[12];
    MPI_Type_contiguous(5, MPI_INT, &c5);
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c5);
    MPI_Type_commit(&c3);
    shape(c5, "contiguous(5, INT)", 20, 0, 20);
    for (int i = 0; i < 10; i++)
        a[i] = val(me, i);
    for (int dir = 0; dir < 2; dir++) {
        memset(b, 0, sizeof b);
        MPI_Status st = dir ? shift(a, 10, MPI_INT, b, 2, c5) : shift(a, 2, c5, b, 10, MPI_INT);
        counts(&st, dir ? c5 : MPI_INT, dir ? "received as c5" : "received as INT", dir ? 2 : 10,
               10);
        for (int i = 0; i < 10; i++)
            EXPECT(b[i] == val(left(), i), "direction %d: int %d is %d", dir, i, b[i]);
        EXPECT(b[10] == 0, "direction %d: wrote past the data", dir);
    }
    MPI_Status st = shift(a, 7, MPI_INT, b, 4, c3);
    counts(&st, c3, "7 ints as contiguous(3)", MPI_UNDEFINED, 7);
    MPI_Type_free(&c5);
    MPI_Type_free(&c3);
    EXPECT(c5 == MPI_DATATYPE_NULL, "Type_free did not set MPI_DATATYPE_NULL");
    report("Type_contiguous: both directions against MPI_INT, partial count UNDEFINED");
}

/* Vector(4 blocks of 2 doubles, stride 3): size 64, extent 88. Sent as one vector and
 * received as 8 doubles; 8 doubles received into two vectors (the second starts one extent
 * later), gaps untouched. */
static void check_vector(void)
{
    MPI_Datatype v;
    double a[24], b[24];
    MPI_Type_vector(4, 2, 3, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    shape(v, "vector(4,2,3,DOUBLE)", 64, 0, 88);
    for (int i = 0; i < 24; i++)
        a[i] = val(me, i), b[i] = -1;
    MPI_Status st = shift(a, 1, v, b, 24, MPI_DOUBLE);
    counts(&st, MPI_DOUBLE, "vector as doubles", 8, 8);
    for (int k = 0; k < 8; k++)
        EXPECT(b[k] == val(left(), k / 2 * 3 + k % 2), "vector to contiguous: double %d is %g", k,
               b[k]);
    for (int i = 0; i < 24; i++)
        b[i] = -1;
    st = shift(a, 16, MPI_DOUBLE, b, 2, v);
    counts(&st, v, "doubles as 2 vectors", 2, 16);
    /* Each vector covers 11 doubles; blocks at 0-1, 3-4, 6-7, 9-10 of them. */
    for (int i = 0, k = 0; i < 24; i++) {
        int in = i < 22 && i % 11 % 3 != 2;
        EXPECT(b[i] == (in ? val(left(), k) : -1), "contiguous to vector: double %d is %g", i,
               b[i]);
        k += in;
    }
    st = shift(a, 5, MPI_DOUBLE, b, 1, v);
    counts(&st, v, "5 doubles as a vector", MPI_UNDEFINED, 5);
    MPI_Type_free(&v);
    report("Type_vector: extent, to and from contiguous, 2 vectors one extent apart");
}

/* Hvector (byte stride 20 between blocks of 2 ints) and a vector with a negative stride
 * (lb < 0: the buffer argument points into the middle). */
static void check_hvector_negative(void)
{
    MPI_Datatype hv, neg;
    int a[16], b[16];
    MPI_Type_create_hvector(3, 2, 20, MPI_INT, &hv);
    MPI_Type_vector(3, 1, -2, MPI_INT, &neg);
    MPI_Type_commit(&hv);
    MPI_Type_commit(&neg);
    shape(hv, "hvector(3,2,20B,INT)", 24, 0, 48);
    shape(neg, "vector(3,1,-2,INT)", 12, -16, 20);
    for (int i = 0; i < 16; i++)
        a[i] = val(me, i), b[i] = 0;
    MPI_Status st = shift(a, 1, hv, b, 16, MPI_INT);
    counts(&st, MPI_INT, "hvector as ints", 6, 6);
    static const int hidx[6] = {0, 1, 5, 6, 10, 11};
    for (int k = 0; k < 6; k++)
        EXPECT(b[k] == val(left(), hidx[k]), "hvector: int %d is %d", k, b[k]);
    st = shift(a + 4, 1, neg, b, 16, MPI_INT);
    for (int k = 0; k < 3; k++)
        EXPECT(b[k] == val(left(), 4 - 2 * k), "negative stride: int %d is %d", k, b[k]);
    MPI_Type_free(&hv);
    MPI_Type_free(&neg);
    report("Type_create_hvector (byte stride); Type_vector with a negative stride");
}

/* Indexed: blocks {1,3,2} at {5,0,10}: the data travel in type-map order, not address
 * order; extent from the lowest to the highest byte. Hindexed: the same in bytes, with
 * lb > 0. Received into an indexed type with other blocks of the same signature. */
static void check_indexed(void)
{
    MPI_Datatype ix, hx, rx;
    int bl[3] = {1, 3, 2}, dis[3] = {5, 0, 10}, a[16], b[16];
    MPI_Aint hdis[3] = {5 * 4 + 8, 0 + 8, 10 * 4 + 8};
    int rbl[2] = {4, 2}, rdis[2] = {9, 1};
    MPI_Type_indexed(3, bl, dis, MPI_INT, &ix);
    MPI_Type_create_hindexed(3, bl, hdis, MPI_INT, &hx);
    MPI_Type_indexed(2, rbl, rdis, MPI_INT, &rx);
    MPI_Type_commit(&ix);
    MPI_Type_commit(&hx);
    MPI_Type_commit(&rx);
    shape(ix, "indexed", 24, 0, 48);
    shape(hx, "hindexed", 24, 8, 48);
    static const int order[6] = {5, 0, 1, 2, 10, 11};
    for (int i = 0; i < 16; i++)
        a[i] = val(me, i), b[i] = 0;
    MPI_Status st = shift(a, 1, ix, b, 16, MPI_INT);
    counts(&st, MPI_INT, "indexed as ints", 6, 6);
    for (int k = 0; k < 6; k++)
        EXPECT(b[k] == val(left(), order[k]), "indexed: int %d is %d", k, b[k]);
    memset(b, 0, sizeof b);
    st = shift(a, 1, hx, b, 16, MPI_INT);
    for (int k = 0; k < 6; k++)
        EXPECT(b[k] == val(left(), order[k] + 2), "hindexed: int %d is %d", k, b[k]);
    memset(b, 0, sizeof b);
    st = shift(a, 1, ix, b, 1, rx);
    counts(&st, rx, "indexed to indexed", 1, 6);
    static const int where[6] = {9, 10, 11, 12, 1, 2};
    for (int k = 0; k < 6; k++)
        EXPECT(b[where[k]] == val(left(), order[k]), "indexed to indexed: int %d is %d", where[k],
               b[where[k]]);
    EXPECT(b[0] == 0 && b[3] == 0 && b[8] == 0 && b[13] == 0, "indexed to indexed: gap written");
    MPI_Type_free(&ix);
    MPI_Type_free(&hx);
    MPI_Type_free(&rx);
    report("Type_indexed / Type_create_hindexed: type-map order, bounds, indexed to indexed");
}

struct s1 { /* char, 2 ints, double: padding after c */
    char c;
    int i[2];
    double d;
};
struct s2 { /* the same signature in another layout */
    double d;
    char pad[5];
    char c;
    int i[2];
};
/* An MPI type of struct s1 or s2: blocks char, int[2], double in that order, resized to
 * the C struct's size so that arrays work. */
static MPI_Datatype struct_type(int which)
{
    MPI_Datatype t, r;
    int bl[3] = {1, 2, 1};
    MPI_Aint d1[3] = {offsetof(struct s1, c), offsetof(struct s1, i), offsetof(struct s1, d)};
    MPI_Aint d2[3] = {offsetof(struct s2, c), offsetof(struct s2, i), offsetof(struct s2, d)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(3, bl, which == 1 ? d1 : d2, ty, &t);
    MPI_Type_create_resized(t, 0, which == 1 ? sizeof(struct s1) : sizeof(struct s2), &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

/* Struct: size 17, true extent (first to last byte) of s1; an array of 3 s1 received as 3
 * s2 (fields moved, padding untouched) and back. */
static void check_struct(void)
{
    MPI_Datatype t1 = struct_type(1), t2 = struct_type(2);
    struct s1 a[3], c[3];
    struct s2 b[3];
    MPI_Aint tlb = -1, text = -1;
    shape(t1, "struct s1", 17, 0, sizeof(struct s1));
    MPI_Type_get_true_extent(t1, &tlb, &text);
    EXPECT(tlb == 0 && text == (MPI_Aint)sizeof(struct s1), "true extent: lb %ld extent %ld",
           (long)tlb, (long)text);
    memset(a, 0x11, sizeof a);
    memset(b, 0x22, sizeof b);
    for (int k = 0; k < 3; k++) {
        a[k].c = (char)('a' + me + k);
        a[k].i[0] = val(me, k), a[k].i[1] = -val(me, k);
        a[k].d = val(me, k) + 0.5;
    }
    MPI_Status st = shift(a, 3, t1, b, 3, t2);
    counts(&st, t2, "s1 to s2", 3, 12);
    for (int k = 0; k < 3; k++) {
        EXPECT(b[k].c == (char)('a' + left() + k) && b[k].i[0] == val(left(), k) &&
                   b[k].i[1] == -val(left(), k) && b[k].d == val(left(), k) + 0.5,
               "s2[%d] = {%d, %d, %d, %g}", k, b[k].c, b[k].i[0], b[k].i[1], b[k].d);
        for (int p = 0; p < 5; p++)
            EXPECT(b[k].pad[p] == 0x22, "s2[%d]: padding written", k);
    }
    memset(c, 0, sizeof c);
    st = shift(b, 3, t2, c, 3, t1);
    int two_left = (me + 2 * np - 2) % np; /* the data went two ranks on */
    for (int k = 0; k < 3; k++)
        EXPECT(c[k].c == (char)('a' + two_left + k) && c[k].i[0] == val(two_left, k) &&
                   c[k].i[1] == -val(two_left, k) && c[k].d == val(two_left, k) + 0.5,
               "back to s1: [%d] = {%d, %d, %d, %g}", k, c[k].c, c[k].i[0], c[k].i[1], c[k].d);
    MPI_Type_free(&t1);
    MPI_Type_free(&t2);
    report("Type_create_struct {char, int[2], double}: size, true extent, struct to struct");
}

/* Resized: MPI_INT with extent 12 takes every third int (count 4); with lb -4 and extent
 * 8, count 3 from &a[1] takes a[1], a[3], a[5]. */
static void check_resized(void)
{
    MPI_Datatype r12, rneg;
    int a[16], b[16];
    MPI_Type_create_resized(MPI_INT, 0, 12, &r12);
    MPI_Type_create_resized(MPI_INT, -4, 8, &rneg);
    MPI_Type_commit(&r12);
    MPI_Type_commit(&rneg);
    shape(r12, "resized(INT, 0, 12)", 4, 0, 12);
    shape(rneg, "resized(INT, -4, 8)", 4, -4, 8);
    for (int i = 0; i < 16; i++)
        a[i] = val(me, i), b[i] = 0;
    MPI_Status st = shift(a, 4, r12, b, 16, MPI_INT);
    counts(&st, MPI_INT, "resized as ints", 4, 4);
    for (int k = 0; k < 4; k++)
        EXPECT(b[k] == val(left(), 3 * k), "extent 12: int %d is %d", k, b[k]);
    memset(b, 0, sizeof b);
    st = shift(a + 1, 3, rneg, b + 1, 3, rneg);
    counts(&st, rneg, "resized to resized", 3, 3);
    for (int i = 0; i < 16; i++)
        EXPECT(b[i] == (i % 2 && i < 6 ? val(left(), i) : 0), "lb -4: int %d is %d", i, b[i]);
    MPI_Type_free(&r12);
    MPI_Type_free(&rneg);
    report("Type_create_resized: extent 12 strides through ints; lb -4 from the middle");
}

/* Nested. A column of a 6x6 matrix (vector resized to one double) times 6 sends the
 * matrix column by column: received as rows, it is the transpose. A vector of structs
 * sends every other struct. A struct that holds a vector and an int goes into ints. */
static void check_nested(void)
{
    enum { N = 6 };
    MPI_Datatype col, colr, t1 = struct_type(1), vs, inner, outer;
    double m[N][N], t[N][N];
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &colr);
    MPI_Type_commit(&colr);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            m[i][j] = val(me, i * N + j), t[i][j] = -1;
    MPI_Status st = shift(m, N, colr, t, N * N, MPI_DOUBLE);
    counts(&st, MPI_DOUBLE, "transpose", N * N, N * N);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            EXPECT(t[i][j] == val(left(), j * N + i), "transpose: [%d][%d] is %g", i, j, t[i][j]);

    struct s1 a[5], b[3];
    MPI_Type_vector(3, 1, 2, t1, &vs);
    MPI_Type_commit(&vs);
    for (int k = 0; k < 5; k++)
        a[k].c = (char)k, a[k].i[0] = val(me, k), a[k].i[1] = 0, a[k].d = k;
    memset(b, 0, sizeof b);
    st = shift(a, 1, vs, b, 3, t1);
    counts(&st, t1, "vector of structs", 3, 12);
    for (int k = 0; k < 3; k++)
        EXPECT(b[k].c == 2 * k && b[k].i[0] == val(left(), 2 * k) && b[k].d == 2 * k,
               "vector of structs: [%d] holds struct %d", k, b[k].c);

    /* outer = {int at 0, vector(2 blocks of 1 int, stride 3) at 8 bytes}: from a[] it takes
     * a[0], a[2], a[5]. */
    int x[8], y[8];
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Type_vector(2, 1, 3, MPI_INT, &inner);
    MPI_Datatype ty[2] = {MPI_INT, inner};
    MPI_Type_create_struct(2, bl, d, ty, &outer);
    MPI_Type_commit(&outer);
    shape(outer, "struct{int, vector}", 12, 0, 24);
    for (int i = 0; i < 8; i++)
        x[i] = val(me, i), y[i] = 0;
    st = shift(x, 1, outer, y, 8, MPI_INT);
    counts(&st, MPI_INT, "struct of vector", 3, 3);
    EXPECT(y[0] == val(left(), 0) && y[1] == val(left(), 2) && y[2] == val(left(), 5),
           "struct of vector: %d %d %d", y[0], y[1], y[2]);
    MPI_Type_free(&col), MPI_Type_free(&colr), MPI_Type_free(&t1), MPI_Type_free(&vs);
    MPI_Type_free(&inner), MPI_Type_free(&outer);
    report("nested types: matrix transpose by columns, vector of structs, struct of vector");
}

/* Get_count / Get_elements of partial messages: a vector of 8 doubles receiving 5, and a
 * struct signature cut after 1.5 structs (char,int,int,double,char,int). */
static void check_elements(void)
{
    MPI_Datatype t1 = struct_type(1), part;
    struct s1 a[2], b[2];
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {0, offsetof(struct s1, c) + sizeof(struct s1),
                     offsetof(struct s1, i) + sizeof(struct s1)};
    MPI_Datatype ty[3] = {t1, MPI_CHAR, MPI_INT};
    MPI_Type_create_struct(3, bl, d, ty, &part);
    MPI_Type_commit(&part);
    /* The bounds that Type_create_resized set on t1 are explicit, and explicit bounds are
     * sticky (MPI-3.1 sec. 4.1.6): the extent is t1's, the char and int beyond it do not
     * count. */
    shape(part, "1.5 structs", 17 + 5, 0, sizeof(struct s1));
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    a[0].c = 'x', a[0].i[0] = val(me, 0), a[0].d = 2.5, a[1].c = 'y', a[1].i[0] = val(me, 1);
    a[1].i[1] = 77;
    MPI_Status st = shift(a, 1, part, b, 2, t1);
    counts(&st, t1, "1.5 structs", MPI_UNDEFINED, 6);
    EXPECT(b[0].c == 'x' && b[0].d == 2.5 && b[1].c == 'y' && b[1].i[0] == val(left(), 1) &&
               b[1].i[1] == 0 && b[1].d == 0,
           "1.5 structs: second {%d, %d, %d, %g}", b[1].c, b[1].i[0], b[1].i[1], b[1].d);
    MPI_Type_free(&t1);
    MPI_Type_free(&part);
    report("Get_count UNDEFINED / Get_elements 6 for 1.5 structs received as 2");
}

/* MPI_BOTTOM: an hindexed type of absolute addresses (MPI_Get_address) of three separate
 * variables, sent and received relative to MPI_BOTTOM. */
static void check_bottom(void)
{
    static int g;
    double d = val(me, 1) + 0.25;
    long l = val(me, 2);
    int bl[3] = {1, 1, 1};
    MPI_Aint ad[3];
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_LONG}, abs_t;
    g = val(me, 0);
    MPI_Get_address(&g, &ad[0]);
    MPI_Get_address(&d, &ad[1]);
    MPI_Get_address(&l, &ad[2]);
    MPI_Type_create_struct(3, bl, ad, ty, &abs_t);
    MPI_Type_commit(&abs_t);
    MPI_Sendrecv_replace(MPI_BOTTOM, 1, abs_t, right(), 2, left(), 2, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    EXPECT(g == val(left(), 0) && d == val(left(), 1) + 0.25 && l == val(left(), 2),
           "got %d %g %ld", g, d, l);
    MPI_Type_free(&abs_t);
    report("MPI_BOTTOM with absolute addresses from MPI_Get_address");
}

/* Pack/Unpack. A count and a vector packed, sent as MPI_PACKED and unpacked in the same
 * order; Pack_size bounds the packed size; local pack of a vector unpacked as contiguous. */
static void check_pack(void)
{
    MPI_Datatype v;
    int a[24], n = 8, psize = 0, s1 = 0, s2 = 0, pos = 0, rpos = 0, got = -1, rn = -1, b[12];
    MPI_Type_vector(4, 1, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1);
    MPI_Pack_size(2, v, MPI_COMM_WORLD, &s2);
    psize = s1 + s2;
    EXPECT(s1 >= 4 && s2 >= 32, "Pack_size %d %d too small", s1, s2);
    char *out = malloc(psize), *in = malloc(psize);
    for (int i = 0; i < 24; i++)
        a[i] = val(me, i);
    MPI_Pack(&n, 1, MPI_INT, out, psize, &pos, MPI_COMM_WORLD);
    MPI_Pack(a, 2, v, out, psize, &pos, MPI_COMM_WORLD);
    EXPECT(pos > 0 && pos <= psize, "position %d after packing (bound %d)", pos, psize);
    MPI_Status st;
    MPI_Sendrecv(out, pos, MPI_PACKED, right(), 3, in, psize, MPI_PACKED, left(), 3, MPI_COMM_WORLD,
                 &st);
    MPI_Get_count(&st, MPI_PACKED, &got);
    EXPECT(got == pos, "received %d packed bytes, sent %d", got, pos);
    MPI_Unpack(in, got, &rpos, &rn, 1, MPI_INT, MPI_COMM_WORLD);
    memset(b, 0, sizeof b);
    MPI_Unpack(in, got, &rpos, b, rn > 0 && rn <= 8 ? rn : 0, MPI_INT, MPI_COMM_WORLD);
    EXPECT(rn == 8 && rpos == got, "unpacked count %d, position %d of %d", rn, rpos, got);
    /* 2 vectors: the second starts one extent (10 ints) after the first. */
    static const int idx[8] = {0, 3, 6, 9, 10, 13, 16, 19};
    for (int k = 0; k < 8; k++)
        EXPECT(b[k] == val(left(), idx[k]), "unpacked int %d is %d", k, b[k]);
    rpos = 0;
    pos = 0;
    memset(b, 0, sizeof b);
    MPI_Pack(a, 1, v, out, psize, &pos, MPI_COMM_WORLD);
    MPI_Unpack(out, pos, &rpos, b, 4, MPI_INT, MPI_COMM_WORLD);
    for (int k = 0; k < 4; k++)
        EXPECT(b[k] == val(me, idx[k]), "local unpack: int %d is %d", k, b[k]);
    free(out), free(in);
    MPI_Type_free(&v);
    report("Pack/Unpack: count + vectors over MPI_PACKED, Pack_size bound, local repack");
}

/* Type_dup keeps the shape and outlives the original; zero-count types and zero-length
 * blocks move no data. */
static void check_dup_zero(void)
{
    MPI_Datatype v, dv, z, ix;
    int a[8], b[8], bl[3] = {0, 2, 0}, dis[3] = {7, 1, 3};
    MPI_Type_vector(2, 1, 4, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Type_dup(v, &dv);
    MPI_Type_free(&v);
    shape(dv, "dup of vector(2,1,4)", 8, 0, 20);
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_indexed(3, bl, dis, MPI_INT, &ix);
    MPI_Type_commit(&z);
    MPI_Type_commit(&ix);
    shape(z, "contiguous(0)", 0, 0, 0);
    for (int i = 0; i < 8; i++)
        a[i] = val(me, i), b[i] = 0;
    MPI_Status st = shift(a, 1, dv, b, 8, MPI_INT);
    EXPECT(b[0] == val(left(), 0) && b[1] == val(left(), 4) && b[2] == 0, "dup: %d %d %d", b[0],
           b[1], b[2]);
    memset(b, 0, sizeof b);
    st = shift(a, 3, z, b, 8, MPI_INT);
    counts(&st, MPI_INT, "zero-size type", 0, 0);
    st = shift(a, 1, ix, b, 8, MPI_INT);
    counts(&st, MPI_INT, "zero-length blocks", 2, 2);
    EXPECT(b[0] == val(left(), 1) && b[1] == val(left(), 2) && b[2] == 0,
           "zero-length blocks: %d %d %d", b[0], b[1], b[2]);
    MPI_Type_free(&dv), MPI_Type_free(&z), MPI_Type_free(&ix);
    report("Type_dup outlives the original; zero-size types and zero-length blocks");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "dtypes"))
        return 1;
    check_predefined();
    check_contiguous();
    check_vector();
    check_hvector_negative();
    check_indexed();
    check_struct();
    check_resized();
    check_nested();
    check_elements();
    check_bottom();
    check_pack();
    check_dup_zero();
    return finish("dtypes");
}
