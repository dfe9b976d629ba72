/*
 * wio_wire.h: the codec of our WaitIO wire protocol (PROTOCOL.md sections 2-4): the 64-byte
 * header, its validation against a connection's state, and the start-up payloads
 * (REGISTER, TABLE, REFUSE). Freestanding: no allocation, no libc beyond string.h-level;
 * every routine works on caller-owned buffers, so it may run in a NIC interrupt.
 *
 * Wire bytes are always read and written one byte at a time (little-endian integers,
 * network-order addresses): nothing here depends on the host's struct layout or byte order.
 */
#ifndef WIO_WIRE_H
#define WIO_WIRE_H
#include <stddef.h>
#include <stdint.h>

#define WIO_MAGIC      0x314f4957u /* "WIO1" in memory order */
#define WIO_VERSION    1
#define WIO_HDR        64          /* every packet starts with this many header bytes */
#define WIO_EAGER_MAX  128         /* largest message sent as one EAGER packet */
#define WIO_CHUNK      65536       /* largest DATA payload */
#define WIO_ACK_EVERY  64          /* packets received without one going back before an ACK */
#define WIO_MAX_PROCS  65536       /* most processes in one instance (the table limit) */
#define WIO_REFUSE_MAX 256         /* longest REFUSE text */
#define WIO_ANY        0xffffffffu /* wio_conn_view.peer: not known yet (accepted, start-up) */

/* Start-up payloads (PROTOCOL.md 4). */
#define WIO_REG_FIXED   16 /* pbid, npb, nprocs, reserved */
#define WIO_TABLE_FIXED 16 /* npb, total, reserved, reserved */
#define WIO_ADDR_BYTES  8  /* ipv4, port, reserved */
#define WIO_REG_MAX     (WIO_REG_FIXED + (size_t)WIO_MAX_PROCS * WIO_ADDR_BYTES)
/* A TABLE names at most WIO_MAX_PROCS PBs (each has at least one process). */
#define WIO_TABLE_MAX   (WIO_TABLE_FIXED + (size_t)WIO_MAX_PROCS * (4 + WIO_ADDR_BYTES))

enum wio_type {
    WIO_T_HELLO = 1,
    WIO_T_HELLO_OK = 2,
    WIO_T_HELLO_NO = 3,
    WIO_T_EAGER = 4,
    WIO_T_RTS = 5,
    WIO_T_CTS = 6,
    WIO_T_DATA = 7,
    WIO_T_ACK = 8,
    WIO_T_BYE = 9,
    WIO_T_REGISTER = 16,
    WIO_T_TABLE = 17,
    WIO_T_REFUSE = 18,
};

/* The decoded header (PROTOCOL.md 2): field for field. */
struct wio_hdr {
    uint32_t magic;
    uint8_t version, type;
    uint16_t flags;
    uint32_t seq, ack, src, dst;
    uint64_t group, tag, len;
    uint32_t msgid, plen;
    uint64_t offset;
};

/* Every way a header or payload can be wrong: each a distinct code, wio_err_name() names
 * it. 0 is success. */
enum wio_err {
    WIO_OK = 0,
    WIO_E_MAGIC,    /* bad magic */
    WIO_E_VERSION,  /* unsupported version */
    WIO_E_FLAGS,    /* non-zero flags */
    WIO_E_TYPE,     /* unknown type */
    WIO_E_STATE,    /* known type not allowed in the connection's state */
    WIO_E_SEQ,      /* not the next expected sequence number */
    WIO_E_SRC,      /* src is not this connection's peer (or out of range) */
    WIO_E_DST,      /* dst is not us */
    WIO_E_ACK,      /* acks more packets than we sent */
    WIO_E_PLEN,     /* payload length over the type's limit */
    WIO_E_LEN,      /* len inconsistent with the type or the payload */
    WIO_E_OFFSET,   /* DATA offset not where the message stands */
    WIO_E_MSGID,    /* msgid names no live rendezvous */
    WIO_E_SHORT,    /* payload shorter than its fixed part or its counts say */
    WIO_E_LONG,     /* payload longer than its counts say */
    WIO_E_RESERVED, /* a reserved payload field is not zero */
    WIO_E_NPB,      /* npb zero, over the limit, or not the instance's */
    WIO_E_PBID,     /* pbid not below npb */
    WIO_E_NPROCS,   /* a PB with no process */
    WIO_E_TOTAL,    /* process total over the limit or not the sum of the PBs' */
    WIO_E_DUP,      /* a PB registered twice */
    WIO_E_NKINDS
};

/* Any context: a static name for an enum wio_err ("bad magic", ...); "?" for others. */
const char *wio_err_name(int err);
/* Any context: a static name for a packet type ("EAGER", ...); "?" for unknown ones. */
const char *wio_type_name(int type);

/* Any context: a header with magic and version set, type `type`, every other field 0. */
struct wio_hdr wio_hdr_make(uint8_t type);
/* Any context: h into out[WIO_HDR] (caller's buffer). */
void wio_hdr_encode(const struct wio_hdr *h, uint8_t out[WIO_HDR]);
/* Any context: in[WIO_HDR] into *h, without any check (wio_hdr_check does those). */
void wio_hdr_decode(const uint8_t in[WIO_HDR], struct wio_hdr *h);

