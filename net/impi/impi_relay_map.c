/*
 * impi_relay_map.c: the relay's Host-Proc ID tables. A's real procs get global ids
 * (hostid = the global address of the owning trunk relay, pid = A-local index); every
 * external client's real procs get private ids (hostid = the private address of the owning
 * trunk relay, pid = the proc's index among all external procs, `out` side order). Indices
 * as pids make the synthetic ids unique per hostid by construction, also when the hosts of
 * several external clients share a trunk's private address. Real ids are found through
 * a hash table built once the tables are complete.
 */
#include "impi_relay.h"
#include "impi_util.h"
#include <stdlib.h>

/* Where the clients' data start in a COLL reply's payload: after the label and the mask. */
#define REPLY_DATA_OFF (2 * IMPI_INT4_LEN)

/* Main thread: see impi_relay.h. */
int relay_map_job(struct relay_map *m, int nclients, int me)
{
    /* A 1-client job has nobody outside the private cluster for the relay to reach. */
    if (nclients < 2 || nclients > IMPI_MAX_CLIENTS || me < 0 || me >= nclients)
        return IMPI_E_BAD_VALUE;
    m->nclients = nclients;
    m->me = me;
    m->next = 0;
    for (int c = 0; c < nclients; c++)
        if (c != me)
            m->ext[m->next++] = c;
    return IMPI_OK;
}

/* Main thread: external client e's ordinal from its client rank c (c != m->me). */
static int ext_ordinal(const struct relay_map *m, int c)
{
    return c < m->me ? c : c - 1;
}

/* Main thread: see impi_relay.h. */
int relay_owner(int32_t n, int K, int32_t i)
{
    return (int)((int64_t)i * K / n);
}

/* Main thread: see impi_relay.h. */
int32_t relay_block(int32_t n, int K, int k)
{
    int32_t c = 0;
    for (int32_t i = 0; i < n; i++)
        c += relay_owner(n, K, i) == k;
    return c;
}

/* Minimum of a per-host Uint4 array. */
static uint32_t min32(const uint8_t *d, int32_t n)
{
    uint32_t m = 0xffffffffu;
    for (int32_t i = 0; i < n; i++)
        if (impi_get32(d + 4 * i) < m)
            m = impi_get32(d + 4 * i);
    return m;
}

/* Writes the trunk-side view of a label for one client of n procs: K hosts for per-host
 * labels, the owner relay's address for every proc. e < 0: A in the global view (global
 * addresses, pids 0..n-1); else external client e in the private view (private addresses
 * and the ports for e, pids from p0, its first proc's index on the out side). */
static int trunk_view(const struct relay_map *m, uint32_t label, int32_t n, int e, int32_t p0,
                      uint32_t ack, uint32_t hiw, uint8_t *out, uint32_t cap, uint32_t *olen)
{
    bool glob = e < 0;
    uint32_t len = 0;
    int K = m->K;
    switch (label) {
    case IMPI_C_NHOSTS:
        len = 4;
        if (cap >= len)
            impi_put32(out, (uint32_t)K);
        break;
    case IMPI_H_IPV6:
        len = 16u * (uint32_t)K;
        for (int k = 0; k < K && cap >= len; k++)
            impi_hostid_from_ipv4(out + 16 * k, glob ? m->tr[k].glob_ip : m->tr[k].priv_ip);
        break;
    case IMPI_H_PORT:
    case IMPI_H_NPROCS:
    case IMPI_H_ACKMARK:
    case IMPI_H_HIWATER:
        len = 4u * (uint32_t)K;
        for (int k = 0; k < K && cap >= len; k++) {
            uint32_t v = label == IMPI_H_PORT ? (glob ? m->tr[k].glob_port : m->tr[k].priv_port[e])
                         : label == IMPI_H_NPROCS  ? (uint32_t)relay_block(n, K, k)
                         : label == IMPI_H_ACKMARK ? ack
                                                   : hiw;
            impi_put32(out + 4 * k, v);
        }
        break;
    case IMPI_P_IPV6:
        len = 16u * (uint32_t)n;
        for (int32_t i = 0; i < n && cap >= len; i++) {
            const struct relay_trunk *t = &m->tr[relay_owner(n, K, i)];
            impi_hostid_from_ipv4(out + 16 * i, glob ? t->glob_ip : t->priv_ip);
        }
        break;
    case IMPI_P_PID:
        len = 8u * (uint32_t)n;
        for (int32_t i = 0; i < n && cap >= len; i++)
            impi_put64(out + 8 * i, (uint64_t)(p0 + i));
        break;
    default:
        return IMPI_E_BAD_LABEL;
    }
    if (len > cap)
        return IMPI_E_NOSPACE;
    *olen = len;
    return IMPI_OK;
}

