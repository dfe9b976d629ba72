/*
 * group.c: process groups. A group is the list of its members' MPI_COMM_WORLD ranks in
 * group-rank order (struct mpi_group_s, mpi_impl.h); the set operations keep MPI's order
 * (the first group's, then the second's) and answer MPI_GROUP_EMPTY for an empty result.
 */
#include "mpi_impl.h"
#include <stdlib.h>
#include <string.h>

struct mpi_group_s mpi_group_empty_ = {0, 1, NULL};

/* Task context. */
MPI_Group grp_new(int n)
{
    MPI_Group g = malloc(sizeof *g + (size_t)n * sizeof(int));
    if (!g)
        return NULL;
    g->size = n;
    g->refs = 1;
    g->world = (int *)(g + 1);
    return g;
}

/* Task context. */
void grp_retain(MPI_Group g)
{
    if (g && g != MPI_GROUP_EMPTY)
        g->refs++;
}

/* Task context. */
void grp_release(MPI_Group g)
{
    if (g && g != MPI_GROUP_EMPTY && --g->refs == 0)
        free(g);
}

/* Task context. */
int grp_rank_of(MPI_Group g, int w)
{
    if (w >= 0 && w < g->size && g->world[w] == w) /* the world group, and its prefixes */
        return w;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

static int valid(MPI_Group g)
{
    return g && g->refs > 0;
}

/* Where each world rank is in a group: pos[w] = group rank, or -1; w < n. Set operations
 * look members up through it instead of searching (groups can be the whole job). */
struct gindex {
    int *pos;
    int n;
};

static int index_make(struct gindex *ix, MPI_Group g, MPI_Group also)
{
    int n = 0;
    for (int i = 0; i < g->size; i++)
        n = g->world[i] >= n ? g->world[i] + 1 : n;
    for (int i = 0; also && i < also->size; i++)
        n = also->world[i] >= n ? also->world[i] + 1 : n;
    ix->n = n;
    ix->pos = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!ix->pos)
        return MPI_ERR_NO_MEM;
    memset(ix->pos, 0xff, (size_t)n * sizeof(int));
    for (int i = 0; i < g->size; i++)
        ix->pos[g->world[i]] = i;
    return MPI_SUCCESS;
}

static int index_find(const struct gindex *ix, int w)
{
    return w >= 0 && w < ix->n ? ix->pos[w] : -1;
}

/* A new group of the n world ranks in w (MPI_GROUP_EMPTY if n == 0) into *out. */
static int make(const int *w, int n, MPI_Group *out)
{
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    MPI_Group g = grp_new(n);
    if (!g)
        return MPI_ERR_NO_MEM;
    memcpy(g->world, w, (size_t)n * sizeof(int));
    *out = g;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Group_size(MPI_Group group, int *size)
{
    if (!valid(group))
        return err_raise(NULL, MPI_ERR_GROUP, "MPI_Group_size");
    if (!size)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Group_size");
    *size = group->size;
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Group_rank(MPI_Group group, int *rank)
{
    if (!valid(group))
        return err_raise(NULL, MPI_ERR_GROUP, "MPI_Group_rank");
    if (!rank)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Group_rank");
    *rank = grp_rank_of(group, mpi_comm_world_.rank);
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    struct gindex ix;
    if (!valid(group1) || !valid(group2))
        return err_raise(NULL, MPI_ERR_GROUP, fn);
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return err_raise(NULL, MPI_ERR_ARG, fn);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= group1->size))
            return err_raise(NULL, MPI_ERR_RANK, fn);
    int rc = index_make(&ix, group2, group1);
    if (rc)
        return err_raise(NULL, rc, fn);
    for (int i = 0; i < n; i++) {
        int p = ranks1[i] == MPI_PROC_NULL ? -1 : index_find(&ix, group1->world[ranks1[i]]);
        ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : p < 0 ? MPI_UNDEFINED : p;
    }
    free(ix.pos);
    return MPI_SUCCESS;
}

/* Task context. */
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char fn[] = "MPI_Group_compare";
    struct gindex ix;
    if (!valid(group1) || !valid(group2))
        return err_raise(NULL, MPI_ERR_GROUP, fn);
    if (!result)
        return err_raise(NULL, MPI_ERR_ARG, fn);
    if (group1->size != group2->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (group1->size == 0 ||
        !memcmp(group1->world, group2->world, (size_t)group1->size * sizeof(int))) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int rc = index_make(&ix, group2, group1);
    if (rc)
        return err_raise(NULL, rc, fn);
    *result = MPI_SIMILAR; /* same size, members distinct: similar if all are found */
    for (int i = 0; i < group1->size; i++)
        if (index_find(&ix, group1->world[i]) < 0)
            *result = MPI_UNEQUAL;
    free(ix.pos);
    return MPI_SUCCESS;
}

enum { UNION, INTERSECTION, DIFFERENCE };

