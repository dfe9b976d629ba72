/*
 * icolls_inplace.c: MPI conformance of MPI_IN_PLACE in the non-blocking collectives:
 * Ireduce (at the root), Iallreduce, Igather(v) (at the root), Iscatter(v) (at the root:
 * the receive buffer is MPI_IN_PLACE, the root's block stays in the send buffer),
 * Iallgather(v), Ialltoall(v), Ireduce_scatter(_block), Iscan, Iexscan; on the same
 * communicators, roots, counts and ways of completion as icolls.c (icolls_common.h), then
 * several in-place ones outstanding on one communicator at once. A library that copies
 * the input out of the receive buffer late, or from the wrong block, shows here. The
 * blocking collectives' MPI_IN_PLACE is in colls.c and colls_reduce.c.
 * Only rank 0 prints: one line per check, then
 * "# conformance icolls_inplace: N checks, M failed".
 * Runs on any number of ranks >= 2; the output depends on nothing but that number.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "colls_common.h"
#include "coll_call.h"
#include "icolls_common.h"

/* Every in-place kind outstanding at once on each configuration, in one order on all
 * ranks, completed by Wait in reverse order. */
static void check_outstanding(void)
{
    struct call c[NKINDS];
    for (int k = 0; k < nconf; k++) {
        conf_use(k);
        for (int kind = K_REDUCE; kind < NKINDS; kind++)
            call_init(&c[kind], kind, (kind + k) % S, 5 + kind, 400 + kind, CALL_NB | CALL_IP);
        for (int kind = K_REDUCE; kind < NKINDS; kind++)
            call_start(&c[kind]);
        for (int kind = NKINDS - 1; kind >= K_REDUCE; kind--) {
            MPI_Wait(&c[kind].req, MPI_STATUS_IGNORE);
            call_check(&c[kind]);
            call_free(&c[kind]);
        }
    }
    report("all 14 in place outstanding at once on one communicator, completed in reverse order");
}

int main(int argc, char **argv)
{
    if (!start(&argc, &argv, "icolls_inplace"))
        return 1;
    confs_make();
    for (int kind = K_REDUCE; kind < NKINDS; kind++)
        run_kind(kind, CALL_NB | CALL_IP);
    check_outstanding();
    confs_free();
    return finish("icolls_inplace");
}
