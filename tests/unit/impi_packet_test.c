/* Unit tests for mpi/impi/impi_packet.c and impi_flow.c: header, framing, flow control. */
#include "impi_wire.h"
#include "ut.h"

static struct impi_pkt mk(uint32_t type, uint32_t len, uint64_t msglen)
{
    struct impi_pkt p;
    memset(&p, 0, sizeof p);
    p.type = type;
    p.len = len;
    p.msglen = msglen;
    impi_hostid_from_ipv4(p.src.hostid, 0x7f000002);
    p.src.pid = 4242;
    impi_hostid_from_ipv4(p.dest.hostid, 0x7f000001);
    p.dest.pid = 77;
    p.tag = 110;
    p.cid = 1;
    p.lsrank = 3;
    p.count = 0;
    return p;
}

UT_TEST(impi_pkt_roundtrip_offsets)
{
    struct impi_pkt p = mk(IMPI_PK_DATASYNC, 65536, 200000), q;
    uint8_t b[128];
    p.srqid = 5;
    p.seqnum = 17;
    impi_pkt_encode(&p, b);
    UT_EQ(impi_get32(b + 4), 65536);
    UT_EQ(b[8 + 15], 2); /* src hostid byte 15: ::127.0.0.2 */
    UT_EQ(impi_get64(b + 24), 4242);
    UT_EQ(impi_get64(b + 48), 77);
    UT_EQ(impi_get64(b + 72), 200000);
    UT_EQ(impi_get32(b + 84), 110);
    UT_EQ(impi_pkt_decode(b, 65536, &q), IMPI_OK);
    UT_EQ(q.msglen, 200000);
    UT_EQ(q.lsrank, 3);
    UT_ASSERT(impi_proc_eq(&p.src, &q.src));
    UT_ASSERT(!impi_proc_eq(&p.src, &q.dest));
    UT_EQ(impi_hostid_ipv4(q.dest.hostid), 0x7f000001);
}

UT_TEST(impi_pkt_rejects)
{
    struct impi_pkt p = mk(IMPI_PK_DATA, 8, 8), q;
    uint8_t b[128];
    impi_pkt_encode(&p, b);
    UT_EQ(impi_pkt_decode(b, 65536, &q), IMPI_OK);
    p.len = 65537;
    p.msglen = 70000;
    impi_pkt_encode(&p, b);
    UT_EQ(impi_pkt_decode(b, 65536, &q), IMPI_E_BAD_LEN); /* above maxlen */
    p.len = 9;
    p.msglen = 8;
    impi_pkt_encode(&p, b);
    UT_EQ(impi_pkt_decode(b, 65536, &q), IMPI_E_BAD_LEN); /* more than the message */
    p.type = 8;
    impi_pkt_encode(&p, b);
    UT_EQ(impi_pkt_decode(b, 65536, &q), IMPI_E_BAD_TYPE);
    /* LAM's PROTOACK: pk_len 128 and a garbage cid, but no payload */
    p = mk(IMPI_PK_PROTOACK, 128, 128);
    p.cid = 0x4900000000000000ull;
    impi_pkt_encode(&p, b);
    UT_EQ(impi_pkt_decode(b, 1, &q), IMPI_OK);
}

UT_TEST(impi_framing_stream)
{
    /* DATA 8 bytes + PROTOACK (pk_len 128, no payload) + FINI, fed byte by byte */
    uint8_t s[128 + 8 + 128 + 128];
    struct impi_pkt p = mk(IMPI_PK_DATA, 8, 8), q;
    impi_pkt_encode(&p, s);
    memcpy(s + 128, "payload!", 8);
    struct impi_proc a = p.src, z;
    memset(&z, 0, sizeof z);
    z.pid = -1;
    impi_pkt_control(&p, IMPI_PK_PROTOACK, &p.dest, &a);
    impi_pkt_encode(&p, s + 136);
    impi_pkt_control(&p, IMPI_PK_FINI, &z, &z);
    impi_pkt_encode(&p, s + 264);
    size_t pos = 0, fr, frames[3], nf = 0;
    for (size_t avail = 0; avail <= sizeof s; avail++) {
        int e = impi_frame(s + pos, avail - pos, 65536, &q, &fr);
        if (e == IMPI_OK) {
            frames[nf++] = fr;
            pos += fr;
        } else {
            UT_EQ(e, IMPI_E_AGAIN);
        }
    }
    UT_EQ(nf, 3);
    UT_EQ(frames[0], 136);
    UT_EQ(frames[1], 128);
    UT_EQ(frames[2], 128);
    UT_EQ(q.type, IMPI_PK_FINI);
    UT_EQ(q.src.pid, -1);
    UT_EQ(impi_frame_eof(0), IMPI_OK);
    UT_EQ(impi_frame_eof(5), IMPI_E_TRUNCATED);
    UT_ASSERT(strcmp(impi_pkt_type_name(IMPI_PK_SYNCACK), "SYNCACK") == 0);
}

