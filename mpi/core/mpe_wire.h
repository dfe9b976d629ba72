/*
 * mpe_wire.h: the native header of unikernel-to-unikernel MPI traffic (docs/architecture.md
 * §3.11), one TCP connection per node pair, both directions.
 *
 * Every message is a 48-byte header, followed by `len` payload bytes for EAGER and DATA:
 *
 *   off size field
 *     0    2 magic      0x4d55 ("UM" little-endian)
 *     2    1 version    MPE_WIRE_VERSION
 *     3    1 type       enum mpe_wire_type
 *     4    4 seq        per connection and direction, from 0, +1 per header
 *     8    4 ctx        communicator context id
 *    12    4 src        source rank in the communicator
 *    16    4 tag
 *    20    4 src_world  sender's MPI_COMM_WORLD rank
 *    24    4 dst_world  receiver's MPI_COMM_WORLD rank
 *    28    4 handle     RTS: sender's handle; CTS: sender's handle; DATA: receiver's
 *    32    4 aux        CTS: receiver's handle; CREDIT: descriptors; HELLO: node id
 *    36    4 aux2       CREDIT: big slots; HELLO: job size
 *    40    8 len        EAGER/DATA: payload bytes; RTS: message bytes; CTS: bytes wanted
 *
 * Little-endian on the wire (both ends are x86_64; the codec still packs byte by byte so
 * that it does not depend on struct layout). The decoder validates everything it can
 * without connection state; mpe_net.c checks the rest (seq, ranks, handles, credits).
 */
#ifndef MPI_MPE_WIRE_H
#define MPI_MPE_WIRE_H
#include <stddef.h>
#include <stdint.h>

#define MPE_WIRE_MAGIC   0x4d55
#define MPE_WIRE_VERSION 1
#define MPE_WIRE_HDR     48

enum mpe_wire_type {
    MPE_W_HELLO = 1, /* first header on a connection: who is speaking */
    MPE_W_EAGER,     /* a message with its payload */
    MPE_W_RTS,       /* request to send a large message (no payload) */
    MPE_W_CTS,       /* the receiver matched it: send `len` bytes */
    MPE_W_DATA,      /* payload of a matched large message */
    MPE_W_CREDIT,    /* receive descriptors and slots freed at the receiver */
    MPE_W_BYE,       /* the node's ranks are done: nothing more will be sent */
    MPE_W_TYPES
};

struct mpe_wire {
    uint8_t type;
    uint32_t seq, ctx;
    int32_t src, tag;
    uint32_t src_world, dst_world, handle, aux, aux2;
    uint64_t len;
};

/* Any context. Encode h into out[MPE_WIRE_HDR]. */
void mpe_wire_encode(const struct mpe_wire *h, uint8_t out[MPE_WIRE_HDR]);
/* Any context. Decode and check in[MPE_WIRE_HDR]: NULL on success, else a static string
 * naming what is wrong ("bad magic", "unknown type", ...). `max_eager` bounds EAGER. */
const char *mpe_wire_decode(const uint8_t in[MPE_WIRE_HDR], struct mpe_wire *h, uint64_t max_eager);
const char *mpe_wire_type_name(int type);

#endif
