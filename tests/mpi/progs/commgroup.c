/*
 * commgroup.c: MPI conformance of MPI_Comm_create_group: called by the members of a group
 * only (the even ranks with one tag, the odd ranks with another, each while the others do
 * something else), then a group of the first and last ranks alone; each new communicator
 * has the group's ranks in order and works. Only rank 0 prints. Any number of ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The group of world ranks first, first + step, ... below np. */
static MPI_Group strided(int first, int step)
{
    MPI_Group wg, g;
    int range[1][3] = {{first, np - 1 - (np - 1 - first) % step, step}};
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_range_incl(wg, 1, range, &g);
    MPI_Group_free(&wg);
    return g;
}

static void expect_comm(MPI_Comm c, int first, int step, const char *what)
{
    int n = 0, want = 0, size = -1, rank = -1, sum = -1;
    for (int r = first; r < np; r += step) {
        n++;
        want += r;
    }
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
    EXPECT(size == n && rank == (me - first) / step && sum == want, "%s: size %d rank %d sum %d",
           what, size, rank, sum);
}

static void check_halves(void)
{
    MPI_Group g = strided(me % 2, 2);
    MPI_Comm c;
    if (me % 2 == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &c);
        expect_comm(c, 0, 2, "evens");
    } else {
        /* The odd ranks talk among themselves first: the evens do not wait for them. */
        int x = me, y = -1, n = np / 2, k = me / 2;
        int to = 2 * ((k + 1) % n) + 1, from = 2 * ((k + n - 1) % n) + 1;
        MPI_Sendrecv(&x, 1, MPI_INT, to, 1, &y, 1, MPI_INT, from, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        EXPECT(y == from, "odd ring got %d", y);
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 6, &c);
        expect_comm(c, 1, 2, "odds");
    }
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    report("Comm_create_group by the even and the odd ranks separately");
}

/* Ranks 0, 1 and the last alone; rank 1 has made more communicators than the others
 * (its next free context id is higher), so all must take the group's maximum. */
static void check_ends(void)
{
    MPI_Group wg, g;
    int members[3] = {0, 1, np - 1}, n = np > 2 ? 3 : 2;
    MPI_Comm selfs[3];
    if (me == 1)
        for (int i = 0; i < 3; i++)
            MPI_Comm_dup(MPI_COMM_SELF, &selfs[i]);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, members, &g);
    if (me == 0 || me == 1 || me == np - 1) {
        MPI_Comm c;
        int size = -1, rank = -1, sum = -1, want = n == 3 ? np : 1;
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c);
        MPI_Comm_size(c, &size);
        MPI_Comm_rank(c, &rank);
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
        EXPECT(size == n && rank == (me == np - 1 ? n - 1 : me) && sum == want,
               "size %d rank %d sum %d", size, rank, sum);
        MPI_Comm_free(&c);
    }
    if (me == 1)
        for (int i = 0; i < 3; i++)
            MPI_Comm_free(&selfs[i]);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    report("Comm_create_group of ranks 0, 1 and the last alone (different histories)");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "commgroup"))
        return 0;
    check_halves();
    check_ends();
    return finish("commgroup");
}
