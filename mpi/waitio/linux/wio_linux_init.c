/*
 * wio_linux_init.c: waitio_init and waitio_finalize on Linux (PROTOCOL.md 4). Every process
 * opens a listening socket; each PB gathers its addresses at its rank 0 over its own MPI;
 * rank 0 of PB 0 is the master, the other rank 0s register with it (REGISTER) and get the
 * whole table back (TABLE, or REFUSE with a reason); each rank 0 broadcasts a status word
 * and the table inside its PB. Every wait is bounded by waitio_init's timeout, so a master
 * that never answers makes waitio_init fail on every process with a one-line reason.
 */
#include "wio_linux.h"
#include <arpa/inet.h>
#include <errno.h>
#include <mpi.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RETRY_MS    100 /* between connection attempts to the master */
#define REASON_MAX  256
#define FINALIZE_MS 10000 /* waitio_finalize waits at most this long for BYEs */
#define REGISTER_MS 5000  /* the master waits this long for a REGISTER after accepting */

static int state; /* 0: not initialised, 1: running, 2: finalised */
static char reason[REASON_MAX];

/* Task context: remember the first failure's reason. Always -1. */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    if (reason[0])
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return -1;
}

/* Task context: the environment (spec section 4). */
struct wio_env {
    const char *host;
    int port, pbid, npb;
};

/* Task context: parse a non-negative integer variable; -1 when missing or malformed. */
static long env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 0x7fffffff ? -1 : x;
}

/* Task context: read and check the environment. 0 or -1 (reason set). */
static int read_env(struct wio_env *e)
{
    const char *type = getenv("WAITIO_COMM_TYPE");
    if (type && *type && strcmp(type, "socket"))
        return fail("WAITIO_COMM_TYPE=%s is not supported: this library implements "
                    "WaitIO-Socket only (set it to socket or leave it unset)",
                    type);
    e->host = getenv("WAITIO_MASTER_HOST");
    if (!e->host || !*e->host)
        return fail("WAITIO_MASTER_HOST is not set");
    long port = env_int("WAITIO_MASTER_PORT"), pbid = env_int("WAITIO_PBID"),
         npb = env_int("WAITIO_NPB");
    if (port <= 0 || port > 65535)
        return fail("WAITIO_MASTER_PORT is missing or not a port number");
    if (npb <= 0 || npb > WIO_MAX_PROCS)
        return fail("WAITIO_NPB is missing or not a positive number");
    if (pbid < 0 || pbid >= npb)
        return fail("WAITIO_PBID is missing or not in 0..WAITIO_NPB-1");
    e->port = (int)port;
    e->pbid = (int)pbid;
    e->npb = (int)npb;
    return 0;
}

/* Task context: the master's IPv4 address. 0 or -1. */
static int resolve(const struct wio_env *e, struct sockaddr_in *sa)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    int r = getaddrinfo(e->host, NULL, &hints, &res);
    if (r)
        return fail("cannot resolve WAITIO_MASTER_HOST %s: %s", e->host, gai_strerror(r));
    *sa = *(struct sockaddr_in *)res->ai_addr;
    sa->sin_port = htons((uint16_t)e->port);
    freeaddrinfo(res);
    return 0;
}

/* Task context: our listening socket (any port, non-blocking) and our address: the
 * local address of a route towards the master. -1 on failure. */
static int open_listener(const struct sockaddr_in *master, struct wio_addr *me)
{
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (u < 0 || connect(u, (const struct sockaddr *)master, sizeof *master) ||
        getsockname(u, (struct sockaddr *)&sa, &len)) {
        if (u >= 0)
            close(u);
        return fail("no route to the master: %s", strerror(errno));
    }
    close(u);
    memcpy(me->ip, &sa.sin_addr, 4);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    len = sizeof any;
    if (fd < 0 || bind(fd, (struct sockaddr *)&any, sizeof any) || listen(fd, SOMAXCONN) ||
        getsockname(fd, (struct sockaddr *)&any, &len)) {
        if (fd >= 0)
            close(fd);
        return fail("cannot open a listening socket: %s", strerror(errno));
    }
    me->port = ntohs(any.sin_port);
    return fd;
}

/* Task context: wait for fd to be ready for `ev` until `deadline` (ms). 1 ready, 0 late. */
static int wait_fd(int fd, short ev, long long deadline)
{
    for (;;) {
        long long left = deadline - wio_lx_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = fd, .events = ev};
        int r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0;
    }
}

