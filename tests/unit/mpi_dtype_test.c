/*
 * mpi_dtype_test.c: datatype layouts (mpi/lib/dtype*.c): every constructor packed and
 * unpacked against hand-computed layouts, bounds (with MPI's sticky resized bounds and
 * Open MPI's alignment rounding, checked against Open MPI 4.1), the flattened segments,
 * contiguity. Packing, counts and lifetimes: mpi_dtype_pack_test.c; random nested types:
 * mpi_dtype_random_test.c.
 */
#include "ut.h"
#include "mpi_test_util.h"
#include "dtype_impl.h"
#include <stdlib.h>
#include <string.h>

#define OK(x) UT_EQ((x), MPI_SUCCESS)

UT_TEST(mpi_dt_predefined)
{
    mpi_t_setup(0);
    UT_EQ(mpi_t_size(MPI_INT), sizeof(int));
    UT_EQ(mpi_t_size(MPI_LONG_DOUBLE), sizeof(long double));
    UT_EQ(mpi_t_size(MPI_C_DOUBLE_COMPLEX), 16);
    UT_EQ(mpi_t_size(MPI_INT8_T), 1);
    UT_EQ(mpi_t_size(MPI_UINT64_T), 8);
    UT_EQ(mpi_t_size(MPI_AINT), sizeof(MPI_Aint));
    UT_ASSERT(MPI_LONG_LONG == MPI_LONG_LONG_INT && MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX);
    mpi_t_extent_is(MPI_DOUBLE, 0, 8, 0, 8);
    /* the pairs: C struct layout, padding in the extent only */
    UT_EQ(mpi_t_size(MPI_DOUBLE_INT), 12);
    mpi_t_extent_is(MPI_DOUBLE_INT, 0, 16, 0, 12);
    UT_EQ(mpi_t_size(MPI_SHORT_INT), 6);
    mpi_t_extent_is(MPI_SHORT_INT, 0, 8, 0, 8);
    UT_EQ(mpi_t_size(MPI_LONG_DOUBLE_INT), 20);
    mpi_t_extent_is(MPI_LONG_DOUBLE_INT, 0, 32, 0, 20);
    UT_EQ(mpi_t_size(MPI_2INT), 8);
    mpi_t_extent_is(MPI_FLOAT_INT, 0, 8, 0, 8);
    mpi_t_extent_is(MPI_LONG_INT, 0, 16, 0, 12);
    UT_ASSERT(dt_contig(MPI_2INT) && !dt_contig(MPI_DOUBLE_INT) && dt_contig(MPI_C_BOOL));
    UT_ASSERT(dt_basic(MPI_DOUBLE_INT) == MPI_DOUBLE_INT);
    UT_EQ(dt_check(MPI_BYTE), MPI_SUCCESS);
    UT_EQ(dt_check(MPI_DATATYPE_NULL), MPI_ERR_TYPE);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(MPI_UNSIGNED_LONG, name, &len));
    UT_ASSERT(!strcmp(name, "MPI_UNSIGNED_LONG") && len == 17);
    int ni, na, nt, comb;
    OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb));
    UT_EQ(comb, MPI_COMBINER_NAMED);
    UT_EQ(ni + na + nt, 0);
}

