/*
 * ukhub: the private L2 network of a multi-node job: a learning Ethernet switch between N
 * QEMU virtio-net NICs, each attached with `-netdev dgram` to an AF_UNIX datagram socket.
 * AF_UNIX keeps every frame on this host (no IP, no root, no namespace needed); the hub
 * owns port I's socket DIR/hub-I.sock and sends to the NIC's DIR/node-I.sock.
 *
 *   ukhub DIR N [--tap IF] [--garbage K] [--seed S] [--quiet]
 *
 * --tap IF: one more port, the existing TAP device IF (opened through /dev/net/tun,
 * IFF_TAP|IFF_NO_PI). It joins a Linux network namespace to the job's network: frames
 * from the nodes reach the TAP as they reach any port (broadcast, unknown or learned
 * MAC), frames written by Linux into the TAP reach the nodes. The hub never creates the
 * device: the caller makes it inside a namespace of its own and starts the hub there
 * (`ip netns exec NS ukhub ... --tap tap0`), so the host's own network is never touched.
 *
 * --garbage K: a test helper. After every other frame forwarded to node I (until K have been
 * injected into it), inject one malformed frame into node I: runts, oversize frames,
 * unknown ethertypes, unicasts for another MAC, IPv4 headers with a bad checksum, TCP
 * frames cut short, TCP frames with a flipped header byte. Every one of them must be
 * dropped by the node's RX filter. On SIGTERM/SIGINT the hub prints, per node,
 * "ukhub: node I: injected K garbage frames" and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h> /* struct ifreq, if_nametoindex; not with linux/if.h: they clash */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "drivers/vnet_frame.h"

#define HUB_MAX   64
#define HUB_FRAME 65536
#define HUB_MACS  256

/* Ports 0..nnodes-1 are the nodes' sockets; port nnodes is the TAP when there is one
 * (tap_port >= 0), so nports = nnodes + 1. Every array is sized for the TAP port too. */
#define HUB_PORTS (HUB_MAX + 1)
static int nnodes, nports, tap_port = -1, fds[HUB_PORTS], quiet;
static struct sockaddr_un node_addr[HUB_MAX];
static uint8_t macs[HUB_MACS][6];
static int mac_port[HUB_MACS], nmacs;
static long garbage_max, injected[HUB_PORTS], forwarded[HUB_PORTS];
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static volatile sig_atomic_t stop;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Frames waiting for port p's NIC. AF_UNIX datagram sockets queue only a few datagrams
 * (net.unix.max_dgram_qlen, 10 by default), so a burst must wait here rather than be
 * dropped (TCP would recover, but by timeouts of hundreds of ms). The hub's socket is
 * connect()ed to the NIC's, so poll() reports POLLOUT exactly when the NIC's queue has
 * room, and the hub never blocks: one slow node does not stall the others. */
#define HUB_QLEN 2048
#define HUB_QBUF 2048
struct hub_queue {
    uint8_t (*buf)[HUB_QBUF];
    uint16_t len[HUB_QLEN];
    unsigned head, tail; /* head: next to send; tail: next free */
    int connected;
    long dropped;
};
static struct hub_queue queues[HUB_PORTS];

/* Send what port p's NIC will take now. A NIC that is not up yet or gone (ENOENT,
 * ECONNREFUSED) loses the frame, as on a real wire. The TAP port needs no connect: write()
 * on it hands the frame to Linux (EAGAIN if its queue is full: poll() says when not). */
static void flush(int p)
{
    struct hub_queue *q = &queues[p];
    while (q->head != q->tail) {
        if (!q->connected) {
            if (connect(fds[p], (struct sockaddr *)&node_addr[p], sizeof node_addr[p]) != 0) {
                q->dropped += q->tail - q->head;
                q->head = q->tail;
                return;
            }
            q->connected = 1;
        }
        unsigned i = q->head % HUB_QLEN;
        ssize_t r = p == tap_port ? write(fds[p], q->buf[i], q->len[i])
                                  : send(fds[p], q->buf[i], q->len[i], MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;                   /* poll() tells us when there is room */
            q->connected = p == tap_port; /* a node's socket reconnects; the TAP stays */
            if (errno != EINTR)
                q->head++, q->dropped++;
            continue;
        }
        q->head++;
    }
}