/* Task context: all n bytes, by the deadline. 0, or -1 (late, closed or failed). */
static int io_all(int fd, void *buf, size_t n, int out, long long deadline)
{
    uint8_t *b = buf;
    while (n) {
        if (!wait_fd(fd, out ? POLLOUT : POLLIN, deadline))
            return -1;
        ssize_t k =
            out ? send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, b, n, MSG_DONTWAIT);
        if (k == 0 && !out)
            return -1;
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return -1;
        }
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Task context: send one start-up packet (header + payload). */
static int send_packet(int fd, uint8_t type, uint32_t src, uint32_t dst, const uint8_t *pay,
                       uint32_t n, long long deadline)
{
    struct wio_hdr h = wio_hdr_make(type);
    uint8_t b[WIO_HDR];
    h.src = src;
    h.dst = dst;
    h.len = h.plen = n;
    wio_hdr_encode(&h, b);
    return io_all(fd, b, sizeof b, 1, deadline) || io_all(fd, (void *)pay, n, 1, deadline) ? -1 : 0;
}

/* Task context: read one start-up packet in `phase` (MASTER or CLIENT); the payload is
 * malloc'ed into *pay. WIO_OK, a codec error, or -1 (late or closed). */
static int recv_packet(int fd, enum wio_phase phase, uint32_t self, uint32_t npb, struct wio_hdr *h,
                       uint8_t **pay, long long deadline)
{
    uint8_t b[WIO_HDR];
    *pay = NULL;
    if (io_all(fd, b, sizeof b, 0, deadline))
        return -1;
    wio_hdr_decode(b, h);
    struct wio_conn_view v = {
        .phase = phase, .peer = phase == WIO_PH_CLIENT ? 0 : WIO_ANY, .self = self, .nprocs = npb};
    int e = wio_hdr_check(h, &v, NULL);
    if (e)
        return e;
    *pay = malloc(h->plen ? h->plen : 1);
    if (!*pay || io_all(fd, *pay, h->plen, 0, deadline)) {
        free(*pay);
        *pay = NULL;
        return -1;
    }
    return WIO_OK;
}

/* Start-up result inside a PB: broadcast from rank 0. */
struct table {
    uint8_t *bytes;
    uint32_t n;
};

/* Task context, PB 0 rank 0: be the master. `mine` is PB 0's REGISTER payload. Fills *t
 * (malloc'ed TABLE payload) or fails with a reason, after telling the PBs that did
 * register. */
static int master(const struct wio_env *e, const struct sockaddr_in *msa, uint8_t *mine,
                  size_t mine_n, struct table *t, long long deadline)
{
    int ms = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = msa->sin_port};
    setsockopt(ms, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ms < 0 || bind(ms, (struct sockaddr *)&any, sizeof any) || listen(ms, SOMAXCONN)) {
        int err = errno;
        if (ms >= 0)
            close(ms);
        return fail("the master cannot listen on port %d: %s", e->port, strerror(err));
    }
    int npb = e->npb, got = 1, *fds = calloc((size_t)npb, sizeof *fds);
    uint8_t **regs = calloc((size_t)npb, sizeof *regs);
    size_t *lens = calloc((size_t)npb, sizeof *lens);
    regs[0] = mine;
    lens[0] = mine_n;
    for (int i = 0; i < npb; i++)
        fds[i] = -1;
    char why[REASON_MAX] = "";
    while (got < npb && !why[0]) {
        if (!wait_fd(ms, POLLIN, deadline)) {
            snprintf(why, sizeof why, "only %d of %d PBs registered with the master in time", got,
                     npb);
            break;
        }
        int fd = accept4(ms, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        struct wio_hdr h = wio_hdr_make(0);
        uint8_t *pay;
        struct wio_register r;
        /* A PB's rank 0 sends its REGISTER at once; a stranger that connects and says
         * nothing may hold the master only briefly, not until the deadline. */
        long long until = wio_lx_now_ms() + REGISTER_MS;
        int err = recv_packet(fd, WIO_PH_MASTER, 0, (uint32_t)npb, &h, &pay,
                              until < deadline ? until : deadline);
        if (!err)
            err = wio_register_decode(pay, h.plen, &r);
        if (!err && (r.npb != (uint32_t)npb || r.pbid != h.src))
            err = WIO_E_NPB;
        if (!err && (r.pbid == 0 || regs[r.pbid]))
            err = WIO_E_DUP;
        if (err) { /* a stranger or a broken PB: tell it, drop it, keep waiting */
            char line[REASON_MAX];
            uint8_t text[WIO_REFUSE_MAX];
            snprintf(line, sizeof line, "REGISTER refused: %s",
                     err < 0 ? "incomplete" : wio_err_name(err));
            fprintf(stderr, "waitio: master: %s\n", line);
            size_t n = wio_refuse_encode(line, text, sizeof text);
            send_packet(fd, WIO_T_REFUSE, 0, h.src < (uint32_t)npb ? h.src : 0, text, (uint32_t)n,
                        wio_lx_now_ms() + RETRY_MS);
            free(pay);
            close(fd);
            continue;
        }
        regs[r.pbid] = pay;
        lens[r.pbid] = h.plen;
        fds[r.pbid] = fd;
        got++;
    }
    close(ms);
    int rc = 0;
    if (!why[0]) { /* the table, in PB order */
        uint32_t *np = calloc((size_t)npb, sizeof *np), total = 0;
        for (int i = 0; i < npb; i++) {
            np[i] = wio_get32(regs[i] + 8);
            total += np[i];
        }
        struct wio_addr *a = calloc(total, sizeof *a);
        for (int i = 0, k = 0; i < npb; i++)
            for (uint32_t j = 0; j < np[i]; j++)
                wio_payload_addr(regs[i] + WIO_REG_FIXED, j, &a[k++]);
        t->n = (uint32_t)wio_table_size((uint32_t)npb, total);
        t->bytes = t->n ? malloc(t->n) : NULL;
        if (!t->bytes || wio_table_encode((uint32_t)npb, np, a, t->bytes, t->n) != t->n)
            snprintf(why, sizeof why, "the instance has too many processes (%u)", total);
        free(np);
        free(a);
    }
    for (int i = 1; i < npb; i++) {
        if (fds[i] < 0)
            continue;
        if (why[0]) {
            uint8_t text[WIO_REFUSE_MAX];
            size_t n = wio_refuse_encode(why, text, sizeof text);
            send_packet(fds[i], WIO_T_REFUSE, 0, (uint32_t)i, text, (uint32_t)n, deadline);
        } else if (send_packet(fds[i], WIO_T_TABLE, 0, (uint32_t)i, t->bytes, t->n, deadline)) {
            snprintf(why, sizeof why, "the master could not send the table to PB %d", i);
        }
        close(fds[i]);
    }
    for (int i = 1; i < npb; i++)
        free(regs[i]);
    free(regs);
    free(lens);
    free(fds);
    if (why[0])
        rc = fail("%s", why);
    return rc;
}

