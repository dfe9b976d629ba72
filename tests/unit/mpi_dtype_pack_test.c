/*
 * mpi_dtype_pack_test.c: what datatypes do beyond their layout: reference counts (inner
 * types outlive MPI_Type_free while used), MPI_Pack/Unpack and their positions, counts in
 * a status, partial unpacks, types too long to flatten, and argument checks. Leaks are
 * errors too (the runner is built with ASan/LSan).
 */
#include "ut.h"
#include "mpi_test_util.h"
#include "dtype_impl.h"
#include <stdlib.h>
#include <string.h>

#define OK(x) UT_EQ((x), MPI_SUCCESS)

UT_TEST(mpi_dt_refcount)
{
    MPI_Datatype inner, outer, got[1], dup;
    mpi_t_setup(0);
    OK(MPI_Type_contiguous(2, MPI_INT, &inner));
    OK(MPI_Type_vector(3, 1, 2, inner, &outer));
    mpi_t_free(inner); /* before the outer type is even committed */
    outer = mpi_t_commit(outer);
    mpi_t_ints_are(outer, 1, (int[]){0, 1, 4, 5, 8, 9}, 6);

    int ni, na, nt, comb, ints[3];
    OK(MPI_Type_get_envelope(outer, &ni, &na, &nt, &comb));
    UT_EQ(comb, MPI_COMBINER_VECTOR);
    OK(MPI_Type_get_contents(outer, 3, 0, 1, ints, NULL, got));
    UT_ASSERT(ints[0] == 3 && ints[1] == 1 && ints[2] == 2);
    OK(MPI_Type_get_envelope(got[0], &ni, &na, &nt, &comb));
    UT_EQ(comb, MPI_COMBINER_CONTIGUOUS);
    mpi_t_free(got[0]); /* get_contents handed out a reference */

    OK(MPI_Type_dup(outer, &dup));
    dt_retain(dup); /* as a pending request would */
    mpi_t_free(dup);
    mpi_t_free(outer);
    mpi_t_ints_are(dup, 1, (int[]){0, 1, 4, 5, 8, 9}, 6); /* alive through the request's ref */
    dt_release(dup);

    MPI_Datatype pre = MPI_INT;
    UT_EQ(MPI_Type_free(&pre), MPI_ERR_TYPE);
    UT_ASSERT(pre == MPI_INT);
    dt_retain(MPI_INT);
    dt_release(MPI_INT);
    UT_EQ(dt_check(MPI_INT), MPI_SUCCESS);
}