/* What a connection expects next (PROTOCOL.md 6). */
enum wio_phase {
    WIO_PH_ACCEPTED, /* accepted data connection: HELLO only */
    WIO_PH_HELLO,    /* we sent HELLO: HELLO_OK or HELLO_NO */
    WIO_PH_OPEN,     /* established: EAGER, RTS, CTS, DATA, ACK, BYE */
    WIO_PH_CLOSED,   /* after BYE: nothing */
    WIO_PH_MASTER,   /* the master reading a PB's rank 0: REGISTER */
    WIO_PH_CLIENT,   /* a PB's rank 0 reading the master: TABLE or REFUSE */
};

/* A rendezvous the header's msgid names, looked up by the caller before the check (its
 * state, not the packet's): for CTS one of our sends waiting for it, for DATA one of our
 * receives that sent a CTS. */
struct wio_rdv_view {
    int live;      /* 0: msgid names nothing */
    uint64_t len;  /* DATA: the message length its RTS announced */
    uint64_t take; /* DATA: bytes our CTS asked for */
    uint64_t done; /* DATA: bytes received so far */
};

/* The connection state a header is checked against. */
struct wio_conn_view {
    enum wio_phase phase;
    uint32_t rseq;   /* next expected sequence number */
    uint32_t sent;   /* packets we have sent on it (acks may not exceed this) */
    uint32_t peer;   /* the peer's universe index, or WIO_ANY when not known yet */
    uint32_t self;   /* our universe index (start-up: our PB id) */
    uint32_t nprocs; /* src must be below this (start-up: npb) */
};

/* Any context: PROTOCOL.md 2 "Validation" in its order, every check. `rdv` is the caller's
 * lookup of h->msgid (CTS and DATA; may be NULL for other types). Returns WIO_OK or the
 * first failure. Sequence numbers: handshake and start-up packets carry seq 0 and do not
 * count (PROTOCOL.md 2). */
int wio_hdr_check(const struct wio_hdr *h, const struct wio_conn_view *v,
                  const struct wio_rdv_view *rdv);

/* One process's address: IPv4 octets in order (a.b.c.d) and the port as a number; on the
 * wire both in network order. */
struct wio_addr {
    uint8_t ip[4];
    uint16_t port;
};

/* A decoded REGISTER or TABLE: counts, and views into the caller's payload bytes
 * (wio_payload_addr/wio_table_nprocs read entries from them). Valid while the bytes are. */
struct wio_register {
    uint32_t pbid, npb, nprocs;
    const uint8_t *addrs; /* nprocs entries */
};
struct wio_table {
    uint32_t npb, total;
    const uint8_t *nprocs; /* npb u32 */
    const uint8_t *addrs;  /* total entries, universe index order */
};

/* Any context: payload sizes; 0 when a count is 0 or over the limit (nothing overflows). */
size_t wio_register_size(uint32_t nprocs);
size_t wio_table_size(uint32_t npb, uint32_t total);

/* Any context: encode into out[cap]; returns the bytes written, 0 when cap is too small or
 * the counts are invalid (nprocs or npb 0, over the limits, pbid >= npb, sum != total). */
size_t wio_register_encode(uint32_t pbid, uint32_t npb, uint32_t nprocs,
                           const struct wio_addr *addrs, uint8_t *out, size_t cap);
size_t wio_table_encode(uint32_t npb, const uint32_t *nprocs, const struct wio_addr *addrs,
                        uint8_t *out, size_t cap);
/* Any context: REFUSE text (up to WIO_REFUSE_MAX bytes of it, no NUL) into out[cap]. */
size_t wio_refuse_encode(const char *text, uint8_t *out, size_t cap);

/* Any context: decode and check p[0..n); WIO_OK or the failure. */
int wio_register_decode(const uint8_t *p, size_t n, struct wio_register *r);
int wio_table_decode(const uint8_t *p, size_t n, struct wio_table *t);
/* Any context: the REFUSE text of p[0..n) into out[cap] (NUL-terminated, unprintable bytes
 * as '?'); WIO_E_PLEN when n is over WIO_REFUSE_MAX. */
int wio_refuse_decode(const uint8_t *p, size_t n, char *out, size_t cap);

/* Any context: entry i of a decoded view (the caller keeps i below the count). */
void wio_payload_addr(const uint8_t *addrs, uint32_t i, struct wio_addr *a);
uint32_t wio_table_nprocs(const struct wio_table *t, uint32_t pb);

/* Any context: the start-up payload limit of a type (REGISTER, TABLE, REFUSE), else 0. */
size_t wio_startup_limit(uint8_t type);

/* Any context: little-endian access to wire bytes, for the codec and its callers. */
static inline void wio_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t wio_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void wio_put64(uint8_t *p, uint64_t v)
{
    wio_put32(p, (uint32_t)v);
    wio_put32(p + 4, (uint32_t)(v >> 32));
}
static inline uint64_t wio_get64(const uint8_t *p)
{
    return (uint64_t)wio_get32(p) | (uint64_t)wio_get32(p + 4) << 32;
}

#endif