/* Task context, rank 0 of a PB other than 0: register with the master, get the table. */
static int client(const struct wio_env *e, const struct sockaddr_in *msa, uint8_t *mine,
                  size_t mine_n, struct table *t, int timeout, long long deadline)
{
    int fd = -1;
    char host[64];
    snprintf(host, sizeof host, "%s:%d", e->host, e->port);
    while (fd < 0) { /* the master may not listen yet: retry until the deadline */
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int r = connect(fd, (const struct sockaddr *)msa, sizeof *msa);
        int err = 0;
        socklen_t len = sizeof err;
        if (r && errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline)) {
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            r = err ? -1 : 0;
        }
        if (r == 0)
            break;
        close(fd);
        fd = -1;
        if (wio_lx_now_ms() + RETRY_MS >= deadline)
            return fail("no answer from the master at %s within %d s", host, timeout);
        usleep(RETRY_MS * 1000);
    }
    struct wio_hdr h = wio_hdr_make(0);
    uint8_t *pay = NULL;
    int err =
        send_packet(fd, WIO_T_REGISTER, (uint32_t)e->pbid, 0, mine, (uint32_t)mine_n, deadline);
    if (!err)
        err =
            recv_packet(fd, WIO_PH_CLIENT, (uint32_t)e->pbid, (uint32_t)e->npb, &h, &pay, deadline);
    close(fd);
    if (err < 0)
        return fail("the master at %s did not answer within %d s", host, timeout);
    if (err)
        return fail("bad answer from the master at %s: %s", host, wio_err_name(err));
    if (h.type == WIO_T_REFUSE) {
        char text[WIO_REFUSE_MAX + 1];
        wio_refuse_decode(pay, h.plen, text, sizeof text);
        free(pay);
        return fail("the master at %s refused: %s", host, text);
    }
    t->bytes = pay;
    t->n = h.plen;
    return 0;
}

/* Task context: collective over every process of every PB, after MPI_Init. A second call
 * while WaitIO runs returns 0 and does nothing (the WaitIO-MPI layer may call it again). */
