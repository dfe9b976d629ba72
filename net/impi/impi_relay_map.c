/*
 * impi_relay_map.c: the relay's Host-Proc ID tables. A's real procs get global ids
 * (hostid = the global address of the owning trunk relay, pid = A-local index); B's real
 * procs get private ids (hostid = the private address of the owning trunk relay, pid =
 * B-local index). Indices as pids make the synthetic ids unique per hostid by construction.
 */
#include "impi_relay.h"
#include "impi_util.h"
#include <stdlib.h>

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

/* Writes the trunk-side view of a label: K hosts for per-host labels, the owner relay's
 * address for every proc of an n-proc side. glob selects global or private addresses. */
static int trunk_view(const struct relay_map *m, uint32_t label, int32_t n, bool glob, uint32_t ack,
                      uint32_t hiw, uint8_t *out, uint32_t cap, uint32_t *olen)
{
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
            uint32_t v = label == IMPI_H_PORT     ? (glob ? m->tr[k].glob_port : m->tr[k].priv_port)
                         : label == IMPI_H_NPROCS ? (uint32_t)relay_block(n, K, k)
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
            impi_put64(out + 8 * i, (uint64_t)i);
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
    return trunk_view(m, label, m->in.nprocs, true, v, v, out, cap, olen);
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

/* Main thread: see impi_relay.h. */
int relay_map_label(struct relay_map *m, uint32_t label, const uint8_t *a, uint32_t alen,
                    const uint8_t *reply, uint32_t rlen)
{
    uint32_t lab, mask, off[IMPI_MAX_CLIENTS], len[IMPI_MAX_CLIENTS];
    int e = impi_coll_split(reply, rlen, (uint32_t)m->nclients, m->gshape, &lab, &mask, off, len);
    if (e)
        return e;
    if (lab != label || mask != (1u << m->nclients) - 1)
        return IMPI_E_BAD_VALUE; /* LAM assumes every client submits every label */
    const uint8_t *b = reply + 8 + off[m->ext];
    uint32_t blen = len[m->ext];
    const struct impi_label_info *li = impi_label_lookup(label);
    if (li->scope == IMPI_PER_CLIENT && blen <= 8)
        memcpy(m->cdata_out[li->order], b, blen);
    if (label == IMPI_C_NHOSTS || label == IMPI_C_NPROCS)
        for (int c = 0; c < m->nclients; c++) {
            int32_t v = (int32_t)impi_get32(reply + 8 + off[c]);
            if (v < 1 || v > (label == IMPI_C_NHOSTS ? IMPI_MAX_HOSTS : IMPI_MAX_PROCS))
                return IMPI_E_BAD_VALUE;
            if (label == IMPI_C_NHOSTS)
                m->gshape[c].nhosts = v;
            else
                m->gshape[c].nprocs = v;
        }
    if (label == IMPI_C_DATALEN)
        for (int c = 0; c < m->nclients; c++) {
            uint32_t v = impi_get32(reply + 8 + off[c]);
            if (!m->maxlen || v < m->maxlen)
                m->maxlen = v; /* the job's maxlen is the minimum over all clients */
        }
    if ((e = keep_side(&m->out, label, b, blen)))
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
            memcpy(out + pos, reply + 8 + off[c], n);
        } else {
            e = trunk_view(m, label, m->out.nprocs, false, m->out.ackmark, m->out.hiwater,
                           out + pos, cap - pos, &n);
            if (e)
                return e;
        }
        pos += n;
    }
    impi_coll_reply_hdr(out, label, mask, pos - 16);
    *olen = pos;
    return IMPI_OK;
}

/* Fills proc_host and owner for one side. */
static int finish_side(struct relay_side *s, int K)
{
    int32_t i = 0;
    for (int32_t h = 0; h < s->nhosts; h++)
        for (int32_t k = 0; k < s->hnprocs[h]; k++, i++)
            if (i < s->nprocs)
                s->proc_host[i] = h;
    if (i != s->nprocs || !s->nhosts)
        return IMPI_E_BAD_VALUE;
    for (i = 0; i < s->nprocs; i++)
        s->owner[i] = relay_owner(s->nprocs, K, i);
    return IMPI_OK;
}

/* Main thread: see impi_relay.h. */
int relay_map_finish(struct relay_map *m)
{
    int e;
    if (!m->in.proc || !m->out.proc || !m->in.ip || !m->out.ip || !m->maxlen)
        return IMPI_E_LABEL_ORDER; /* a label never came */
    if ((e = finish_side(&m->in, m->K)) || (e = finish_side(&m->out, m->K)))
        return e;
    m->complete = true;
    return IMPI_OK;
}

/* Linear search: jobs behind one relay are small, and it keeps the tables trivially
 * correct; a hash would be the next step for thousands of procs. */
static int32_t by_real(const struct relay_side *s, const struct impi_proc *p)
{
    for (int32_t i = 0; i < s->nprocs; i++)
        if (impi_proc_eq(&s->proc[i], p))
            return i;
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
            "impi-relay[%d]: tables: client %d (private, %d procs) <-> client %d (%d procs), "
            "%d trunk(s), maxlen %u, ackmark %u, hiwater %u\n",
            self, m->me, m->in.nprocs, m->ext, m->out.nprocs, m->K, m->maxlen,
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
                "impi-relay[%d]: map external-proc %d real %s:%lld -> private %s:%d via trunk %d\n",
                self, j, impi_ipstr(impi_hostid_ipv4(m->out.proc[j].hostid)),
                (long long)m->out.proc[j].pid, impi_ipstr(m->tr[m->out.owner[j]].priv_ip), j,
                m->out.owner[j]);
    fflush(f);
}
