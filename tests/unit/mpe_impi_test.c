/*
 * mpe_impi_test.c: the engine's IMPI links (mpi/core/mpe_impi*.c) against a played LAM.
 *
 * The job: MPI_COMM_WORLD of 5 ranks in 2 IMPI clients. Client 0 is "LAM", which the test
 * plays: host 0 runs world ranks 0 and 1, host 1 runs rank 2. Client 1 is ours: one
 * simulated node, host 2, running ranks 3 and 4. Every packet LAM sends is encoded by the
 * codec (mpi/impi/) and injected into the node's link as the NIC interrupt would hand it
 * over; every packet the node sends is read back from the link's pipe and decoded. The
 * job's maxlen is small so that long messages (§7.2) take a few packets, and the flow
 * control window (ackmark, hiwater) small so that it is reached.
 *
 * Each scenario runs twice: with every packet in one piece, and one byte at a time (the
 * parser's state survives any cut of the stream).
 */
#include "mpe_impi.h"
#include "mpe_test_util.h"
#include <stdio.h>

#define IT_MAXLEN  1000 /* bytes of payload per packet */
#define IT_ACKMARK 3
#define IT_HIWATER 6
#define IT_POOL    (64u << 10)
#define IT_WORLD   5
#define IT_HOSTS   3
#define IT_ME      2 /* our host */
#define IT_CTX     0 /* MPI_COMM_WORLD's point-to-point context, the same in LAM */
#define IT_FILL    0xee

static const int32_t it_clients[] = {0, 3, IT_WORLD};
static const int32_t it_host_first[IT_HOSTS + 1] = {0, 2, 3, IT_WORLD};
static struct impi_proc it_procs[IT_WORLD];
static int bytewise;     /* inject one byte at a time */
static uint64_t lam_seq; /* pk_seqnum of the played hosts */

/* Host h's address: 10.0.0.(h + 1); each rank's pid 100 * (host + 1) + its index there. */
static uint32_t host_ipv4(int h)
{
    return 0x0a000001u + (uint32_t)h;
}

/* The IMPI id of every world rank (tests may build packets before their job). */
static void it_procs_init(void)
{
    for (int h = 0; h < IT_HOSTS; h++)
        for (int w = it_host_first[h]; w < it_host_first[h + 1]; w++) {
            impi_hostid_from_ipv4(it_procs[w].hostid, host_ipv4(h));
            it_procs[w].pid = 100 * (h + 1) + (w - it_host_first[h]);
        }
}

/* A fresh job (file comment) with the node's ranks past init; its pipes hold `cap` bytes
 * (0: the host's default). */
static void it_world_cap(size_t cap)
{
    struct host_cfg hc = {.cap = cap};
    struct mpe_impi_cfg cfg = {.maxlen = IT_MAXLEN,
                               .ackmark = IT_ACKMARK,
                               .hiwater = IT_HIWATER,
                               .nhosts = IT_HOSTS,
                               .self_host = IT_ME,
                               .host_first = it_host_first,
                               .procs = it_procs,
                               .pool_bytes = IT_POOL};
    it_procs_init();
    host_fail_hook = mt_host_failed;
    UT_EQ(host_world_create(1, 2, &hc), 0);
    UT_EQ(host_impi_layout(2, it_clients, 1, &cfg), 0);
    host_init_all();
    lam_seq = 0;
}

static void it_world(void)
{
    it_world_cap(0);
}

/* Played host h (0 or 1) of world rank w. */
static int host_of(int w)
{
    return w < it_host_first[1] ? 0 : 1;
}

/* A packet from world rank src to world rank dst, with LAM's field conventions (§5). */
static struct impi_pkt pkt(uint32_t type, int src, int dst)
{
    struct impi_pkt p;
    it_procs_init();
    impi_pkt_control(&p, type, &it_procs[src], &it_procs[dst]);
    if (impi_pkt_has_payload(type)) {
        p.lsrank = src;
        p.count = 0;
        p.len = 0;
        p.msglen = 0;
        p.cid = IT_CTX;
    }
    return p;
}

static struct impi_pkt data_pkt(uint32_t type, int src, int dst, int tag, uint32_t len,
                                uint64_t msglen)
{
    struct impi_pkt p = pkt(type, src, dst);
    p.tag = tag;
    p.len = len;
    p.msglen = msglen;
    return p;
}

/* LAM's host of p's source sends p, with `p->len` payload bytes from `payload` if its type
 * has them. */
static void lam_send(const struct impi_pkt *p, const void *payload)
{
    static uint8_t b[IMPI_PKT_HDR_LEN + IT_MAXLEN];
    struct impi_pkt q = *p;
    size_t len = IMPI_PKT_HDR_LEN;
    q.seqnum = lam_seq++;
    impi_pkt_encode(&q, b);
    if (impi_pkt_has_payload(q.type)) {
        UT_ASSERT(q.len <= IT_MAXLEN);
        mpe_copy(b + len, payload, q.len);
        len += q.len;
    }
    int h = 0;
    for (int w = 0; w < it_host_first[IT_ME]; w++)
        if (impi_proc_eq(&it_procs[w], &p->src))
            h = host_of(w);
    if (!bytewise) {
        host_impi_inject(0, h, b, len);
        return;
    }
    for (size_t i = 0; i < len; i++)
        host_impi_inject(0, h, b + i, 1);
}