/* Main thread: see impi_relay.h. */
int relay_to_global(const struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    uint8_t *out, uint32_t cap, uint32_t *olen)
{
    const struct impi_label_info *li = impi_label_lookup(label);
    if (!li)
        return IMPI_E_BAD_LABEL;
    if (li->scope == IMPI_PER_CLIENT && label != IMPI_C_NHOSTS) {
        if (alen > cap)
            return IMPI_E_NOSPACE;
        memcpy(out, a, alen); /* version, nprocs, datalen, tagub, coll params: unchanged */
        *olen = alen;
        return IMPI_OK;
    }
    /* ACKMARK/HIWATER: announce A's own minimum on every relay host, so that B computes
     * min(A, B) exactly as A will (end-to-end flow control needs both ends to agree). */
    uint32_t v = (label == IMPI_H_ACKMARK || label == IMPI_H_HIWATER) ? min32(a, alen / 4) : 0;
    return trunk_view(m, label, m->in.nprocs, -1, 0, v, v, out, cap, olen);
}

/* Copies a per-host or per-proc array into side s. */
static int keep_side(struct relay_side *s, uint32_t label, const uint8_t *d, uint32_t len)
{
    switch (label) {
    case IMPI_C_NHOSTS:
        s->nhosts = (int32_t)impi_get32(d);
        s->ip = calloc((size_t)s->nhosts, sizeof *s->ip);
        s->port = calloc((size_t)s->nhosts, sizeof *s->port);
        s->hnprocs = calloc((size_t)s->nhosts, sizeof *s->hnprocs);
        return s->ip && s->port && s->hnprocs ? IMPI_OK : IMPI_E_NOSPACE;
    case IMPI_C_NPROCS:
        s->nprocs = (int32_t)impi_get32(d);
        s->proc = calloc((size_t)s->nprocs, sizeof *s->proc);
        s->proc_host = calloc((size_t)s->nprocs, sizeof *s->proc_host);
        s->owner = calloc((size_t)s->nprocs, sizeof *s->owner);
        return s->proc && s->proc_host && s->owner ? IMPI_OK : IMPI_E_NOSPACE;
    case IMPI_H_IPV6:
        for (int32_t h = 0; h < s->nhosts; h++)
            s->ip[h] = impi_hostid_ipv4(d + 16 * h);
        break;
    case IMPI_H_PORT:
        for (int32_t h = 0; h < s->nhosts; h++)
            s->port[h] = (uint16_t)impi_get32(d + 4 * h);
        break;
    case IMPI_H_NPROCS:
        for (int32_t h = 0; h < s->nhosts; h++)
            s->hnprocs[h] = (int32_t)impi_get32(d + 4 * h);
        break;
    case IMPI_H_ACKMARK:
        s->ackmark = min32(d, s->nhosts);
        break;
    case IMPI_H_HIWATER:
        s->hiwater = min32(d, s->nhosts);
        break;
    case IMPI_P_IPV6:
        for (int32_t i = 0; i < s->nprocs; i++)
            memcpy(s->proc[i].hostid, d + 16 * i, IMPI_HOSTID_LEN);
        break;
    case IMPI_P_PID:
        for (int32_t i = 0; i < s->nprocs; i++)
            s->proc[i].pid = (int64_t)impi_get64(d + 8 * i);
        break;
    }
    (void)len;
    return IMPI_OK;
}

/* Records the external clients' part of a label in the out side: their tables
 * concatenated in client order (counts summed), as if one client had announced them all. */
