/*
 * mpi_op_test.c: the reductions (mpi/lib/op.c, op_kernels.c): every predefined operation
 * on several types (wrap-around, complex products, C_BOOL values other than 1), MINLOC
 * and MAXLOC with ties, derived types laid out with gaps, packed data, user operations,
 * and what op_check refuses.
 */
#include "ut.h"
#include "mpi_test_util.h"
#include "dtype_impl.h"
#include <string.h>

#define OK(x) UT_EQ((x), MPI_SUCCESS)

/* in = {7, -3, 12, 0}, inout = {5, 4, 12, 6}: inout op= in, for each operation. */
UT_TEST(mpi_op_int)
{
    static const struct {
        MPI_Op op;
        int want[4];
    } cases[] = {
        {MPI_MAX, {7, 4, 12, 6}},          {MPI_MIN, {5, -3, 12, 0}},
        {MPI_SUM, {12, 1, 24, 6}},         {MPI_PROD, {35, -12, 144, 0}},
        {MPI_LAND, {1, 1, 1, 0}},          {MPI_LOR, {1, 1, 1, 1}},
        {MPI_LXOR, {0, 0, 0, 1}},          {MPI_BAND, {7 & 5, -3 & 4, 12, 0}},
        {MPI_BOR, {7 | 5, -3 | 4, 12, 6}}, {MPI_BXOR, {7 ^ 5, -3 ^ 4, 0, 6}},
    };
    mpi_t_setup(0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int in[4] = {7, -3, 12, 0}, io[4] = {5, 4, 12, 6};
        long long lin[4] = {7, -3, 12, 0}, lio[4] = {5, 4, 12, 6};
        int16_t sin[4] = {7, -3, 12, 0}, sio[4] = {5, 4, 12, 6};
        OK(MPI_Reduce_local(in, io, 4, MPI_INT, cases[c].op));
        OK(MPI_Reduce_local(lin, lio, 4, MPI_LONG_LONG, cases[c].op));
        OK(MPI_Reduce_local(sin, sio, 4, MPI_INT16_T, cases[c].op));
        for (int i = 0; i < 4; i++) {
            UT_EQ(io[i], cases[c].want[i]);
            UT_EQ(lio[i], cases[c].want[i]);
            UT_EQ(sio[i], cases[c].want[i]);
        }
    }
}

UT_TEST(mpi_op_small_and_unsigned)
{
    mpi_t_setup(0);
    int8_t a[2] = {100, -128}, b[2] = {100, -1};
    OK(MPI_Reduce_local(a, b, 2, MPI_INT8_T, MPI_SUM)); /* wraps, as two's complement */
    UT_EQ(b[0], -56);
    UT_EQ(b[1], 127);
    uint16_t c[1] = {300}, d[1] = {300};
    OK(MPI_Reduce_local(c, d, 1, MPI_UINT16_T, MPI_PROD));
    UT_EQ(d[0], 90000 % 65536);
    unsigned e[2] = {0xffffffffu, 3}, f[2] = {1, 5};
    OK(MPI_Reduce_local(e, f, 2, MPI_UNSIGNED, MPI_SUM));
    UT_EQ(f[0], 0);
    OK(MPI_Reduce_local(e, f, 2, MPI_UNSIGNED, MPI_MAX));
    UT_EQ(f[0], 0xffffffffu);
    unsigned char g[2] = {200, 0x0f}, h[2] = {100, 0xf0};
    OK(MPI_Reduce_local(g, h, 2, MPI_UNSIGNED_CHAR, MPI_MIN));
    UT_ASSERT(h[0] == 100 && h[1] == 0x0f);
    unsigned char x[2] = {0x0f, 0x33}, y[2] = {0xff, 0x0f};
    OK(MPI_Reduce_local(x, y, 2, MPI_BYTE, MPI_BXOR));
    UT_ASSERT(y[0] == 0xf0 && y[1] == 0x3c);
    char p[2] = {'a', 'z'}, q[2] = {'m', 'b'};
    OK(MPI_Reduce_local(p, q, 2, MPI_CHAR, MPI_MAX)); /* accepted, as in Open MPI */
    UT_ASSERT(q[0] == 'm' && q[1] == 'z');
    MPI_Aint ai[1] = {-5}, ao[1] = {7};
    OK(MPI_Reduce_local(ai, ao, 1, MPI_AINT, MPI_SUM));
    UT_EQ(ao[0], 2);
    uint64_t u[1] = {1ull << 63}, v[1] = {1ull << 63};
    OK(MPI_Reduce_local(u, v, 1, MPI_UINT64_T, MPI_SUM));
    UT_EQ(v[0], 0);
    /* C_BOOL: any non-zero byte is true, results are 0 or 1 */
    unsigned char bi[4] = {2, 0, 2, 0}, bo[4] = {1, 1, 0, 0};
    OK(MPI_Reduce_local(bi, bo, 4, MPI_C_BOOL, MPI_LAND));
    UT_ASSERT(bo[0] == 1 && bo[1] == 0 && bo[2] == 0 && bo[3] == 0);
    unsigned char ci[4] = {2, 0, 2, 0}, co[4] = {1, 1, 0, 0};
    OK(MPI_Reduce_local(ci, co, 4, MPI_C_BOOL, MPI_LXOR));
    UT_ASSERT(co[0] == 0 && co[1] == 1 && co[2] == 1 && co[3] == 0);
}