/* The next packet the node sent host h (its payload into buf, of at least p->len bytes): 1,
 * or 0 if it sent nothing more. A packet must arrive whole. */
static int lam_recv(int h, struct impi_pkt *p, uint8_t *buf)
{
    uint8_t hdr[IMPI_PKT_HDR_LEN];
    if (!host_impi_len(0, h))
        return 0;
    UT_EQ(host_impi_take(0, h, hdr, sizeof hdr), sizeof hdr);
    UT_EQ(impi_pkt_decode(hdr, IT_MAXLEN, p), IMPI_OK);
    if (impi_pkt_has_payload(p->type))
        UT_EQ(host_impi_take(0, h, buf, p->len), p->len);
    else
        UT_EQ(p->len, IMPI_PKT_HDR_LEN); /* LAM's conventions, and no payload follows */
    return 1;
}

/* The next packet to host h must be of this type, from world rank src to dst. */
static struct impi_pkt expect(int h, uint32_t type, int src, int dst, uint8_t *buf)
{
    struct impi_pkt p;
    static uint8_t scratch[IT_MAXLEN];
    if (!lam_recv(h, &p, buf ? buf : scratch))
        ut_fail(__FILE__, __LINE__, "no %s packet from rank %d to %d", impi_pkt_type_name(type),
                src, dst);
    if (p.type != type || !impi_proc_eq(&p.src, &it_procs[src]) ||
        !impi_proc_eq(&p.dest, &it_procs[dst]))
        ut_fail(__FILE__, __LINE__, "%s packet from pid %lld to pid %lld: want %s from %d to %d",
                impi_pkt_type_name(p.type), (long long)p.src.pid, (long long)p.dest.pid,
                impi_pkt_type_name(type), src, dst);
    return p;
}

static void it_irecv(int at, struct mpe_req *r, void *buf, size_t len, int src, int tag)
{
    host_as_rank(at);
    UT_EQ(mpe_ops.irecv(r, buf, len, IT_CTX, src, tag), 0);
}

static void it_isend(int from, struct mpe_req *r, const void *buf, size_t len, int to, int tag,
                     int flags)
{
    host_as_rank(from);
    UT_EQ(mpe_ops.isend(r, buf, len, to, IT_CTX, from, tag, flags), 0);
}

