/*
 * wgw_main.c: waitio-gw's options, its two listeners and the event loop (see wgw.h and
 * net/waitio/README.md).
 */
#include "impi_util.h"
#include "wgw.h"
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* WAITIO_MASTER_PORT in every published example: the private PB's default. */
#define DEFAULT_MASTER_PORT   7100
#define DEFAULT_BUF           (256 * 1024)
#define MIN_BUF               4096
#define MAX_BUF               (1L << 30)
/* No limit by default: our library sends a connection's HELLO from inside waitio_wait (on
 * Linux, progress happens only there), and a process may compute for a long time between
 * the waitio_irecv that opened the connection and its wait; --max-conns bounds the cost of
 * silent connections. */
#define DEFAULT_FIRST_TIMEOUT 0.0
#define DEFAULT_MAX_CONNS     1024
#define MAX_CONNS             65536
#define EVENTS_PER_WAIT       64

struct wgw_opts wgw_opts;
struct wgw_stats wgw_stats;
int wgw_ep = -1;

/* A listening socket; the epoll data pointer of its fd. */
struct listener {
    enum wgw_kind kind; /* WGW_K_LISTEN */
    int fd;
    enum wgw_leg leg;
};

static volatile sig_atomic_t dump_requested, stop_requested;

/* Signal handler (SIGUSR1): only flags the request; the loop prints (it sees EINTR). */
static void on_usr1(int sig)
{
    (void)sig;
    dump_requested = 1;
}

/* Signal handler (SIGTERM, SIGINT): the loop prints the totals and exits. */
static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: waitio-gw --private IP[:PORT] --public IP[:PORT] --master HOST[:PORT]\n"
            "                 [--buf BYTES] [--first-timeout S] [--max-conns N] [-v]\n"
            "Makes the processes of a WaitIO PB on a private network reachable from the\n"
            "other PBs (mpi/waitio/PROTOCOL.md section 8).\n"
            "  --private IP[:PORT]  the private leg (default port %d; 0: any free port): the\n"
            "                       private PB's WAITIO_MASTER_HOST/PORT, and where its\n"
            "                       processes reach every process outside it\n"
            "  --public IP[:PORT]   the public leg (default: any free port): where the other\n"
            "                       PBs reach the private PB's processes; the gateway also\n"
            "                       connects from this address\n"
            "  --master HOST[:PORT] the real master (rank 0 of PB 0; default port %d)\n"
            "  --buf BYTES          bytes buffered per connection and direction (default %d);\n"
            "                       a full buffer stops reading from the side that fills it\n"
            "  --first-timeout S    close a connection that sends no complete first header\n"
            "                       within S seconds (default %g: never; a process sends it\n"
            "                       from waitio_wait, which it may call late)\n"
            "  --max-conns N        live connections at most (default %d)\n"
            "  -v                   log every HELLO forwarded\n"
            "Both legs' IPs must be real addresses (they go into the address tables). Once\n"
            "listening, prints 'private IP:PORT public IP:PORT' on stdout. SIGUSR1 logs every\n"
            "connection's counters and the totals on stderr; SIGTERM logs them and exits.\n",
            DEFAULT_MASTER_PORT, DEFAULT_MASTER_PORT, DEFAULT_BUF, DEFAULT_FIRST_TIMEOUT,
            DEFAULT_MAX_CONNS);
}

/* Main thread: "IP[:PORT]" of a leg into *ip, *port (port left alone when absent);
 * exits 2 with a message naming the option on anything else. */
static void parse_leg(const char *opt, const char *s, uint32_t *ip, uint16_t *port)
{
    char tmp[32];
    const char *colon = strrchr(s, ':');
    int bad;
    if (colon && !strcmp(colon, ":0") && (size_t)(colon - s) < sizeof tmp) { /* any port */
        memcpy(tmp, s, (size_t)(colon - s));
        tmp[colon - s] = 0;
        bad = impi_parse_ip(tmp, ip);
        *port = 0;
    } else {
        bad = colon ? impi_parse_ipport(s, ip, port) : impi_parse_ip(s, ip);
    }
    if (bad || *ip == 0) {
        impi_bad_option(opt, s, "a specific IPv4 address with an optional port (0: any)");
        exit(2);
    }
}