static void send_to(int port, const uint8_t *f, size_t len)
{
    struct hub_queue *q = &queues[port];
    if (len > HUB_QBUF || q->tail - q->head >= HUB_QLEN) {
        q->dropped++;
        return;
    }
    unsigned i = q->tail % HUB_QLEN;
    memcpy(q->buf[i], f, len);
    q->len[i] = (uint16_t)len;
    q->tail++;
}

static int mac_lookup(const uint8_t *m)
{
    for (int i = 0; i < nmacs; i++)
        if (!memcmp(macs[i], m, 6))
            return mac_port[i];
    return -1;
}

static void mac_learn(const uint8_t *m, int port)
{
    if (m[0] & 1)
        return;
    for (int i = 0; i < nmacs; i++)
        if (!memcmp(macs[i], m, 6)) {
            mac_port[i] = port;
            return;
        }
    if (nmacs < HUB_MACS) {
        memcpy(macs[nmacs], m, 6);
        mac_port[nmacs++] = port;
    }
}

/* The last TCP frame with data sent to each node: the model for the TCP garbage kinds. */
static uint8_t last_tcp[HUB_MAX][2048];
static size_t last_tcp_len[HUB_MAX];

static void note_frame(int port, const uint8_t *f, size_t len)
{
    if (len >= 100 && len <= sizeof last_tcp[0] && f[12] == 8 && f[13] == 0 && f[14 + 9] == 6) {
        memcpy(last_tcp[port], f, len);
        last_tcp_len[port] = len;
    }
}

/* One malformed frame for node `port`, modelled on `f` (a frame just sent to it). */
static void inject(int port, const uint8_t *f, size_t len)
{
    static uint8_t g[2048];
    size_t n;
    int kind = (int)(injected[port] % 7);
    if (kind == 5 || kind == 6) {
        if (!last_tcp_len[port])
            kind = 2; /* no TCP data frame seen yet for this node */
        else
            f = last_tcp[port], len = last_tcp_len[port];
    }
    memcpy(g, f, len < sizeof g ? len : sizeof g);
    switch (kind) {
    case 0: /* runt: less than an Ethernet header */
        n = 1 + rnd() % 13;
        break;
    case 1: /* oversize: longer than MTU + header */
        n = 1515 + rnd() % 400;
        for (size_t i = 14; i < n; i++)
            g[i] = (uint8_t)rnd();
        break;
    case 2: /* unknown ethertype (IEEE local experimental) with random bytes */
        n = 60 + rnd() % 1000;
        g[12] = 0x88;
        g[13] = 0xb5;
        for (size_t i = 14; i < n; i++)
            g[i] = (uint8_t)rnd();
        break;
    case 3: /* unicast for a MAC nobody has */
        n = len < 60 ? 60 : len;
        memcpy(g, "\x02\xde\xad\xbe\xef\x01", 6);
        break;
    case 4: /* IPv4 with a bad header checksum */
        n = 60;
        memset(g + 14, 0, 46);
        g[12] = 8, g[13] = 0;
        g[14] = 0x45, g[17] = 46, g[22] = 64, g[23] = 17;
        memcpy(g + 26, "\x0a\x00\x00\xfe\x0a\x00\x00\x01", 8);
        {
            uint16_t c = (uint16_t)(vnet_csum(0, g + 14, 20) ^ 0x5a5a);
            g[24] = (uint8_t)(c >> 8), g[25] = (uint8_t)c;
        }
        break;
    case 5: /* TCP frame cut short (IP total length claims more) */
        n = 60 + rnd() % (len - 61);
        break;
    default: /* TCP frame, one byte after the IP header flipped: TCP checksum wrong */
        n = len;
        g[14 + (g[14] & 0xf) * 4 + 4 + rnd() % 8] ^= 0x40; /* inside the sequence/ack */
        break;
    }
    send_to(port, g, n);
    injected[port]++;
}

/* main, once: open the existing TAP device `name` (non-blocking). Returns
 * the fd, or -1 (printed): no such device, no permission, or not a TAP. */