UT_TEST(mpi_op_floating_and_complex)
{
    mpi_t_setup(0);
    double a[3] = {1.5, -2, 4}, b[3] = {2.5, -3, 4};
    OK(MPI_Reduce_local(a, b, 3, MPI_DOUBLE, MPI_SUM));
    UT_ASSERT(b[0] == 4 && b[1] == -5 && b[2] == 8);
    OK(MPI_Reduce_local(a, b, 3, MPI_DOUBLE, MPI_MIN));
    UT_ASSERT(b[0] == 1.5 && b[1] == -5 && b[2] == 4);
    float f[2] = {3, 0.5f}, g[2] = {2, 8};
    OK(MPI_Reduce_local(f, g, 2, MPI_FLOAT, MPI_PROD));
    UT_ASSERT(g[0] == 6 && g[1] == 4);
    OK(MPI_Reduce_local(f, g, 2, MPI_FLOAT, MPI_MAX));
    UT_ASSERT(g[0] == 6 && g[1] == 4);
    long double l[1] = {1e300L}, m[1] = {1e300L};
    OK(MPI_Reduce_local(l, m, 1, MPI_LONG_DOUBLE, MPI_PROD)); /* beyond double's range */
    UT_ASSERT(m[0] > 1e599L && m[0] < 1.1e600L);
    double c[2] = {1, 2}, d[2] = {3, 4}; /* (1+2i)(3+4i) = -5+10i */
    OK(MPI_Reduce_local(c, d, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD));
    UT_ASSERT(d[0] == -5 && d[1] == 10);
    OK(MPI_Reduce_local(c, d, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM));
    UT_ASSERT(d[0] == -4 && d[1] == 12);
    float e[4] = {0, 1, 2, 0}, h[4] = {0, 1, 1, 1}; /* i*i = -1, 2*(1+i) = 2+2i */
    OK(MPI_Reduce_local(e, h, 2, MPI_C_FLOAT_COMPLEX, MPI_PROD));
    UT_ASSERT(h[0] == -1 && h[1] == 0 && h[2] == 2 && h[3] == 2);
    long double x[2] = {2, 0}, y[2] = {0, 3};
    OK(MPI_Reduce_local(x, y, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD));
    UT_ASSERT(y[0] == 0 && y[1] == 6);
}

