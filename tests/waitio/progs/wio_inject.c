/*
 * wio_inject.c: a fake WaitIO process for the bad-input tests (tests/waitio/base.sh).
 *
 *   wio-inject MODE MASTER_PORT [MASTER_IP [WAIT_S]]
 *
 * Prints "wio-inject: listening on port P" (stdout, flushed) once its listening socket
 * accepts connections, so a test starts what connects to it only after that line.
 *
 * MODE silent-master: listen on MASTER_PORT (127.0.0.1), accept start-up connections and
 * never answer (waitio_init of the other PBs must fail in time).
 *
 * Any other MODE: be PB 1 of 2 with one process: register with the master at
 * MASTER_IP:MASTER_PORT (default 127.0.0.1; tests/waitio/uk.sh gives a unikernel node's
 * address) under the local address of that connection, retrying as a PB's rank 0 does
 * (PROTOCOL.md 4) until the master accepts or WAIT_S seconds (default 60) have passed: the
 * master may not be reachable yet (a unikernel node still booting behind a TAP whose hub
 * has not attached). Prints "wio-inject: registered as process N" once it has the table,
 * then waits for a real process to connect (receiver-initiated), answers its HELLO, then
 * misbehaves:
 *   garbage    64 bytes that are not a header
 *   lostsyn    as garbage, but the real process's first SYN is dropped: our accept queue
 *              is kept full (one connection of our own) until the kernel counts a SYN
 *              dropped on it (TcpExt ListenDrops, this namespace), then has room; the
 *              real process's connect must retransmit its SYN instead of giving up
 *   truncated  the first 30 bytes of a valid EAGER header, then close
 *   seq        a valid EAGER (seq 0), then an EAGER with seq 5
 *   midrdv     an RTS of 1 MiB, then after the CTS one 64 KiB DATA chunk, then SIGKILL
 *              itself (a peer killed mid-rendezvous)
 * Its messages carry tag 0 in the group of every process (gid 0, PBs in id order), whose
 * key it computes as PROTOCOL.md 5 says, so they match the real side's receives.
 */
#include "wio_wire.h"
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RDV_LEN  (1u << 20)
#define LINGER_S 5   /* stay connected this long after misbehaving (unless killed) */
#define RETRY_MS 100 /* between attempts to reach the master (as wio_init.c) */

/* Main thread: report and exit 2 (a broken test set-up, not a finding). */
static void die(const char *what)
{
    perror(what);
    exit(2);
}

/* Main thread: write all n bytes (blocking). */
static void put_all(int fd, const void *b, size_t n)
{
    const char *p = b;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k <= 0)
            die("write");
        p += k;
        n -= (size_t)k;
    }
}

/* Main thread: read exactly n bytes (blocking). */
static void get_all(int fd, void *b, size_t n)
{
    char *p = b;
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k <= 0)
            die("read");
        p += k;
        n -= (size_t)k;
    }
}

/* Main thread: a listening socket on addr:port (port 0: any); the port in *got. */
static int listen_on(int port, uint16_t *got, in_addr_t addr)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(addr);
    socklen_t len = sizeof sa;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 8) ||
        getsockname(fd, (struct sockaddr *)&sa, &len))
        die("listen");
    *got = ntohs(sa.sin_port);
    printf("wio-inject: listening on port %u\n", *got);
    fflush(stdout);
    return fd;
}

/* Main thread: CLOCK_MONOTONIC in milliseconds. */
static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Main thread: the namespace's count of SYNs dropped on full listen queues (TcpExt
 * ListenDrops in /proc/net/netstat: a line of names, then a line of values). */
static unsigned long long listen_drops(void)
{
    char names[4096], values[4096];
    FILE *f = fopen("/proc/net/netstat", "r");
    if (!f)
        die("/proc/net/netstat");
    unsigned long long v = 0;
    int found = 0;
    while (!found && fgets(names, sizeof names, f) && fgets(values, sizeof values, f)) {
        if (strncmp(names, "TcpExt:", 7))
            continue;
        char *sn, *sv, *n = strtok_r(names, " \n", &sn), *x = strtok_r(values, " \n", &sv);
        for (; n && x; n = strtok_r(NULL, " \n", &sn), x = strtok_r(NULL, " \n", &sv))
            if (!strcmp(n, "ListenDrops")) {
                v = strtoull(x, NULL, 10);
                found = 1;
                break;
            }
    }
    fclose(f);
    if (!found)
        die("no TcpExt ListenDrops in /proc/net/netstat");
    return v;
}

