/*
 * mpi_world_test.c: the library's view of MPI_COMM_WORLD as IMPI clients (mpi/lib/world.c):
 * the client map a communicator keeps for the collectives (NULL inside one client, so
 * nothing changes there), and the refusal of what LAM cannot do across clients. The
 * collectives themselves are tested on the CAD side (cad_alg_impi*_test.c); coll_run.c
 * and comm.c need the kernel and are not built here.
 */
#include "ut.h"
#include "mpi_test_util.h"
#include <stdlib.h>
#include <string.h>

static void refuse(void)
{
    UT_EQ(world_refuse("MPI_Comm_split", "a new communicator"), MPI_ERR_UNSUPPORTED_OPERATION);
}

UT_TEST(mpi_world_client_map)
{
    static const int32_t first[3] = {0, 2, 3}; /* clients of 2, 1 and 3 ranks */
    static const int all[6] = {0, 1, 2, 3, 4, 5}, lam[3] = {3, 4, 5}, two[2] = {1, 2};
    int err;
    mpi_t_setup(0);
    world_set(3, first, 6);
    UT_EQ(world_nclients(), 3);
    uint8_t *m = world_client_map(all, 6, &err);
    UT_EQ(err, MPI_SUCCESS);
    UT_ASSERT(m);
    static const uint8_t want[6] = {0, 0, 1, 2, 2, 2};
    UT_ASSERT(!memcmp(m, want, 6));
    free(m);
    m = world_client_map(two, 2, &err); /* ranks 1 and 2: clients 0 and 1 */
    UT_ASSERT(m && m[0] == 0 && m[1] == 1);
    free(m);
    UT_ASSERT(!world_client_map(lam, 3, &err)); /* one client: no map, our algorithms */
    UT_EQ(err, MPI_SUCCESS);
    UT_ASSERT(!world_client_map(all, 1, &err)); /* MPI_COMM_SELF */
    world_set(1, first, 6);                     /* a job alone */
    UT_ASSERT(!world_client_map(all, 6, &err));
    UT_EQ(world_nclients(), 1);
}

UT_TEST(mpi_world_refuse_says_why)
{
    char msg[256];
    mpi_t_setup(0);
    UT_EQ(mpi_t_fatal(refuse, msg, sizeof msg), -1); /* returns: the caller raises it */
    UT_ASSERT(strstr(msg, "MPI_Comm_split"));
    UT_ASSERT(strstr(msg, "across IMPI clients: LAM/MPI cannot"));
}
