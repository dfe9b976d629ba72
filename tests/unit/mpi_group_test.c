/*
 * mpi_group_test.c: process groups (mpi/lib/group.c): inclusion and exclusion by ranks
 * and by ranges, the set operations with MPI's member order, rank translation,
 * comparison, MPI_GROUP_EMPTY, reference counts, and the MPI_ERR_RANK checks.
 */
#include "ut.h"
#include "mpi_test_util.h"

#define OK(x) UT_EQ((x), MPI_SUCCESS)

/* A group of the world ranks 0..n-1, as the communicator module would make it. */
static MPI_Group world_group(int n)
{
    MPI_Group g = grp_new(n);
    UT_ASSERT(g);
    for (int i = 0; i < n; i++)
        g->world[i] = i;
    return g;
}

/* g has exactly the world ranks w[0..n-1], in this order. */
static void members(MPI_Group g, const int *w, int n)
{
    int size;
    OK(MPI_Group_size(g, &size));
    UT_EQ(size, n);
    for (int i = 0; i < n; i++)
        UT_EQ(g->world[i], w[i]);
    if (n == 0)
        UT_ASSERT(g == MPI_GROUP_EMPTY);
}

static void gfree(MPI_Group g)
{
    OK(MPI_Group_free(&g));
    UT_ASSERT(g == MPI_GROUP_NULL);
}

UT_TEST(mpi_group_incl_excl)
{
    MPI_Group w, g;
    int r;
    mpi_t_setup(3);
    w = world_group(8);
    OK(MPI_Group_incl(w, 3, (int[]){5, 1, 3}, &g));
    members(g, (int[]){5, 1, 3}, 3);
    OK(MPI_Group_rank(g, &r)); /* this process is world rank 3 */
    UT_EQ(r, 2);
    OK(MPI_Group_rank(w, &r));
    UT_EQ(r, 3);
    gfree(g);
    OK(MPI_Group_excl(w, 2, (int[]){0, 7}, &g));
    members(g, (int[]){1, 2, 3, 4, 5, 6}, 6);
    gfree(g);
    OK(MPI_Group_incl(w, 0, NULL, &g));
    members(g, NULL, 0);
    gfree(g);
    OK(MPI_Group_excl(w, 8, (int[]){7, 6, 5, 4, 3, 2, 1, 0}, &g));
    members(g, NULL, 0);
    gfree(g);

    mpi_t_setup(0);
    OK(MPI_Group_incl(w, 2, (int[]){4, 6}, &g));
    OK(MPI_Group_rank(g, &r));
    UT_EQ(r, MPI_UNDEFINED);
    gfree(g);

    /* invalid and repeated ranks */
    UT_EQ(MPI_Group_incl(w, 1, (int[]){8}, &g), MPI_ERR_RANK);
    UT_EQ(MPI_Group_incl(w, 2, (int[]){2, 2}, &g), MPI_ERR_RANK);
    UT_EQ(MPI_Group_excl(w, 1, (int[]){-1}, &g), MPI_ERR_RANK);
    UT_EQ(MPI_Group_excl(w, 2, (int[]){3, 3}, &g), MPI_ERR_RANK);
    UT_EQ(MPI_Group_incl(w, 9, (int[]){0, 1, 2, 3, 4, 5, 6, 7, 0}, &g), MPI_ERR_ARG);
    UT_EQ(MPI_Group_incl(w, -1, NULL, &g), MPI_ERR_ARG);
    UT_EQ(MPI_Group_incl(MPI_GROUP_NULL, 1, (int[]){0}, &g), MPI_ERR_GROUP);
    UT_EQ(MPI_Group_incl(w, 1, (int[]){0}, NULL), MPI_ERR_ARG);
    gfree(w);
}

UT_TEST(mpi_group_ranges)
{
    MPI_Group w, g;
    mpi_t_setup(0);
    w = world_group(8);
    OK(MPI_Group_range_incl(w, 2, (int[][3]){{0, 6, 3}, {7, 7, 1}}, &g));
    members(g, (int[]){0, 3, 6, 7}, 4);
    gfree(g);
    OK(MPI_Group_range_incl(w, 1, (int[][3]){{6, 0, -2}}, &g));
    members(g, (int[]){6, 4, 2, 0}, 4);
    gfree(g);
    OK(MPI_Group_range_incl(w, 1, (int[][3]){{5, 1, 1}}, &g)); /* never reaches: none */
    members(g, NULL, 0);
    gfree(g);
    OK(MPI_Group_range_incl(w, 1, (int[][3]){{1, 6, 4}}, &g)); /* last not hit: 1, 5 */
    members(g, (int[]){1, 5}, 2);
    gfree(g);
    OK(MPI_Group_range_excl(w, 1, (int[][3]){{1, 7, 2}}, &g));
    members(g, (int[]){0, 2, 4, 6}, 4);
    gfree(g);
    OK(MPI_Group_range_excl(w, 2, (int[][3]){{7, 4, -1}, {0, 3, 1}}, &g));
    members(g, NULL, 0);
    gfree(g);

    UT_EQ(MPI_Group_range_incl(w, 1, (int[][3]){{0, 4, 0}}, &g), MPI_ERR_ARG);
    UT_EQ(MPI_Group_range_incl(w, 1, (int[][3]){{0, 8, 1}}, &g), MPI_ERR_RANK);
    UT_EQ(MPI_Group_range_incl(w, 2, (int[][3]){{0, 4, 2}, {4, 5, 1}}, &g), MPI_ERR_RANK);
    UT_EQ(MPI_Group_range_excl(w, 1, (int[][3]){{-1, 3, 1}}, &g), MPI_ERR_RANK);
    /* a huge stride stays in range */
    OK(MPI_Group_range_incl(w, 1, (int[][3]){{3, 7, 2147483647}}, &g));
    members(g, (int[]){3}, 1);
    gfree(g);
    gfree(w);
}

