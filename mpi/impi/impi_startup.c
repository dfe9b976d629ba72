/*
 * impi_startup.c: client <-> server startup commands (AUTH, IMPI, COLL, DONE, FINI) and
 * the COLL labels: encoding, decoding and validation (spec §3). Freestanding.
 */
#include "impi_wire.h"

static const struct impi_label_info labels[IMPI_NLABELS] = {
    {IMPI_C_VERSION, 0, IMPI_PER_CLIENT, 8, "C_VERSION"},
    {IMPI_C_NHOSTS, 1, IMPI_PER_CLIENT, 4, "C_NHOSTS"},
    {IMPI_C_NPROCS, 2, IMPI_PER_CLIENT, 4, "C_NPROCS"},
    {IMPI_C_DATALEN, 3, IMPI_PER_CLIENT, 4, "C_DATALEN"},
    {IMPI_C_TAGUB, 4, IMPI_PER_CLIENT, 4, "C_TAGUB"},
    {IMPI_C_COLL_XSIZE, 5, IMPI_PER_CLIENT, 4, "C_COLL_XSIZE"},
    {IMPI_C_COLL_MAXLINEAR, 6, IMPI_PER_CLIENT, 4, "C_COLL_MAXLINEAR"},
    {IMPI_H_IPV6, 7, IMPI_PER_HOST, 16, "H_IPV6"},
    {IMPI_H_PORT, 8, IMPI_PER_HOST, 4, "H_PORT"},
    {IMPI_H_NPROCS, 9, IMPI_PER_HOST, 4, "H_NPROCS"},
    {IMPI_H_ACKMARK, 10, IMPI_PER_HOST, 4, "H_ACKMARK"},
    {IMPI_H_HIWATER, 11, IMPI_PER_HOST, 4, "H_HIWATER"},
    {IMPI_P_IPV6, 12, IMPI_PER_PROC, 16, "P_IPV6"},
    {IMPI_P_PID, 13, IMPI_PER_PROC, 8, "P_PID"},
};

static const char *const errs[IMPI_E__COUNT] = {
    [IMPI_OK] = "ok",
    [IMPI_E_AGAIN] = "incomplete input (more bytes needed)",
    [IMPI_E_BAD_CMD] = "unknown startup command",
    [IMPI_E_BAD_LEN] = "impossible length",
    [IMPI_E_BAD_LABEL] = "unknown COLL label",
    [IMPI_E_LABEL_ORDER] = "COLL label repeated or out of order",
    [IMPI_E_BAD_VALUE] = "forbidden field value",
    [IMPI_E_BAD_TYPE] = "unknown packet type",
    [IMPI_E_TRUNCATED] = "stream truncated inside a command or packet",
    [IMPI_E_NOSPACE] = "output buffer too small",
    [IMPI_E_FLOW] = "flow-control accounting violated",
    [IMPI_E_UNKNOWN_PROC] = "packet names a proc missing from the startup tables",
};

/* Any context: see impi_wire.h. */
const char *impi_strerror(int err)
{
    if (err < 0 || err >= IMPI_E__COUNT)
        return "unknown IMPI error";
    return errs[err];
}

/* Any context: see impi_wire.h. */
const struct impi_label_info *impi_label_lookup(uint32_t label)
{
    for (int i = 0; i < IMPI_NLABELS; i++)
        if (labels[i].label == label)
            return &labels[i];
    return NULL;
}

/* Any context: see impi_wire.h. */
const struct impi_label_info *impi_label_at(int i)
{
    return (i >= 0 && i < IMPI_NLABELS) ? &labels[i] : NULL;
}

/* Any context: see impi_wire.h. */
void impi_cmd_put(uint8_t *out, uint32_t cmd, uint32_t len)
{
    impi_put32(out, cmd);
    impi_put32(out + 4, len);
}