static int keep_ext(struct relay_map *m, uint32_t label, const uint8_t *reply, const uint32_t *off,
                    const uint32_t *len)
{
    if (label == IMPI_C_NHOSTS || label == IMPI_C_NPROCS) {
        uint32_t sum = 0;
        for (int e = 0; e < m->next; e++)
            sum += impi_get32(reply + REPLY_DATA_OFF + off[m->ext[e]]);
        uint8_t d[IMPI_INT4_LEN];
        impi_put32(d, sum);
        return keep_side(&m->out, label, d, sizeof d);
    }
    if (impi_label_lookup(label)->scope == IMPI_PER_CLIENT)
        return IMPI_OK; /* nothing of these is kept: the private replies copy them */
    uint32_t total = 0;
    for (int e = 0; e < m->next; e++)
        total += len[m->ext[e]];
    uint8_t *d = malloc(total ? total : 1);
    if (!d)
        return IMPI_E_NOSPACE;
    uint32_t pos = 0;
    for (int e = 0; e < m->next; e++) {
        memcpy(d + pos, reply + REPLY_DATA_OFF + off[m->ext[e]], len[m->ext[e]]);
        pos += len[m->ext[e]];
    }
    int r = keep_side(&m->out, label, d, total);
    free(d);
    return r;
}

/* Main thread: see impi_relay.h. */
int relay_map_label(struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    const uint8_t *reply, uint32_t rlen)
{
    uint32_t lab, mask, off[IMPI_MAX_CLIENTS], len[IMPI_MAX_CLIENTS];
    int e = impi_coll_split(reply, rlen, (uint32_t)m->nclients, m->gshape, &lab, &mask, off, len);
    if (e)
        return e;
    if (lab != label || mask != (uint32_t)((1ull << m->nclients) - 1))
        return IMPI_E_BAD_VALUE; /* LAM assumes every client submits every label */
    if (label == IMPI_C_NHOSTS || label == IMPI_C_NPROCS)
        for (int c = 0; c < m->nclients; c++) {
            int32_t v = (int32_t)impi_get32(reply + REPLY_DATA_OFF + off[c]);
            if (v < 1 || v > (label == IMPI_C_NHOSTS ? IMPI_MAX_HOSTS : IMPI_MAX_PROCS))
                return IMPI_E_BAD_VALUE;
            if (label == IMPI_C_NHOSTS)
                m->gshape[c].nhosts = v;
            else
                m->gshape[c].nprocs = v;
        }
    if (label == IMPI_C_DATALEN)
        for (int c = 0; c < m->nclients; c++) {
            uint32_t v = impi_get32(reply + REPLY_DATA_OFF + off[c]);
            if (!m->maxlen || v < m->maxlen)
                m->maxlen = v; /* the job's maxlen is the minimum over all clients */
        }
    if ((e = keep_ext(m, label, reply, off, len)))
        return e;
    return keep_side(&m->in, label, a, alen);
}

/* Main thread: see impi_relay.h. */
int relay_private_reply(const struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                        const uint8_t *reply, uint32_t rlen, uint8_t *out, uint32_t cap,
                        uint32_t *olen)
{
    uint32_t lab, mask, off[IMPI_MAX_CLIENTS], len[IMPI_MAX_CLIENTS];
    int e = impi_coll_split(reply, rlen, (uint32_t)m->nclients, m->gshape, &lab, &mask, off, len);
    if (e)
        return e;
    const struct impi_label_info *li = impi_label_lookup(label);
    uint32_t pos = 16;
    int32_t p0 = 0; /* the out-side index of client c's first proc */
    for (int c = 0; c < m->nclients; c++) {
        uint32_t n;
        if (c == m->me) {
            if (pos + alen > cap)
                return IMPI_E_NOSPACE;
            memcpy(out + pos, a, alen); /* A sees itself exactly as it introduced itself */
            n = alen;
        } else if (li->scope == IMPI_PER_CLIENT && label != IMPI_C_NHOSTS) {
            n = len[c];
            if (pos + n > cap)
                return IMPI_E_NOSPACE;
            memcpy(out + pos, reply + REPLY_DATA_OFF + off[c], n);
        } else {
            e = trunk_view(m, label, m->gshape[c].nprocs, ext_ordinal(m, c), p0, m->out.ackmark,
                           m->out.hiwater, out + pos, cap - pos, &n);
            if (e)
                return e;
        }
        if (c != m->me)
            p0 += m->gshape[c].nprocs; /* known: C_NPROCS comes before every label using it */
        pos += n;
    }
    impi_coll_reply_hdr(out, label, mask, pos - 16);
    *olen = pos;
    return IMPI_OK;
}

