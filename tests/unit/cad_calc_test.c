/*
 * cad_calc_test.c: the CALC kernels (mpi/cad/cad_calc.c) on every type and op against a
 * reference written differently (values widened to 64 bits or long double, then narrowed),
 * on unaligned buffers; the table of which op is defined on which type, written out here
 * from MPI's table; MINLOC/MAXLOC ties; and the cases that must not touch the data.
 */
#include "ut.h"
#include "cad_sim.h"
#include <string.h>

/* MPI's value-index pairs as the application declares them. */
struct p_float_int {
    float v;
    int i;
};
struct p_double_int {
    double v;
    int i;
};
struct p_long_int {
    long v;
    int i;
};
struct p_2int {
    int v, i;
};
struct p_short_int {
    short v;
    int i;
};
struct p_long_double_int {
    long double v;
    int i;
};

enum kind { INT_S, INT_U, FLT, CPLX, BOOL, BYTE, PAIR };

static const struct {
    int kind;
    size_t size;  /* element */
    size_t width; /* INT_*: bytes of the integer; FLT/CPLX: bytes of one float; PAIR: v's */
    size_t ioff;  /* PAIR: offset of the index */
} T[CAD_T_COUNT] = {
    [CAD_T_INT8] = {INT_S, 1, 1, 0},
    [CAD_T_INT16] = {INT_S, 2, 2, 0},
    [CAD_T_INT32] = {INT_S, 4, 4, 0},
    [CAD_T_INT64] = {INT_S, 8, 8, 0},
    [CAD_T_UINT8] = {INT_U, 1, 1, 0},
    [CAD_T_UINT16] = {INT_U, 2, 2, 0},
    [CAD_T_UINT32] = {INT_U, 4, 4, 0},
    [CAD_T_UINT64] = {INT_U, 8, 8, 0},
    [CAD_T_FLOAT] = {FLT, sizeof(float), sizeof(float), 0},
    [CAD_T_DOUBLE] = {FLT, sizeof(double), sizeof(double), 0},
    [CAD_T_LONG_DOUBLE] = {FLT, sizeof(long double), sizeof(long double), 0},
    [CAD_T_C_FLOAT_COMPLEX] = {CPLX, sizeof(float _Complex), sizeof(float), 0},
    [CAD_T_C_DOUBLE_COMPLEX] = {CPLX, sizeof(double _Complex), sizeof(double), 0},
    [CAD_T_C_LONG_DOUBLE_COMPLEX] = {CPLX, sizeof(long double _Complex), sizeof(long double), 0},
    [CAD_T_BOOL] = {BOOL, sizeof(_Bool), 1, 0},
    [CAD_T_BYTE] = {BYTE, 1, 1, 0},
    [CAD_T_FLOAT_INT] = {PAIR, sizeof(struct p_float_int), sizeof(float),
                         offsetof(struct p_float_int, i)},
    [CAD_T_DOUBLE_INT] = {PAIR, sizeof(struct p_double_int), sizeof(double),
                          offsetof(struct p_double_int, i)},
    [CAD_T_LONG_INT] = {PAIR, sizeof(struct p_long_int), sizeof(long),
                        offsetof(struct p_long_int, i)},
    [CAD_T_2INT] = {PAIR, sizeof(struct p_2int), sizeof(int), offsetof(struct p_2int, i)},
    [CAD_T_SHORT_INT] = {PAIR, sizeof(struct p_short_int), sizeof(short),
                         offsetof(struct p_short_int, i)},
    [CAD_T_LONG_DOUBLE_INT] = {PAIR, sizeof(struct p_long_double_int), sizeof(long double),
                               offsetof(struct p_long_double_int, i)},
};

