/*
 * splittype.c: MPI conformance of MPI_Comm_split_type with MPI_COMM_TYPE_SHARED: the new
 * communicator holds exactly the ranks whose processor name is this rank's (the node's),
 * ordered by key, and works (Allreduce); MPI_UNDEFINED gives MPI_COMM_NULL. The output
 * does not depend on how ranks are spread over nodes. Only rank 0 prints. Any number of
 * ranks >= 2.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static char *names; /* every world rank's processor name, MPI_MAX_PROCESSOR_NAME each */

static int same_node(int r)
{
    return !strcmp(names + r * MPI_MAX_PROCESSOR_NAME, names + me * MPI_MAX_PROCESSOR_NAME);
}

static void check_shared(void)
{
    MPI_Comm node;
    int size = -1, rank = -1, want_size = 0, want_rank = 0, sum = -1, want_sum = 0;
    /* Key np - me: the node's ranks in reverse world order. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, np - me, MPI_INFO_NULL, &node);
    for (int r = 0; r < np; r++)
        if (same_node(r)) {
            want_size++;
            want_rank += r > me;
            want_sum += r;
        }
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    EXPECT(size == want_size && rank == want_rank, "size %d rank %d, expected %d %d", size, rank,
           want_size, want_rank);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, node);
    EXPECT(sum == want_sum, "sum of world ranks %d, expected %d", sum, want_sum);
    MPI_Comm_free(&node);
    report("Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks of this node, in key order");
}

static void check_undefined(void)
{
    MPI_Comm node;
    int type = me % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, size = -1, want = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, MPI_INFO_NULL, &node);
    for (int r = 0; r < np; r += 2)
        want += same_node(r);
    if (me % 2) {
        EXPECT(node == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        MPI_Comm_size(node, &size);
        EXPECT(node != MPI_COMM_NULL && size == want, "even ranks of the node: %d, expected %d",
               size, want);
    }
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    report("Comm_split_type with MPI_UNDEFINED on odd ranks: MPI_COMM_NULL there");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "splittype"))
        return 0;
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(mine, &len);
    names = calloc(np, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    check_shared();
    check_undefined();
    free(names);
    return finish("splittype");
}
