/*
 * impi_wire.h: IMPI wire constants, structures and the codec's public API.
 *
 * Freestanding: needs only <stdint.h>, <stddef.h>, <stdbool.h> and <string.h>, never
 * allocates and never prints. Callers own every buffer; every decoder validates its input
 * and returns an enum impi_err (impi_strerror() names it). All integers on the wire are
 * big-endian (spec §1); user payloads pass through untouched (LAM sends them in native
 * byte order, spec §0.3).
 */
#ifndef IMPI_WIRE_H
#define IMPI_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- errors ---------------------------------------------------------------------------- */
enum impi_err {
    IMPI_OK = 0,
    IMPI_E_AGAIN,        /* not an error: more bytes are needed to decode a whole unit */
    IMPI_E_BAD_CMD,      /* unknown startup command */
    IMPI_E_BAD_LEN,      /* impossible length for this command, label or packet */
    IMPI_E_BAD_LABEL,    /* unknown COLL label */
    IMPI_E_LABEL_ORDER,  /* label repeated or out of LAM's fixed order */
    IMPI_E_BAD_VALUE,    /* a field holds a value the protocol forbids */
    IMPI_E_BAD_TYPE,     /* unknown packet type */
    IMPI_E_TRUNCATED,    /* the stream ended inside a command or packet */
    IMPI_E_NOSPACE,      /* the caller's output buffer is too small */
    IMPI_E_FLOW,         /* flow-control accounting violated (e.g. PROTOACK without credit) */
    IMPI_E_UNKNOWN_PROC, /* a packet names a proc missing from the startup tables */
    IMPI_E__COUNT
};

/* Any context: a constant, human-readable description of an impi_err value. */
const char *impi_strerror(int err);

/* ---- big-endian helpers (any context; buffers owned by the caller) ---------------------- */
static inline uint32_t impi_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t impi_get64(const uint8_t *p)
{
    return (uint64_t)impi_get32(p) << 32 | impi_get32(p + 4);
}
static inline void impi_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void impi_put64(uint8_t *p, uint64_t v)
{
    impi_put32(p, (uint32_t)(v >> 32));
    impi_put32(p + 4, (uint32_t)v);
}

/* ---- startup protocol (spec §3) --------------------------------------------------------- */
#define IMPI_CMD_AUTH      0x41555448u
#define IMPI_CMD_IMPI      0x494D5049u
#define IMPI_CMD_COLL      0x434F4C4Cu
#define IMPI_CMD_DONE      0x444F4E45u
#define IMPI_CMD_FINI      0x46494E49u
#define IMPI_CMD_HDR_LEN   8
#define IMPI_AUTH_NONE     0
#define IMPI_AUTH_KEY      1
#define IMPI_AUTH_MASK_ALL 0x3u
#define IMPI_MAX_CLIENTS   32
/* Largest command payload accepted. A COLL reply for 32 clients of 4096 procs with 16-byte
 * ids is 2 MiB; anything bigger is garbage, and bounding it bounds the caller's buffer. */
#define IMPI_MAX_CMD_LEN   (4u << 20)
#define IMPI_MAX_PROCS     65536 /* per client; bounds label arrays */
#define IMPI_MAX_HOSTS     1024  /* per client */

/* Sizes of the startup protocol's pieces that have no codec function of their own. */
#define IMPI_AUTH_REPLY_LEN     8 /* the server's AUTH reply: Int4 which, Int4 len, no header */
#define IMPI_AUTH_KEY_LEN       8 /* the client's Int8 key after a KEY reply: no header */
#define IMPI_INT4_LEN           4 /* AUTH's and IMPI's whole payload; the label a COLL starts with */
#define IMPI_COLL_REPLY_HDR_LEN 16 /* impi_coll_reply_hdr's: header, label, client mask */

/* Direction of a startup command: the length rules differ (a COLL reply has a mask). */
enum impi_dir { IMPI_TO_SERVER = 0, IMPI_TO_CLIENT = 1 };

struct impi_cmd {
    uint32_t cmd;
    uint32_t len; /* payload bytes after the 8-byte header */
};

/* Labels (spec §3.7), in LAM's fixed submission order (spec §3.8). */
#define IMPI_NO_LABEL         0x0000u
#define IMPI_C_VERSION        0x1000u
#define IMPI_C_NHOSTS         0x1100u
#define IMPI_C_NPROCS         0x1200u
#define IMPI_C_DATALEN        0x1300u
#define IMPI_C_TAGUB          0x1400u
#define IMPI_C_COLL_XSIZE     0x1500u
#define IMPI_C_COLL_MAXLINEAR 0x1600u
#define IMPI_H_IPV6           0x2000u
#define IMPI_H_PORT           0x2100u
#define IMPI_H_NPROCS         0x2200u
#define IMPI_H_ACKMARK        0x2300u
#define IMPI_H_HIWATER        0x2400u
#define IMPI_P_IPV6           0x3000u
#define IMPI_P_PID            0x3100u
#define IMPI_NLABELS          14