/* MPI 4.0 table 6.2 (C bindings), as booleans: [kind][op]. */
static int mpi_allows(int kind, int op)
{
    switch (op) {
    case CAD_OP_MIN:
    case CAD_OP_MAX:
        return kind == INT_S || kind == INT_U || kind == FLT;
    case CAD_OP_SUM:
    case CAD_OP_PROD:
        return kind == INT_S || kind == INT_U || kind == FLT || kind == CPLX;
    case CAD_OP_LAND:
    case CAD_OP_LOR:
    case CAD_OP_LXOR:
        return kind == INT_S || kind == INT_U || kind == BOOL;
    case CAD_OP_BAND:
    case CAD_OP_BOR:
    case CAD_OP_BXOR:
        return kind == INT_S || kind == INT_U || kind == BYTE;
    case CAD_OP_MINLOC:
    case CAD_OP_MAXLOC:
        return kind == PAIR;
    }
    return 0;
}

UT_TEST(cad_calc_type_table)
{
    for (int t = 1; t < CAD_T_DERIVED; t++) {
        UT_EQ(cad_type_size(t), T[t].size);
        UT_EQ(cad_op_defined(CAD_OP_USER, t), 1);
        for (int op = 1; op < CAD_OP_USER; op++)
            if (cad_op_defined(op, t) != mpi_allows(T[t].kind, op))
                ut_fail(__FILE__, __LINE__, "op %d on type %d", op, t);
    }
    UT_EQ(cad_type_size(CAD_T_DERIVED), 0);
    UT_EQ(cad_op_defined(CAD_OP_USER, CAD_T_DERIVED), 1);
    UT_EQ(cad_op_defined(CAD_OP_SUM, CAD_T_DERIVED), 0);
    UT_EQ(cad_op_defined(0, CAD_T_INT32), 0);
    UT_EQ(cad_op_defined(CAD_OP_COUNT, CAD_T_INT32), 0);
    UT_EQ(cad_op_defined(CAD_OP_SUM, 0), 0);
    UT_EQ(cad_op_defined(CAD_OP_SUM, CAD_T_COUNT), 0);
    UT_EQ(cad_type_size(0), 0);
    UT_EQ(cad_type_size(-5), 0);
}

/* --- reference ----------------------------------------------------------------------- */

static uint64_t ld_int(const char *p, size_t w, int is_signed)
{
    uint64_t u = 0;
    memcpy(&u, p, w); /* little-endian: the low bytes */
    if (is_signed && w < 8 && (u >> (8 * w - 1)) & 1)
        u |= ~(uint64_t)0 << (8 * w); /* sign-extend */
    return u;
}