UT_TEST(mpi_dt_vector)
{
    MPI_Datatype v;
    mpi_t_setup(0);
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    v = mpi_t_commit(v);
    UT_EQ(mpi_t_size(v), 24);
    mpi_t_extent_is(v, 0, 40, 0, 40);
    UT_ASSERT(!dt_contig(v));
    UT_EQ(v->nsegs, 1); /* one strided segment, whatever the count */
    UT_ASSERT(dt_basic(v) == MPI_INT);
    mpi_t_ints_are(v, 1, (int[]){0, 1, 4, 5, 8, 9}, 6);
    mpi_t_ints_are(v, 2, (int[]){0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19}, 12);
    mpi_t_free(v);

    OK(MPI_Type_vector(3, 2, 2, MPI_INT, &v)); /* stride == blocklength: contiguous */
    v = mpi_t_commit(v);
    UT_ASSERT(dt_contig(v));
    mpi_t_ints_are(v, 2, (int[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12);
    mpi_t_free(v);

    OK(MPI_Type_vector(2, 1, -3, MPI_INT, &v)); /* negative stride */
    v = mpi_t_commit(v);
    mpi_t_extent_is(v, -12, 16, -12, 16);
    int out[2];
    dt_pack(mpi_t_seq + 5, 1, v, out);
    UT_EQ(out[0], 5);
    UT_EQ(out[1], 2);
    mpi_t_free(v);

    OK(MPI_Type_contiguous(5, MPI_INT, &v));
    v = mpi_t_commit(v);
    UT_ASSERT(dt_contig(v));
    mpi_t_extent_is(v, 0, 20, 0, 20);
    mpi_t_free(v);
}

UT_TEST(mpi_dt_hvector_unaligned)
{
    MPI_Datatype v;
    unsigned char buf[64], out[12], back[64] = {0};
    mpi_t_setup(0);
    for (int i = 0; i < 64; i++)
        buf[i] = (unsigned char)i;
    OK(MPI_Type_create_hvector(3, 1, 7, MPI_SHORT, &v)); /* shorts at bytes 0, 7, 14 */
    v = mpi_t_commit(v);
    UT_EQ(mpi_t_size(v), 6);
    mpi_t_extent_is(v, 0, 16, 0, 16); /* 16 bytes of data span, already a multiple of 2 */
    dt_pack(buf, 2, v, out);
    static const unsigned char want[12] = {0, 1, 7, 8, 14, 15, 16, 17, 23, 24, 30, 31};
    UT_ASSERT(!memcmp(out, want, 12));
    dt_unpack(out, 12, back, 2, v);
    for (int i = 0; i < 12; i++)
        UT_EQ(back[want[i]], want[i]);
    mpi_t_free(v);

    /* Open MPI rounds every derived extent up to the alignment: 9 -> 12 */
    OK(MPI_Type_create_hvector(2, 1, 5, MPI_INT, &v));
    mpi_t_extent_is(v, 0, 12, 0, 9);
    mpi_t_free(v);
    OK(MPI_Type_hvector(2, 1, -5, MPI_INT, &v));
    mpi_t_extent_is(v, -5, 12, -5, 9);
    mpi_t_free(v);
    OK(MPI_Type_create_hvector(2, 1, 5, MPI_CHAR, &v));
    mpi_t_extent_is(v, 0, 6, 0, 6);
    mpi_t_free(v);
}

UT_TEST(mpi_dt_indexed_family)
{
    MPI_Datatype t;
    mpi_t_setup(0);
    OK(MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){5, 0, 10}, MPI_INT, &t));
    t = mpi_t_commit(t);
    UT_EQ(mpi_t_size(t), 24);
    mpi_t_extent_is(t, 0, 52, 0, 52);
    mpi_t_ints_are(t, 1, (int[]){5, 6, 0, 10, 11, 12}, 6);
    mpi_t_free(t);

    OK(MPI_Type_indexed(2, (int[]){1, 1}, (int[]){-2, 3}, MPI_INT, &t));
    t = mpi_t_commit(t);
    mpi_t_extent_is(t, -8, 24, -8, 24);
    mpi_t_free(t);

    OK(MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){8, 24}, MPI_INT, &t));
    t = mpi_t_commit(t);
    mpi_t_ints_are(t, 1, (int[]){2, 6, 7}, 3);
    mpi_t_free(t);
    OK(MPI_Type_hindexed(1, (int[]){2}, (MPI_Aint[]){4}, MPI_INT, &t));
    t = mpi_t_commit(t);
    mpi_t_extent_is(t, 4, 8, 4, 8);
    mpi_t_ints_are(t, 2, (int[]){1, 2, 3, 4}, 4);
    mpi_t_free(t);

    OK(MPI_Type_create_indexed_block(3, 2, (int[]){6, 0, 3}, MPI_INT, &t));
    t = mpi_t_commit(t);
    mpi_t_ints_are(t, 1, (int[]){6, 7, 0, 1, 3, 4}, 6);
    mpi_t_free(t);

    OK(MPI_Type_create_hindexed_block(2, 1, (MPI_Aint[]){12, 4}, MPI_INT, &t));
    t = mpi_t_commit(t);
    mpi_t_ints_are(t, 1, (int[]){3, 1}, 2);
    mpi_t_extent_is(t, 4, 12, 4, 12);
    mpi_t_free(t);

    /* overlapping blocks pack twice (legal for sends) */
    OK(MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){8, 0}, MPI_DOUBLE, &t));
    t = mpi_t_commit(t);
    double d[4] = {0, 1, 2, 3}, o[3];
    dt_pack(d, 1, t, o);
    UT_ASSERT(o[0] == 1 && o[1] == 0 && o[2] == 1);
    mpi_t_free(t);
}

struct dc {
    double d;
    char c;
};
struct pm {
    char c;
    int i[2];
    short s;
};