int waitio_init(int timeout)
{
    if (state == 1) /* already running (waitio_create_universe after waitio_init): a no-op */
        return 0;
    if (state == 2) {
        fprintf(stderr, "waitio_init: called after waitio_finalize\n");
        return -1;
    }
    int inited = 0, rank, size;
    MPI_Initialized(&inited);
    if (!inited) {
        fprintf(stderr, "waitio_init: MPI_Init has not been called\n");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long deadline = wio_lx_now_ms() + (long long)(timeout > 0 ? timeout : 1) * 1000;
    struct wio_env e = {NULL, 0, 0, 0};
    struct sockaddr_in msa;
    struct wio_addr me = {{0}, 0};
    int lfd = -1;
    reason[0] = 0;
    int ok = !read_env(&e) && !resolve(&e, &msa) && (lfd = open_listener(&msa, &me)) >= 0;
    /* Every process takes part in every collective below, failed or not. */
    uint8_t entry[8] = {0};
    memcpy(entry, me.ip, 4);
    entry[4] = (uint8_t)(me.port >> 8);
    entry[5] = (uint8_t)me.port;
    entry[6] = (uint8_t)!ok;
    uint8_t *all = rank == 0 ? calloc((size_t)size, sizeof entry) : NULL;
    MPI_Gather(entry, sizeof entry, MPI_BYTE, all, sizeof entry, MPI_BYTE, 0, MPI_COMM_WORLD);
    int status[2] = {0, 0}; /* failed, table bytes */
    struct table t = {NULL, 0};
    if (rank == 0) {
        for (int i = 0; i < size && ok; i++)
            if (all[i * 8 + 6])
                ok = !fail("rank %d of this PB could not open its socket", i);
        size_t n = wio_register_size((uint32_t)size);
        uint8_t *mine = ok ? malloc(n) : NULL;
        if (ok) {
            struct wio_addr *a = calloc((size_t)size, sizeof *a);
            for (int i = 0; i < size; i++) {
                memcpy(a[i].ip, all + i * 8, 4);
                a[i].port = (uint16_t)(all[i * 8 + 4] << 8 | all[i * 8 + 5]);
            }
            wio_register_encode((uint32_t)e.pbid, (uint32_t)e.npb, (uint32_t)size, a, mine, n);
            free(a);
            ok = e.pbid == 0 ? !master(&e, &msa, mine, n, &t, deadline)
                             : !client(&e, &msa, mine, n, &t, timeout, deadline);
        }
        if (e.pbid != 0 || !ok)
            free(mine);
        status[0] = !ok;
        status[1] = (int)t.n;
        if (!ok)
            fprintf(stderr, "waitio_init: %s\n", reason);
    }
    free(all);
    MPI_Bcast(status, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (status[0]) {
        if (lfd >= 0)
            close(lfd);
        free(t.bytes);
        return -1;
    }
    if (rank != 0)
        t.bytes = malloc((size_t)status[1]);
    t.n = (uint32_t)status[1];
    MPI_Bcast(t.bytes, status[1], MPI_BYTE, 0, MPI_COMM_WORLD);
    struct wio_table tab;
    int rc = wio_table_decode(t.bytes, t.n, &tab);
    if (!rc &&
        (tab.npb != (uint32_t)e.npb || wio_table_nprocs(&tab, (uint32_t)e.pbid) != (uint32_t)size))
        rc = WIO_E_TOTAL;
    uint32_t *np = rc ? NULL : calloc(tab.npb, sizeof *np);
    struct wio_addr *a = rc ? NULL : calloc(tab.total, sizeof *a);
    if (!rc) {
        for (uint32_t i = 0; i < tab.npb; i++)
            np[i] = wio_table_nprocs(&tab, i);
        for (uint32_t i = 0; i < tab.total; i++)
            wio_payload_addr(tab.addrs, i, &a[i]);
        if (wio_core_init(&wio_lx_core, tab.npb, (uint32_t)e.pbid, (uint32_t)rank, np, a) ||
            wio_lx_net_start(lfd))
            rc = -1;
    }
    free(np);
    free(a);
    free(t.bytes);
    /* Everyone agrees, so a failure here also fails every process of the PB. */
    int bad = rc != 0, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (rank == 0)
            fprintf(stderr, "waitio_init: the start-up table is unusable\n");
        wio_core_free(&wio_lx_core);
        wio_lx_net_stop();
        return -1;
    }
    wio_this = &wio_lx_core;
    state = 1;
    return 0;
}

/* Task context: BYE to every connected peer once our sends completed, wait (bounded) for
 * theirs, close everything. Called before MPI_Finalize. */
int waitio_finalize(void)
{
    if (state != 1)
        return -1;
    struct wio_core *c = &wio_lx_core;
    wio_core_bye(c);
    long long deadline = wio_lx_now_ms() + FINALIZE_MS;
    while (!wio_core_quiet(c) && wio_lx_now_ms() < deadline)
        wio_lx_poll(100);
    wio_lx_net_stop();
    wio_this = NULL;
    wio_core_free(c);
    state = 2;
    return 0;
}