/* Fills proc_host for one side. */
static int finish_hosts(struct relay_side *s)
{
    int32_t i = 0;
    for (int32_t h = 0; h < s->nhosts; h++)
        for (int32_t k = 0; k < s->hnprocs[h]; k++, i++)
            if (i < s->nprocs)
                s->proc_host[i] = h;
    if (i != s->nprocs || !s->nhosts)
        return IMPI_E_BAD_VALUE;
    return IMPI_OK;
}

/* Any context: the hash of a proc id (FNV-1a over the host id and the pid). */
static uint32_t id_hash(const struct impi_proc *p)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < IMPI_HOSTID_LEN; i++)
        h = (h ^ p->hostid[i]) * 16777619u;
    uint64_t v = (uint64_t)p->pid;
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (uint8_t)v) * 16777619u;
    return h;
}

/* Builds s->ids from s->proc; a real id announced twice makes the tables ambiguous. */
static int build_ids(struct relay_side *s)
{
    uint32_t n = 2;
    while (n < 2u * (uint32_t)s->nprocs)
        n <<= 1;
    s->ids.mask = n - 1;
    s->ids.slot = malloc(n * sizeof *s->ids.slot);
    if (!s->ids.slot)
        return IMPI_E_NOSPACE;
    for (uint32_t k = 0; k < n; k++)
        s->ids.slot[k] = -1;
    for (int32_t i = 0; i < s->nprocs; i++) {
        uint32_t k = id_hash(&s->proc[i]) & s->ids.mask;
        for (; s->ids.slot[k] >= 0; k = (k + 1) & s->ids.mask)
            if (impi_proc_eq(&s->proc[s->ids.slot[k]], &s->proc[i]))
                return IMPI_E_BAD_VALUE;
        s->ids.slot[k] = i;
    }
    return IMPI_OK;
}

/* Main thread: see impi_relay.h. */
int relay_map_finish(struct relay_map *m)
{
    int e;
    if (!m->in.proc || !m->out.proc || !m->in.ip || !m->out.ip || !m->maxlen)
        return IMPI_E_LABEL_ORDER; /* a label never came */
    if ((e = finish_hosts(&m->in)) || (e = finish_hosts(&m->out)))
        return e;
    for (int32_t i = 0; i < m->in.nprocs; i++)
        m->in.owner[i] = relay_owner(m->in.nprocs, m->K, i);
    /* Each external client's procs are split into K blocks of their own: trunk k is one
     * host of every external client in A's view. */
    if (!(m->out.ext_of = calloc((size_t)m->out.nprocs, sizeof *m->out.ext_of)))
        return IMPI_E_NOSPACE;
    int32_t j = 0;
    for (int x = 0; x < m->next; x++) {
        int32_t n = m->gshape[m->ext[x]].nprocs;
        for (int32_t i = 0; i < n && j < m->out.nprocs; i++, j++) {
            m->out.owner[j] = relay_owner(n, m->K, i);
            m->out.ext_of[j] = x;
        }
    }
    if (j != m->out.nprocs)
        return IMPI_E_BAD_VALUE;
    if ((e = build_ids(&m->in)) || (e = build_ids(&m->out)))
        return e;
    m->complete = true;
    return IMPI_OK;
}

/* Hash lookup of a real id in side s. */
static int32_t by_real(const struct relay_side *s, const struct impi_proc *p)
{
    for (uint32_t k = id_hash(p) & s->ids.mask; s->ids.slot[k] >= 0; k = (k + 1) & s->ids.mask)
        if (impi_proc_eq(&s->proc[s->ids.slot[k]], p))
            return s->ids.slot[k];
    return -1;
}

/* Main thread: see impi_relay.h. */
int32_t relay_in_by_real(const struct relay_map *m, const struct impi_proc *p)
{
    return by_real(&m->in, p);
}

/* Main thread: see impi_relay.h. */
int32_t relay_out_by_real(const struct relay_map *m, const struct impi_proc *p)
{
    return by_real(&m->out, p);
}

