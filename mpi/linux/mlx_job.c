/*
 * mlx_job.c: the start and the end of a Linux node's part of a job (mlx.h): what
 * mpe_job_start and mpe_job_end do on the unikernel.
 */
#include "mlx.h"
#include "mpe.h"
#include "mpe_transport.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MLX_BYE_NS  30000000000ull /* the unikernel's MPE_BYE_NS */
#define MLX_POLL_NS 1000000ull     /* between looks at the peers at job end */

/* Exit handler (the main thread, exit() with `status`): after MPI_Finalize, tell every peer
 * we are done, wait for theirs, and until what we sent has been acknowledged (a byte
 * still in our socket when the process ends could be lost with a reset). A failing exit
 * leaves at once: the peers see the connections close and end the job. MPI_Init's own
 * handler (a rank that never called MPI_Finalize) runs before this one (registered later)
 * and ends the process with a failure. */
static void job_end(int status, void *arg)
{
    (void)arg;
    if (status != 0)
        return;
    const struct mlx_env *e = mlx_env();
    if (e->nodes > 1) {
        mpe_node_finish(mlx_node);
        uint64_t deadline = mlx_now_ns() + MLX_BYE_NS;
        for (int p = 0; p < e->nodes; p++) {
            while (p != e->node && !mlx_net_flushed(p)) {
                if (mlx_now_ns() > deadline) {
                    fprintf(stderr, "mpi: node %d: node %d did not finish\n", e->node, p);
                    fflush(stdout);
                    _exit(MLX_EXIT_FATAL);
                }
                struct timespec ts = {0, MLX_POLL_NS};
                if (e->caller)
                    mlx_net_turn(0); /* the peers' BYE and acks: nobody else reads them */
                nanosleep(&ts, NULL);
            }
        }
    }
    mlx_net_stop();
}

/* Task context, from MPI_Init (uk_abi->mpi->init); see mlx.h. */
int mlx_job_init(void)
{
    const struct mlx_env *e = mlx_env();
    mlx_node = mpe_node_create(e->node, e->nodes, e->size, e->node, 1);
    if (!mlx_node) {
        fprintf(stderr, "mpi: node %d: the engine refuses a job of %d nodes (or no memory)\n",
                e->node, e->nodes);
        return -MPE_EPEER;
    }
    if (mlx_net_start(e) != 0)
        return -MPE_EPEER;
    on_exit(job_end, NULL);
    int rc = mpe_ops.init(); /* every peer's HELLO */
    if (rc == 0)
        mlx_kacc_start(e, mlx_o2g_fd());
    return rc;
}
