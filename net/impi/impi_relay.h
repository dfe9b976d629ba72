/*
 * impi_relay.h: the IMPI relay (after the seed paper's design). One relay process per
 * front-end: towards the private cluster (client "A", here the `in` side) it is the IMPI
 * server and a set of gateway hosts that own every external proc; towards the real server
 * and every other client (the external clients, together the `out` side, each directly on
 * the global network or behind its own relay) it is client A, whose hosts are the relays.
 * K relays on K front-ends share one cluster with destination-based trunking: trunk k
 * owns a contiguous block of A's procs and of each external client's procs, so traffic to
 * a proc always crosses the relay that owns that proc.
 */
#ifndef IMPI_RELAY_H
#define IMPI_RELAY_H
#include "impi_conn.h"
#include "impi_wire.h"
#include <stdio.h>

#define RELAY_MAX_TRUNKS 16
/* External clients a job may have: every client but A. */
#define RELAY_MAX_EXT    (IMPI_MAX_CLIENTS - 1)

struct relay_trunk {
    uint32_t priv_ip, glob_ip; /* host order */
    /* A sees each external client as K hosts, one per trunk, all at the trunks' private
     * addresses: trunk k listens on one private port per external client (priv_port[e] for
     * the e-th external client in client order), since a host connecting to one of them
     * sends only its own index and the relay must know which of its hosts it reached. */
    uint16_t priv_port[RELAY_MAX_EXT];
    uint16_t glob_port;
    uint16_t ctrl_port; /* trunk control listener (private address): links from other trunks */
};

/* Open-addressing table from a real proc id to its index in a side (built once the tables
 * are complete; the per-packet lookups use it). */
struct relay_idtab {
    uint32_t mask; /* slots - 1 (a power of two, at least twice the procs) */
    int32_t *slot; /* proc index, -1 for empty */
};

/* The real hosts and procs of A (`in`), or of every external client in client order
 * (`out`: their tables concatenated), as the clients announced them. */
struct relay_side {
    int32_t nhosts, nprocs;
    uint32_t *ip;     /* [nhosts] */
    uint16_t *port;   /* [nhosts] */
    int32_t *hnprocs; /* [nhosts] */
    uint32_t ackmark, hiwater;
    struct impi_proc *proc; /* [nprocs] real ids */
    int32_t *proc_host;     /* [nprocs] host index (by H_NPROCS ranges, as LAM routes) */
    int32_t *owner;         /* [nprocs] trunk that owns the proc in the other side's view */
    int32_t *ext_of;        /* out: [nprocs] the external client (ordinal e) of the proc */
    struct relay_idtab ids; /* real id -> proc index */
};

/* The Host-Proc ID tables: global mapping (what the server and the external clients see)
 * and private mapping (what A sees) are both derived from these plus the trunk addresses. */
struct relay_map {
    int nclients, me;       /* the job's clients; A's client rank */
    int next;               /* external clients: nclients - 1 */
    int ext[RELAY_MAX_EXT]; /* their client ranks in order: ext[e] is external client e */
    int K;
    struct relay_trunk tr[RELAY_MAX_TRUNKS];
    struct relay_side in, out;
    uint32_t maxlen;
    struct impi_client_shape gshape[IMPI_MAX_CLIENTS]; /* shapes in the global view */
    bool complete;
};

/* Main thread: the job's size and A's rank are known; 0, or IMPI_E_BAD_VALUE. */
int relay_map_job(struct relay_map *m, int nclients, int me);
/* Main thread: the trunk that owns proc i of n (contiguous blocks, rank order kept). */
int relay_owner(int32_t n, int K, int32_t i);
/* Main thread: how many of n procs trunk k owns. */
int32_t relay_block(int32_t n, int K, int k);
/* Main thread: turn A's submission for `label` (data a[0..alen), validated) into the
 * relay's global submission in out (capacity cap); *olen receives its length. */
int relay_to_global(const struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    uint8_t *out, uint32_t cap, uint32_t *olen);
/* Main thread: record a label from A's submission and the server's reply payload
 * (label, mask, data); learns the external clients' tables. Called on the master and, with the records the
 * master forwards, on every secondary relay. */
int relay_map_label(struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    const uint8_t *reply, uint32_t rlen);
/* Main thread: build the reply A receives for `label` (a complete COLL command) in out. */
int relay_private_reply(const struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                        const uint8_t *reply, uint32_t rlen, uint8_t *out, uint32_t cap,
                        uint32_t *olen);
/* Main thread: derive owners and proc hosts once every label is in. */
int relay_map_finish(struct relay_map *m);
/* Main thread, tables complete: host indices (spec §4: the higher one connects). Global
 * view: external host slot j (out side), this relay's own host as trunk k. Private view:
 * A's host h, and trunk k's host for external client e. */
int relay_gidx_out(const struct relay_map *m, int32_t j);
int relay_gidx_trunk(const struct relay_map *m, int k);
int relay_pidx_in(const struct relay_map *m, int32_t h);
int relay_pidx_trunk(const struct relay_map *m, int e, int k);
/* Main thread: proc id lookups; return the proc index or -1. */
int32_t relay_in_by_real(const struct relay_map *m, const struct impi_proc *p);
int32_t relay_out_by_real(const struct relay_map *m, const struct impi_proc *p);
int32_t relay_in_by_global(const struct relay_map *m, const struct impi_proc *p);
int32_t relay_out_by_private(const struct relay_map *m, const struct impi_proc *p);
/* Main thread: the id of A's proc i in the global view, of external proc j (out side
 * index) in the private view. */
void relay_global_id(const struct relay_map *m, int32_t i, struct impi_proc *p);
void relay_private_id(const struct relay_map *m, int32_t j, struct impi_proc *p);
/* Main thread: print the tables and the trunk mapping (checked by the tests). */
void relay_map_print(const struct relay_map *m, int self, FILE *f);
#endif
