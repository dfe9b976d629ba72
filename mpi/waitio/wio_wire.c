/*
 * wio_wire.c: the header and start-up payload codec of PROTOCOL.md (see wio_wire.h).
 */
#include "wio_wire.h"
#include <string.h>

/* Header field offsets (PROTOCOL.md 2). */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_TYPE = 5,
    OFF_FLAGS = 6,
    OFF_SEQ = 8,
    OFF_ACK = 12,
    OFF_SRC = 16,
    OFF_DST = 20,
    OFF_GROUP = 24,
    OFF_TAG = 32,
    OFF_LEN = 40,
    OFF_MSGID = 48,
    OFF_PLEN = 52,
    OFF_OFFSET = 56,
};

static const char *const err_names[WIO_E_NKINDS] = {
    [WIO_OK] = "ok",
    [WIO_E_MAGIC] = "bad magic",
    [WIO_E_VERSION] = "unsupported version",
    [WIO_E_FLAGS] = "non-zero flags",
    [WIO_E_TYPE] = "unknown type",
    [WIO_E_STATE] = "type not allowed in this connection state",
    [WIO_E_SEQ] = "wrong sequence number",
    [WIO_E_SRC] = "wrong source index",
    [WIO_E_DST] = "wrong destination index",
    [WIO_E_ACK] = "ack beyond the packets sent",
    [WIO_E_PLEN] = "bad payload length",
    [WIO_E_LEN] = "bad message length",
    [WIO_E_OFFSET] = "bad data offset",
    [WIO_E_MSGID] = "unknown rendezvous msgid",
    [WIO_E_SHORT] = "payload too short",
    [WIO_E_LONG] = "payload too long",
    [WIO_E_RESERVED] = "reserved field not zero",
    [WIO_E_NPB] = "bad number of PBs",
    [WIO_E_PBID] = "bad PB id",
    [WIO_E_NPROCS] = "PB with no process",
    [WIO_E_TOTAL] = "bad process total",
    [WIO_E_DUP] = "PB registered twice",
};

/* Any context. */
const char *wio_err_name(int err)
{
    return err >= 0 && err < WIO_E_NKINDS && err_names[err] ? err_names[err] : "?";
}

/* Any context. */
const char *wio_type_name(int type)
{
    switch (type) {
    case WIO_T_HELLO:
        return "HELLO";
    case WIO_T_HELLO_OK:
        return "HELLO_OK";
    case WIO_T_HELLO_NO:
        return "HELLO_NO";
    case WIO_T_EAGER:
        return "EAGER";
    case WIO_T_RTS:
        return "RTS";
    case WIO_T_CTS:
        return "CTS";
    case WIO_T_DATA:
        return "DATA";
    case WIO_T_ACK:
        return "ACK";
    case WIO_T_BYE:
        return "BYE";
    case WIO_T_REGISTER:
        return "REGISTER";
    case WIO_T_TABLE:
        return "TABLE";
    case WIO_T_REFUSE:
        return "REFUSE";
    default:
        return "?";
    }
}

/* Any context. */
struct wio_hdr wio_hdr_make(uint8_t type)
{
    struct wio_hdr h;
    memset(&h, 0, sizeof h);
    h.magic = WIO_MAGIC;
    h.version = WIO_VERSION;
    h.type = type;
    return h;
}

/* Any context; out is the caller's. */
void wio_hdr_encode(const struct wio_hdr *h, uint8_t out[WIO_HDR])
{
    wio_put32(out + OFF_MAGIC, h->magic);
    out[OFF_VERSION] = h->version;
    out[OFF_TYPE] = h->type;
    out[OFF_FLAGS] = (uint8_t)h->flags;
    out[OFF_FLAGS + 1] = (uint8_t)(h->flags >> 8);
    wio_put32(out + OFF_SEQ, h->seq);
    wio_put32(out + OFF_ACK, h->ack);
    wio_put32(out + OFF_SRC, h->src);
    wio_put32(out + OFF_DST, h->dst);
    wio_put64(out + OFF_GROUP, h->group);
    wio_put64(out + OFF_TAG, h->tag);
    wio_put64(out + OFF_LEN, h->len);
    wio_put32(out + OFF_MSGID, h->msgid);
    wio_put32(out + OFF_PLEN, h->plen);
    wio_put64(out + OFF_OFFSET, h->offset);
}