static int setop(MPI_Group g1, MPI_Group g2, MPI_Group *out, int what, const char *fn)
{
    struct gindex ix;
    if (!valid(g1) || !valid(g2))
        return err_raise(NULL, MPI_ERR_GROUP, fn);
    if (!out)
        return err_raise(NULL, MPI_ERR_ARG, fn);
    int *w = malloc((size_t)(g1->size + g2->size + 1) * sizeof(int)), n = 0;
    int rc = w ? index_make(&ix, g2, g1) : MPI_ERR_NO_MEM;
    if (rc) {
        free(w);
        return err_raise(NULL, rc, fn);
    }
    for (int i = 0; i < g1->size; i++) {
        int in2 = index_find(&ix, g1->world[i]) >= 0;
        if (what == UNION || (what == INTERSECTION) == in2)
            w[n++] = g1->world[i];
    }
    if (what == UNION) { /* then the second group's members the first lacks */
        for (int i = 0; i < g1->size; i++)
            ix.pos[g1->world[i]] = -2; /* in g1 (the index covers both groups) */
        for (int i = 0; i < g2->size; i++)
            if (index_find(&ix, g2->world[i]) != -2)
                w[n++] = g2->world[i];
    }
    free(ix.pos);
    rc = make(w, n, out);
    free(w);
    return err_raise(NULL, rc, fn);
}

/* Task context. */
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return setop(group1, group2, newgroup, UNION, "MPI_Group_union");
}

/* Task context. */
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return setop(group1, group2, newgroup, INTERSECTION, "MPI_Group_intersection");
}

/* Task context. */
int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return setop(group1, group2, newgroup, DIFFERENCE, "MPI_Group_difference");
}

/* The ranks of g selected by n ranks (ranges == NULL) or n range triplets, checked
 * (MPI_ERR_RANK: outside g or repeated; MPI_ERR_ARG: a zero stride), as flags in sel[]. */
static int select_ranks(MPI_Group g, int n, const int *ranks, int (*ranges)[3], char *sel)
{
    memset(sel, 0, (size_t)g->size);
    for (int i = 0; i < n; i++) {
        int first = ranges ? ranges[i][0] : ranks[i], last = ranges ? ranges[i][1] : first;
        int stride = ranges ? ranges[i][2] : 1;
        if (stride == 0)
            return MPI_ERR_ARG;
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return MPI_ERR_RANK;
        if (stride > 0 ? first > last : first < last)
            continue; /* no rank: first, first + stride, ... never reaches last */
        for (int j = 0, k = (last - first) / stride; j <= k; j++) {
            int r = first + j * stride; /* between first and last: no overflow */
            if (sel[r])
                return MPI_ERR_RANK;
            sel[r] = 1;
        }
    }
    return MPI_SUCCESS;
}

/* incl/excl by ranks or ranges: included ranks in the order given, excluded ones leave
 * the others in group order. */
static int inclexcl(MPI_Group g, int n, const int *ranks, int (*ranges)[3], int incl,
                    MPI_Group *out, const char *fn)
{
    if (!valid(g))
        return err_raise(NULL, MPI_ERR_GROUP, fn);
    if (!out || n < 0 || (n > 0 && !ranks && !ranges) || (!ranges && n > g->size))
        return err_raise(NULL, MPI_ERR_ARG, fn);
    char *sel = malloc((size_t)g->size + 1);
    int *w = malloc((size_t)g->size * sizeof(int) + 1), m = 0;
    int rc = sel && w ? select_ranks(g, n, ranks, ranges, sel) : MPI_ERR_NO_MEM;
    if (!rc && incl && ranges) {
        for (int i = 0; i < n; i++) {
            int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
            if (stride > 0 ? first > last : first < last)
                continue;
            for (int j = 0, k = (last - first) / stride; j <= k; j++)
                w[m++] = g->world[first + j * stride];
        }
    } else if (!rc && incl) {
        for (int i = 0; i < n; i++)
            w[m++] = g->world[ranks[i]];
    } else if (!rc) {
        for (int i = 0; i < g->size; i++)
            if (!sel[i])
                w[m++] = g->world[i];
    }
    if (!rc)
        rc = make(w, m, out);
    free(sel);
    free(w);
    return err_raise(NULL, rc, fn);
}

/* Task context. */
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return inclexcl(group, n, ranks, NULL, 1, newgroup, "MPI_Group_incl");
}

/* Task context. */
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return inclexcl(group, n, ranks, NULL, 0, newgroup, "MPI_Group_excl");
}

/* Task context. */
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return inclexcl(group, n, NULL, ranges, 1, newgroup, "MPI_Group_range_incl");
}

/* Task context. */
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return inclexcl(group, n, NULL, ranges, 0, newgroup, "MPI_Group_range_excl");
}

/* Task context. MPI_GROUP_EMPTY may be freed (operations return it for empty results);
 * only the handle is cleared then. */
int MPI_Group_free(MPI_Group *group)
{
    if (!group)
        return err_raise(NULL, MPI_ERR_ARG, "MPI_Group_free");
    if (!valid(*group))
        return err_raise(NULL, MPI_ERR_GROUP, "MPI_Group_free");
    grp_release(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