enum impi_scope { IMPI_PER_CLIENT, IMPI_PER_HOST, IMPI_PER_PROC };

struct impi_label_info {
    uint32_t label;
    uint8_t order; /* 0..13: position in LAM's order */
    uint8_t scope; /* enum impi_scope */
    uint8_t elem;  /* bytes per element */
    const char *name;
};

/* What one client has told us so far: needed to size its per-host and per-proc arrays. */
struct impi_client_shape {
    int32_t nhosts; /* -1 until C_NHOSTS is known */
    int32_t nprocs; /* -1 until C_NPROCS is known */
};

/* Label order tracker for one client's submissions. */
struct impi_label_seq {
    int next; /* order index the next label must be at or after */
};

/* Any context: the table entry for `label`, or NULL if the label is unknown. */
const struct impi_label_info *impi_label_lookup(uint32_t label);
/* Any context: the label at order index `i` (0..IMPI_NLABELS-1). */
const struct impi_label_info *impi_label_at(int i);

/* Any context: encode an 8-byte command header into out[8]. */
void impi_cmd_put(uint8_t *out, uint32_t cmd, uint32_t len);
/* Any context: decode and validate the header at buf[0..avail). IMPI_E_AGAIN if avail < 8.
 * Checks the command and its length for direction `dir`; the caller then waits for len
 * payload bytes. */
int impi_cmd_get(const uint8_t *buf, size_t avail, enum impi_dir dir, struct impi_cmd *out);
/* Any context: encode a complete command (header + payload copied from `payload`) into
 * out[0..cap); *outlen receives the total size. */
int impi_cmd_encode(uint8_t *out, size_t cap, uint32_t cmd, const void *payload, uint32_t len,
                    size_t *outlen);

/* Any context: the server's AUTH reply has no command header: Int4 which, Int4 len (spec
 * §3.2). put writes 8 bytes; get validates `which` (NONE or KEY). */
void impi_auth_reply_put(uint8_t *out, uint32_t which);
int impi_auth_reply_get(const uint8_t *in, uint32_t *which);
/* Any context: pick the method for a client's mask and the server's allowed mask: KEY is
 * preferred when both offer it. IMPI_E_BAD_VALUE when they share none. */
int impi_auth_choose(uint32_t client_mask, uint32_t server_mask, uint32_t *which);
/* Any context: write the IMPI_COLL_REPLY_HDR_LEN bytes that start a COLL reply: header, label, client mask.
 * datalen is the concatenated client data that the caller sends next. */
void impi_coll_reply_hdr(uint8_t *out, uint32_t label, uint32_t mask, uint32_t datalen);

/* Any context: validate one client's COLL submission (label + data, after the header).
 * Updates the order tracker and the client's shape (NHOSTS/NPROCS). data is the COLL
 * payload minus its 4-byte label. */
int impi_coll_check(struct impi_label_seq *seq, struct impi_client_shape *shape, uint32_t label,
                    const uint8_t *data, uint32_t len);
/* Any context: the exact number of bytes client data for `label` must have, given the
 * client's shape; -1 when it depends on the content (C_VERSION) or the shape is unknown. */
int64_t impi_label_datalen(const struct impi_label_info *li, const struct impi_client_shape *sh);
/* Any context: parse a COLL reply payload (label, mask, data) and split it into per-client
 * pieces: off[i]/len[i] index into `data` for each client whose mask bit is set (0/0
 * otherwise). shapes[] describe every client (needed for per-host/per-proc labels). */
int impi_coll_split(const uint8_t *payload, uint32_t plen, uint32_t nclients,
                    const struct impi_client_shape *shapes, uint32_t *label, uint32_t *mask,
                    uint32_t *off, uint32_t *len);

/* ---- packets (spec §5, §6) -------------------------------------------------------------- */
#define IMPI_PKT_HDR_LEN     128
#define IMPI_PK_DATA         0
#define IMPI_PK_DATASYNC     1
#define IMPI_PK_PROTOACK     2
#define IMPI_PK_SYNCACK      3
#define IMPI_PK_CANCEL       4
#define IMPI_PK_CANCELYES    5
#define IMPI_PK_CANCELNO     6
#define IMPI_PK_FINI         7
#define IMPI_PK_NTYPES       8
#define IMPI_HOSTID_LEN      16
#define IMPI_PROC_LEN        24 /* hostid + Int8 pid */
#define IMPI_OFF_SRC         8
#define IMPI_OFF_DEST        32
#define IMPI_DEFAULT_DATALEN 65536u