/* Any context; in is the caller's. */
void wio_hdr_decode(const uint8_t in[WIO_HDR], struct wio_hdr *h)
{
    h->magic = wio_get32(in + OFF_MAGIC);
    h->version = in[OFF_VERSION];
    h->type = in[OFF_TYPE];
    h->flags = (uint16_t)(in[OFF_FLAGS] | in[OFF_FLAGS + 1] << 8);
    h->seq = wio_get32(in + OFF_SEQ);
    h->ack = wio_get32(in + OFF_ACK);
    h->src = wio_get32(in + OFF_SRC);
    h->dst = wio_get32(in + OFF_DST);
    h->group = wio_get64(in + OFF_GROUP);
    h->tag = wio_get64(in + OFF_TAG);
    h->len = wio_get64(in + OFF_LEN);
    h->msgid = wio_get32(in + OFF_MSGID);
    h->plen = wio_get32(in + OFF_PLEN);
    h->offset = wio_get64(in + OFF_OFFSET);
}

/* Any context: is `type` allowed in `phase`? */
static int allowed(uint8_t type, enum wio_phase phase)
{
    switch (phase) {
    case WIO_PH_ACCEPTED:
        return type == WIO_T_HELLO;
    case WIO_PH_HELLO:
        return type == WIO_T_HELLO_OK || type == WIO_T_HELLO_NO;
    case WIO_PH_OPEN:
        return type >= WIO_T_EAGER && type <= WIO_T_BYE;
    case WIO_PH_MASTER:
        return type == WIO_T_REGISTER;
    case WIO_PH_CLIENT:
        return type == WIO_T_TABLE || type == WIO_T_REFUSE;
    case WIO_PH_CLOSED:
    default:
        return 0;
    }
}

/* Any context. */
size_t wio_startup_limit(uint8_t type)
{
    switch (type) {
    case WIO_T_REGISTER:
        return WIO_REG_MAX;
    case WIO_T_TABLE:
        return WIO_TABLE_MAX;
    case WIO_T_REFUSE:
        return WIO_REFUSE_MAX;
    default:
        return 0;
    }
}

/* Any context: check 5 (lengths) of a header whose type is known; rdv may be NULL or
 * not live (check 6 reports that afterwards). */
static int check_lengths(const struct wio_hdr *h, const struct wio_rdv_view *rdv)
{
    switch (h->type) {
    case WIO_T_EAGER:
        if (h->plen > WIO_EAGER_MAX)
            return WIO_E_PLEN;
        return h->len == h->plen ? WIO_OK : WIO_E_LEN;
    case WIO_T_RTS:
        if (h->plen != 0)
            return WIO_E_PLEN;
        return h->len > WIO_EAGER_MAX ? WIO_OK : WIO_E_LEN;
    case WIO_T_CTS:
        if (h->plen != 0)
            return WIO_E_PLEN;
        /* The receiver takes at most the whole message. */
        return rdv && rdv->live && h->len > rdv->len ? WIO_E_LEN : WIO_OK;
    case WIO_T_DATA:
        if (h->plen == 0 || h->plen > WIO_CHUNK)
            return WIO_E_PLEN;
        /* offset + plen <= len without overflow: offset <= len, then plen <= len - offset. */
        if (h->offset > h->len || h->plen > h->len - h->offset)
            return WIO_E_LEN;
        if (rdv && rdv->live) {
            if (h->len != rdv->len)
                return WIO_E_LEN;
            if (h->offset != rdv->done)
                return WIO_E_OFFSET;
            /* The sender sends only what our CTS asked for (PROTOCOL.md 7). */
            if (rdv->take < h->offset || h->plen > rdv->take - h->offset)
                return WIO_E_LEN;
        }
        return WIO_OK;
    case WIO_T_REGISTER:
    case WIO_T_TABLE:
    case WIO_T_REFUSE:
        if (h->plen > wio_startup_limit(h->type))
            return WIO_E_PLEN;
        return h->len == h->plen ? WIO_OK : WIO_E_LEN;
    default: /* HELLO, HELLO_OK, HELLO_NO, ACK, BYE */
        return h->plen == 0 ? WIO_OK : WIO_E_PLEN;
    }
}

