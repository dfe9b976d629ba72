/*
 * impi_packet.c: the 128-byte IMPI packet header and stream framing (spec §5, §6).
 * Freestanding. Framing rule: a payload of pk_len bytes follows only DATA and DATASYNC;
 * LAM's control packets claim pk_len = 128 but carry nothing.
 */
#include "impi_wire.h"

static const char *const type_names[IMPI_PK_NTYPES] = {
    "DATA", "DATASYNC", "PROTOACK", "SYNCACK", "CANCEL", "CANCELYES", "CANCELNO", "FINI",
};

/* Any context: see impi_wire.h. */
const char *impi_pkt_type_name(uint32_t type)
{
    return type < IMPI_PK_NTYPES ? type_names[type] : "?";
}

/* Any context: see impi_wire.h. */
void impi_proc_get(const uint8_t *hdr, size_t off, struct impi_proc *p)
{
    memcpy(p->hostid, hdr + off, IMPI_HOSTID_LEN);
    p->pid = (int64_t)impi_get64(hdr + off + IMPI_HOSTID_LEN);
}

/* Any context: see impi_wire.h. */
void impi_proc_put(uint8_t *hdr, size_t off, const struct impi_proc *p)
{
    memcpy(hdr + off, p->hostid, IMPI_HOSTID_LEN);
    impi_put64(hdr + off + IMPI_HOSTID_LEN, (uint64_t)p->pid);
}

/* Any context: see impi_wire.h. */
bool impi_proc_eq(const struct impi_proc *a, const struct impi_proc *b)
{
    return a->pid == b->pid && memcmp(a->hostid, b->hostid, IMPI_HOSTID_LEN) == 0;
}

/* Any context: see impi_wire.h. */
void impi_hostid_from_ipv4(uint8_t *id, uint32_t ipv4)
{
    memset(id, 0, IMPI_HOSTID_LEN); /* IPv4-compatible form ::a.b.c.d, as LAM writes it */
    impi_put32(id + 12, ipv4);
}

/* Any context: see impi_wire.h. */
uint32_t impi_hostid_ipv4(const uint8_t *id)
{
    return impi_get32(id + 12); /* LAM looks only at bytes 12..15 of a host id */
}

/* Any context: see impi_wire.h. */
void impi_pkt_encode(const struct impi_pkt *p, uint8_t *out)
{
    impi_put32(out + 0, p->type);
    impi_put32(out + 4, p->len);
    impi_proc_put(out, IMPI_OFF_SRC, &p->src);
    impi_proc_put(out, IMPI_OFF_DEST, &p->dest);
    impi_put64(out + 56, p->srqid);
    impi_put64(out + 64, p->drqid);
    impi_put64(out + 72, p->msglen);
    impi_put32(out + 80, (uint32_t)p->lsrank);
    impi_put32(out + 84, (uint32_t)p->tag);
    impi_put64(out + 88, p->cid);
    impi_put64(out + 96, p->seqnum);
    impi_put64(out + 104, (uint64_t)p->count);
    impi_put64(out + 112, p->dtype);
    impi_put64(out + 120, p->reserved);
}

/* Any context: see impi_wire.h. */
int impi_pkt_decode(const uint8_t *in, uint32_t maxlen, struct impi_pkt *p)
{
    p->type = impi_get32(in + 0);
    p->len = impi_get32(in + 4);
    if (p->type >= IMPI_PK_NTYPES)
        return IMPI_E_BAD_TYPE;
    impi_proc_get(in, IMPI_OFF_SRC, &p->src);
    impi_proc_get(in, IMPI_OFF_DEST, &p->dest);
    p->srqid = impi_get64(in + 56);
    p->drqid = impi_get64(in + 64);
    p->msglen = impi_get64(in + 72);
    p->lsrank = (int32_t)impi_get32(in + 80);
    p->tag = (int32_t)impi_get32(in + 84);
    p->cid = impi_get64(in + 88);
    p->seqnum = impi_get64(in + 96);
    p->count = (int64_t)impi_get64(in + 104);
    p->dtype = impi_get64(in + 112);
    p->reserved = impi_get64(in + 120);
    if (impi_pkt_has_payload(p->type)) {
        /* A packet carries at most maxlen bytes and never more than its message; the
         * length check is what keeps a reader from allocating or waiting for garbage. */
        if (p->len > maxlen || p->len > p->msglen)
            return IMPI_E_BAD_LEN;
    }
    /* Control packets: pk_len, pk_msglen and pk_cid are LAM garbage (spec §5): ignored. */
    return IMPI_OK;
}

/* Any context: see impi_wire.h. */
void impi_pkt_control(struct impi_pkt *p, uint32_t type, const struct impi_proc *src,
                      const struct impi_proc *dest)
{
    memset(p, 0, sizeof(*p));
    p->type = type;
    p->len = IMPI_PKT_HDR_LEN;
    p->msglen = IMPI_PKT_HDR_LEN;
    p->src = *src;
    p->dest = *dest;
    p->lsrank = -1;
    p->tag = -1;
    p->count = -1;
}

/* Any context: see impi_wire.h. */
int impi_frame(const uint8_t *buf, size_t avail, uint32_t maxlen, struct impi_pkt *p, size_t *frame)
{
    *frame = IMPI_PKT_HDR_LEN;
    if (avail < IMPI_PKT_HDR_LEN)
        return IMPI_E_AGAIN;
    int e = impi_pkt_decode(buf, maxlen, p);
    if (e)
        return e;
    if (impi_pkt_has_payload(p->type))
        *frame += p->len;
    return avail < *frame ? IMPI_E_AGAIN : IMPI_OK;
}

/* Any context: see impi_wire.h. */
int impi_frame_eof(size_t avail)
{
    return avail ? IMPI_E_TRUNCATED : IMPI_OK;
}
