/*
 * impi_uk.h: a unikernel job as one client of an IMPI job (docs/architecture.md
 * §3.13): the client start-up with the IMPI server (impi_client.c) and the host
 * connections to the other clients' hosts (impi_host.c), which the MPI engine's IMPI
 * links then use (mpi/core/mpe_impi.h). Protocol: shared/specs/impi-protocol.md §3-§4, §9.
 */
#ifndef UK_IMPI_UK_H
#define UK_IMPI_UK_H
#include "impi_wire.h"
#include "mpe_transport.h"
#include <stdint.h>

#define IMPI_UK_HOST_PORT  7102 /* where each node listens for other clients' hosts */
#define IMPI_UK_TABLE_PORT 7103 /* where node 0 hands the start-up's tables to the others */

/* What job.conf says (qemu/ukrun --impi-server ...). */
struct impi_uk_cfg {
    int on;
    uint32_t server_ip; /* host byte order */
    uint16_t server_port;
    int client;    /* our client number */
    uint32_t auth; /* IMPI_AUTH_NONE or IMPI_AUTH_KEY */
    uint64_t key;
    uint64_t buffer; /* bytes for unexpected messages from other clients */
};

/* What the start-up decided: the whole job's layout, every host and proc. */
struct impi_job {
    int nclients, client;
    int32_t client_first[IMPI_MAX_CLIENTS + 1]; /* world rank of each client's first proc */
    int nhosts, self_host;
    int32_t *host_first;               /* [nhosts + 1] */
    uint32_t *host_ip;                 /* [nhosts] */
    uint16_t *host_port;               /* [nhosts] */
    struct impi_proc *procs;           /* [world size] */
    uint32_t maxlen, ackmark, hiwater; /* the job's minima */
};

/* impi_client.c. Task context, on every node of a job of `size` ranks on `nodes` nodes
 * (addresses ips[nodes]), `node` being this one: node 0 runs the start-up with the server
 * (AUTH, IMPI, the 14 COLL labels, DONE) for every node, the others get its transcript
 * (see the top of impi_client.c); node 0's server connection stays open for
 * impi_client_fini. On each node, `ready` runs with the complete tables before node 0
 * sends DONE (no other client's host can connect before our DONE). 0, or -1 after
 * printing why. */
int impi_client_start(const struct impi_uk_cfg *cfg, int node, int nodes, int size,
                      const uint32_t *ips, struct impi_job *job,
                      int (*ready)(const struct impi_job *job));
/* Task context, at the end of a job whose hosts all exchanged FINI: the FINI command. */
void impi_client_fini(void);

/* impi_host.c. Task context, before impi_client_start: listen for other hosts. */
int impi_host_listen(void);
/* Task context, from `ready`: the engine's links exist; accept and connect them. */
void impi_host_tables(struct mpe_node *n, const struct impi_job *job);
/* Task context, after DONE: connect to every lower-indexed host of other clients, wait
 * for the higher-indexed ones. 0, or -1 after printing why. */
int impi_host_dance(void);
/* Task context, after every local rank ended well: FINI both ways on every link. 0, or
 * -1 after printing why. */
int impi_host_end(void);

/* mpe_uk.c: the job's page table around a callback that touches rank memory. */
uint64_t mpe_uk_enter(void);
void mpe_uk_leave(uint64_t old);

#endif