/* Any context. */
int wio_hdr_check(const struct wio_hdr *h, const struct wio_conn_view *v,
                  const struct wio_rdv_view *rdv)
{
    /* 1: magic, version, flags, type known and allowed in this state. */
    if (h->magic != WIO_MAGIC)
        return WIO_E_MAGIC;
    if (h->version != WIO_VERSION)
        return WIO_E_VERSION;
    if (h->flags != 0)
        return WIO_E_FLAGS;
    if (!strcmp(wio_type_name(h->type), "?"))
        return WIO_E_TYPE;
    if (!allowed(h->type, v->phase))
        return WIO_E_STATE;
    /* 2: sequence. Only packets of an established connection count. */
    uint32_t want = v->phase == WIO_PH_OPEN ? v->rseq : 0;
    if (h->seq != want)
        return WIO_E_SEQ;
    /* 3: who speaks to whom. */
    if (v->peer != WIO_ANY ? h->src != v->peer : h->src >= v->nprocs || h->src == v->self)
        return WIO_E_SRC;
    if (h->dst != v->self)
        return WIO_E_DST;
    /* 4: ack <= sent, modulo 2^32 (both count from 0 and wrap together). */
    if ((int32_t)(v->sent - h->ack) < 0)
        return WIO_E_ACK;
    /* 5: lengths. */
    int e = check_lengths(h, rdv);
    if (e)
        return e;
    /* 6: the rendezvous named. */
    if ((h->type == WIO_T_CTS || h->type == WIO_T_DATA) && !(rdv && rdv->live))
        return WIO_E_MSGID;
    return WIO_OK;
}

/* Any context: one address entry at p. */
static void put_addr(uint8_t *p, const struct wio_addr *a)
{
    memcpy(p, a->ip, 4);
    p[4] = (uint8_t)(a->port >> 8); /* network order */
    p[5] = (uint8_t)a->port;
    p[6] = 0;
    p[7] = 0;
}

/* Any context. */
void wio_payload_addr(const uint8_t *addrs, uint32_t i, struct wio_addr *a)
{
    const uint8_t *p = addrs + (size_t)i * WIO_ADDR_BYTES;
    memcpy(a->ip, p, 4);
    a->port = (uint16_t)(p[4] << 8 | p[5]);
}

/* Any context. */
uint32_t wio_table_nprocs(const struct wio_table *t, uint32_t pb)
{
    return wio_get32(t->nprocs + (size_t)pb * 4);
}

/* Any context. */
size_t wio_register_size(uint32_t nprocs)
{
    if (nprocs == 0 || nprocs > WIO_MAX_PROCS)
        return 0;
    return WIO_REG_FIXED + (size_t)nprocs * WIO_ADDR_BYTES;
}

/* Any context: both counts are bounded by WIO_MAX_PROCS first, so the sum cannot wrap. */
size_t wio_table_size(uint32_t npb, uint32_t total)
{
    if (npb == 0 || npb > WIO_MAX_PROCS || total < npb || total > WIO_MAX_PROCS)
        return 0;
    return WIO_TABLE_FIXED + (size_t)npb * 4 + (size_t)total * WIO_ADDR_BYTES;
}

/* Any context; addrs has nprocs entries, out[cap] is the caller's. */
size_t wio_register_encode(uint32_t pbid, uint32_t npb, uint32_t nprocs,
                           const struct wio_addr *addrs, uint8_t *out, size_t cap)
{
    size_t n = wio_register_size(nprocs);
    if (!n || n > cap || npb == 0 || npb > WIO_MAX_PROCS || pbid >= npb)
        return 0;
    wio_put32(out, pbid);
    wio_put32(out + 4, npb);
    wio_put32(out + 8, nprocs);
    wio_put32(out + 12, 0);
    for (uint32_t i = 0; i < nprocs; i++)
        put_addr(out + WIO_REG_FIXED + (size_t)i * WIO_ADDR_BYTES, &addrs[i]);
    return n;
}