/* Main thread: the global-view hosts of the external clients before A (A's K relay hosts
 * come right after them). */
static int ghosts_before_me(const struct relay_map *m)
{
    int n = 0;
    for (int c = 0; c < m->me; c++)
        n += m->gshape[c].nhosts;
    return n;
}

/* Main thread: see impi_relay.h. */
int relay_gidx_out(const struct relay_map *m, int32_t j)
{
    return j < ghosts_before_me(m) ? j : j + m->K;
}

/* Main thread: see impi_relay.h. */
int relay_gidx_trunk(const struct relay_map *m, int k)
{
    return ghosts_before_me(m) + k;
}

/* Main thread: see impi_relay.h. In the private view every client before A has K hosts. */
int relay_pidx_in(const struct relay_map *m, int32_t h)
{
    return m->me * m->K + h;
}

/* Main thread: see impi_relay.h. Before client c: K hosts per client but A, A's own. */
int relay_pidx_trunk(const struct relay_map *m, int e, int k)
{
    int c = m->ext[e];
    return c < m->me ? c * m->K + k : (c - 1) * m->K + m->in.nhosts + k;
}

/* Main thread: see impi_relay.h. */
void relay_global_id(const struct relay_map *m, int32_t i, struct impi_proc *p)
{
    impi_hostid_from_ipv4(p->hostid, m->tr[m->in.owner[i]].glob_ip);
    p->pid = i;
}

/* Main thread: see impi_relay.h. */
void relay_private_id(const struct relay_map *m, int32_t j, struct impi_proc *p)
{
    impi_hostid_from_ipv4(p->hostid, m->tr[m->out.owner[j]].priv_ip);
    p->pid = j;
}

/* Main thread: see impi_relay.h. */
int32_t relay_in_by_global(const struct relay_map *m, const struct impi_proc *p)
{
    struct impi_proc q;
    if (p->pid < 0 || p->pid >= m->in.nprocs)
        return -1;
    relay_global_id(m, (int32_t)p->pid, &q);
    return impi_proc_eq(&q, p) ? (int32_t)p->pid : -1;
}

/* Main thread: see impi_relay.h. */
int32_t relay_out_by_private(const struct relay_map *m, const struct impi_proc *p)
{
    struct impi_proc q;
    if (p->pid < 0 || p->pid >= m->out.nprocs)
        return -1;
    relay_private_id(m, (int32_t)p->pid, &q);
    return impi_proc_eq(&q, p) ? (int32_t)p->pid : -1;
}

/* Main thread: see impi_relay.h. */
void relay_map_print(const struct relay_map *m, int self, FILE *f)
{
    fprintf(f,
            "impi-relay[%d]: tables: client %d of %d (private, %d procs) <-> %d external "
            "client(s) (%d procs), %d trunk(s), maxlen %u, ackmark %u, hiwater %u\n",
            self, m->me, m->nclients, m->in.nprocs, m->next, m->out.nprocs, m->K, m->maxlen,
            m->in.ackmark < m->out.ackmark ? m->in.ackmark : m->out.ackmark,
            m->in.hiwater < m->out.hiwater ? m->in.hiwater : m->out.hiwater);
    for (int32_t i = 0; i < m->in.nprocs; i++)
        fprintf(f,
                "impi-relay[%d]: map private-proc %d real %s:%lld -> global %s:%d via trunk %d\n",
                self, i, impi_ipstr(impi_hostid_ipv4(m->in.proc[i].hostid)),
                (long long)m->in.proc[i].pid, impi_ipstr(m->tr[m->in.owner[i]].glob_ip), i,
                m->in.owner[i]);
    for (int32_t j = 0; j < m->out.nprocs; j++)
        fprintf(f,
                "impi-relay[%d]: map external-proc %d real %s:%lld -> private %s:%d via trunk %d "
                "(client %d)\n",
                self, j, impi_ipstr(impi_hostid_ipv4(m->out.proc[j].hostid)),
                (long long)m->out.proc[j].pid, impi_ipstr(m->tr[m->out.owner[j]].priv_ip), j,
                m->out.owner[j], m->ext[m->out.ext_of[j]]);
    fflush(f);
}