UT_TEST(mpi_dt_pack_unpack)
{
    MPI_Datatype v;
    char buf[64];
    int x = 42, pos = 0, size, a[10], b[10] = {0}, y;
    double d = 2.5, e;
    mpi_t_setup(0);
    for (int i = 0; i < 10; i++)
        a[i] = 100 + i;
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    UT_EQ(MPI_Pack(a, 1, v, buf, 64, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
    v = mpi_t_commit(v);
    OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &size));
    UT_EQ(size, 24);
    OK(MPI_Pack(&x, 1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    UT_EQ(pos, 4);
    OK(MPI_Pack(a, 1, v, buf, 64, &pos, MPI_COMM_WORLD));
    UT_EQ(pos, 28);
    UT_EQ(MPI_Pack(&d, 1, MPI_DOUBLE, buf, 30, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    UT_EQ(pos, 28);
    OK(MPI_Pack(&d, 1, MPI_DOUBLE, buf, 64, &pos, MPI_COMM_WORLD));
    UT_EQ(pos, 36);
    OK(MPI_Pack(&d, 0, MPI_DOUBLE, buf, 36, &pos, MPI_COMM_WORLD));
    UT_EQ(pos, 36);

    pos = 0;
    OK(MPI_Unpack(buf, 36, &pos, &y, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack(buf, 36, &pos, b, 1, v, MPI_COMM_WORLD));
    UT_EQ(MPI_Unpack(buf, 35, &pos, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    OK(MPI_Unpack(buf, 36, &pos, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    UT_EQ(pos, 36);
    UT_EQ(y, 42);
    UT_ASSERT(e == 2.5);
    for (int i = 0; i < 10; i++)
        UT_EQ(b[i], i % 4 < 2 ? 100 + i : 0);

    UT_EQ(MPI_Pack(&x, 1, MPI_INT, buf, 64, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    UT_EQ(MPI_Pack(&x, -1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    UT_EQ(MPI_Pack(&x, 1, MPI_INT, buf, 64, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    UT_EQ(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &size), MPI_ERR_COUNT);
    mpi_t_free(v);
}

UT_TEST(mpi_dt_status_counts)
{
    MPI_Status st = {0};
    MPI_Datatype v, s, u;
    int n;
    MPI_Count nx;
    mpi_t_setup(0);
    st.mpi_count_ = 24;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    UT_EQ(n, 6);
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    UT_EQ(MPI_Get_count(&st, v, &n), MPI_ERR_TYPE); /* not committed */
    v = mpi_t_commit(v);
    OK(MPI_Get_count(&st, v, &n));
    UT_EQ(n, 1);
    st.mpi_count_ = 28;
    OK(MPI_Get_count(&st, v, &n));
    UT_EQ(n, MPI_UNDEFINED);
    OK(MPI_Get_elements(&st, v, &n));
    UT_EQ(n, 7);
    OK(MPI_Get_elements_x(&st, v, &nx));
    UT_EQ(nx, 7);
    st.mpi_count_ = 26; /* half an int */
    OK(MPI_Get_elements(&st, v, &n));
    UT_EQ(n, MPI_UNDEFINED);

    /* pairs count as one element each (as in Open MPI) */
    st.mpi_count_ = 24;
    OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &n));
    UT_EQ(n, 2);
    st.mpi_count_ = 8;
    OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &n));
    UT_EQ(n, MPI_UNDEFINED);

    /* a struct {double, int} counts its members */
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                              (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &s));
    s = mpi_t_commit(s);
    OK(MPI_Status_set_elements(&st, s, 3));
    UT_EQ(st.mpi_count_, 20);
    OK(MPI_Get_elements(&st, s, &n));
    UT_EQ(n, 3);
    OK(MPI_Get_count(&st, s, &n));
    UT_EQ(n, MPI_UNDEFINED);
    OK(MPI_Status_set_elements_x(&st, MPI_INT, 5));
    UT_EQ(st.mpi_count_, 20);
    UT_EQ(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);

    OK(MPI_Type_contiguous(0, MPI_INT, &u));
    u = mpi_t_commit(u);
    st.mpi_count_ = 0;
    OK(MPI_Get_count(&st, u, &n));
    UT_EQ(n, 0);
    OK(MPI_Get_elements(&st, u, &n));
    UT_EQ(n, 0);

    OK(MPI_Status_set_cancelled(&st, 7));
    OK(MPI_Test_cancelled(&st, &n));
    UT_EQ(n, 1);
    OK(MPI_Status_set_cancelled(&st, 0));
    OK(MPI_Test_cancelled(&st, &n));
    UT_EQ(n, 0);
    UT_EQ(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &n), MPI_ERR_ARG);
    mpi_t_free(u);
    mpi_t_free(s);
    mpi_t_free(v);
}

UT_TEST(mpi_dt_partial_unpack)
{
    MPI_Datatype s, v;
    struct {
        double d;
        int i;
    } a[2] = {{1.5, 7}, {2.5, 8}}, b[2];
    char packed[24];
    mpi_t_setup(0);
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                              (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &s));
    s = mpi_t_commit(s);
    dt_pack(a, 2, s, packed);
    memset(b, 0, sizeof b);
    dt_unpack(packed, 22, b, 2, s); /* the last int is 2 bytes short: not written */
    UT_ASSERT(b[0].d == 1.5 && b[0].i == 7 && b[1].d == 2.5 && b[1].i == 0);
    memset(b, 0, sizeof b);
    dt_unpack(packed, 15, b, 2, s);
    UT_ASSERT(b[0].d == 1.5 && b[0].i == 7 && b[1].d == 0);

    int x[12], y[12] = {0}, p[6];
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    v = mpi_t_commit(v);
    dt_pack(mpi_t_seq, 1, v, p);
    dt_unpack(p, 10, y, 1, v);
    UT_ASSERT(y[0] == 0 && y[1] == 1 && y[4] == 0);
    memcpy(x, y, sizeof x);
    dt_unpack(p, 0, y, 1, v);
    UT_ASSERT(!memcmp(x, y, sizeof x));
    mpi_t_free(v);
    mpi_t_free(s);
}

UT_TEST(mpi_dt_too_long_to_flatten)
{
    enum { N = 40000 };
    MPI_Datatype s, c, v;
    mpi_t_setup(0);
    /* int then char: two segments (their units differ), extent 8 */
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 4},
                              (MPI_Datatype[]){MPI_INT, MPI_CHAR}, &s));
    OK(MPI_Type_contiguous(N, s, &c));
    OK(MPI_Type_vector(2, 1, 3, c, &v));
    s = mpi_t_commit(s);
    c = mpi_t_commit(c);
    v = mpi_t_commit(v);
    UT_ASSERT(s->segs && c->segs == NULL && v->segs == NULL); /* 80000 segments: no list */
    UT_EQ(mpi_t_size(v), 2 * N * 5);
    size_t ext = (size_t)dt_extent(c);
    UT_EQ(ext, N * 8);
    unsigned char *buf = malloc(4 * ext), *p1 = malloc(2 * N * 5), *p2 = malloc(2 * N * 5);
    UT_ASSERT(buf && p1 && p2);
    for (size_t i = 0; i < 4 * ext; i++)
        buf[i] = (unsigned char)(i * 7 + i / 251);
    dt_pack(buf, 1, v, p1);
    dt_pack(buf, N, s, p2);
    dt_pack(buf + 3 * ext, N, s, p2 + N * 5);
    UT_ASSERT(!memcmp(p1, p2, 2 * N * 5));
    memset(buf, 0, 4 * ext);
    dt_unpack(p1, 2 * N * 5, buf, 1, v);
    dt_pack(buf, 1, v, p2);
    UT_ASSERT(!memcmp(p1, p2, 2 * N * 5));
    UT_EQ(buf[5], 0); /* the gaps stay as they were */
    size_t n;
    UT_ASSERT(dt_count_elements(v, 2 * N * 5 - 2, &n) == 0); /* inside the last int */
    UT_ASSERT(dt_count_elements(v, 2 * N * 5 - 5, &n) == 1 && n == 4 * N - 2);
    free(buf);
    free(p1);
    free(p2);
    mpi_t_free(v);
    mpi_t_free(c);
    mpi_t_free(s);
}

UT_TEST(mpi_dt_errors)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int n;
    mpi_t_setup(0);
    UT_EQ(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    UT_EQ(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    UT_EQ(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
    UT_EQ(MPI_Type_vector(1, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    UT_EQ(MPI_Type_create_hvector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    UT_EQ(MPI_Type_indexed(2, (int[]){1, -1}, (int[]){0, 1}, MPI_INT, &t), MPI_ERR_ARG);
    UT_EQ(MPI_Type_indexed(2, NULL, (int[]){0, 1}, MPI_INT, &t), MPI_ERR_ARG);
    UT_EQ(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 4},
                                 (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL}, &t),
          MPI_ERR_TYPE);
    UT_EQ(MPI_Type_create_subarray(1, (int[]){4}, (int[]){3}, (int[]){2}, MPI_ORDER_C, MPI_INT, &t),
          MPI_ERR_ARG);
    UT_EQ(MPI_Type_create_subarray(1, (int[]){4}, (int[]){3}, (int[]){0}, 7, MPI_INT, &t),
          MPI_ERR_ARG);
    UT_EQ(MPI_Type_commit(NULL), MPI_ERR_ARG);
    UT_EQ(MPI_Type_commit(&t), MPI_ERR_TYPE);
    UT_EQ(MPI_Type_free(&t), MPI_ERR_TYPE);
    UT_EQ(MPI_Type_size(MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    UT_EQ(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    UT_EQ(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_TYPE);
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    UT_EQ(dt_check(t), MPI_ERR_TYPE); /* uncommitted: not for communication */
    OK(MPI_Type_size(t, &n));         /* but queries are fine */
    UT_EQ(n, 8);
    int ints[1];
    MPI_Datatype types[1];
    UT_EQ(MPI_Type_get_contents(t, 0, 0, 1, ints, NULL, types), MPI_ERR_ARG);
    OK(MPI_Type_set_name(t, "pair of ints"));
    char name[MPI_MAX_OBJECT_NAME];
    OK(MPI_Type_get_name(t, name, &n));
    UT_ASSERT(!strcmp(name, "pair of ints") && n == 12);
    mpi_t_free(t);
    MPI_Aint a1, a2;
    OK(MPI_Get_address(&ints[0], &a1));
    OK(MPI_Address(&types[0], &a2));
    UT_EQ(MPI_Aint_diff(MPI_Aint_add(a1, 12), a1), 12);
    UT_EQ(a1, (MPI_Aint)(uintptr_t)&ints[0]);
}