/* Scenarios run whole and byte by byte: two tests each. */
#define IT_TEST(name)                                                                              \
    static void it_##name(void);                                                                   \
    UT_TEST(name)                                                                                  \
    {                                                                                              \
        bytewise = 0;                                                                              \
        it_##name();                                                                               \
    }                                                                                              \
    UT_TEST(name##_bytewise)                                                                       \
    {                                                                                              \
        bytewise = 1;                                                                              \
        it_##name();                                                                               \
        bytewise = 0;                                                                              \
    }                                                                                              \
    static void it_##name(void)

/* Short DATA into a posted receive (matched in the interrupt, streamed into the user's
 * buffer), into one posted with ANY_SOURCE, and an empty message. */
IT_TEST(mpe_impi_short_posted)
{
    static struct mpe_req r1, r2, r3;
    uint8_t *src = mt_buf(300, 1), *b1 = malloc(400), *b2 = malloc(400);
    memset(b1, IT_FILL, 400);
    it_world();
    it_irecv(3, &r1, b1, 400, 0, 5);
    it_irecv(4, &r2, b2, 400, MPE_ANY_SOURCE, MPE_ANY_TAG);
    it_irecv(4, &r3, 0, 0, 2, 6);
    struct impi_pkt p = data_pkt(IMPI_PK_DATA, 0, 3, 5, 300, 300);
    lam_send(&p, src);
    UT_ASSERT(mt_done(&r1));
    UT_EQ(r1.err, MPE_OK);
    UT_EQ(r1.count, 300);
    UT_EQ(r1.src, 0);
    UT_EQ(r1.tag, 5);
    UT_EQ(mt_diff(b1, 300, 1), -1);
    UT_EQ(mt_diff_fill(b1 + 300, 100, IT_FILL), -1); /* bytes past the message untouched */
    p = data_pkt(IMPI_PK_DATA, 2, 4, 9, 20, 20);
    lam_send(&p, src);
    UT_ASSERT(mt_done(&r2));
    UT_EQ(r2.src, 2);
    UT_EQ(r2.tag, 9);
    UT_EQ(r2.count, 20);
    UT_EQ(mt_diff(b2, 20, 1), -1);
    p = data_pkt(IMPI_PK_DATA, 2, 4, 6, 0, 0);
    lam_send(&p, 0);
    UT_ASSERT(mt_done(&r3));
    UT_EQ(r3.count, 0);
    UT_EQ(host_impi_len(0, 0) + host_impi_len(0, 1), 0); /* a plain DATA is not answered */
    free(src);
    free(b1);
    free(b2);
}

/* Short DATA before its receive: it waits in the unexpected queue (iprobe sees it), in
 * arrival order, and the receive copies it out; inline and pool-buffered sizes. */
IT_TEST(mpe_impi_short_unexpected)
{
    static const uint32_t lens[] = {7, MPE_NET_INLINE + 1, IT_MAXLEN};
    static struct mpe_req r[3];
    uint8_t *b[3];
    it_world();
    for (int i = 0; i < 3; i++) {
        uint8_t *src = mt_buf(lens[i], 10 + (unsigned)i);
        struct impi_pkt p = data_pkt(IMPI_PK_DATA, 1, 3, 4, lens[i], lens[i]);
        lam_send(&p, src);
        free(src);
    }
    struct mpe_status st;
    host_as_rank(3);
    UT_EQ(mpe_ops.iprobe(IT_CTX, 1, 4, &st), 1);
    UT_EQ(st.len, lens[0]);
    UT_EQ(st.src, 1);
    for (int i = 0; i < 3; i++) {
        b[i] = mt_buf(IT_MAXLEN, 0);
        it_irecv(3, &r[i], b[i], IT_MAXLEN, MPE_ANY_SOURCE, 4);
        UT_ASSERT(mt_done(&r[i]));
        UT_EQ(r[i].count, lens[i]);
        UT_EQ(mt_diff(b[i], lens[i], 10 + (unsigned)i), -1);
        free(b[i]);
    }
    UT_EQ(mpe_ops.iprobe(IT_CTX, MPE_ANY_SOURCE, MPE_ANY_TAG, &st), 0);
}

/* Unexpected payloads wait in the node's pool (UKMPI_IMPI_BUFFER): when it is full the
 * job ends saying so, but a message for a posted receive needs none of it; receiving the
 * waiting messages gives their buffers back. */
static struct impi_pkt pool_pkt;
static uint8_t *pool_src;

/* Inside host_catch: unexpected messages until the job ends (or more than the pool can
 * hold went in); *arg counts those taken. */
static void pool_fill(void *arg)
{
    for (int *n = arg; (size_t)*n <= IT_POOL / IT_MAXLEN; ++*n)
        lam_send(&pool_pkt, pool_src);
}

IT_TEST(mpe_impi_pool_full)
{
    static struct mpe_req r;
    uint8_t *buf = malloc(IT_MAXLEN);
    int n = 0;
    pool_src = mt_buf(IT_MAXLEN, 9);
    it_world();
    pool_pkt = data_pkt(IMPI_PK_DATA, 0, 3, 1, IT_MAXLEN, IT_MAXLEN);
    UT_EQ(host_catch(pool_fill, &n), 1);
    UT_ASSERT(strstr(host_fatal_msg, "IMPI host 0") && strstr(host_fatal_msg, "UKMPI_IMPI_BUFFER"));
    UT_ASSERT(n > 1 && (size_t)n * IT_MAXLEN <= IT_POOL);
    it_world();
    for (int i = 0; i < n; i++)
        lam_send(&pool_pkt, pool_src);
    it_irecv(4, &r, buf, IT_MAXLEN, 0, 2);
    struct impi_pkt p = data_pkt(IMPI_PK_DATA, 0, 4, 2, IT_MAXLEN, IT_MAXLEN);
    lam_send(&p, pool_src);
    UT_ASSERT(mt_done(&r));
    UT_EQ(mt_diff(buf, IT_MAXLEN, 9), -1);
    for (int i = 0; i < n; i++) {
        memset(buf, 0, IT_MAXLEN);
        it_irecv(3, &r, buf, IT_MAXLEN, 0, 1);
        UT_ASSERT(mt_done(&r));
        UT_EQ(mt_diff(buf, IT_MAXLEN, 9), -1);
    }
    for (int i = 0; i < n; i++) /* the pool is whole again */
        lam_send(&pool_pkt, pool_src);
    free(pool_src);
    free(buf);
}

/* MPI_Ssend to a LAM rank: one DATASYNC (LAM's fields), and the send completes only on
 * the SYNCACK that echoes its srqid. */
IT_TEST(mpe_impi_ssend)
{
    static struct mpe_req s;
    uint8_t *src = mt_buf(50, 3), got[IT_MAXLEN];
    it_world();
    it_isend(3, &s, src, 50, 0, 17, MPE_SYNC);
    struct impi_pkt p = expect(0, IMPI_PK_DATASYNC, 3, 0, got);
    UT_EQ(p.len, 50);
    UT_EQ(p.msglen, 50);
    UT_EQ(p.tag, 17);
    UT_EQ(p.cid, IT_CTX);
    UT_EQ(p.lsrank, 3);
    UT_EQ(p.drqid, 0);
    UT_ASSERT(p.srqid != 0);
    UT_EQ(mt_diff(got, 50, 3), -1);
    UT_ASSERT(!mt_done(&s));
    host_pump_all();
    UT_ASSERT(!mt_done(&s));
    struct impi_pkt a = pkt(IMPI_PK_SYNCACK, 0, 3);
    a.srqid = p.srqid;
    lam_send(&a, 0);
    UT_ASSERT(mt_done(&s));
    UT_EQ(s.err, MPE_OK);
    free(src);
}

/* A SYNCACK that comes while the DATASYNC's payload is still being handed over (a peer
 * may match on the header): the send completes only once the transport took its last
 * byte, as the user's buffer may be reused from then on. */
IT_TEST(mpe_impi_ssend_early_syncack)
{
    enum { CAP = 2 * IMPI_PKT_HDR_LEN };
    static struct mpe_req s;
    uint8_t *src = mt_buf(IT_MAXLEN, 8), hdr[IMPI_PKT_HDR_LEN], got[IT_MAXLEN];
    struct impi_pkt p;
    it_world_cap(CAP);
    it_isend(3, &s, src, IT_MAXLEN, 0, 1, MPE_SYNC);
    UT_EQ(host_impi_take(0, 0, hdr, sizeof hdr), sizeof hdr);
    UT_EQ(impi_pkt_decode(hdr, IT_MAXLEN, &p), IMPI_OK);
    UT_EQ(p.type, IMPI_PK_DATASYNC);
    struct impi_pkt a = pkt(IMPI_PK_SYNCACK, 0, 3);
    a.srqid = p.srqid;
    lam_send(&a, 0);
    size_t n = 0; /* taken out of the pipe; n + what is in it: handed over */
    UT_ASSERT(host_impi_len(0, 0) < IT_MAXLEN);
    while (n < IT_MAXLEN) {
        UT_EQ(mt_done(&s), n + host_impi_len(0, 0) == IT_MAXLEN);
        size_t k = host_impi_take(0, 0, got + n, IT_MAXLEN - n);
        UT_ASSERT(k > 0);
        n += k;
    }
    UT_ASSERT(mt_done(&s));
    UT_EQ(mt_diff(got, IT_MAXLEN, 8), -1);
    free(src);
}

/* A long send (§7.2): DATASYNC with the first maxlen bytes, nothing more until the
 * SYNCACK, then DATA packets carrying its drqid; done once the last byte is handed over. */
IT_TEST(mpe_impi_long_send)
{
    enum { LEN = 2 * IT_MAXLEN + 500, DRQ = 0x5151 };
    static struct mpe_req s;
    uint8_t *src = mt_buf(LEN, 4), *got = malloc(LEN);
    it_world();
    it_isend(4, &s, src, LEN, 1, 8, 0);
    struct impi_pkt p = expect(0, IMPI_PK_DATASYNC, 4, 1, got);
    UT_EQ(p.len, IT_MAXLEN);
    UT_EQ(p.msglen, LEN);
    UT_ASSERT(p.srqid != 0);
    UT_EQ(host_impi_len(0, 0), 0);
    UT_ASSERT(!mt_done(&s));
    struct impi_pkt a = pkt(IMPI_PK_SYNCACK, 1, 4);
    a.srqid = p.srqid;
    a.drqid = DRQ;
    lam_send(&a, 0);
    size_t off = IT_MAXLEN;
    while (off < LEN) {
        struct impi_pkt d = expect(0, IMPI_PK_DATA, 4, 1, got + off);
        UT_EQ(d.drqid, DRQ);
        UT_EQ(d.srqid, p.srqid);
        UT_EQ(d.msglen, LEN);
        UT_EQ(d.tag, 8);
        UT_EQ(d.len, LEN - off < IT_MAXLEN ? LEN - off : IT_MAXLEN);
        off += d.len;
    }
    UT_EQ(host_impi_len(0, 0), 0);
    UT_EQ(mt_diff(got, LEN, 4), -1);
    UT_ASSERT(mt_done(&s));
    free(src);
    free(got);
}

/* A long message from LAM: the DATASYNC waits unexpected (no SYNCACK before a receive
 * matches it); the receive answers SYNCACK with a handle, and the rest streams straight
 * into its buffer. `cap` < LEN: truncated, nothing written past cap. `late`: the receive
 * is posted after the DATASYNC arrived. */
static void long_recv(size_t cap, int late)
{
    enum { LEN = 2 * IT_MAXLEN + 500, SRQ = 0x77 };
    static struct mpe_req r;
    uint8_t *src = mt_buf(LEN, 5), *buf = malloc(LEN + 100);
    memset(buf, IT_FILL, LEN + 100);
    it_world();
    if (!late)
        it_irecv(4, &r, buf, cap, 1, 3);
    struct impi_pkt p = data_pkt(IMPI_PK_DATASYNC, 1, 4, 3, IT_MAXLEN, LEN);
    p.srqid = SRQ;
    lam_send(&p, src);
    if (late) {
        UT_EQ(host_impi_len(0, 0), 0);
        it_irecv(4, &r, buf, cap, 1, 3);
    }
    struct impi_pkt a = expect(0, IMPI_PK_SYNCACK, 4, 1, 0);
    UT_EQ(a.srqid, SRQ);
    UT_ASSERT(a.drqid != 0);
    UT_ASSERT(!mt_done(&r));
    for (size_t off = IT_MAXLEN; off < LEN; off += IT_MAXLEN) {
        UT_ASSERT(!mt_done(&r));
        struct impi_pkt d =
            data_pkt(IMPI_PK_DATA, 1, 4, 3, LEN - off < IT_MAXLEN ? LEN - off : IT_MAXLEN, LEN);
        d.srqid = SRQ;
        d.drqid = a.drqid;
        lam_send(&d, src + off);
    }
    UT_ASSERT(mt_done(&r));
    UT_EQ(r.err, cap < LEN ? MPE_ETRUNCATE : MPE_OK);
    UT_EQ(r.count, cap < LEN ? cap : LEN);
    UT_EQ(mt_diff(buf, r.count, 5), -1);
    UT_EQ(mt_diff_fill(buf + r.count, LEN + 100 - r.count, IT_FILL), -1);
    expect(0, IMPI_PK_PROTOACK, 4, 1, 0); /* DATASYNC and 2 DATA: ackmark packets */
    UT_EQ(host_impi_len(0, 0), 0);
    free(src);
    free(buf);
}

IT_TEST(mpe_impi_long_recv)
{
    long_recv(2 * IT_MAXLEN + 500, 1);
    long_recv(2 * IT_MAXLEN + 500, 0);
}

IT_TEST(mpe_impi_long_recv_truncated)
{
    long_recv(IT_MAXLEN + 10, 1); /* cut in the second packet */
    long_recv(IT_MAXLEN + 10, 0);
    long_recv(IT_MAXLEN / 2, 1); /* cut in the first */
    long_recv(IT_MAXLEN / 2, 0);
}

/* The sender's window per pair (§8): rank 3 stops sending to rank 0 at hiwater packets
 * while other pairs on the link and control packets still go; each PROTOACK lets ackmark
 * more through. */
IT_TEST(mpe_impi_flow_send)
{
    enum { N = IT_HIWATER + IT_ACKMARK + 2 };
    static struct mpe_req s[N], other[2], r;
    uint8_t *src = mt_buf(10, 6), got[IT_MAXLEN];
    it_world();
    for (int i = 0; i < N; i++)
        it_isend(3, &s[i], src, 10, 0, i, 0);
    for (int i = 0; i < IT_HIWATER; i++)
        UT_EQ(expect(0, IMPI_PK_DATA, 3, 0, got).tag, i);
    UT_EQ(host_impi_len(0, 0), 0);
    /* Other pairs: rank 3 to rank 1 (the same host) and rank 4 to rank 0. */
    it_isend(3, &other[0], src, 10, 1, 50, 0);
    it_isend(4, &other[1], src, 10, 0, 51, 0);
    UT_EQ(expect(0, IMPI_PK_DATA, 3, 1, got).tag, 50);
    UT_EQ(expect(0, IMPI_PK_DATA, 4, 0, got).tag, 51);
    UT_EQ(host_impi_len(0, 0), 0);
    /* A synchronous message from rank 0 is answered although the pair is at hiwater. */
    it_irecv(3, &r, got, sizeof got, 0, 99);
    struct impi_pkt d = data_pkt(IMPI_PK_DATASYNC, 0, 3, 99, 1, 1);
    d.srqid = 4;
    lam_send(&d, src);
    UT_EQ(expect(0, IMPI_PK_SYNCACK, 3, 0, 0).srqid, 4);
    UT_EQ(host_impi_len(0, 0), 0);
    /* The SYNCACK counted too: hiwater + 1 unacknowledged; one PROTOACK leaves
     * hiwater + 1 - ackmark, so hiwater - that = ackmark - 1 more may go. */
    struct impi_pkt a = pkt(IMPI_PK_PROTOACK, 0, 3);
    lam_send(&a, 0);
    int sent = IT_HIWATER;
    for (; sent < IT_HIWATER + IT_ACKMARK - 1; sent++)
        UT_EQ(expect(0, IMPI_PK_DATA, 3, 0, got).tag, sent);
    UT_EQ(host_impi_len(0, 0), 0);
    lam_send(&a, 0);
    for (; sent < N; sent++)
        UT_EQ(expect(0, IMPI_PK_DATA, 3, 0, got).tag, sent);
    UT_EQ(host_impi_len(0, 0), 0);
    for (int i = 0; i < N; i++)
        UT_ASSERT(mt_done(&s[i]));
    free(src);
}

/* The receiver's side (§8): a PROTOACK, src and dest swapped, every ackmark counted packets
 * of a pair (DATA, DATASYNC, SYNCACK; not PROTOACK) as they arrive, whether or not they
 * are received yet; pairs count apart. */
IT_TEST(mpe_impi_flow_recv)
{
    static struct mpe_req s;
    uint8_t *src = mt_buf(10, 7);
    it_world();
    struct impi_pkt d = data_pkt(IMPI_PK_DATA, 0, 3, 1, 10, 10);
    for (int i = 0; i < 2 * IT_ACKMARK - 1; i++) {
        lam_send(&d, src);
        if (i % IT_ACKMARK == IT_ACKMARK - 1) {
            struct impi_pkt a = expect(0, IMPI_PK_PROTOACK, 3, 0, 0);
            UT_EQ(a.srqid, 0);
            UT_EQ(a.drqid, 0);
        }
        UT_EQ(host_impi_len(0, 0), 0);
    }
    /* Another pair's packets do not count for this one. */
    struct impi_pkt e = data_pkt(IMPI_PK_DATA, 1, 3, 1, 10, 10);
    for (int i = 0; i < IT_ACKMARK - 1; i++)
        lam_send(&e, src);
    UT_EQ(host_impi_len(0, 0), 0);
    /* A SYNCACK (for our ssend) is this pair's ackmark-th: acknowledged. */
    it_isend(3, &s, src, 10, 0, 2, MPE_SYNC);
    struct impi_pkt ds = expect(0, IMPI_PK_DATASYNC, 3, 0, 0);
    struct impi_pkt k = pkt(IMPI_PK_SYNCACK, 0, 3);
    k.srqid = ds.srqid;
    lam_send(&k, 0);
    UT_ASSERT(mt_done(&s));
    expect(0, IMPI_PK_PROTOACK, 3, 0, 0);
    /* A DATASYNC counts, and so does our SYNCACK to it (toward our window, below). */
    d.type = IMPI_PK_DATASYNC;
    d.srqid = 1;
    lam_send(&e, src); /* rank 1's ackmark-th */
    expect(0, IMPI_PK_PROTOACK, 3, 1, 0);
    lam_send(&d, src);
    UT_EQ(host_impi_len(0, 0), 0);
    free(src);
}

/* CANCEL (§7.4): always CANCELNO, srqid echoed, src and dest swapped. */
IT_TEST(mpe_impi_cancel)
{
    it_world();
    struct impi_pkt c = pkt(IMPI_PK_CANCEL, 2, 4);
    c.srqid = 0x1234;
    lam_send(&c, 0);
    struct impi_pkt n = expect(1, IMPI_PK_CANCELNO, 4, 2, 0);
    UT_EQ(n.srqid, 0x1234);
    UT_EQ(host_impi_len(0, 1), 0);
}

/* FINI (§9) both ways, in either order: a link is done only once both went and ours was
 * handed over. Host 0 says FINI before ours, host 1 after. */
IT_TEST(mpe_impi_fini)
{
    it_world();
    struct mpe_ilink *l0 = host_impi_link(0, 0), *l1 = host_impi_link(0, 1);
    struct impi_pkt f, p;
    uint8_t b[IMPI_PKT_HDR_LEN], scratch[1];
    impi_pkt_control(&f, IMPI_PK_FINI, &(struct impi_proc){.pid = -1},
                     &(struct impi_proc){.pid = -1});
    impi_pkt_encode(&f, b);
    for (size_t i = 0; i < sizeof b; i += bytewise ? 1 : sizeof b)
        host_impi_inject(0, 0, b + i, bytewise ? 1 : sizeof b);
    UT_ASSERT(!mpe_impi_done(l0));
    mpe_impi_finish(host_node(0));
    for (int h = 0; h < 2; h++) {
        UT_EQ(lam_recv(h, &p, scratch), 1);
        UT_EQ(p.type, IMPI_PK_FINI);
        UT_EQ(p.src.pid, -1);
        UT_EQ(p.dest.pid, -1);
        UT_EQ(lam_recv(h, &p, scratch), 0);
    }
    UT_ASSERT(mpe_impi_done(l0));
    UT_ASSERT(!mpe_impi_done(l1));
    for (size_t i = 0; i < sizeof b; i += bytewise ? 1 : sizeof b)
        host_impi_inject(0, 1, b + i, bytewise ? 1 : sizeof b);
    UT_ASSERT(mpe_impi_done(l1));
}

/* After our FINI (§9: nothing follows FINI on a stream), a host that goes on: data that
 * would make a PROTOACK due, a DATASYNC (a SYNCACK once matched), a CANCEL (a CANCELNO at
 * once). Nothing goes out on that link after our FINI, not even a control packet queued
 * directly; every packet is read through its payload and dropped, the messages among them
 * are counted for the platform's report, and the host's FINI still closes the link. */
IT_TEST(mpe_impi_after_fini)
{
    static uint8_t src[IT_MAXLEN];
    enum { PAYLOAD = 40 };
    it_world();
    struct mpe_ilink *l0 = host_impi_link(0, 0);
    struct impi_pkt f, p;
    uint8_t scratch[1];
    mpe_impi_finish(host_node(0));
    for (int h = 0; h < 2; h++) {
        UT_EQ(lam_recv(h, &p, scratch), 1);
        UT_EQ(p.type, IMPI_PK_FINI);
    }
    for (int i = 0; i < IT_ACKMARK; i++) {
        p = data_pkt(IMPI_PK_DATA, 0, 3, 1, PAYLOAD, PAYLOAD);
        lam_send(&p, src);
    }
    p = data_pkt(IMPI_PK_DATASYNC, 1, 4, 1, PAYLOAD, PAYLOAD);
    p.srqid = 5;
    lam_send(&p, src);
    p = pkt(IMPI_PK_CANCEL, 0, 3);
    p.srqid = 5;
    lam_send(&p, 0);
    int t = plat_net_lock();
    mpe_impi_ctl(l0, IMPI_PK_PROTOACK, 3, 0, 0, 0); /* refused: FINI is our last */
    plat_net_unlock(t);
    UT_EQ(host_impi_len(0, 0), 0);
    UT_EQ(l0->ctl_n, 0);
    uint32_t pkts;
    const char *type;
    int rank;
    UT_EQ(mpe_impi_late(l0, &pkts, &type, &rank), IT_ACKMARK + 1);
    UT_EQ(pkts, IT_ACKMARK + 2);
    UT_ASSERT(!strcmp(type, "DATA"));
    UT_EQ(rank, 3);
    UT_ASSERT(!mpe_impi_done(l0));
    impi_pkt_control(&f, IMPI_PK_FINI, &(struct impi_proc){.pid = -1},
                     &(struct impi_proc){.pid = -1});
    lam_send(&f, 0);
    UT_ASSERT(mpe_impi_done(l0));
    UT_EQ(host_impi_len(0, 0), 0);
    /* The other host said nothing late: nothing to report. */
    UT_EQ(mpe_impi_late(host_impi_link(0, 1), &pkts, &type, &rank), 0);
    UT_EQ(pkts, 0);
}

/* ---- bad input: the job ends naming the host, and touches no receive ---- */

static struct {
    struct mpe_req r;
    uint8_t *buf;
    const struct impi_pkt *p;
    const uint8_t *raw; /* or these bytes */
    size_t rawlen;
    int host;
} B;

#define BBUF 4000

/* A fresh job whose rank 3 waits in a wildcard receive over IT_FILL bytes. */
static void victim(void)
{
    it_world();
    free(B.buf);
    B.buf = malloc(BBUF);
    memset(B.buf, IT_FILL, BBUF);
    it_irecv(3, &B.r, B.buf, BBUF, MPE_ANY_SOURCE, MPE_ANY_TAG);
}

static void bad_send(void *arg)
{
    (void)arg;
    static uint8_t payload[IT_MAXLEN];
    if (B.p) {
        lam_send(B.p, payload);
        return;
    }
    for (size_t i = 0; i < B.rawlen; i += bytewise ? 1 : B.rawlen)
        host_impi_inject(0, B.host, B.raw + i, bytewise ? 1 : B.rawlen);
}

/* p (or raw bytes to host h's link) must end the job with a message naming host h and
 * saying `why`; the waiting receive stays untouched when `untouched`. */
static void expect_bad(const struct impi_pkt *p, const uint8_t *raw, size_t rawlen, int h,
                       const char *why, int untouched, int line)
{
    char name[64];
    snprintf(name, sizeof name, "IMPI host %d", h);
    B.p = p;
    B.raw = raw;
    B.rawlen = rawlen;
    B.host = h;
    if (!host_catch(bad_send, 0))
        ut_fail(__FILE__, line, "accepted: want \"%s\"", why);
    if (!strstr(host_fatal_msg, "node 0: ") || !strstr(host_fatal_msg, name) ||
        !strstr(host_fatal_msg, why))
        ut_fail(__FILE__, line, "message \"%s\", want \"%s\" and \"%s\"", host_fatal_msg, name,
                why);
    if (untouched) {
        UT_ASSERT(!mt_done(&B.r));
        UT_EQ(mt_diff_fill(B.buf, BBUF, IT_FILL), -1);
    }
}

#define EXPECT_BAD(p, h, why, untouched) expect_bad(p, 0, 0, h, why, untouched, __LINE__)

IT_TEST(mpe_impi_bad_first_packets)
{
    struct impi_pkt p;
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 10, 10);
    p.src.pid = 999;
    EXPECT_BAD(&p, 0, "its source is not a proc of that host", 1);
    victim(); /* rank 2 is host 1's: not a proc of host 0 */
    p = data_pkt(IMPI_PK_DATA, 2, 3, 1, 10, 10);
    {
        uint8_t b[IMPI_PKT_HDR_LEN + 10] = {0};
        impi_pkt_encode(&p, b);
        expect_bad(0, b, sizeof b, 0, "its source is not a proc of that host", 1, __LINE__);
    }
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 1, 1, 10, 10); /* to a LAM rank */
    EXPECT_BAD(&p, 0, "its destination is not a proc of this node", 1);
    victim();
    p = data_pkt(IMPI_PK_DATASYNC, 0, 3, 1, 10, 10);
    p.dest.hostid[0] = 1; /* our pid on another host id */
    EXPECT_BAD(&p, 0, "its destination is not a proc of this node", 1);
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 10, 10);
    p.cid = 2;
    EXPECT_BAD(&p, 0, "context id 2", 1);
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 10, 10);
    p.cid = 1ull << 63;
    EXPECT_BAD(&p, 0, "context id", 1);
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 10, 20); /* part of a message, not DATASYNC */
    EXPECT_BAD(&p, 0, "without the SYNCACK handshake", 1);
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 3, 1, IT_MAXLEN + 1, IT_MAXLEN + 1);
    {
        uint8_t b[IMPI_PKT_HDR_LEN];
        impi_pkt_encode(&p, b);
        expect_bad(0, b, sizeof b, 0, "bad IMPI packet: impossible length", 1, __LINE__);
    }
    victim();
    p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 20, 10); /* longer than its message */
    {
        uint8_t b[IMPI_PKT_HDR_LEN];
        impi_pkt_encode(&p, b);
        expect_bad(0, b, sizeof b, 0, "bad IMPI packet: impossible length", 1, __LINE__);
    }
}