UT_TEST(mpi_dt_struct_layout)
{
    MPI_Datatype t;
    mpi_t_setup(0);
    OK(MPI_Type_create_struct(2, (int[]){1, 1},
                              (MPI_Aint[]){offsetof(struct dc, d), offsetof(struct dc, c)},
                              (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &t));
    t = mpi_t_commit(t);
    UT_EQ(mpi_t_size(t), 9);
    mpi_t_extent_is(t, 0, sizeof(struct dc), 0, 9);
    UT_ASSERT(dt_basic(t) == MPI_DATATYPE_NULL && !dt_contig(t));
    mpi_t_free(t);

    OK(MPI_Type_struct(
        3, (int[]){1, 2, 1},
        (MPI_Aint[]){offsetof(struct pm, c), offsetof(struct pm, i), offsetof(struct pm, s)},
        (MPI_Datatype[]){MPI_CHAR, MPI_INT, MPI_SHORT}, &t));
    t = mpi_t_commit(t);
    UT_EQ(mpi_t_size(t), 11);
    mpi_t_extent_is(t, 0, sizeof(struct pm), 0, offsetof(struct pm, s) + 2);
    struct pm a[2] = {{'x', {1, 2}, 3}, {'y', {4, 5}, 6}}, b[2];
    unsigned char packed[22], want[22];
    dt_pack(a, 2, t, packed);
    for (int k = 0, n = 0; k < 2; k++) { /* typemap order, no padding */
        memcpy(want + n, &a[k].c, 1);
        memcpy(want + n + 1, a[k].i, 8);
        memcpy(want + n + 9, &a[k].s, 2);
        n += 11;
    }
    UT_ASSERT(!memcmp(packed, want, 22));
    memset(b, 0, sizeof b);
    dt_unpack(packed, 22, b, 2, t);
    UT_ASSERT(b[1].c == 'y' && b[1].i[0] == 4 && b[1].i[1] == 5 && b[1].s == 6 && b[0].s == 3);
    mpi_t_free(t);

    /* one basic type throughout: reductions may use it */
    OK(MPI_Type_create_struct(2, (int[]){1, 3}, (MPI_Aint[]){0, 4},
                              (MPI_Datatype[]){MPI_INT, MPI_INT}, &t));
    t = mpi_t_commit(t);
    UT_ASSERT(dt_basic(t) == MPI_INT && dt_contig(t));
    UT_EQ(t->nsegs, 1);
    mpi_t_free(t);

    /* int at 0, char at 8: extent 9 rounded to 12 (as Open MPI) */
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                              (MPI_Datatype[]){MPI_INT, MPI_CHAR}, &t));
    mpi_t_extent_is(t, 0, 12, 0, 9);
    mpi_t_free(t);
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){1, 10},
                              (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t));
    mpi_t_extent_is(t, 1, 24, 1, 17);
    mpi_t_free(t);
}

UT_TEST(mpi_dt_resized_sticky)
{
    MPI_Datatype r, t;
    mpi_t_setup(0);
    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &r));
    r = mpi_t_commit(r);
    mpi_t_extent_is(r, -4, 16, 0, 4);
    UT_ASSERT(!dt_contig(r));
    mpi_t_ints_are(r, 3, (int[]){0, 4, 8}, 3);

    /* the resized bounds are sticky: the int at 100 does not move ub (Open MPI agrees) */
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 100}, (MPI_Datatype[]){r, MPI_INT},
                              &t));
    mpi_t_extent_is(t, -4, 16, 0, 104);
    mpi_t_free(t);
    OK(MPI_Type_vector(3, 1, 2, r, &t));
    mpi_t_extent_is(t, -4, 80, 0, 68);
    t = mpi_t_commit(t);
    mpi_t_ints_are(t, 1, (int[]){0, 8, 16}, 3);
    mpi_t_free(t);

    MPI_Datatype r5, rd;
    OK(MPI_Type_create_resized(MPI_INT, 0, 5, &r5));
    OK(MPI_Type_contiguous(2, r5, &t)); /* sticky ub: no rounding to 4 */
    mpi_t_extent_is(t, 0, 10, 0, 9);
    mpi_t_free(t);
    OK(MPI_Type_create_resized(MPI_DOUBLE, 0, 12, &rd));
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 4}, (MPI_Datatype[]){MPI_INT, rd},
                              &t));
    mpi_t_extent_is(t, 4, 12, 0, 12);
    mpi_t_free(t);
    mpi_t_free(r5);
    mpi_t_free(rd);
    mpi_t_free(r);
}

