/* mpe_wire.c: see mpe_wire.h. */
#include "mpe_wire.h"

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void mpe_wire_encode(const struct mpe_wire *h, uint8_t out[MPE_WIRE_HDR])
{
    put16(out, MPE_WIRE_MAGIC);
    out[2] = MPE_WIRE_VERSION;
    out[3] = h->type;
    put32(out + 4, h->seq);
    put32(out + 8, h->ctx);
    put32(out + 12, (uint32_t)h->src);
    put32(out + 16, (uint32_t)h->tag);
    put32(out + 20, h->src_world);
    put32(out + 24, h->dst_world);
    put32(out + 28, h->handle);
    put32(out + 32, h->aux);
    put32(out + 36, h->aux2);
    put64(out + 40, h->len);
}

const char *mpe_wire_decode(const uint8_t in[MPE_WIRE_HDR], struct mpe_wire *h, uint64_t max_eager)
{
    if ((in[0] | in[1] << 8) != MPE_WIRE_MAGIC)
        return "bad magic";
    if (in[2] != MPE_WIRE_VERSION)
        return "unsupported version";
    h->type = in[3];
    if (h->type < MPE_W_HELLO || h->type >= MPE_W_TYPES)
        return "unknown type";
    h->seq = get32(in + 4);
    h->ctx = get32(in + 8);
    h->src = (int32_t)get32(in + 12);
    h->tag = (int32_t)get32(in + 16);
    h->src_world = get32(in + 20);
    h->dst_world = get32(in + 24);
    h->handle = get32(in + 28);
    h->aux = get32(in + 32);
    h->aux2 = get32(in + 36);
    h->len = (uint64_t)get32(in + 40) | (uint64_t)get32(in + 44) << 32;
    switch (h->type) {
    case MPE_W_EAGER:
    case MPE_W_RTS:
        /* Messages are matched: a complete key (no wildcards on the wire). */
        if (h->src < 0 || h->tag < 0)
            return "negative source or tag";
        if (h->type == MPE_W_EAGER && h->len > max_eager)
            return "eager message longer than the eager limit";
        break;
    case MPE_W_DATA:
    case MPE_W_CTS:
        if (h->len >> 48)
            return "length out of range";
        break;
    default:
        if (h->len)
            return "length on a control header";
    }
    return 0;
}

const char *mpe_wire_type_name(int type)
{
    static const char *const names[] = {"?",   "HELLO", "EAGER",  "RTS",
                                        "CTS", "DATA",  "CREDIT", "BYE"};
    return type > 0 && type < MPE_W_TYPES ? names[type] : "?";
}