/* The key of group `gid` whose members are universe indices 0..n-1 (PROTOCOL.md 5). */
static uint64_t group_key(uint32_t gid, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t v[3] = {gid, n, 0};
    for (uint32_t i = 0; i < n + 3; i++) {
        uint32_t x = i < 2 ? v[i] : i < n + 2 ? i - 2 : 0; /* gid, n, members, before */
        for (int k = 0; k < 4; k++) {
            h ^= (uint8_t)(x >> (8 * k));
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* Main thread: header h then h->plen bytes of pay. */
static void send_hdr(int fd, struct wio_hdr *h, const void *pay)
{
    uint8_t b[WIO_HDR];
    wio_hdr_encode(h, b);
    put_all(fd, b, sizeof b);
    if (h->plen)
        put_all(fd, pay, h->plen);
}

/* See the top of the file. */
int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: wio-inject MODE MASTER_PORT [MASTER_IP [WAIT_S]]\n");
        return 2;
    }
    const char *mode = argv[1];
    int mport = atoi(argv[2]);
    uint16_t port;
    if (!strcmp(mode, "silent-master")) {
        int l = listen_on(mport, &port, INADDR_LOOPBACK);
        for (;;) {
            int fd = accept(l, NULL, NULL);
            (void)fd; /* keep it open, say nothing */
        }
    }
    int l = listen_on(0, &port, INADDR_ANY); /* reached at the address registered */
    int lostsyn = !strcmp(mode, "lostsyn"), own = -1;
    unsigned long long drops = 0;
    if (lostsyn) { /* a queue of one, filled by our own connection */
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        own = socket(AF_INET, SOCK_STREAM, 0);
        if (listen(l, 0) || own < 0 || connect(own, (struct sockaddr *)&sa, sizeof sa))
            die("filling the accept queue");
        drops = listen_drops();
    }
    /* Register as PB 1, retrying until the master accepts (refused: it does not listen
     * yet; unreachable: its node or the link to it is not up yet) or the deadline. */
    struct sockaddr_in ma = {.sin_family = AF_INET, .sin_port = htons((uint16_t)mport)};
    ma.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (argc >= 4 && inet_pton(AF_INET, argv[3], &ma.sin_addr) != 1)
        die("MASTER_IP is not an IPv4 address");
    long long deadline = now_ms() + 1000LL * (argc == 5 ? atoi(argv[4]) : 60);
    int m = -1;
    for (;;) {
        m = socket(AF_INET, SOCK_STREAM, 0);
        if (m < 0)
            die("socket");
        if (!connect(m, (struct sockaddr *)&ma, sizeof ma))
            break;
        int e = errno;
        close(m);
        if (now_ms() + RETRY_MS >= deadline) {
            errno = e;
            die("connect to the master (until WAIT_S passed)");
        }
        usleep(RETRY_MS * 1000);
    }
    struct sockaddr_in local;
    socklen_t llen = sizeof local;
    if (getsockname(m, (struct sockaddr *)&local, &llen))
        die("getsockname");
    struct wio_addr me = {{0}, port};
    memcpy(me.ip, &local.sin_addr, 4);
    uint8_t reg[WIO_REG_FIXED + WIO_ADDR_BYTES];
    size_t n = wio_register_encode(1, 2, 1, &me, reg, sizeof reg);
    struct wio_hdr h = wio_hdr_make(WIO_T_REGISTER);
    h.src = 1;
    h.len = h.plen = (uint32_t)n;
    send_hdr(m, &h, reg);
    uint8_t b[WIO_HDR];
    get_all(m, b, sizeof b);
    wio_hdr_decode(b, &h);
    uint8_t *tab = malloc(h.plen);
    get_all(m, tab, h.plen);
    struct wio_table t;
    if (h.type != WIO_T_TABLE || wio_table_decode(tab, h.plen, &t))
        die("table");
    uint32_t self = t.total - 1; /* PB 1 is last and has one process: us */
    close(m);
    printf("wio-inject: registered as process %u\n", self);
    fflush(stdout);
    if (lostsyn) { /* the real process connects now: wait for its SYN to be dropped */
        while (listen_drops() == drops) {
            if (now_ms() >= deadline)
                die("no SYN was dropped before WAIT_S passed");
            usleep(10000);
        }
        close(accept(l, NULL, NULL)); /* our own: room for the next SYN */
        close(own);
        printf("wio-inject: a SYN of the real process was dropped; the queue has room\n");
        fflush(stdout);
    }
    /* A real process connects to us: its HELLO, our HELLO_OK. */
    int fd = accept(l, NULL, NULL);
    get_all(fd, b, sizeof b);
    struct wio_hdr hello;
    wio_hdr_decode(b, &hello);
    if (hello.type != WIO_T_HELLO || hello.dst != self)
        die("hello");
    uint32_t peer = hello.src;
    h = wio_hdr_make(WIO_T_HELLO_OK);
    h.src = self;
    h.dst = peer;
    send_hdr(fd, &h, NULL);
    uint64_t group = group_key(0, t.total);
    struct wio_hdr d = wio_hdr_make(WIO_T_EAGER);
    d.src = self;
    d.dst = peer;
    d.group = group;
    fprintf(stderr, "wio-inject: %s towards process %u\n", mode, peer);
    if (!strcmp(mode, "garbage") || lostsyn) {
        static const char junk[WIO_HDR] = "this is not a WaitIO header at all, just bytes";
        put_all(fd, junk, sizeof junk);
    } else if (!strcmp(mode, "truncated")) {
        d.len = d.plen = 4;
        wio_hdr_encode(&d, b);
        put_all(fd, b, 30);
        close(fd);
        sleep(LINGER_S);
        return 0;
    } else if (!strcmp(mode, "seq")) {
        d.len = d.plen = 4;
        send_hdr(fd, &d, "good");
        d.seq = 5;
        send_hdr(fd, &d, "bad!");
    } else if (!strcmp(mode, "midrdv")) {
        d.type = WIO_T_RTS;
        d.len = RDV_LEN;
        d.msgid = 1;
        send_hdr(fd, &d, NULL);
        get_all(fd, b, sizeof b); /* the CTS */
        wio_hdr_decode(b, &h);
        if (h.type != WIO_T_CTS)
            die("cts");
        static uint8_t chunk[WIO_CHUNK];
        d.type = WIO_T_DATA;
        d.seq = 1;
        d.ack = 1;
        d.plen = WIO_CHUNK;
        send_hdr(fd, &d, chunk);
        usleep(200000);
        kill(getpid(), SIGKILL);
    } else {
        fprintf(stderr, "wio-inject: unknown mode %s\n", mode);
        return 2;
    }
    sleep(LINGER_S);
    return 0;
}