UT_TEST(mpi_op_loc_pairs)
{
    mpi_t_setup(0);
    /* value ties: the lower index wins whichever operand holds it */
    struct dt_double_int a[4] = {{1, 5}, {2, 1}, {3, 3}, {3, 9}};
    struct dt_double_int b[4] = {{2, 0}, {2, 4}, {3, 7}, {3, 2}};
    struct dt_double_int c[4];
    memcpy(c, b, sizeof b);
    OK(MPI_Reduce_local(a, c, 4, MPI_DOUBLE_INT, MPI_MINLOC));
    UT_ASSERT(c[0].v == 1 && c[0].i == 5);
    UT_ASSERT(c[1].v == 2 && c[1].i == 1);
    UT_ASSERT(c[2].v == 3 && c[2].i == 3);
    UT_ASSERT(c[3].v == 3 && c[3].i == 2);
    memcpy(c, b, sizeof b);
    OK(MPI_Reduce_local(a, c, 4, MPI_DOUBLE_INT, MPI_MAXLOC));
    UT_ASSERT(c[0].v == 2 && c[0].i == 0);
    UT_ASSERT(c[1].v == 2 && c[1].i == 1);
    UT_ASSERT(c[2].v == 3 && c[2].i == 3);
    UT_ASSERT(c[3].v == 3 && c[3].i == 2);

    struct dt_2int p[2] = {{4, 1}, {4, 0}}, q[2] = {{4, 0}, {5, 9}};
    OK(MPI_Reduce_local(p, q, 2, MPI_2INT, MPI_MAXLOC));
    UT_ASSERT(q[0].v == 4 && q[0].i == 0 && q[1].v == 5 && q[1].i == 9);
    struct dt_short_int s[1] = {{-2, 3}}, t[1] = {{-2, 4}};
    OK(MPI_Reduce_local(s, t, 1, MPI_SHORT_INT, MPI_MINLOC));
    UT_ASSERT(t[0].v == -2 && t[0].i == 3);
    struct dt_ldouble_int u[1] = {{7, 8}}, v[1] = {{6, 1}};
    OK(MPI_Reduce_local(u, v, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC));
    UT_ASSERT(v[0].v == 7 && v[0].i == 8);
    struct dt_float_int w[1] = {{0.5f, 2}}, x[1] = {{0.25f, 6}};
    OK(MPI_Reduce_local(w, x, 1, MPI_FLOAT_INT, MPI_MINLOC));
    UT_ASSERT(x[0].v == 0.25f && x[0].i == 6);
    struct dt_long_int y[1] = {{-1, 0}}, z[1] = {{-1, 1}};
    OK(MPI_Reduce_local(y, z, 1, MPI_LONG_INT, MPI_MAXLOC));
    UT_ASSERT(z[0].v == -1 && z[0].i == 0);
}

UT_TEST(mpi_op_derived_layouts)
{
    MPI_Datatype v, c, r;
    mpi_t_setup(0);
    /* a vector with gaps: the gaps stay as they are */
    int in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, io[8] = {10, 20, 30, 40, 50, 60, 70, 80};
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    OK(MPI_Reduce_local(in, io, 2, v, MPI_SUM)); /* extent 16: elements at ints 0 and 4 */
    static const int want[8] = {11, 20, 30, 44, 55, 60, 70, 88};
    for (int i = 0; i < 8; i++)
        UT_EQ(io[i], want[i]);
    /* MPI_REPLACE copies the data, not the gaps; MPI_NO_OP nothing */
    OK(op_apply(MPI_REPLACE, in, io, 2, v));
    static const int want2[8] = {1, 20, 30, 4, 5, 60, 70, 8};
    for (int i = 0; i < 8; i++)
        UT_EQ(io[i], want2[i]);
    OK(op_apply(MPI_NO_OP, want, io, 2, v));
    UT_EQ(io[1], 20);

    /* pairs inside a derived type keep their struct layout */
    OK(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &c));
    OK(MPI_Type_commit(&c));
    struct dt_double_int a[2] = {{1, 1}, {9, 2}}, b[2] = {{1, 0}, {3, 3}};
    OK(MPI_Reduce_local(a, b, 1, c, MPI_MAXLOC));
    UT_ASSERT(b[0].v == 1 && b[0].i == 0 && b[1].v == 9 && b[1].i == 2);

    /* a resized int: one int every 8 bytes */
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &r));
    OK(MPI_Type_commit(&r));
    int x[6] = {1, -1, 2, -1, 3, -1}, y[6] = {5, 0, 1, 0, 9, 0};
    OK(MPI_Reduce_local(x, y, 3, r, MPI_MAX));
    UT_ASSERT(y[0] == 5 && y[1] == 0 && y[2] == 2 && y[4] == 9 && y[5] == 0);

    /* packed data: the vector's 2 ints per element, back to back */
    int pi[4] = {1, 2, 3, 4}, po[4] = {10, 20, 30, 40};
    OK(op_apply_packed(MPI_SUM, pi, po, 2, v));
    UT_ASSERT(po[0] == 11 && po[1] == 22 && po[2] == 33 && po[3] == 44);
    unsigned char pa[24], pb[24]; /* 2 DOUBLE_INT packed: 12 bytes each, no padding */
    double d1 = 4, d2 = 4;
    int i1 = 7, i2 = 3;
    memcpy(pa, &d1, 8), memcpy(pa + 8, &i1, 4), memcpy(pa + 12, &d1, 8), memcpy(pa + 20, &i1, 4);
    memcpy(pb, &d2, 8), memcpy(pb + 8, &i2, 4), memcpy(pb + 12, &d2, 8), memcpy(pb + 20, &i2, 4);
    pa[12 + 7] ^= 0x80; /* the second pair's value becomes -4 */
    OK(op_apply_packed(MPI_MINLOC, pa, pb, 2, MPI_DOUBLE_INT));
    memcpy(&d2, pb, 8), memcpy(&i2, pb + 8, 4);
    UT_ASSERT(d2 == 4 && i2 == 3);
    memcpy(&d2, pb + 12, 8), memcpy(&i2, pb + 20, 4);
    UT_ASSERT(d2 == -4 && i2 == 7);
    OK(op_apply_packed(MPI_REPLACE, pi, po, 2, v));
    UT_ASSERT(po[0] == 1 && po[3] == 4);
    OK(MPI_Type_free(&r));
    OK(MPI_Type_free(&c));
    OK(MPI_Type_free(&v));
}

