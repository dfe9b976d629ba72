/*
 * vnicpeer.c: the Linux end of the ukload suite's vnic case (tests/kmod/ukload-init), built
 * static for the guest (tests/kmod/ukload.sh). It talks to the unikernel's net_tap test
 * (tests/uk/net_tap.c) through ukvnic0: connects to IP:PORT (retrying while the unikernel
 * boots), sends [magic, size][size bytes of tap_byte(0, 0, i)], then reads the answer
 * [magic, size][size bytes of tap_byte(0, 1, i)] and checks every byte. The unikernel
 * checks every byte it got, so a frame lost or changed either way fails one of the two.
 *
 * Usage: vnicpeer IP PORT SIZE. Prints one line with the time and the rate; exit 0 when
 * every byte came back as expected, 1 otherwise (with the offset of the first bad byte).
 *
 * vnicpeer -p COUNT IP PORT SIZE: round trips against the unikernel's vnic_echo test
 * (tests/uk/vnic_echo.c): COUNT times SIZE bytes (at most CHUNK) out and the same back,
 * checked; prints the median and the minimum round trip.
 *
 * vnicpeer -u PORT COUNT: the vnichostile case's receiver (tests/uk/vnic_hostile.c): COUNT
 * UDP datagrams on PORT, in order, seq 1..COUNT, every byte checked; a datagram that is
 * not the next one (a poison one behind a bad length, a repeat, a gap) fails. Waits at
 * most UDP_WAIT_S for each.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TAP_MAGIC       0x50544b55u /* "UKTP", as net_tap.c */
#define TAP_NODE        0           /* the unikernel is node 0 */
#define CHUNK           65536
#define CONNECT_WAIT_S  30     /* how long to retry while the unikernel boots */
#define CONNECT_WAIT_US 100000 /* between tries */
#define NS_PER_S        1000000000.0
#define BYTES_PER_MB    1e6
#define US_PER_S        1e6
#define UDP_WAIT_S      60   /* the unikernel boots and ARPs first */
#define UDP_SEQ_LEN     4    /* a datagram's seq, little-endian, then its pattern */
#define UDP_MAX         2048 /* more than any datagram through a 1500-byte MTU */

/* The pattern of net_tap.c (and tests/uk/net/tap_peer.py). */
static uint8_t tap_byte(int node, int dir, uint32_t i)
{
    return (uint8_t)(i * 7u + (i >> 8) + (uint32_t)node * 13u + (uint32_t)dir * 101u);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / NS_PER_S;
}

/* All len bytes of buf sent to fd (sending) or received from it, or -1 (an error, or an
 * early EOF). */