/* Any context; nprocs has npb entries, addrs their sum; out[cap] is the caller's. */
size_t wio_table_encode(uint32_t npb, const uint32_t *nprocs, const struct wio_addr *addrs,
                        uint8_t *out, size_t cap)
{
    if (npb == 0 || npb > WIO_MAX_PROCS)
        return 0;
    uint32_t total = 0;
    for (uint32_t i = 0; i < npb; i++) {
        if (nprocs[i] == 0 || nprocs[i] > WIO_MAX_PROCS - total)
            return 0;
        total += nprocs[i];
    }
    size_t n = wio_table_size(npb, total);
    if (!n || n > cap)
        return 0;
    wio_put32(out, npb);
    wio_put32(out + 4, total);
    wio_put32(out + 8, 0);
    wio_put32(out + 12, 0);
    uint8_t *p = out + WIO_TABLE_FIXED;
    for (uint32_t i = 0; i < npb; i++, p += 4)
        wio_put32(p, nprocs[i]);
    for (uint32_t i = 0; i < total; i++, p += WIO_ADDR_BYTES)
        put_addr(p, &addrs[i]);
    return n;
}

/* Any context. */
size_t wio_refuse_encode(const char *text, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (text[n] && n < WIO_REFUSE_MAX && n < cap)
        n++;
    memcpy(out, text, n);
    return n;
}

/* Any context: are the reserved bytes of every address entry zero? */
static int addrs_clean(const uint8_t *addrs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (addrs[(size_t)i * WIO_ADDR_BYTES + 6] | addrs[(size_t)i * WIO_ADDR_BYTES + 7])
            return 0;
    return 1;
}

/* Any context; p[0..n) is the caller's and r points into it. */
int wio_register_decode(const uint8_t *p, size_t n, struct wio_register *r)
{
    if (n < WIO_REG_FIXED)
        return WIO_E_SHORT;
    r->pbid = wio_get32(p);
    r->npb = wio_get32(p + 4);
    r->nprocs = wio_get32(p + 8);
    r->addrs = p + WIO_REG_FIXED;
    if (wio_get32(p + 12) != 0)
        return WIO_E_RESERVED;
    if (r->npb == 0 || r->npb > WIO_MAX_PROCS)
        return WIO_E_NPB;
    if (r->pbid >= r->npb)
        return WIO_E_PBID;
    if (r->nprocs == 0)
        return WIO_E_NPROCS;
    if (r->nprocs > WIO_MAX_PROCS)
        return WIO_E_TOTAL;
    size_t want = wio_register_size(r->nprocs);
    if (n < want)
        return WIO_E_SHORT;
    if (n > want)
        return WIO_E_LONG;
    return addrs_clean(r->addrs, r->nprocs) ? WIO_OK : WIO_E_RESERVED;
}

/* Any context; p[0..n) is the caller's and t points into it. */
int wio_table_decode(const uint8_t *p, size_t n, struct wio_table *t)
{
    if (n < WIO_TABLE_FIXED)
        return WIO_E_SHORT;
    t->npb = wio_get32(p);
    t->total = wio_get32(p + 4);
    t->nprocs = p + WIO_TABLE_FIXED;
    if (wio_get32(p + 8) != 0 || wio_get32(p + 12) != 0)
        return WIO_E_RESERVED;
    if (t->npb == 0 || t->npb > WIO_MAX_PROCS)
        return WIO_E_NPB;
    if (t->total < t->npb || t->total > WIO_MAX_PROCS)
        return WIO_E_TOTAL;
    size_t want = wio_table_size(t->npb, t->total);
    if (n < want)
        return WIO_E_SHORT;
    if (n > want)
        return WIO_E_LONG;
    t->addrs = t->nprocs + (size_t)t->npb * 4;
    uint32_t sum = 0;
    for (uint32_t i = 0; i < t->npb; i++) {
        uint32_t k = wio_table_nprocs(t, i);
        if (k == 0)
            return WIO_E_NPROCS;
        if (k > t->total - sum)
            return WIO_E_TOTAL;
        sum += k;
    }
    if (sum != t->total)
        return WIO_E_TOTAL;
    return addrs_clean(t->addrs, t->total) ? WIO_OK : WIO_E_RESERVED;
}

/* Any context; out[cap] (cap >= 1) is the caller's. */
int wio_refuse_decode(const uint8_t *p, size_t n, char *out, size_t cap)
{
    if (n > WIO_REFUSE_MAX)
        return WIO_E_PLEN;
    size_t k = 0;
    for (; k < n && k + 1 < cap; k++)
        out[k] = p[k] >= 0x20 && p[k] < 0x7f ? (char)p[k] : '?';
    out[k] = 0;
    return WIO_OK;
}