static int user_calls, user_len;
static MPI_Datatype user_type;

/* Not commutative: inout = in * 10 + inout, over ints laid out as the datatype says:
 * MPI_INT, or the test's vector (ints 0 and 2 of each element). */
static void shift_add(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout, step = 1;
    MPI_Aint lb, ext;
    user_calls++;
    user_len = *len;
    user_type = *dt;
    if (*dt != MPI_INT) {
        MPI_Type_get_extent(*dt, &lb, &ext);
        step = (int)(ext / (MPI_Aint)sizeof(int));
    }
    for (int i = 0; i < *len; i++) {
        b[i * step] = a[i * step] * 10 + b[i * step];
        if (*dt != MPI_INT)
            b[i * step + 2] = a[i * step + 2] * 10 + b[i * step + 2];
    }
}

UT_TEST(mpi_op_user)
{
    MPI_Op op, kept;
    MPI_Datatype v;
    int commute = -1;
    mpi_t_setup(0);
    OK(MPI_Op_create(shift_add, 0, &op));
    OK(MPI_Op_commutative(op, &commute));
    UT_EQ(commute, 0);
    UT_EQ(op_commutative(op), 0);
    OK(MPI_Op_commutative(MPI_SUM, &commute));
    UT_EQ(commute, 1);
    int a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
    OK(MPI_Reduce_local(a, b, 3, MPI_INT, op));
    UT_ASSERT(b[0] == 14 && b[1] == 25 && b[2] == 36);
    UT_ASSERT(user_calls == 1 && user_len == 3 && user_type == MPI_INT);

    /* any committed type, laid out as it says; on packed data through temporaries */
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    UT_EQ(op_check(op, v), MPI_SUCCESS);
    int x[6] = {1, -1, 2, 3, -1, 4}, y[6] = {0}; /* elements: ints 0, 2 and 3, 5 */
    OK(op_apply(op, x, y, 2, v));
    UT_ASSERT(y[0] == 10 && y[2] == 20 && y[3] == 30 && y[5] == 40 && !y[1] && !y[4]);
    int px[4] = {1, 2, 3, 4}, py[4] = {5, 6, 7, 8};
    OK(op_apply_packed(op, px, py, 2, v));
    UT_ASSERT(py[0] == 15 && py[1] == 26 && py[2] == 37 && py[3] == 48);
    UT_ASSERT(user_len == 2 && user_type == v);

    /* a pending reduction keeps the op alive past MPI_Op_free */
    kept = op;
    op_retain(kept);
    OK(MPI_Op_free(&op));
    UT_ASSERT(op == MPI_OP_NULL);
    OK(op_apply(kept, a, b, 1, MPI_INT));
    UT_EQ(b[0], 24);
    op_release(kept);

    MPI_Op pre = MPI_SUM;
    UT_EQ(MPI_Op_free(&pre), MPI_ERR_OP);
    UT_EQ(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
    UT_EQ(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);
    OK(MPI_Type_free(&v));
}

UT_TEST(mpi_op_check_rejects)
{
    MPI_Datatype s, u, v;
    int x = 1, y = 2;
    mpi_t_setup(0);
    static const struct {
        MPI_Op op;
        MPI_Datatype t;
    } bad[] = {
        {MPI_LAND, MPI_FLOAT},           {MPI_BAND, MPI_DOUBLE},
        {MPI_SUM, MPI_C_BOOL},           {MPI_MAX, MPI_C_BOOL},
        {MPI_MINLOC, MPI_INT},           {MPI_MAX, MPI_DOUBLE_INT},
        {MPI_SUM, MPI_PACKED},           {MPI_SUM, MPI_WCHAR},
        {MPI_MAX, MPI_C_DOUBLE_COMPLEX}, {MPI_BOR, MPI_LONG_DOUBLE},
        {MPI_LXOR, MPI_C_FLOAT_COMPLEX}, {MPI_MAXLOC, MPI_DOUBLE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        UT_EQ(op_check(bad[i].op, bad[i].t), MPI_ERR_TYPE);
    UT_EQ(op_check(MPI_SUM, MPI_INT), MPI_SUCCESS);
    UT_EQ(op_check(MPI_BXOR, MPI_BYTE), MPI_SUCCESS);
    UT_EQ(op_check(MPI_LOR, MPI_C_BOOL), MPI_SUCCESS);
    UT_EQ(op_check(MPI_PROD, MPI_C_LONG_DOUBLE_COMPLEX), MPI_SUCCESS);
    UT_EQ(op_check(MPI_MINLOC, MPI_SHORT_INT), MPI_SUCCESS);
    UT_EQ(op_check(MPI_OP_NULL, MPI_INT), MPI_ERR_OP);
    UT_EQ(op_check(MPI_REPLACE, MPI_INT), MPI_ERR_OP); /* one-sided only */
    UT_EQ(op_check(MPI_NO_OP, MPI_INT), MPI_ERR_OP);
    UT_EQ(op_check(MPI_SUM, MPI_DATATYPE_NULL), MPI_ERR_TYPE);

    /* mixed struct: no predefined op; uncommitted: nothing */
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                              (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &s));
    OK(MPI_Type_commit(&s));
    UT_EQ(op_check(MPI_SUM, s), MPI_ERR_TYPE);
    OK(MPI_Type_contiguous(2, MPI_INT, &u));
    UT_EQ(op_check(MPI_SUM, u), MPI_ERR_TYPE);
    OK(MPI_Type_commit(&u));
    UT_EQ(op_check(MPI_SUM, u), MPI_SUCCESS);
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE_INT, &v));
    OK(MPI_Type_commit(&v));
    UT_EQ(op_check(MPI_MINLOC, v), MPI_SUCCESS);
    UT_EQ(op_check(MPI_MIN, v), MPI_ERR_TYPE);

    UT_EQ(MPI_Reduce_local(&x, &y, 1, MPI_FLOAT, MPI_BAND), MPI_ERR_TYPE);
    UT_EQ(MPI_Reduce_local(&x, &y, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    UT_EQ(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    UT_EQ(MPI_Reduce_local(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    UT_EQ(op_apply(MPI_SUM, &x, &y, 1, s), MPI_ERR_OP);
    UT_EQ(op_apply_packed(MPI_LAND, &x, &y, 1, MPI_FLOAT), MPI_ERR_OP);
    OK(MPI_Reduce_local(&x, &y, 0, MPI_INT, MPI_SUM));
    UT_EQ(y, 2);
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&u));
    OK(MPI_Type_free(&s));
}