/* Garbage types and control packets nobody asked for. */
IT_TEST(mpe_impi_bad_control)
{
    struct impi_pkt p;
    uint8_t b[IMPI_PKT_HDR_LEN];
    static const uint32_t types[] = {IMPI_PK_NTYPES, 0x41414141, 0xffffffff};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        victim();
        p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 0, 0);
        impi_pkt_encode(&p, b);
        impi_put32(b, types[i]);
        expect_bad(0, b, sizeof b, 0, "bad IMPI packet: unknown packet type", 1, __LINE__);
    }
    victim();
    p = pkt(IMPI_PK_PROTOACK, 0, 3);
    EXPECT_BAD(&p, 0, "acknowledges packets never sent", 1);
    victim();
    p = pkt(IMPI_PK_SYNCACK, 0, 3);
    p.srqid = 0x10000; /* the first handle we would give */
    EXPECT_BAD(&p, 0, "answers no DATASYNC of ours", 1);
    victim();
    p = pkt(IMPI_PK_CANCELYES, 2, 4);
    EXPECT_BAD(&p, 1, "answers a CANCEL we never sent", 1);
    victim();
    p = pkt(IMPI_PK_CANCELNO, 0, 4);
    EXPECT_BAD(&p, 0, "answers a CANCEL we never sent", 1);
}

