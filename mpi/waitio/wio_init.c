/*
 * wio_init.c: waitio_init and waitio_finalize (PROTOCOL.md 4), the same on every platform.
 * Every process opens its data listener; each PB gathers its addresses at its rank 0 over
 * its own MPI; rank 0 of PB 0 is the master, the other rank 0s register with it
 * (REGISTER) and get the whole table back (TABLE, or REFUSE with a reason); each rank 0
 * broadcasts a status word and the table inside its PB. Every wait is bounded by
 * waitio_init's timeout, so a master that never answers makes waitio_init fail on every
 * process with a one-line reason. The streams, listener and clock are the platform's
 * (wio_boot.h).
 */
#include "wio_boot.h"
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_MS    100   /* between connection attempts to the master */
#define FINALIZE_MS 10000 /* waitio_finalize waits at most this long for BYEs */
#define REGISTER_MS 5000  /* the master waits this long for a REGISTER after accepting */
#define ENTRY_BYTES 8     /* a gathered entry: ipv4, port (big-endian), failed flag, pad */

static struct wio_core core;
static int state; /* 0: not initialised, 1: running, 2: finalised */
static char reason[WIO_BOOT_WHY];

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

/* The environment (spec section 4). */
struct wio_env {
    const char *host;
    int port, pbid, npb;
    uint8_t ip[4]; /* the master's */
};

/* Task context: a non-negative integer variable; -1 when missing or malformed. */
static long env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 0x7fffffff ? -1 : x;
}

/* Task context: read and check the environment, resolve the master. 0 or -1 (reason). */
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
    char why[WIO_BOOT_WHY];
    if (wio_boot_resolve(e->host, e->ip, why))
        return fail("%s", why);
    return 0;
}

/* Task context: send one start-up packet (header + payload). */
static int send_packet(struct wio_bstream *s, uint8_t type, uint32_t src, uint32_t dst,
                       const uint8_t *pay, uint32_t n, long long deadline)
{
    struct wio_hdr h = wio_hdr_make(type);
    uint8_t b[WIO_HDR];
    h.src = src;
    h.dst = dst;
    h.len = h.plen = n;
    wio_hdr_encode(&h, b);
    return wio_boot_io(s, b, sizeof b, 1, deadline) || wio_boot_io(s, (void *)pay, n, 1, deadline)
               ? -1
               : 0;
}

/* Task context: read one start-up packet in `phase` (MASTER or CLIENT); the payload is
 * malloc'ed into *pay. WIO_OK, a codec error, or -1 (late or closed). */