/* Main thread: "HOST[:PORT]" of the master (a name is resolved once, now). */
static void parse_master(const char *s)
{
    char host[256];
    const char *colon = strrchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    long port = DEFAULT_MASTER_PORT;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
    if (n == 0 || n >= sizeof host || (colon && impi_parse_int(colon + 1, 1, 65535, &port))) {
        impi_bad_option("--master", s, "HOST[:PORT]");
        exit(2);
    }
    memcpy(host, s, n);
    host[n] = 0;
    int e = getaddrinfo(host, NULL, &hints, &ai);
    if (e) {
        fprintf(stderr, "%s: option --master: '%s': %s\n", impi_progname, host, gai_strerror(e));
        exit(2);
    }
    wgw_opts.master_ip = ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr);
    wgw_opts.master_port = (uint16_t)port;
    freeaddrinfo(ai);
}

/* Main thread: the command line into wgw_opts; exits 2 on any mistake. */
static void parse_args(int argc, char **argv)
{
    enum { O_PRIV = 256, O_PUB, O_MASTER, O_BUF, O_FIRST, O_MAXC };
    static const struct option lo[] = {{"private", required_argument, 0, O_PRIV},
                                       {"public", required_argument, 0, O_PUB},
                                       {"master", required_argument, 0, O_MASTER},
                                       {"buf", required_argument, 0, O_BUF},
                                       {"first-timeout", required_argument, 0, O_FIRST},
                                       {"max-conns", required_argument, 0, O_MAXC},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    bool have[3] = {false, false, false};
    long v;
    int o;
    wgw_opts.port[WGW_PRIV] = DEFAULT_MASTER_PORT;
    wgw_opts.buf = DEFAULT_BUF;
    wgw_opts.first_timeout = DEFAULT_FIRST_TIMEOUT;
    wgw_opts.max_conns = DEFAULT_MAX_CONNS;
    while ((o = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
        switch (o) {
        case O_PRIV:
        case O_PUB: {
            enum wgw_leg l = o == O_PRIV ? WGW_PRIV : WGW_PUB;
            parse_leg(o == O_PRIV ? "--private" : "--public", optarg, &wgw_opts.ip[l],
                      &wgw_opts.port[l]);
            have[l] = true;
            break;
        }
        case O_MASTER:
            parse_master(optarg);
            have[2] = true;
            break;
        case O_BUF:
            if (impi_parse_int(optarg, MIN_BUF, MAX_BUF, &v)) {
                impi_bad_option("--buf", optarg, "a byte count from 4096 to 2^30");
                exit(2);
            }
            wgw_opts.buf = (size_t)v;
            break;
        case O_FIRST:
            if (impi_parse_seconds(optarg, &wgw_opts.first_timeout)) {
                impi_bad_option("--first-timeout", optarg, "a duration in seconds");
                exit(2);
            }
            break;
        case O_MAXC:
            if (impi_parse_int(optarg, 1, MAX_CONNS, &v)) {
                impi_bad_option("--max-conns", optarg, "a count from 1 to 65536");
                exit(2);
            }
            wgw_opts.max_conns = (unsigned)v;
            break;
        case 'v':
            impi_verbose++;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (optind < argc || !have[WGW_PRIV] || !have[WGW_PUB] || !have[2]) {
        fprintf(stderr, "%s: --private, --public and --master are required%s\n", impi_progname,
                optind < argc ? " (and nothing else)" : "");
        usage(stderr);
        exit(2);
    }
}

/* Main thread: accept every pending connection of l. */
static void accept_all(struct listener *l)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(l->fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) /* EMFILE and such: retried later */
                impi_log(0, "accept on the %s leg: %s", l->leg == WGW_PRIV ? "private" : "public",
                         strerror(errno));
            return;
        }
        char peer[24];
        snprintf(peer, sizeof peer, "%s:%u", impi_ipstr(ntohl(sa.sin_addr.s_addr)),
                 ntohs(sa.sin_port));
        wgw_stats.accepted++;
        if (wgw_stats.live >= wgw_opts.max_conns) {
            impi_log(0, "%s: %u connections already; closed", peer, wgw_opts.max_conns);
            wgw_stats.rejected++;
            close(fd);
            continue;
        }
        impi_sock_setup(fd);
        wgw_conn_new(fd, l->leg, peer);
    }
}

/* Main thread: the listener of leg l, in the epoll set; exits 1 when it cannot bind. */
static void open_leg(struct listener *l, enum wgw_leg leg)
{
    *l = (struct listener){.kind = WGW_K_LISTEN, .leg = leg};
    l->fd = impi_listen(wgw_opts.ip[leg], &wgw_opts.port[leg]);
    struct epoll_event ee = {.events = EPOLLIN, .data.ptr = l};
    if (l->fd < 0 || epoll_ctl(wgw_ep, EPOLL_CTL_ADD, l->fd, &ee)) {
        impi_log(0, "cannot listen on %s:%u: %s", impi_ipstr(wgw_opts.ip[leg]), wgw_opts.port[leg],
                 strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    static struct listener legs[WGW_NLEGS];
    struct epoll_event evs[EVENTS_PER_WAIT];
    impi_progname = "waitio-gw";
    parse_args(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: epoll_wait sees EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    wgw_ep = epoll_create1(EPOLL_CLOEXEC);
    if (wgw_ep < 0) {
        impi_log(0, "epoll_create1: %s", strerror(errno));
        return 1;
    }
    open_leg(&legs[WGW_PRIV], WGW_PRIV);
    open_leg(&legs[WGW_PUB], WGW_PUB);
    impi_log(0, "private leg %s:%u, public leg %s:%u, master %s:%u, %zu B per direction",
             impi_ipstr(wgw_opts.ip[WGW_PRIV]), wgw_opts.port[WGW_PRIV],
             impi_ipstr(wgw_opts.ip[WGW_PUB]), wgw_opts.port[WGW_PUB],
             impi_ipstr(wgw_opts.master_ip), wgw_opts.master_port, wgw_opts.buf);
    printf("private %s:%u public %s:%u\n", impi_ipstr(wgw_opts.ip[WGW_PRIV]),
           wgw_opts.port[WGW_PRIV], impi_ipstr(wgw_opts.ip[WGW_PUB]), wgw_opts.port[WGW_PUB]);
    fflush(stdout);
    double next_tick = impi_now() + WGW_TICK_MS / 1000.0;
    while (!stop_requested) {
        if (dump_requested) {
            dump_requested = 0;
            wgw_conn_dump();
        }
        int n = epoll_wait(wgw_ep, evs, EVENTS_PER_WAIT, WGW_TICK_MS);
        if (n < 0 && errno != EINTR) {
            impi_log(0, "epoll_wait: %s", strerror(errno));
            return 1;
        }
        for (int i = 0; i < n; i++) {
            enum wgw_kind *k = evs[i].data.ptr;
            if (*k == WGW_K_LISTEN)
                accept_all(evs[i].data.ptr);
            else
                wgw_conn_event(evs[i].data.ptr, evs[i].events);
        }
        wgw_conn_reap();
        double now = impi_now();
        if (now >= next_tick) {
            wgw_conn_expire(now);
            wgw_conn_reap();
            next_tick = now + WGW_TICK_MS / 1000.0;
        }
    }
    wgw_conn_dump();
    return 0;
}