/* A SYNCACK from another proc than the DATASYNC went to, or to another of our ranks than
 * its sender. */
IT_TEST(mpe_impi_bad_syncack_source)
{
    static struct mpe_req s;
    uint8_t src[10] = {0};
    for (int k = 0; k < 2; k++) {
        victim();
        it_isend(3, &s, src, sizeof src, 0, 2, MPE_SYNC);
        struct impi_pkt ds = expect(0, IMPI_PK_DATASYNC, 3, 0, 0);
        struct impi_pkt a = k ? pkt(IMPI_PK_SYNCACK, 0, 4) : pkt(IMPI_PK_SYNCACK, 1, 3);
        a.srqid = ds.srqid;
        EXPECT_BAD(&a, 0, "answers no DATASYNC of ours", 1);
        UT_ASSERT(!mt_done(&s));
    }
}

/* Anything after FINI. */
IT_TEST(mpe_impi_bad_after_fini)
{
    struct impi_pkt f, p = data_pkt(IMPI_PK_DATA, 0, 3, 1, 10, 10);
    impi_pkt_control(&f, IMPI_PK_FINI, &(struct impi_proc){.pid = -1},
                     &(struct impi_proc){.pid = -1});
    victim();
    lam_send(&f, 0);
    EXPECT_BAD(&p, 0, "after FINI", 1);
    victim();
    lam_send(&f, 0);
    EXPECT_BAD(&f, 0, "after FINI", 1);
}