/* Any context: see impi_wire.h. */
int impi_cmd_get(const uint8_t *buf, size_t avail, enum impi_dir dir, struct impi_cmd *out)
{
    if (avail < IMPI_CMD_HDR_LEN)
        return IMPI_E_AGAIN;
    uint32_t cmd = impi_get32(buf), len = impi_get32(buf + 4);
    switch (cmd) {
    case IMPI_CMD_AUTH:
        /* The server's reply to AUTH has no header, so AUTH only flows to the server. */
        if (dir != IMPI_TO_SERVER)
            return IMPI_E_BAD_CMD;
        if (len != 4)
            return IMPI_E_BAD_LEN;
        break;
    case IMPI_CMD_IMPI:
        if (len != 4)
            return IMPI_E_BAD_LEN;
        break;
    case IMPI_CMD_COLL:
        if (len < (dir == IMPI_TO_SERVER ? 4u : 8u) || len > IMPI_MAX_CMD_LEN)
            return IMPI_E_BAD_LEN;
        break;
    case IMPI_CMD_DONE:
        /* LAM tolerates (and discards) a DONE payload; so do we, within bounds. */
        if (len > IMPI_MAX_CMD_LEN)
            return IMPI_E_BAD_LEN;
        break;
    case IMPI_CMD_FINI:
        if (len != 0)
            return IMPI_E_BAD_LEN;
        break;
    default:
        return IMPI_E_BAD_CMD;
    }
    out->cmd = cmd;
    out->len = len;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_cmd_encode(uint8_t *out, size_t cap, uint32_t cmd, const void *payload, uint32_t len,
                    size_t *outlen)
{
    if ((size_t)len + IMPI_CMD_HDR_LEN > cap)
        return IMPI_E_NOSPACE;
    impi_cmd_put(out, cmd, len);
    if (len)
        memcpy(out + IMPI_CMD_HDR_LEN, payload, len);
    *outlen = (size_t)len + IMPI_CMD_HDR_LEN;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
void impi_auth_reply_put(uint8_t *out, uint32_t which)
{
    impi_put32(out, which);
    impi_put32(out + 4, 0); /* LAM reads and ignores this length */
}

/* Any context: see impi_wire.h. */
int impi_auth_reply_get(const uint8_t *in, uint32_t *which)
{
    uint32_t w = impi_get32(in);
    if (w != IMPI_AUTH_NONE && w != IMPI_AUTH_KEY)
        return IMPI_E_BAD_VALUE;
    *which = w;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_auth_choose(uint32_t client_mask, uint32_t server_mask, uint32_t *which)
{
    uint32_t both = client_mask & server_mask & IMPI_AUTH_MASK_ALL;
    if (both & (1u << IMPI_AUTH_KEY))
        *which = IMPI_AUTH_KEY;
    else if (both & (1u << IMPI_AUTH_NONE))
        *which = IMPI_AUTH_NONE;
    else
        return IMPI_E_BAD_VALUE;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
void impi_coll_reply_hdr(uint8_t *out, uint32_t label, uint32_t mask, uint32_t datalen)
{
    impi_cmd_put(out, IMPI_CMD_COLL, 8 + datalen);
    impi_put32(out + 8, label);
    impi_put32(out + 12, mask);
}

/* Any context: see impi_wire.h. */
int64_t impi_label_datalen(const struct impi_label_info *li, const struct impi_client_shape *sh)
{
    switch (li->scope) {
    case IMPI_PER_CLIENT:
        return li->label == IMPI_C_VERSION ? -1 : li->elem;
    case IMPI_PER_HOST:
        return sh->nhosts < 0 ? -1 : (int64_t)sh->nhosts * li->elem;
    default:
        return sh->nprocs < 0 ? -1 : (int64_t)sh->nprocs * li->elem;
    }
}

/* Checks C_VERSION's array: at least one pair, strictly ascending, 0.0 among them. */
static int check_versions(const uint8_t *d, uint32_t len)
{
    if (len == 0 || len % 8)
        return IMPI_E_BAD_LEN;
    bool has00 = false;
    uint64_t prev = 0;
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t v = impi_get64(d + i); /* major:minor sorts as one 64-bit number */
        if (i && v <= prev)
            return IMPI_E_BAD_VALUE;
        has00 |= v == 0;
        prev = v;
    }
    return has00 ? IMPI_OK : IMPI_E_BAD_VALUE;
}

/* Range checks on the int32 values of one client's label data. */
static int check_values(const struct impi_label_info *li, const struct impi_client_shape *sh,
                        const uint8_t *d, uint32_t len)
{
    int64_t sum = 0;
    for (uint32_t i = 0; li->elem == 4 && i < len; i += 4) {
        int32_t v = (int32_t)impi_get32(d + i);
        switch (li->label) {
        case IMPI_C_NHOSTS:
            if (v < 1 || v > IMPI_MAX_HOSTS)
                return IMPI_E_BAD_VALUE;
            break;
        case IMPI_C_NPROCS:
            if (v < 1 || v > IMPI_MAX_PROCS)
                return IMPI_E_BAD_VALUE;
            break;
        case IMPI_C_DATALEN:
        case IMPI_H_ACKMARK:
        case IMPI_H_HIWATER:
            if (v < 1)
                return IMPI_E_BAD_VALUE;
            break;
        case IMPI_C_TAGUB:
            if (v < 32767) /* mandated range, spec §3.7 */
                return IMPI_E_BAD_VALUE;
            break;
        case IMPI_C_COLL_XSIZE:
        case IMPI_C_COLL_MAXLINEAR:
            if (v < -1)
                return IMPI_E_BAD_VALUE;
            break;
        case IMPI_H_PORT:
            if (v < 1 || v > 65535)
                return IMPI_E_BAD_VALUE;
            break;
        case IMPI_H_NPROCS:
            if (v < 0)
                return IMPI_E_BAD_VALUE;
            sum += v;
            break;
        }
    }
    if (li->label == IMPI_H_NPROCS && sh->nprocs >= 0 && sum != sh->nprocs)
        return IMPI_E_BAD_VALUE;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_coll_check(struct impi_label_seq *seq, struct impi_client_shape *shape, uint32_t label,
                    const uint8_t *data, uint32_t len)
{
    const struct impi_label_info *li = impi_label_lookup(label);
    if (!li)
        return IMPI_E_BAD_LABEL;
    if (li->order < seq->next)
        return IMPI_E_LABEL_ORDER;
    if (li->label == IMPI_C_VERSION) {
        int e = check_versions(data, len);
        if (e)
            return e;
    } else {
        int64_t want = impi_label_datalen(li, shape);
        /* Per-host and per-proc arrays are sized by C_NHOSTS / C_NPROCS, so those must
         * have come first: an array before its count is a label out of order. */
        if (want < 0)
            return IMPI_E_LABEL_ORDER;
        if ((int64_t)len != want)
            return IMPI_E_BAD_LEN;
        int e = check_values(li, shape, data, len);
        if (e)
            return e;
    }
    if (label == IMPI_C_NHOSTS)
        shape->nhosts = (int32_t)impi_get32(data);
    if (label == IMPI_C_NPROCS)
        shape->nprocs = (int32_t)impi_get32(data);
    seq->next = li->order + 1;
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_coll_split(const uint8_t *payload, uint32_t plen, uint32_t nclients,
                    const struct impi_client_shape *shapes, uint32_t *label, uint32_t *mask,
                    uint32_t *off, uint32_t *len)
{
    if (plen < 8)
        return IMPI_E_BAD_LEN;
    if (nclients == 0 || nclients > IMPI_MAX_CLIENTS)
        return IMPI_E_BAD_VALUE;
    uint32_t lab = impi_get32(payload), m = impi_get32(payload + 4);
    const struct impi_label_info *li = impi_label_lookup(lab);
    if (!li)
        return IMPI_E_BAD_LABEL;
    if (nclients < 32 && (m >> nclients))
        return IMPI_E_BAD_VALUE;
    uint64_t pos = 0, dlen = plen - 8;
    for (uint32_t i = 0; i < nclients; i++) {
        off[i] = len[i] = 0;
        if (!(m & (1u << i)))
            continue;
        int64_t n = impi_label_datalen(li, &shapes[i]);
        /* C_VERSION arrays have no length prefix, so a concatenation is only unambiguous
         * when every client sent one pair (LAM sends exactly 0.0). */
        if (li->label == IMPI_C_VERSION)
            n = 8;
        if (n < 0)
            return IMPI_E_LABEL_ORDER;
        if (pos + (uint64_t)n > dlen)
            return IMPI_E_BAD_LEN;
        off[i] = (uint32_t)pos;
        len[i] = (uint32_t)n;
        pos += (uint64_t)n;
    }
    if (pos != dlen)
        return IMPI_E_BAD_LEN;
    *label = lab;
    *mask = m;
    return IMPI_OK;
}