static int tap_open(const char *name)
{
    struct ifreq ifr = {0};
    if (strlen(name) >= sizeof ifr.ifr_name) {
        fprintf(stderr, "ukhub: --tap %s: name too long\n", name);
        return -1;
    }
    /* TUNSETIFF creates a missing device: look first, so a typo fails instead of making a
     * TAP nobody configured (in whatever namespace the hub was started). */
    if (!if_nametoindex(name)) {
        fprintf(stderr, "ukhub: --tap %s: no such interface in this network namespace\n", name);
        return -1;
    }
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        perror("ukhub: /dev/net/tun");
        return -1;
    }
    /* IFF_TUN_EXCL is not set: attaching to a device the caller created is the point. */
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    memcpy(ifr.ifr_name, name, strlen(name));
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        fprintf(stderr, "ukhub: --tap %s: TUNSETIFF: %s\n", name, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ukhub DIR N [--tap IF] [--garbage K] [--seed S] [--quiet]\n");
        return 2;
    }
    const char *dir = argv[1], *tap = 0;
    nnodes = atoi(argv[2]);
    if (nnodes < 1 || nnodes > HUB_MAX) {
        fprintf(stderr, "ukhub: N must be 1..%d\n", HUB_MAX);
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--tap") && i + 1 < argc)
            tap = argv[++i];
        else if (!strcmp(argv[i], "--garbage") && i + 1 < argc)
            garbage_max = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            rng = strtoull(argv[++i], 0, 0) | 1;
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else {
            fprintf(stderr, "ukhub: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    struct pollfd pfd[HUB_PORTS];
    nports = nnodes;
    if (tap) {
        /* Opened before the nodes' sockets exist: uknodes takes those as "hub is up". */
        tap_port = nports++;
        fds[tap_port] = tap_open(tap);
        queues[tap_port].buf = malloc((size_t)HUB_QLEN * HUB_QBUF);
        if (fds[tap_port] < 0 || !queues[tap_port].buf)
            return 1;
        queues[tap_port].connected = 1;
        pfd[tap_port] = (struct pollfd){.fd = fds[tap_port], .events = POLLIN};
    }
    for (int i = 0; i < nnodes; i++) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s/hub-%d.sock", dir, i);
        unlink(a.sun_path);
        fds[i] = socket(AF_UNIX, SOCK_DGRAM, 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&a, sizeof a) < 0) {
            perror("ukhub: bind");
            return 1;
        }
        queues[i].buf = malloc((size_t)HUB_QLEN * HUB_QBUF);
        if (!queues[i].buf) {
            perror("ukhub: malloc");
            return 1;
        }
        node_addr[i].sun_family = AF_UNIX;
        snprintf(node_addr[i].sun_path, sizeof node_addr[i].sun_path, "%s/node-%d.sock", dir, i);
        pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    static uint8_t f[HUB_FRAME];
    while (!stop) {
        for (int i = 0; i < nports; i++)
            pfd[i].events = (short)(POLLIN | (queues[i].head != queues[i].tail ? POLLOUT : 0));
        if (poll(pfd, (nfds_t)nports, 200) < 0) {
            if (errno == EINTR)
                continue;
            perror("ukhub: poll");
            return 1;
        }
        for (int i = 0; i < nports; i++) {
            if (pfd[i].revents & (POLLOUT | POLLERR))
                flush(i);
            if (!(pfd[i].revents & POLLIN))
                continue;
            ssize_t n =
                i == tap_port ? read(fds[i], f, sizeof f) : recv(fds[i], f, sizeof f, MSG_DONTWAIT);
            if (n < 14)
                continue;
            mac_learn(f + 6, i);
            int dst = (f[0] & 1) ? -1 : mac_lookup(f);
            for (int j = 0; j < nports; j++) {
                if (j == i || (dst >= 0 && j != dst))
                    continue;
                send_to(j, f, (size_t)n);
                forwarded[j]++;
                if (j != tap_port && injected[j] < garbage_max) {
                    note_frame(j, f, (size_t)n);
                    if (forwarded[j] % 2 == 0) /* spread over the transfer */
                        inject(j, f, (size_t)n);
                }
                flush(j);
            }
        }
    }
    if (tap_port >= 0 && !quiet)
        printf("ukhub: tap %s: forwarded %ld frames, %ld lost (queue full)\n", tap,
               forwarded[tap_port], queues[tap_port].dropped);
    for (int i = 0; i < nnodes; i++) {
        if (garbage_max)
            printf("ukhub: node %d: injected %ld garbage frames\n", i, injected[i]);
        if (!quiet)
            printf("ukhub: node %d: forwarded %ld frames, %ld lost (node not up, gone, or "
                   "queue full)\n",
                   i, forwarded[i], queues[i].dropped);
        char p[128];
        snprintf(p, sizeof p, "%s/hub-%d.sock", dir, i);
        unlink(p);
    }
    fflush(stdout);
    return 0;
}