static int recv_packet(struct wio_bstream *s, enum wio_phase phase, uint32_t self, uint32_t npb,
                       struct wio_hdr *h, uint8_t **pay, long long deadline)
{
    uint8_t b[WIO_HDR];
    *pay = NULL;
    if (wio_boot_io(s, b, sizeof b, 0, deadline))
        return -1;
    wio_hdr_decode(b, h);
    struct wio_conn_view v = {
        .phase = phase, .peer = phase == WIO_PH_CLIENT ? 0 : WIO_ANY, .self = self, .nprocs = npb};
    int e = wio_hdr_check(h, &v, NULL);
    if (e)
        return e;
    *pay = malloc(h->plen ? h->plen : 1);
    if (!*pay || wio_boot_io(s, *pay, h->plen, 0, deadline)) {
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

/* Task context, the master: refuse a REGISTER that failed with codec error `err` (or -1:
 * incomplete), telling its sender why. */
static void refuse_stranger(struct wio_bstream *s, const struct wio_hdr *h, int err, uint32_t npb)
{
    char line[WIO_BOOT_WHY];
    uint8_t text[WIO_REFUSE_MAX];
    snprintf(line, sizeof line, "REGISTER refused: %s", err < 0 ? "incomplete" : wio_err_name(err));
    fprintf(stderr, "waitio: master: %s\n", line);
    size_t n = wio_refuse_encode(line, text, sizeof text);
    send_packet(s, WIO_T_REFUSE, 0, h->src < npb ? h->src : 0, text, (uint32_t)n,
                wio_boot_now_ms() + RETRY_MS);
}

/* Task context, the master: the TABLE payload from every PB's REGISTER payload, or -1. */
static int build_table(uint32_t npb, uint8_t **regs, struct table *t)
{
    uint32_t *np = calloc(npb, sizeof *np), total = 0;
    if (!np)
        return -1;
    for (uint32_t i = 0; i < npb; i++) {
        np[i] = wio_get32(regs[i] + 8); /* the REGISTER's nprocs, checked by its decode */
        total += np[i];                 /* each <= WIO_MAX_PROCS and npb <= WIO_MAX_PROCS */
    }
    struct wio_addr *a = calloc(total ? total : 1, sizeof *a);
    for (uint32_t i = 0, k = 0; a && i < npb; i++)
        for (uint32_t j = 0; j < np[i]; j++)
            wio_payload_addr(regs[i] + WIO_REG_FIXED, j, &a[k++]);
    t->n = (uint32_t)wio_table_size(npb, total);
    t->bytes = t->n && a ? malloc(t->n) : NULL;
    int rc = t->bytes && wio_table_encode(npb, np, a, t->bytes, t->n) == t->n ? 0 : -1;
    free(np);
    free(a);
    return rc;
}

/* Task context, PB 0 rank 0: be the master. `mine` is PB 0's REGISTER payload. Fills *t
 * (malloc'ed TABLE payload) or fails with a reason, after telling the PBs that did
 * register. */
static int master(const struct wio_env *e, uint8_t *mine, struct table *t, long long deadline)
{
    char why[WIO_BOOT_WHY] = "";
    struct wio_bstream *ms = wio_boot_master_listen((uint16_t)e->port, why);
    if (!ms)
        return fail("%s", why);
    uint32_t npb = (uint32_t)e->npb, got = 1;
    struct wio_bstream **peers = calloc(npb, sizeof *peers);
    uint8_t **regs = calloc(npb, sizeof *regs);
    if (!peers || !regs)
        snprintf(why, sizeof why, "the master is out of memory");
    else
        regs[0] = mine;
    while (got < npb && !why[0]) {
        struct wio_bstream *s = wio_boot_accept(ms, deadline);
        if (!s) {
            snprintf(why, sizeof why, "only %u of %u PBs registered with the master in time", got,
                     npb);
            break;
        }
        struct wio_hdr h = wio_hdr_make(0);
        uint8_t *pay;
        struct wio_register r;
        /* A PB's rank 0 sends its REGISTER at once; a stranger that connects and says
         * nothing may hold the master only briefly, not until the deadline. */
        long long until = wio_boot_now_ms() + REGISTER_MS;
        int err =
            recv_packet(s, WIO_PH_MASTER, 0, npb, &h, &pay, until < deadline ? until : deadline);
        if (!err)
            err = wio_register_decode(pay, h.plen, &r);
        if (!err && (r.npb != npb || r.pbid != h.src))
            err = WIO_E_NPB;
        if (!err && (r.pbid == 0 || regs[r.pbid]))
            err = WIO_E_DUP;
        if (err) { /* a stranger or a broken PB: tell it, drop it, keep waiting */
            refuse_stranger(s, &h, err, npb);
            free(pay);
            wio_boot_close(s);
            continue;
        }
        regs[r.pbid] = pay;
        peers[r.pbid] = s;
        got++;
    }
    wio_boot_close(ms);
    if (!why[0] && build_table(npb, regs, t))
        snprintf(why, sizeof why, "the instance's table does not fit (too many processes)");
    for (uint32_t i = 1; peers && i < npb; i++) {
        if (!peers[i])
            continue;
        if (why[0]) {
            uint8_t text[WIO_REFUSE_MAX];
            size_t n = wio_refuse_encode(why, text, sizeof text);
            send_packet(peers[i], WIO_T_REFUSE, 0, i, text, (uint32_t)n, deadline);
        } else if (send_packet(peers[i], WIO_T_TABLE, 0, i, t->bytes, t->n, deadline)) {
            snprintf(why, sizeof why, "the master could not send the table to PB %u", i);
        }
        wio_boot_close(peers[i]);
    }
    for (uint32_t i = 1; regs && i < npb; i++)
        free(regs[i]);
    free(regs);
    free(peers);
    return why[0] ? fail("%s", why) : 0;
}

/* Task context, rank 0 of a PB other than 0: register with the master, get the table.
 * A connection that closes before any answer is tried again until the deadline: the
 * master may not listen yet, and a gateway in between accepts first and closes when it
 * cannot reach it. */
static int client(const struct wio_env *e, uint8_t *mine, size_t mine_n, struct table *t,
                  int timeout, long long deadline)
{
    struct wio_hdr h = wio_hdr_make(0);
    uint8_t *pay = NULL;
    int err;
    for (;;) {
        struct wio_bstream *s;
        while (!(s = wio_boot_connect(e->ip, (uint16_t)e->port, deadline))) {
            if (wio_boot_now_ms() + RETRY_MS >= deadline)
                return fail("no answer from the master at %s:%d within %d s", e->host, e->port,
                            timeout);
            wio_boot_sleep_ms(RETRY_MS);
        }
        err =
            send_packet(s, WIO_T_REGISTER, (uint32_t)e->pbid, 0, mine, (uint32_t)mine_n, deadline);
        if (!err)
            err = recv_packet(s, WIO_PH_CLIENT, (uint32_t)e->pbid, (uint32_t)e->npb, &h, &pay,
                              deadline);
        wio_boot_close(s);
        if (err >= 0 || wio_boot_now_ms() + RETRY_MS >= deadline)
            break;
        wio_boot_sleep_ms(RETRY_MS);
    }
    if (err < 0)
        return fail("the master at %s:%d did not answer within %d s", e->host, e->port, timeout);
    if (err)
        return fail("bad answer from the master at %s:%d: %s", e->host, e->port, wio_err_name(err));
    if (h.type == WIO_T_REFUSE) {
        char text[WIO_REFUSE_MAX + 1];
        wio_refuse_decode(pay, h.plen, text, sizeof text);
        free(pay);
        return fail("the master at %s:%d refused: %s", e->host, e->port, text);
    }
    t->bytes = pay;
    t->n = h.plen;
    return 0;
}

/* Task context, rank 0 of a PB: from the gathered entries to the table (as master or
 * client). 0 or -1 (reason). */
static int rank0_exchange(const struct wio_env *e, const uint8_t *all, int size, struct table *t,
                          int timeout, long long deadline)
{
    for (int i = 0; i < size; i++)
        if (all[i * ENTRY_BYTES + 6])
            return fail("rank %d of this PB could not open its socket", i);
    size_t n = wio_register_size((uint32_t)size); /* 0 when size is out of range */
    uint8_t *mine = n ? malloc(n) : NULL;
    struct wio_addr *a = n ? calloc(n / WIO_ADDR_BYTES, sizeof *a) : NULL;
    int rc = -1;
    if (!mine || !a || !n) {
        rc = fail("cannot build this PB's registration (%d processes)", size);
    } else {
        for (int i = 0; i < size; i++) {
            memcpy(a[i].ip, all + i * ENTRY_BYTES, 4);
            a[i].port = (uint16_t)(all[i * ENTRY_BYTES + 4] << 8 | all[i * ENTRY_BYTES + 5]);
        }
        wio_register_encode((uint32_t)e->pbid, (uint32_t)e->npb, (uint32_t)size, a, mine, n);
        rc = e->pbid == 0 ? master(e, mine, t, deadline) : client(e, mine, n, t, timeout, deadline);
    }
    free(mine); /* the master's regs[0] pointed here until it returned */
    free(a);
    return rc;
}

/* Task context: the core from the broadcast table. 0, or -1. */
static int start_core(const struct wio_env *e, const struct table *t, int rank, int size)
{
    struct wio_table tab;
    int rc = wio_table_decode(t->bytes, t->n, &tab);
    if (!rc && (tab.npb != (uint32_t)e->npb ||
                wio_table_nprocs(&tab, (uint32_t)e->pbid) != (uint32_t)size))
        rc = WIO_E_TOTAL;
    if (rc)
        return -1;
    uint32_t *np = calloc(tab.npb, sizeof *np);
    struct wio_addr *a = calloc(tab.total, sizeof *a);
    if (np && a) {
        for (uint32_t i = 0; i < tab.npb; i++)
            np[i] = wio_table_nprocs(&tab, i);
        for (uint32_t i = 0; i < tab.total; i++)
            wio_payload_addr(tab.addrs, i, &a[i]);
        rc = wio_core_init(&core, tab.npb, (uint32_t)e->pbid, (uint32_t)rank, np, a) ||
                     wio_boot_start(&core)
                 ? -1
                 : 0;
    } else {
        rc = -1;
    }
    free(np);
    free(a);
    return rc;
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
    long long deadline = wio_boot_now_ms() + (long long)(timeout > 0 ? timeout : 1) * 1000;
    struct wio_env e;
    struct wio_addr me = {{0}, 0};
    char why[WIO_BOOT_WHY];
    reason[0] = 0;
    int ok = !read_env(&e);
    if (ok && wio_boot_listen_self(e.ip, (uint16_t)e.port, &me, why))
        ok = !fail("%s", why);
    /* Every process takes part in every collective below, failed or not. */
    uint8_t entry[ENTRY_BYTES] = {0};
    memcpy(entry, me.ip, 4);
    entry[4] = (uint8_t)(me.port >> 8);
    entry[5] = (uint8_t)me.port;
    entry[6] = (uint8_t)!ok;
    uint8_t *all = rank == 0 ? calloc((size_t)size, sizeof entry) : NULL;
    MPI_Gather(entry, sizeof entry, MPI_BYTE, all, sizeof entry, MPI_BYTE, 0, MPI_COMM_WORLD);
    int status[2] = {0, 0}; /* failed, table bytes */
    struct table t = {NULL, 0};
    if (rank == 0) {
        ok = ok && all && !rank0_exchange(&e, all, size, &t, timeout, deadline);
        status[0] = !ok;
        status[1] = (int)t.n;
        if (!ok)
            fprintf(stderr, "waitio_init: %s\n", reason[0] ? reason : "out of memory");
    }
    free(all);
    MPI_Bcast(status, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (status[0]) {
        wio_boot_stop(&core);
        free(t.bytes);
        return -1;
    }
    if (rank != 0)
        t.bytes = malloc((size_t)status[1]);
    t.n = (uint32_t)status[1];
    MPI_Bcast(t.bytes, status[1], MPI_BYTE, 0, MPI_COMM_WORLD);
    int bad = !t.bytes || start_core(&e, &t, rank, size), anybad = 0;
    free(t.bytes);
    /* Everyone agrees, so a failure here also fails every process of the PB. */
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) {
        if (rank == 0)
            fprintf(stderr, "waitio_init: the start-up table is unusable\n");
        wio_boot_stop(&core);
        wio_core_free(&core);
        return -1;
    }
    wio_this = &core;
    state = 1;
    return 0;
}

/* Task context: BYE to every connected peer once our sends completed, wait (bounded) for
 * theirs, close everything. Called before MPI_Finalize. */
int waitio_finalize(void)
{
    if (state != 1)
        return -1;
    wio_core_bye(&core);
    long long deadline = wio_boot_now_ms() + FINALIZE_MS;
    while (!wio_core_quiet(&core) && wio_boot_now_ms() < deadline)
        wio_boot_progress(&core, RETRY_MS);
    wio_boot_stop(&core);
    wio_this = NULL;
    wio_core_free(&core);
    state = 2;
    return 0;
}
