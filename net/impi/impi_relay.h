/*
 * impi_relay.h: the IMPI relay (after the seed paper's design). One relay process per
 * front-end: towards the private cluster (client "A", here the `in` side) it is the IMPI
 * server and a set of gateway hosts that own every external proc; towards the real server
 * and the external client ("B", the `out` side) it is client A, whose hosts are the relays.
 * K relays on K front-ends share one cluster with destination-based trunking: trunk k
 * owns a contiguous block of each side's procs, so traffic to a proc always crosses the
 * relay that owns that proc.
 */
#ifndef IMPI_RELAY_H
#define IMPI_RELAY_H
#include "impi_conn.h"
#include "impi_wire.h"
#include <stdio.h>

#define RELAY_MAX_TRUNKS 16

struct relay_trunk {
    uint32_t priv_ip, glob_ip; /* host order */
    uint16_t priv_port, glob_port;
    uint16_t ctrl_port; /* trunk control listener (private address): links from other trunks */
};

/* The real hosts and procs of one cluster, as its own client announced them. */
struct relay_side {
    int32_t nhosts, nprocs;
    uint32_t *ip;     /* [nhosts] */
    uint16_t *port;   /* [nhosts] */
    int32_t *hnprocs; /* [nhosts] */
    uint32_t ackmark, hiwater;
    struct impi_proc *proc; /* [nprocs] real ids */
    int32_t *proc_host;     /* [nprocs] host index (by H_NPROCS ranges, as LAM routes) */
    int32_t *owner;         /* [nprocs] trunk that owns the proc in the other side's view */
};

/* The Host-Proc ID tables: global mapping (what the server and B see) and private mapping
 * (what A sees) are both derived from these plus the trunk addresses. */
struct relay_map {
    int nclients, me, ext; /* client ranks: A's, and the external client's */
    int K;
    struct relay_trunk tr[RELAY_MAX_TRUNKS];
    struct relay_side in, out;
    uint32_t maxlen;
    uint8_t *version_a, *version_b;     /* raw C_* data kept for the private replies */
    uint8_t cdata_out[IMPI_NLABELS][8]; /* B's per-client values (C_* labels) */
    struct impi_client_shape gshape[IMPI_MAX_CLIENTS]; /* shapes in the global view */
    bool complete;
};

/* Main thread: the trunk that owns proc i of n (contiguous blocks, rank order kept). */
int relay_owner(int32_t n, int K, int32_t i);
/* Main thread: how many of n procs trunk k owns. */
int32_t relay_block(int32_t n, int K, int k);
/* Main thread: turn A's submission for `label` (data a[0..alen), validated) into the
 * relay's global submission in out (capacity cap); *olen receives its length. */
int relay_to_global(const struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    uint8_t *out, uint32_t cap, uint32_t *olen);
/* Main thread: record a label from A's submission and the server's reply payload
 * (label, mask, data); learns B's tables. Called on the master and, with the records the
 * master forwards, on every secondary relay. */
int relay_map_label(struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    const uint8_t *reply, uint32_t rlen);
/* Main thread: build the reply A receives for `label` (a complete COLL command) in out. */
int relay_private_reply(const struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                        const uint8_t *reply, uint32_t rlen, uint8_t *out, uint32_t cap,
                        uint32_t *olen);
/* Main thread: derive owners and proc hosts once every label is in. */
int relay_map_finish(struct relay_map *m);
/* Main thread: proc id lookups; return the proc index or -1. */
int32_t relay_in_by_real(const struct relay_map *m, const struct impi_proc *p);
int32_t relay_out_by_real(const struct relay_map *m, const struct impi_proc *p);
int32_t relay_in_by_global(const struct relay_map *m, const struct impi_proc *p);
int32_t relay_out_by_private(const struct relay_map *m, const struct impi_proc *p);
/* Main thread: the id of A's proc i in the global view, of B's proc j in the private view. */
void relay_global_id(const struct relay_map *m, int32_t i, struct impi_proc *p);
void relay_private_id(const struct relay_map *m, int32_t j, struct impi_proc *p);
/* Main thread: print the tables and the trunk mapping (checked by the tests). */
void relay_map_print(const struct relay_map *m, int self, FILE *f);
#endif
