/*
 * mpix.h: this MPI's extensions (not in the standard; the MPIX_ prefix as MPICH uses it).
 * Programs that also build with other MPIs guard their use with `#ifdef UKMPI_MPIX`.
 *
 * Non-blocking collectives run as CAD graphs progressed from the NIC interrupt and by IPI.
 * How it is done is chosen by environment variables read at MPI_Init:
 *   UKMPI_CAD_PROGRESS  auto (default): progress where the completion happens if that CPU
 *                       is the rank's home CPU or idle, else hand it to the home CPU by
 *                       IPI; ipi: always hand over to the home CPU (KACC's policy);
 *                       local: always progress where the completion happens; poll: only
 *                       inside the rank's own MPI calls (MPI_Test/Wait...), as a library
 *                       without interrupt-driven progress would.
 *   UKMPI_COLL_<KIND>   algorithm for one kind (BCAST, ALLREDUCE, ...): a name from
 *                       cad_alg_name ("binomial", "chain", "ring", ...) or "auto".
 *   UKMPI_COLL_CHUNK    pipeline segment in bytes for chain/ring algorithms.
 */
#ifndef MPIX_H
#define MPIX_H
#include "mpi.h"
#include <stdint.h>

#define UKMPI_MPIX 1

/* Counters of this rank's collective progress (indices into MPIX_Cad_stats' array). */
enum {
    MPIX_CAD_ISSUED,   /* graphs issued */
    MPIX_CAD_NODES,    /* SEND/RECV/CALC nodes started */
    MPIX_CAD_LOCAL,    /* progress steps run where the completion happened (interrupt or
                          another rank's call) */
    MPIX_CAD_IPI,      /* progress steps handed to the home CPU by IPI */
    MPIX_CAD_HOME,     /* progress steps run on the home CPU without an IPI (completion
                          happened there, or in the rank's own MPI call) */
    MPIX_CAD_POLLED,   /* progress steps run inside MPI_Test/Wait (poll policy) */
    MPIX_CAD_DEFERRED, /* user-op CALC nodes deferred to the rank's own context */
    MPIX_CAD_NSTATS = 8
};

/* Task context: copy this rank's counters (since MPI_Init) into out[MPIX_CAD_NSTATS]. */
int MPIX_Cad_stats(uint64_t out[MPIX_CAD_NSTATS]);

/*
 * Interrupt-driven progress latency: for each SEND node started because a RECV of the same
 * graph completed inside the NIC interrupt, the TSC cycles from that interrupt's entry to
 * the SEND being handed to the TCP stack. Copies up to `max` samples recorded for this rank
 * since the previous call (the engine keeps the last 4096) and returns how many.
 */
int MPIX_Cad_latency(uint64_t *cycles, int max);

/* Task context: TSC ticks per second (to turn the samples into time). */
uint64_t MPIX_Tsc_hz(void);

/*
 * A program's own CAD graph (KACC's user-level API; build it with <cad.h>, on ukmpicc's
 * include path: cad_init/cad_send/cad_recv/cad_calc/cad_connect/cad_finalize, peers as
 * ranks of comm, messages on comm's collective traffic with tags of the program's
 * choosing, no user ops). MPIX_Cad_start validates it again against what the kernel knows (the rank's
 * partition, the communicator) and starts it as a request that MPI_Wait/MPI_Test
 * complete. The kernel runs its own copy, taken at the start: changes to the graph after
 * the call have no effect (the buffers it names must stay, of course). An invalid graph
 * starts nothing: MPI_ERR_ARG (through comm's error handler), and MPIX_Cad_error gives
 * the reason, naming the node ("node 7 (RECV): ...").
 */
struct cad_graph;
int MPIX_Cad_start(struct cad_graph *g, size_t bytes, MPI_Comm comm, MPI_Request *req);
int MPIX_Cad_error(char *msg, int len);

#endif