struct impi_proc {
    uint8_t hostid[IMPI_HOSTID_LEN];
    int64_t pid;
};

struct impi_pkt {
    uint32_t type;
    uint32_t len;
    struct impi_proc src, dest;
    uint64_t srqid, drqid, msglen;
    int32_t lsrank, tag;
    uint64_t cid, seqnum;
    int64_t count;
    uint64_t dtype, reserved;
};

/* Any context: true for DATA/DATASYNC, the only types followed by pk_len payload bytes. */
static inline bool impi_pkt_has_payload(uint32_t type)
{
    return type == IMPI_PK_DATA || type == IMPI_PK_DATASYNC;
}
/* Any context: the name of a packet type ("?" if unknown). */
const char *impi_pkt_type_name(uint32_t type);
/* Any context: encode `p` into out[128]. */
void impi_pkt_encode(const struct impi_pkt *p, uint8_t *out);
/* Any context: decode and validate a 128-byte header. maxlen is the job's data length per
 * packet (payload of DATA/DATASYNC must not exceed it, nor the message length). */
int impi_pkt_decode(const uint8_t *in, uint32_t maxlen, struct impi_pkt *p);
/* Any context: read/write a 24-byte proc id at raw header offset off (IMPI_OFF_SRC/DEST);
 * used by relays to rewrite ids in place without touching LAM's other (garbage) fields. */
void impi_proc_get(const uint8_t *hdr, size_t off, struct impi_proc *p);
void impi_proc_put(uint8_t *hdr, size_t off, const struct impi_proc *p);
/* Any context: true if both ids are equal byte for byte (hostid) and by pid. */
bool impi_proc_eq(const struct impi_proc *a, const struct impi_proc *b);
/* Any context: an IPv4 address (host order) as an IPv4-compatible 16-byte id (LAM's form). */
void impi_hostid_from_ipv4(uint8_t *id, uint32_t ipv4);
/* Any context: bytes 12..15 of a host id as an IPv4 address in host order. */
uint32_t impi_hostid_ipv4(const uint8_t *id);
/* Any context: fill `p` as a control packet (PROTOACK, SYNCACK, FINI...) with LAM's field
 * conventions: pk_len = msglen = 128, lsrank = tag = -1, count = -1. */
void impi_pkt_control(struct impi_pkt *p, uint32_t type, const struct impi_proc *src,
                      const struct impi_proc *dest);

/* Stream framing: how many bytes the frame at buf[0..avail) occupies. Returns IMPI_OK with
 * *frame = 128 + payload, IMPI_E_AGAIN when more bytes are needed (*frame then says how
 * many bytes the caller must have; 128 until the header is in), or a decode error. */
int impi_frame(const uint8_t *buf, size_t avail, uint32_t maxlen, struct impi_pkt *p,
               size_t *frame);
/* Any context: at end of stream, IMPI_OK if no partial frame is pending, else TRUNCATED. */
int impi_frame_eof(size_t avail);

/* ---- flow control (spec §8) ------------------------------------------------------------- */
struct impi_flow_cfg {
    uint32_t ackmark, hiwater;
};
/* Per ordered (src proc, dest proc) pair, on the sending side. */
struct impi_flow_tx {
    uint32_t unacked;
};
/* Per ordered pair, on the receiving side. */
struct impi_flow_rx {
    uint32_t count;
};
/* Any context: 1 <= ackmark <= hiwater (spec §8). */
int impi_flow_cfg_check(const struct impi_flow_cfg *c);
/* Any context: whether a packet of this type counts toward flow control. */
bool impi_flow_counts(uint32_t type);
/* Any context: may the sender emit a counted packet now? */
bool impi_flow_can_send(const struct impi_flow_cfg *c, const struct impi_flow_tx *tx);
/* Any context: account one sent packet (no-op for uncounted types); IMPI_E_FLOW past hiwater */
int impi_flow_sent(const struct impi_flow_cfg *c, struct impi_flow_tx *tx, uint32_t type);
/* Any context: account a received PROTOACK; IMPI_E_FLOW if it acknowledges more than sent. */
int impi_flow_acked(const struct impi_flow_cfg *c, struct impi_flow_tx *tx);
/* Any context: account a received packet; *ack_due is set when a PROTOACK must go back. */
int impi_flow_received(const struct impi_flow_cfg *c, struct impi_flow_rx *rx, uint32_t type,
                       bool *ack_due);

#endif