static long double ld_flt(const char *p, size_t w)
{
    if (w == sizeof(float)) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    if (w == sizeof(double)) {
        double d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    long double l;
    memcpy(&l, p, sizeof l);
    return l;
}

static void st_flt(char *p, size_t w, long double v)
{
    if (w == sizeof(float)) {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
    } else if (w == sizeof(double)) {
        double d = (double)v;
        memcpy(p, &d, sizeof d);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static int less(int t, const char *a, const char *b)
{
    if (T[t].kind == FLT || (T[t].kind == PAIR && (t == CAD_T_FLOAT_INT || t == CAD_T_DOUBLE_INT ||
                                                   t == CAD_T_LONG_DOUBLE_INT)))
        return ld_flt(a, T[t].width) < ld_flt(b, T[t].width);
    if (T[t].kind == INT_U)
        return ld_int(a, T[t].width, 0) < ld_int(b, T[t].width, 0);
    return (int64_t)ld_int(a, T[t].width, 1) < (int64_t)ld_int(b, T[t].width, 1);
}

/* out = a op b for one element. */
static void ref(int op, int t, const char *a, const char *b, char *out)
{
    size_t w = T[t].width;
    memcpy(out, b, T[t].size);
    switch (T[t].kind) {
    case INT_S:
    case INT_U:
    case BOOL:
    case BYTE: {
        uint64_t x = ld_int(a, w, 0), y = ld_int(b, w, 0), r = 0;
        switch (op) {
        case CAD_OP_SUM:
            r = x + y;
            break;
        case CAD_OP_PROD:
            r = x * y;
            break; /* the low bits do not depend on the sign */
        case CAD_OP_MIN:
            r = less(t, a, b) ? x : y;
            break;
        case CAD_OP_MAX:
            r = less(t, b, a) ? x : y;
            break;
        case CAD_OP_LAND:
            r = x && y;
            break;
        case CAD_OP_LOR:
            r = x || y;
            break;
        case CAD_OP_LXOR:
            r = (x != 0) != (y != 0);
            break;
        case CAD_OP_BAND:
            r = x & y;
            break;
        case CAD_OP_BOR:
            r = x | y;
            break;
        case CAD_OP_BXOR:
            r = x ^ y;
            break;
        }
        memcpy(out, &r, w);
        break;
    }
    case FLT: {
        long double x = ld_flt(a, w), y = ld_flt(b, w), r = 0;
        switch (op) {
        case CAD_OP_SUM:
            r = x + y;
            break;
        case CAD_OP_PROD:
            r = x * y;
            break;
        case CAD_OP_MIN:
            r = x < y ? x : y;
            break;
        case CAD_OP_MAX:
            r = x > y ? x : y;
            break;
        }
        st_flt(out, w, r);
        break;
    }
    case CPLX: {
        long double ar = ld_flt(a, w), ai = ld_flt(a + w, w);
        long double br = ld_flt(b, w), bi = ld_flt(b + w, w);
        st_flt(out, w, op == CAD_OP_SUM ? ar + br : ar * br - ai * bi);
        st_flt(out + w, w, op == CAD_OP_SUM ? ai + bi : ar * bi + ai * br);
        break;
    }
    case PAIR: {
        int ai, bi;
        memcpy(&ai, a + T[t].ioff, sizeof ai);
        memcpy(&bi, b + T[t].ioff, sizeof bi);
        int a_wins = op == CAD_OP_MINLOC ? less(t, a, b) : less(t, b, a);
        int tie = !less(t, a, b) && !less(t, b, a);
        if (a_wins)
            memcpy(out, a, T[t].size);
        else if (tie && ai < bi)
            memcpy(out + T[t].ioff, &ai, sizeof ai);
        break;
    }
    }
}

/* Equal as values: long double and pair padding bytes are not part of the value. */
static int same(int t, const char *x, const char *y)
{
    size_t w = T[t].width;
    switch (T[t].kind) {
    case FLT:
        return ld_flt(x, w) == ld_flt(y, w);
    case CPLX:
        return ld_flt(x, w) == ld_flt(y, w) && ld_flt(x + w, w) == ld_flt(y + w, w);
    case PAIR:
        return !less(t, x, y) && !less(t, y, x) && !memcmp(x + T[t].ioff, y + T[t].ioff, 4);
    default:
        return !memcmp(x, y, w);
    }
}

/* Random values: integers over their whole range; floats small integers (so that every
 * result is exact and the kernel and the reference agree bit for bit); booleans any byte
 * (non-canonical trues included); pair values in {0, 1, 2} so that ties are frequent. */
static void random_elem(int t, char *p, uint64_t *rng)
{
    size_t w = T[t].width;
    uint64_t r = sim_rand(rng);
    memset(p, 0, T[t].size);
    switch (T[t].kind) {
    case FLT:
    case CPLX:
        st_flt(p, w, (long double)((int)(r % 2001) - 1000));
        if (T[t].kind == CPLX)
            st_flt(p + w, w, (long double)((int)((r >> 20) % 2001) - 1000));
        break;
    case PAIR: {
        int idx = (int)((r >> 8) % 6);
        if (t == CAD_T_FLOAT_INT || t == CAD_T_DOUBLE_INT || t == CAD_T_LONG_DOUBLE_INT) {
            st_flt(p, w, (long double)(r % 3));
        } else {
            uint64_t v = r % 3;
            memcpy(p, &v, w);
        }
        memcpy(p + T[t].ioff, &idx, sizeof idx);
        break;
    }
    case BOOL:
        p[0] = (char)(r % 4 == 0 ? 0 : r % 4 == 1 ? 1 : (r >> 8));
        break;
    default:
        memcpy(p, &r, w);
    }
}

#define N 33

UT_TEST(cad_calc_every_type_and_op)
{
    static char in_raw[N * 64 + 16], io_raw[N * 64 + 16], want[N * 64], orig[N * 64];
    static struct cad_node node;
    uint64_t rng = 4242;
    int ran = 0;
    for (int t = 1; t < CAD_T_DERIVED; t++)
        for (int op = 1; op < CAD_OP_USER; op++)
            for (int rep = 0; rep < 4; rep++) {
                size_t sz = T[t].size;
                char *in = in_raw + 1 + rep, *io = io_raw + 3 + rep; /* unaligned */
                for (int i = 0; i < N; i++) {
                    random_elem(t, in + i * sz, &rng);
                    random_elem(t, io + i * sz, &rng);
                }
                memcpy(orig, io, N * sz);
                memset(&node, 0, sizeof node);
                node.type = CAD_CALC;
                node.u.c = (struct cad_calcop){.op = (uint8_t)op,
                                               .dtype = (uint8_t)t,
                                               .count = N,
                                               .in = (uintptr_t)in,
                                               .inout = (uintptr_t)io,
                                               .bytes = N * sz};
                int rc = cad_calc_run(&node);
                if (!mpi_allows(T[t].kind, op)) {
                    UT_EQ(rc, -CAD_EOPTYPE);
                    UT_ASSERT(!memcmp(io, orig, N * sz));
                    continue;
                }
                UT_EQ(rc, 0);
                ran++;
                for (int i = 0; i < N; i++) {
                    ref(op, t, in + i * sz, orig + i * sz, want + i * sz);
                    if (!same(t, io + i * sz, want + i * sz))
                        ut_fail(__FILE__, __LINE__, "type %d op %d element %d", t, op, i);
                }
            }
    UT_EQ(ran, 4 * (8 * 10 + 3 * 4 + 3 * 2 + 3 + 3 + 6 * 2));
}

UT_TEST(cad_calc_minloc_maxloc_ties)
{
    /* MPI: on equal values the smaller index wins, whichever operand it comes from. */
    struct p_2int in[4] = {{5, 3}, {5, 1}, {4, 9}, {6, 0}};
    struct p_2int io[4] = {{5, 2}, {5, 2}, {4, 9}, {5, 7}};
    struct cad_node n = {.type = CAD_CALC};
    n.u.c = (struct cad_calcop){.op = CAD_OP_MINLOC,
                                .dtype = CAD_T_2INT,
                                .count = 4,
                                .in = (uintptr_t)in,
                                .inout = (uintptr_t)io,
                                .bytes = sizeof io};
    UT_EQ(cad_calc_run(&n), 0);
    const struct p_2int want_min[4] = {{5, 2}, {5, 1}, {4, 9}, {5, 7}};
    UT_ASSERT(!memcmp(io, want_min, sizeof io));
    struct p_double_int din[2] = {{-1.5, 4}, {2.0, 8}}, dio[2] = {{-1.5, 4}, {2.0, 3}};
    n.u.c.op = CAD_OP_MAXLOC;
    n.u.c.dtype = CAD_T_DOUBLE_INT;
    n.u.c.count = 2;
    n.u.c.in = (uintptr_t)din;
    n.u.c.inout = (uintptr_t)dio;
    n.u.c.bytes = sizeof dio;
    UT_EQ(cad_calc_run(&n), 0);
    UT_ASSERT(dio[0].v == -1.5 && dio[0].i == 4 && dio[1].v == 2.0 && dio[1].i == 3);
    struct p_short_int sin[1] = {{-7, 2}}, sio[1] = {{-7, 5}};
    n.u.c.op = CAD_OP_MINLOC;
    n.u.c.dtype = CAD_T_SHORT_INT;
    n.u.c.count = 1;
    n.u.c.in = (uintptr_t)sin;
    n.u.c.inout = (uintptr_t)sio;
    n.u.c.bytes = sizeof sio;
    UT_EQ(cad_calc_run(&n), 0);
    UT_ASSERT(sio[0].v == -7 && sio[0].i == 2);
}

UT_TEST(cad_calc_wraps_and_aliases)
{
    int8_t a[3] = {127, -128, 100}, b[3] = {1, -1, 100};
    struct cad_node n = {.type = CAD_CALC};
    n.u.c = (struct cad_calcop){.op = CAD_OP_SUM,
                                .dtype = CAD_T_INT8,
                                .count = 3,
                                .in = (uintptr_t)a,
                                .inout = (uintptr_t)b,
                                .bytes = 3};
    UT_EQ(cad_calc_run(&n), 0); /* MPI reductions wrap; C signed overflow must not happen */
    UT_EQ(b[0], -128);
    UT_EQ(b[1], 127);
    UT_EQ(b[2], -56);
    uint16_t u[2] = {65535, 300};
    n.u.c = (struct cad_calcop){.op = CAD_OP_PROD,
                                .dtype = CAD_T_UINT16,
                                .count = 2,
                                .in = (uintptr_t)u,
                                .inout = (uintptr_t)u, /* in == inout: x = x * x */
                                .bytes = 4};
    UT_EQ(cad_calc_run(&n), 0);
    UT_EQ(u[0], 1);
    UT_EQ(u[1], (uint16_t)(300 * 300));
    int64_t big[1] = {INT64_MIN}, m1[1] = {-1};
    n.u.c = (struct cad_calcop){.op = CAD_OP_PROD,
                                .dtype = CAD_T_INT64,
                                .count = 1,
                                .in = (uintptr_t)big,
                                .inout = (uintptr_t)m1,
                                .bytes = 8};
    UT_EQ(cad_calc_run(&n), 0);
    UT_ASSERT(m1[0] == INT64_MIN);
}

UT_TEST(cad_calc_refuses_without_touching)
{
    int32_t a[2] = {1, 2}, b[2] = {3, 4};
    struct cad_node n = {.type = CAD_CALC};
    n.u.c = (struct cad_calcop){.op = CAD_OP_USER,
                                .dtype = CAD_T_INT32,
                                .count = 2,
                                .in = (uintptr_t)a,
                                .inout = (uintptr_t)b,
                                .bytes = 8};
    UT_EQ(cad_calc_run(&n), CAD_CALC_DEFERRED);
    n.u.c.op = CAD_OP_SUM;
    n.u.c.bytes = 4; /* changed after validation */
    UT_EQ(cad_calc_run(&n), -CAD_ECOUNT);
    n.u.c.bytes = 8;
    n.u.c.count = UINT64_MAX;
    UT_EQ(cad_calc_run(&n), -CAD_ECOUNT);
    n.u.c.count = 2;
    n.u.c.dtype = CAD_T_DERIVED;
    UT_EQ(cad_calc_run(&n), -CAD_EOPTYPE);
    n.u.c.dtype = 200;
    UT_EQ(cad_calc_run(&n), -CAD_EOPTYPE);
    UT_ASSERT(b[0] == 3 && b[1] == 4);
    n.type = CAD_SEND;
    UT_EQ(cad_calc_run(&n), -CAD_EINVAL);
    UT_EQ(cad_calc_run(0), -CAD_EINVAL);
    n.type = CAD_CALC;
    n.u.c.dtype = CAD_T_INT32;
    n.u.c.count = 0;
    n.u.c.bytes = 0;
    n.u.c.in = n.u.c.inout = 0; /* nothing to do, nothing dereferenced */
    UT_EQ(cad_calc_run(&n), 0);
}