/* FINI while something from that host is still due: the rest of a long message we
 * receive, the SYNCACK of our Ssend. Nothing follows FINI: a hang, were it accepted. */
IT_TEST(mpe_impi_bad_fini_early)
{
    static struct mpe_req s;
    static uint8_t src[IT_MAXLEN];
    struct impi_pkt f;
    impi_pkt_control(&f, IMPI_PK_FINI, &(struct impi_proc){.pid = -1},
                     &(struct impi_proc){.pid = -1});
    victim();
    struct impi_pkt p = data_pkt(IMPI_PK_DATASYNC, 0, 3, 1, IT_MAXLEN, IT_MAXLEN + 1);
    p.srqid = 3;
    lam_send(&p, src);
    expect(0, IMPI_PK_SYNCACK, 3, 0, 0);
    EXPECT_BAD(&f, 0, "a long message from that host is not all here", 0);
    victim();
    it_isend(4, &s, src, 1, 1, 0, MPE_SYNC);
    expect(0, IMPI_PK_DATASYNC, 4, 1, 0);
    EXPECT_BAD(&f, 0, "a message of ours waits for its SYNCACK", 1);
    UT_ASSERT(!mt_done(&s));
}

/* Continuations of a long message: a handle we never gave, or more bytes than are left. */
IT_TEST(mpe_impi_bad_continuation)
{
    enum { LEN = IT_MAXLEN + 500, SRQ = 9 };
    static uint8_t src[IT_MAXLEN];
    struct impi_pkt d = data_pkt(IMPI_PK_DATA, 0, 3, 1, 100, LEN);
    d.drqid = 0x10000;
    victim();
    EXPECT_BAD(&d, 0, "unknown receiver handle", 1);
    for (int k = 0; k < 6; k++) {
        victim();
        struct impi_pkt p = data_pkt(IMPI_PK_DATASYNC, 0, 3, 1, IT_MAXLEN, LEN);
        p.srqid = SRQ;
        lam_send(&p, src);
        struct impi_pkt a = expect(0, IMPI_PK_SYNCACK, 3, 0, 0);
        d = data_pkt(IMPI_PK_DATA, 0, 3, 1, 500, LEN);
        d.drqid = a.drqid;
        if (k == 0) {
            d.len = 501; /* more than is left */
            EXPECT_BAD(&d, 0, "more data than its message holds", 0);
        } else if (k == 1) {
            d.msglen = LEN + 1; /* another length: a bigger message */
            d.len = 501;
            EXPECT_BAD(&d, 0, "more data than its message holds", 0);
        } else if (k == 2) {
            d.drqid += 1 << 16; /* a stale generation of the handle */
            EXPECT_BAD(&d, 0, "unknown receiver handle", 0);
        } else if (k == 3) {
            d.src = it_procs[1]; /* another proc of that host */
            EXPECT_BAD(&d, 0, "its procs are not those of the message", 0);
        } else if (k == 4) {
            d.dest = it_procs[4]; /* our other rank */
            EXPECT_BAD(&d, 0, "its procs are not those of the message", 0);
        } else {
            lam_send(&d, src); /* complete: the handle is gone */
            UT_ASSERT(mt_done(&B.r));
            d.len = 1;
            EXPECT_BAD(&d, 0, "unknown receiver handle", 0);
        }
        UT_EQ(mt_diff_fill(B.buf + LEN, BBUF - LEN, IT_FILL), -1);
    }
    free(B.buf);
    B.buf = 0;
    host_world_destroy();
}