UT_TEST(mpi_dt_nested_transpose)
{
    MPI_Datatype col, colr, tr;
    double m[4][4], out[16], back[4][4];
    mpi_t_setup(0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            m[i][j] = i * 4 + j;
    OK(MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &col));
    OK(MPI_Type_create_resized(col, 0, sizeof(double), &colr));
    OK(MPI_Type_contiguous(4, colr, &tr));
    mpi_t_free(col); /* still used by colr and tr */
    mpi_t_free(colr);
    tr = mpi_t_commit(tr);
    UT_EQ(mpi_t_size(tr), 128);
    mpi_t_extent_is(tr, 0, 32, 0, 128);
    UT_ASSERT(tr->segs && tr->nsegs == 4);
    dt_pack(m, 1, tr, out);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            UT_ASSERT(out[j * 4 + i] == m[i][j]);
    memset(back, 0, sizeof back);
    dt_unpack(out, sizeof out, back, 1, tr);
    UT_ASSERT(!memcmp(back, m, sizeof m));
    mpi_t_free(tr);
}

UT_TEST(mpi_dt_subarray)
{
    MPI_Datatype t, r;
    mpi_t_setup(0);
    OK(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 1}, MPI_ORDER_C,
                                MPI_INT, &t));
    t = mpi_t_commit(t);
    UT_EQ(mpi_t_size(t), 24);
    mpi_t_extent_is(t, 0, 80, 24, 32);
    mpi_t_ints_are(t, 1, (int[]){6, 7, 8, 11, 12, 13}, 6);
    int ni, na, nt, comb, ints[8];
    MPI_Datatype old;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    UT_EQ(comb, MPI_COMBINER_SUBARRAY);
    UT_EQ(ni, 8);
    UT_EQ(na, 0);
    UT_EQ(nt, 1);
    OK(MPI_Type_get_contents(t, 8, 0, 1, ints, NULL, &old));
    UT_ASSERT(old == MPI_INT && ints[0] == 2 && ints[3] == 2 && ints[7] == MPI_ORDER_C);
    mpi_t_free(t);

    OK(MPI_Type_create_subarray(2, (int[]){5, 4}, (int[]){3, 2}, (int[]){1, 1}, MPI_ORDER_FORTRAN,
                                MPI_INT, &t));
    t = mpi_t_commit(t);
    mpi_t_ints_are(t, 1, (int[]){6, 7, 8, 11, 12, 13}, 6);
    mpi_t_free(t);

    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &r));
    OK(MPI_Type_create_subarray(1, (int[]){4}, (int[]){2}, (int[]){1}, MPI_ORDER_C, r, &t));
    mpi_t_extent_is(t, 0, 64, 16, 20); /* as Open MPI */
    mpi_t_free(t);
    mpi_t_free(r);
}

UT_TEST(mpi_dt_contig_detection)
{
    MPI_Datatype t, u;
    mpi_t_setup(0);
    OK(MPI_Type_indexed(2, (int[]){2, 3}, (int[]){0, 2}, MPI_INT, &t));
    t = mpi_t_commit(t);
    UT_ASSERT(dt_contig(t));
    mpi_t_free(t);
    OK(MPI_Type_indexed(2, (int[]){2, 3}, (int[]){3, 0}, MPI_INT, &t)); /* out of order */
    t = mpi_t_commit(t);
    UT_ASSERT(!dt_contig(t));
    mpi_t_free(t);
    /* int then 4 chars: different basic types, no gap: contiguous */
    OK(MPI_Type_create_struct(2, (int[]){1, 4}, (MPI_Aint[]){0, 4},
                              (MPI_Datatype[]){MPI_INT, MPI_CHAR}, &t));
    t = mpi_t_commit(t);
    UT_ASSERT(dt_contig(t));
    UT_EQ(t->nsegs, 2);
    mpi_t_free(t);
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 4},
                              (MPI_Datatype[]){MPI_INT, MPI_FLOAT}, &t));
    t = mpi_t_commit(t);
    UT_ASSERT(dt_contig(t) && t->nsegs == 1);
    mpi_t_free(t);
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &t));
    t = mpi_t_commit(t);
    UT_ASSERT(!dt_contig(t));
    mpi_t_free(t);
    OK(MPI_Type_create_resized(MPI_INT, 0, 4, &t)); /* resized to what it was */
    t = mpi_t_commit(t);
    UT_ASSERT(dt_contig(t));
    OK(MPI_Type_dup(t, &u)); /* a copy of a committed type is committed */
    UT_EQ(dt_check(u), MPI_SUCCESS);
    UT_ASSERT(dt_contig(u));
    mpi_t_free(u);
    mpi_t_free(t);
    OK(MPI_Type_contiguous(0, MPI_INT, &t));
    t = mpi_t_commit(t);
    UT_ASSERT(dt_contig(t));
    UT_EQ(mpi_t_size(t), 0);
    mpi_t_extent_is(t, 0, 0, 0, 0);
    mpi_t_free(t);
}