UT_TEST(impi_proc_rewrite_in_place)
{
    struct impi_pkt p = mk(IMPI_PK_DATA, 0, 0);
    uint8_t b[128], b2[128];
    p.cid = 0x4900000000000000ull;
    impi_pkt_encode(&p, b);
    memcpy(b2, b, 128);
    struct impi_proc r;
    impi_hostid_from_ipv4(r.hostid, 0x0a000001);
    r.pid = 1;
    impi_proc_put(b2, IMPI_OFF_DEST, &r);
    impi_proc_get(b2, IMPI_OFF_DEST, &p.dest);
    UT_ASSERT(impi_proc_eq(&p.dest, &r));
    UT_EQ(memcmp(b, b2, 32), 0); /* everything else untouched */
    UT_EQ(memcmp(b + 56, b2 + 56, 72), 0);
}

UT_TEST(impi_flow_lam_burst)
{
    /* 50 DATA packets + 1 barrier packet with ackmark 10 give exactly 5 PROTOACKs. */
    struct impi_flow_cfg c = {10, 20};
    struct impi_flow_tx tx = {0};
    struct impi_flow_rx rx = {0};
    int acks = 0, sent = 0;
    bool due;
    UT_EQ(impi_flow_cfg_check(&c), IMPI_OK);
    for (int i = 0; i < 51; i++) {
        if (!impi_flow_can_send(&c, &tx))
            break;
        UT_EQ(impi_flow_sent(&c, &tx, IMPI_PK_DATA), IMPI_OK);
        sent++;
        UT_EQ(impi_flow_received(&c, &rx, IMPI_PK_DATA, &due), IMPI_OK);
        if (due) {
            acks++;
            UT_EQ(impi_flow_acked(&c, &tx), IMPI_OK);
        }
    }
    UT_EQ(sent, 51);
    UT_EQ(acks, 5);
    UT_EQ(tx.unacked, 1);
    UT_EQ(impi_flow_acked(&c, &tx), IMPI_E_FLOW); /* PROTOACK without credit */
}

UT_TEST(impi_flow_hiwater_and_uncounted)
{
    struct impi_flow_cfg c = {10, 20}, bad = {5, 4};
    struct impi_flow_tx tx = {0};
    struct impi_flow_rx rx = {0};
    bool due;
    UT_EQ(impi_flow_cfg_check(&bad), IMPI_E_BAD_VALUE);
    for (int i = 0; i < 20; i++)
        UT_EQ(impi_flow_sent(&c, &tx, IMPI_PK_SYNCACK), IMPI_OK);
    UT_ASSERT(!impi_flow_can_send(&c, &tx));
    UT_EQ(impi_flow_sent(&c, &tx, IMPI_PK_DATA), IMPI_E_FLOW);
    UT_EQ(impi_flow_sent(&c, &tx, IMPI_PK_PROTOACK), IMPI_OK); /* never counted */
    UT_EQ(impi_flow_sent(&c, &tx, IMPI_PK_FINI), IMPI_OK);
    UT_EQ(impi_flow_acked(&c, &tx), IMPI_OK);
    UT_ASSERT(impi_flow_can_send(&c, &tx));
    UT_EQ(impi_flow_received(&c, &rx, IMPI_PK_PROTOACK, &due), IMPI_OK);
    UT_EQ(rx.count, 0);
    UT_EQ(impi_flow_received(&c, &rx, 99, &due), IMPI_E_BAD_TYPE);
}