static int io_all(int fd, uint8_t *buf, size_t len, int sending)
{
    while (len) {
        ssize_t r = sending ? send(fd, buf, len, 0) : recv(fd, buf, len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        buf += r, len -= (size_t)r;
    }
    return 0;
}

static int send_all(int fd, const uint8_t *buf, size_t len)
{
    return io_all(fd, (uint8_t *)buf, len, 1);
}

static int recv_all(int fd, uint8_t *buf, size_t len)
{
    return io_all(fd, buf, len, 0);
}

/* A connected socket to ip:port, retrying while the unikernel is not listening yet. */
static int connect_retry(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        return -1;
    /* a deadline, not a count: an unanswered ARP makes one try last seconds */
    for (double end = now_s() + CONNECT_WAIT_S; now_s() < end;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return fd;
        close(fd);
        usleep(CONNECT_WAIT_US);
    }
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* -p: count round trips of size bytes on fd; 0 when every echo was right. */
static int pingpong(int fd, int count, uint32_t size)
{
    static uint8_t out[CHUNK], in[CHUNK];
    double *rtt = calloc((size_t)count, sizeof *rtt);
    if (!rtt || size == 0 || size > CHUNK || count < 1) {
        fprintf(stderr, "vnicpeer: -p needs 1..%d bytes and a count\n", CHUNK);
        return 1;
    }
    for (int k = 0; k < count; k++) {
        for (uint32_t i = 0; i < size; i++)
            out[i] = tap_byte(TAP_NODE, k, i);
        double t0 = now_s();
        if (send_all(fd, out, size) != 0 || recv_all(fd, in, size) != 0) {
            fprintf(stderr, "vnicpeer: round trip %d: %s\n", k, strerror(errno));
            return 1;
        }
        rtt[k] = now_s() - t0;
        if (memcmp(in, out, size) != 0) {
            fprintf(stderr, "vnicpeer: round trip %d: the echo differs\n", k);
            return 1;
        }
    }
    qsort(rtt, (size_t)count, sizeof *rtt, cmp_double);
    printf("vnicpeer: rtt %u B median %.1f us min %.1f us (%d round trips)\n", size,
           rtt[count / 2] * US_PER_S, rtt[0] * US_PER_S, count);
    free(rtt);
    return 0;
}

/* The pattern of vnic_hostile.c's good datagram seq, byte i. */
static uint8_t hv_byte(uint32_t seq, uint32_t i)
{
    return (uint8_t)(i * 11u + seq * 29u + (i >> 8));
}

/* -u: count datagrams on port, seq 1..count in order, every byte checked; 0 when all were. */
static int udp_recv(int port, int count)
{
    static uint8_t d[UDP_MAX];
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {.tv_sec = UDP_WAIT_S};
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
        fprintf(stderr, "vnicpeer: udp port %d: %s\n", port, strerror(errno));
        return 1;
    }
    printf("vnicpeer: listening on udp port %d\n", port);
    fflush(stdout);
    for (uint32_t want = 1; want <= (uint32_t)count; want++) {
        ssize_t n = recv(fd, d, sizeof d, 0);
        uint32_t seq;
        if (n < 0) {
            fprintf(stderr, "vnicpeer: datagram %u: %s\n", want, strerror(errno));
            return 1;
        }
        if (n < UDP_SEQ_LEN) {
            fprintf(stderr, "vnicpeer: datagram %u: %zd bytes\n", want, n);
            return 1;
        }
        memcpy(&seq, d, sizeof seq);
        if (seq != want) {
            fprintf(stderr, "vnicpeer: datagram %u: seq %#x (%zd bytes)\n", want, seq, n);
            return 1;
        }
        for (uint32_t i = UDP_SEQ_LEN; i < (uint32_t)n; i++) {
            if (d[i] != hv_byte(seq, i)) {
                fprintf(stderr, "vnicpeer: datagram %u: byte %u is %u, want %u\n", seq, i, d[i],
                        hv_byte(seq, i));
                return 1;
            }
        }
    }
    close(fd);
    printf("vnicpeer: %d datagrams in order, intact\n", count);
    return 0;
}

int main(int argc, char **argv)
{
    static uint8_t buf[CHUNK];
    int count = 0;
    if (argc == 4 && strcmp(argv[1], "-u") == 0)
        return udp_recv(atoi(argv[2]), atoi(argv[3]));
    if (argc == 6 && strcmp(argv[1], "-p") == 0) {
        count = atoi(argv[2]);
        argv += 2, argc -= 2;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: vnicpeer [-p COUNT] IP PORT SIZE | -u PORT COUNT\n");
        return 2;
    }
    uint32_t size = (uint32_t)strtoul(argv[3], 0, 0);
    int fd = connect_retry(argv[1], atoi(argv[2]));
    if (fd < 0) {
        fprintf(stderr, "vnicpeer: no connection to %s:%s: %s\n", argv[1], argv[2],
                strerror(errno));
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (count) {
        int rc = pingpong(fd, count, size);
        close(fd);
        return rc;
    }
    double t0 = now_s();
    uint32_t h[2] = {TAP_MAGIC, size};
    if (send_all(fd, (uint8_t *)h, sizeof h) != 0)
        goto io_error;
    for (uint32_t off = 0; off < size;) {
        uint32_t n = size - off < CHUNK ? size - off : CHUNK;
        for (uint32_t i = 0; i < n; i++)
            buf[i] = tap_byte(TAP_NODE, 0, off + i);
        if (send_all(fd, buf, n) != 0)
            goto io_error;
        off += n;
    }
    if (recv_all(fd, (uint8_t *)h, sizeof h) != 0)
        goto io_error;
    if (h[0] != TAP_MAGIC || h[1] != size) {
        fprintf(stderr, "vnicpeer: answer header %08x %u, want %08x %u\n", h[0], h[1], TAP_MAGIC,
                size);
        return 1;
    }
    for (uint32_t off = 0; off < size;) {
        uint32_t n = size - off < CHUNK ? size - off : CHUNK;
        if (recv_all(fd, buf, n) != 0)
            goto io_error;
        for (uint32_t i = 0; i < n; i++) {
            if (buf[i] != tap_byte(TAP_NODE, 1, off + i)) {
                fprintf(stderr, "vnicpeer: byte %u is %u, want %u\n", off + i, buf[i],
                        tap_byte(TAP_NODE, 1, off + i));
                return 1;
            }
        }
        off += n;
    }
    double t = now_s() - t0;
    close(fd);
    printf("vnicpeer: %u bytes each way ok in %.3f s (%.2f MB/s both ways)\n", size, t,
           2.0 * size / t / BYTES_PER_MB);
    return 0;
io_error:
    fprintf(stderr, "vnicpeer: connection failed: %s\n", strerror(errno));
    return 1;
}