UT_TEST(mpi_group_set_ops)
{
    MPI_Group w, a, b, g;
    mpi_t_setup(0);
    w = world_group(8);
    OK(MPI_Group_incl(w, 3, (int[]){5, 1, 3}, &a));
    OK(MPI_Group_incl(w, 4, (int[]){3, 4, 1, 0}, &b));
    OK(MPI_Group_union(a, b, &g));
    members(g, (int[]){5, 1, 3, 4, 0}, 5);
    gfree(g);
    OK(MPI_Group_union(b, a, &g));
    members(g, (int[]){3, 4, 1, 0, 5}, 5);
    gfree(g);
    OK(MPI_Group_intersection(a, b, &g));
    members(g, (int[]){1, 3}, 2);
    gfree(g);
    OK(MPI_Group_intersection(b, a, &g));
    members(g, (int[]){3, 1}, 2);
    gfree(g);
    OK(MPI_Group_difference(a, b, &g));
    members(g, (int[]){5}, 1);
    gfree(g);
    OK(MPI_Group_difference(a, a, &g));
    members(g, NULL, 0);
    gfree(g);
    OK(MPI_Group_union(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &g));
    members(g, NULL, 0);
    OK(MPI_Group_union(a, MPI_GROUP_EMPTY, &g));
    members(g, (int[]){5, 1, 3}, 3);
    gfree(g);
    OK(MPI_Group_intersection(MPI_GROUP_EMPTY, a, &g));
    members(g, NULL, 0);
    UT_EQ(MPI_Group_union(a, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
    gfree(a);
    gfree(b);
    gfree(w);
}

UT_TEST(mpi_group_translate_compare)
{
    MPI_Group w, a, b, c, d;
    int out[5], res;
    mpi_t_setup(0);
    w = world_group(8);
    OK(MPI_Group_incl(w, 3, (int[]){5, 1, 3}, &a));
    OK(MPI_Group_incl(w, 4, (int[]){3, 4, 1, 0}, &b));
    OK(MPI_Group_translate_ranks(a, 4, (int[]){0, 1, 2, MPI_PROC_NULL}, b, out));
    UT_EQ(out[0], MPI_UNDEFINED);
    UT_EQ(out[1], 2);
    UT_EQ(out[2], 0);
    UT_EQ(out[3], MPI_PROC_NULL);
    OK(MPI_Group_translate_ranks(b, 4, (int[]){0, 1, 2, 3}, w, out));
    UT_ASSERT(out[0] == 3 && out[1] == 4 && out[2] == 1 && out[3] == 0);
    OK(MPI_Group_translate_ranks(w, 1, (int[]){7}, MPI_GROUP_EMPTY, out));
    UT_EQ(out[0], MPI_UNDEFINED);
    UT_EQ(MPI_Group_translate_ranks(a, 1, (int[]){3}, b, out), MPI_ERR_RANK);
    UT_EQ(MPI_Group_translate_ranks(a, -1, NULL, b, out), MPI_ERR_ARG);

    OK(MPI_Group_incl(w, 3, (int[]){5, 1, 3}, &c));
    OK(MPI_Group_compare(a, c, &res));
    UT_EQ(res, MPI_IDENT);
    OK(MPI_Group_compare(a, a, &res));
    UT_EQ(res, MPI_IDENT);
    gfree(c);
    OK(MPI_Group_incl(w, 3, (int[]){1, 3, 5}, &c));
    OK(MPI_Group_compare(a, c, &res));
    UT_EQ(res, MPI_SIMILAR);
    OK(MPI_Group_incl(w, 3, (int[]){1, 3, 4}, &d));
    OK(MPI_Group_compare(c, d, &res));
    UT_EQ(res, MPI_UNEQUAL);
    OK(MPI_Group_compare(a, b, &res));
    UT_EQ(res, MPI_UNEQUAL);
    OK(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &res));
    UT_EQ(res, MPI_IDENT);
    UT_EQ(MPI_Group_compare(a, MPI_GROUP_NULL, &res), MPI_ERR_GROUP);
    gfree(c);
    gfree(d);
    gfree(a);
    gfree(b);
    gfree(w);
}

UT_TEST(mpi_group_lifetime)
{
    MPI_Group w, g, e = MPI_GROUP_EMPTY, n = MPI_GROUP_NULL;
    mpi_t_setup(0);
    w = world_group(4);
    UT_EQ(grp_rank_of(w, 2), 2); /* the identity fast path */
    UT_EQ(grp_rank_of(w, 9), MPI_UNDEFINED);
    OK(MPI_Group_incl(w, 2, (int[]){3, 0}, &g));
    UT_EQ(grp_rank_of(g, 0), 1);
    UT_EQ(grp_rank_of(g, 1), MPI_UNDEFINED);
    grp_retain(g); /* as a communicator would */
    gfree(g);      /* the user's handle */
    UT_EQ(grp_rank_of(g, 3), 0);
    grp_release(g);
    OK(MPI_Group_free(&e)); /* MPI_GROUP_EMPTY may be freed: the handle is cleared */
    UT_ASSERT(e == MPI_GROUP_NULL);
    grp_retain(MPI_GROUP_EMPTY);
    grp_release(MPI_GROUP_EMPTY);
    UT_EQ(MPI_GROUP_EMPTY->size, 0);
    UT_EQ(MPI_Group_free(&n), MPI_ERR_GROUP);
    UT_EQ(MPI_Group_free(NULL), MPI_ERR_ARG);
    int size;
    UT_EQ(MPI_Group_size(MPI_GROUP_NULL, &size), MPI_ERR_GROUP);
    gfree(w);
}
