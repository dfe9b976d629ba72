/*
 * libFuzzer target: the CAD validator (mpi/cad/cad_validate.c) on any bytes as a graph
 * block, as the engine runs it on its copy of a rank's graph (mpi/core/mpe_cad_admit.c).
 * It must answer without reading outside the block (the input is copied into a buffer of
 * exactly its size: ASan reports a read past it) and name its reason when it refuses.
 * What it accepts must run (mpi/cad/cad_exec.c): issued, its ready nodes completed (each
 * round's in reverse order), it finishes with every node done, in at most as many rounds
 * as it has nodes; and, finished, it validates again (a persistent collective's re-issue).
 * A trap below or a sanitizer report is a finding. Seeds: tests/fuzz/corpus/cad_validate
 * (`make cad-fuzz-seeds`: graphs of the collective builders, valid and broken).
 */
#include "cad.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A validated graph runs to its end (cad.h "Life of a graph"). */
static void run(struct cad_graph *g)
{
    static int ready[CAD_MAX_NODES];
    int rc = cad_issue(g);
    if (rc < 0)
        __builtin_trap(); /* validated, not running: it must issue */
    for (uint32_t round = 0; rc != CAD_FINISHED; round++) {
        int n = 0, i;
        while ((i = cad_next_ready(g)) >= 0)
            ready[n++] = i;
        if (!n || round >= g->nnodes)
            __builtin_trap();           /* stuck, or going round: not a DAG from START to END */
        while (n && rc != CAD_FINISHED) /* END completes with the last node before it */
            if ((rc = cad_complete(g, ready[--n])) < 0)
                __builtin_trap();
        if (n)
            __builtin_trap(); /* finished with nodes still running */
    }
    if (cad_query(g) != CAD_Q_DONE || g->ndone != g->nnodes || g->nactive)
        __builtin_trap();
}

/* libFuzzer's thread; the input is libFuzzer's. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *mem = malloc(size ? size : 1); /* 16-aligned, as a graph block must be 8 */
    if (!mem)
        return 0;
    memcpy(mem, data, size);
    struct cad_graph *g = (struct cad_graph *)(void *)mem;
    struct cad_error err;
    if (cad_validate(g, size, &err) < 0) {
        if (err.code <= CAD_OK || !err.msg[0])
            __builtin_trap(); /* a refusal says why */
    } else {
        if (err.code != CAD_OK)
            __builtin_trap();
        run(g);
        if (cad_validate(g, size, &err) < 0)
            __builtin_trap();
    }
    free(mem);
    return 0;
}
