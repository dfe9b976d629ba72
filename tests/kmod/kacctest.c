/*
 * kacctest: the guest-side tests of host-kmod/kacc (run by tests/kmod/kacc.sh inside a
 * Debian guest, never on the host). `kacctest NAME...` runs the named cases, each in a
 * child process, prints "ok NAME" or "FAIL NAME: why", and after each case checks that the
 * module holds nothing of it any more (no graph, no page pinned). Exit status: the number
 * of failed cases. `kacctest stats` prints the module's counters; `kacctest hold SECONDS`
 * keeps graphs issued (the rmmod case's load).
 *
 * Graphs are built with mpi/cad's builder in user space; the expected results are what
 * mpi/cad's own kernels (cad_calc_apply) compute here, in user space, on copies.
 */
#define _GNU_SOURCE
#include "../../host-kmod/kacc/kacc_uapi.h"
#include "../../host-kmod/o2g/o2g_uapi.h"
#include "cad.h"
#include "kt.h"
#include "mpe_wire.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/klog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS    5000 /* longest wait for anything under TCG */
#define NODES      512
#define EDGES      1024
#define PAGE       4096
#define ARENA      (64 * PAGE)           /* the buffers of one case */
#define KERNEL_PTR 0xffff888000000000ull /* the direct map: never a user buffer */
#define PARAM      "/sys/module/kacc/parameters/progress"

/* A file of /dev/kacc with its status page mapped. */
struct kacc {
    int fd;
    volatile struct kacc_status *st;
};

/* Case context: open the device and map the status page; exits on failure. */
static struct kacc kopen(void)
{
    struct kacc k;
    k.fd = open(KACC_DEV, O_RDWR);
    if (k.fd < 0) {
        perror("open " KACC_DEV);
        exit(1);
    }
    k.st = mmap(NULL, KACC_MAP_BYTES, PROT_READ, MAP_SHARED, k.fd, 0);
    if (k.st == MAP_FAILED) {
        perror("mmap status");
        exit(1);
    }
    return k;
}

static void set_progress(const char *policy)
{
    FILE *f = fopen(PARAM, "w");
    if (!f || fputs(policy, f) < 0 || fclose(f)) {
        perror(PARAM);
        exit(1);
    }
}

static void on_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        perror("sched_setaffinity");
        exit(1);
    }
}

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The graph block of a case: room for NODES nodes. */
static void *block;
static size_t block_bytes;

static struct cad_graph *new_graph(void)
{
    static struct cad_owner own = {.rank = 0, .comm_size = 1, .part_base = 0};
    if (!own.part_size)
        own.part_size = kt_user_top();
    block_bytes = cad_bytes(NODES, EDGES);
    if (!block)
        block = aligned_alloc(64, block_bytes);
    return cad_init(block, block_bytes, NODES, EDGES, &own);
}

/* Issue the current block; the ioctl's result, with *a filled. */
static int issue(struct kacc *k, struct kacc_issue *a, unsigned flags)
{
    memset(a, 0, sizeof *a);
    a->graph = (uintptr_t)block;
    a->bytes = block_bytes;
    a->flags = flags;
    return ioctl(k->fd, KACC_IOC_ISSUE, a);
}

/* Spin on the status page (no system call) until the slot's graph finished. */
static int wait_done(struct kacc *k, unsigned slot)
{
    long end = now_ms() + WAIT_MS;
    uint32_t run;
    while ((run = __atomic_load_n(&k->st[slot].run, __ATOMIC_ACQUIRE)) < KACC_Q_DONE &&
           now_ms() < end)
        ;
    return (int)run;
}

/* Deterministic data: doubles of mixed magnitude (the sum's rounding depends on the
 * order of operations, so a wrong order shows), ints with wrap-around. */
static void fill(void *p, size_t bytes, unsigned seed)
{
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++) {
        seed = seed * 1103515245u + 12345u;
        b[i] = (unsigned char)(seed >> 16);
    }
}

static void fill_doubles(double *d, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        d[i] = (double)(int)(seed >> 8) * ((seed & 7) ? 1e-7 : 1e9);
    }
}

/* Case "refuse": invalid graphs refused with the validator's message (the same bytes
 * validated in user space give the same message), nothing pinned. */
static int c_refuse(void)
{
    struct kacc k = kopen();
    struct kacc_issue a;
    struct cad_error e;
    char *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int32_t *x = (int32_t *)buf, *y = (int32_t *)(buf + PAGE);

    /* a cycle: 2 -> 3 -> 2 (sealed without validation, as a hostile process would) */
    struct cad_graph *g = new_graph();
    int n2 = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, x, y, 16);
    int n3 = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, x, y, 16);
    cad_connect(g, CAD_NODE_START, n2);
    cad_connect(g, n2, n3);
    cad_connect(g, n3, n2);
    cad_connect(g, n3, CAD_NODE_END);
    if (cad_seal(g, &e))
        return fail("cycle: seal: %s", e.msg);
    memset(&e, 0, sizeof e);
    cad_validate(g, block_bytes, &e);
    if (issue(&k, &a, 0) == 0 || errno != EINVAL)
        return fail("cycle: issued (errno %d)", errno);
    if (a.err_code != CAD_ECYCLE || strcmp(a.err_msg, e.msg))
        return fail("cycle: code %d \"%s\", validator: %d \"%s\"", a.err_code, a.err_msg, e.code,
                    e.msg);

    /* an unknown op, written into a finalized graph */
    g = new_graph();
    n2 = cad_calc(g, CAD_OP_SUM, CAD_T_DOUBLE, x, y, 4);
    cad_connect(g, CAD_NODE_START, n2);
    cad_connect(g, n2, CAD_NODE_END);
    if (cad_finalize(g, &e))
        return fail("op: finalize: %s", e.msg);
    cad_nodes(g)[n2].u.c.op = CAD_OP_COUNT + 7;
    memset(&e, 0, sizeof e);
    cad_validate(g, block_bytes, &e);
    if (issue(&k, &a, 0) == 0 || errno != EINVAL)
        return fail("op: issued (errno %d)", errno);
    if (a.err_code != CAD_EOP || strcmp(a.err_msg, e.msg))
        return fail("op: code %d \"%s\", validator: %d \"%s\"", a.err_code, a.err_msg, e.code,
                    e.msg);

    /* a kernel address: outside the process's partition, the validator's message */
    g = new_graph();
    n2 = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, x, (void *)(uintptr_t)KERNEL_PTR, 16);
    cad_connect(g, CAD_NODE_START, n2);
    cad_connect(g, n2, CAD_NODE_END);
    cad_seal(g, &e);
    memset(&e, 0, sizeof e);
    cad_validate(g, block_bytes, &e);
    if (issue(&k, &a, 0) == 0 || errno != EINVAL)
        return fail("kernel buffer: issued (errno %d)", errno);
    if (a.err_code != CAD_EBUF || e.code != CAD_EBUF || strcmp(a.err_msg, e.msg))
        return fail("kernel buffer: code %d \"%s\", validator: %d \"%s\"", a.err_code, a.err_msg,
                    e.code, e.msg);

    /* a user address with nothing mapped (a hole made here), and a read-only inout */
    const char *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *hole = mmap(NULL, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hole += PAGE;
    munmap(hole, PAGE); /* mapped on both sides, so no later mmap lands in it */
    const void *bad_in[2] = {hole, x};
    void *bad_inout[2] = {y, (void *)ro};
    for (int t = 0; t < 2; t++) {
        g = new_graph();
        n2 = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, x, y, 16);
        n3 = cad_calc(g, CAD_OP_MAX, CAD_T_INT32, bad_in[t], bad_inout[t], 16);
        cad_connect(g, CAD_NODE_START, n2);
        cad_connect(g, n2, n3);
        cad_connect(g, n3, CAD_NODE_END);
        if (cad_finalize(g, &e))
            return fail("unmapped: finalize: %s", e.msg);
        if (issue(&k, &a, 0) == 0 || errno != EINVAL)
            return fail("unmapped %d: issued (errno %d)", t, errno);
        if (a.err_code != CAD_EBUF || a.err_node != n3 || !strstr(a.err_msg, "not mapped"))
            return fail("unmapped %d: node %d code %d \"%s\"", t, a.err_node, a.err_code,
                        a.err_msg);
    }

    /* SEND/RECV need an o2g file (KACC_IOC_O2G) */
    g = new_graph();
    n2 = cad_send(g, x, 64, 0, 5, 1);
    cad_connect(g, CAD_NODE_START, n2);
    cad_connect(g, n2, CAD_NODE_END);
    if (cad_finalize(g, &e))
        return fail("send: finalize: %s", e.msg);
    if (issue(&k, &a, 0) == 0 || errno != EINVAL)
        return fail("send: issued (errno %d)", errno);
    if (a.err_code != KACC_ENEEDO2G || !strstr(a.err_msg, "needs o2g"))
        return fail("send: code %d \"%s\"", a.err_code, a.err_msg);
    struct kacc_stats s = kt_kacc_stats();
    if (s.pinned || s.graphs)
        return fail("after refusals: %llu pages pinned, %llu graphs", (unsigned long long)s.pinned,
                    (unsigned long long)s.graphs);
    return 0;
}

/* The reduction graph of the calc cases in `arena`: four double buffers summed into a
 * fifth by a chain of dependent CALCs, five int32 ones likewise (parallel to it), then
 * MAX of int64 and PROD of floats, unaligned and across pages. Fills the inputs. */
static void reduction(char *arena)
{
    enum { ND = 3000, NI = 2500, NL = 700, NF = 900 };
    struct cad_graph *g = new_graph();
    double *d[5];
    int32_t *in[6];
    for (int i = 0; i < 5; i++) {
        d[i] = (double *)(arena + i * ND * sizeof(double) + 8);
        fill_doubles(d[i], ND, 100 + i);
    }
    char *p = arena + 5 * ND * sizeof(double) + 64 + 3; /* unaligned */
    for (int i = 0; i < 6; i++) {
        in[i] = (int32_t *)(p + i * NI * 4);
        fill(in[i], NI * 4, 200 + i);
    }
    p += 6 * NI * 4 + 5;
    char *l0 = p, *l1 = p + NL * 8, *f0 = p + 2 * NL * 8 + 1, *f1 = f0 + NF * 4;
    fill(l0, 2 * NL * 8, 300);
    for (int i = 0; i < 2 * NF; i++) {
        float v = 1.0f + (float)(i % 13) / 64;
        memcpy(f0 + i * 4, &v, 4);
    }
    int prev_d = CAD_NODE_START, prev_i = CAD_NODE_START;
    for (int i = 1; i < 5; i++) {
        int n = cad_calc(g, CAD_OP_SUM, CAD_T_DOUBLE, d[i], d[0], ND);
        cad_connect(g, prev_d, n);
        prev_d = n;
    }
    for (int i = 1; i < 6; i++) {
        int n = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, in[i], in[0], NI);
        cad_connect(g, prev_i, n);
        prev_i = n;
    }
    int m = cad_calc(g, CAD_OP_MAX, CAD_T_INT64, l1, l0, NL);
    int f = cad_calc(g, CAD_OP_PROD, CAD_T_FLOAT, f1, f0, NF);
    cad_connect(g, CAD_NODE_START, m);
    cad_connect(g, m, f);
    cad_connect(g, prev_d, CAD_NODE_END);
    cad_connect(g, prev_i, CAD_NODE_END);
    cad_connect(g, f, CAD_NODE_END);
}

/* What the graph in `block` computes, run here by mpi/cad's executor and kernels. */
static void run_in_user_space(void)
{
    struct cad_graph *g = (struct cad_graph *)block;
    int i;
    cad_issue(g);
    while ((i = cad_next_ready(g)) >= 0) {
        cad_calc_run(&cad_nodes(g)[i]);
        cad_complete(g, i);
    }
}

/* Build the case's graph twice (kernel arena, expected arena), issue one, wait, compare. */
static int run_and_compare_n(struct kacc *k, void (*build)(char *), const char *name, size_t arena)
{
    char *got = mmap(NULL, arena, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *want = mmap(NULL, arena, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct kacc_issue a;
    struct cad_error e;
    build(want);
    if (cad_finalize((struct cad_graph *)block, &e))
        return fail("%s: finalize: %s", name, e.msg);
    run_in_user_space();
    build(got);
    if (cad_finalize((struct cad_graph *)block, &e))
        return fail("%s: finalize: %s", name, e.msg);
    if (issue(k, &a, 0))
        return fail("%s: issue: %s (%s)", name, strerror(errno), a.err_msg);
    int run = wait_done(k, a.slot);
    if (run != KACC_Q_DONE)
        return fail("%s: state %d after %d ms (error %d)", name, run, WAIT_MS, k->st[a.slot].error);
    if (ioctl(k->fd, KACC_IOC_RELEASE, a.slot))
        return fail("%s: release: %s", name, strerror(errno));
    if (memcmp(got, want, arena)) {
        size_t i = 0;
        while (got[i] == want[i])
            i++;
        return fail("%s: results differ from user space's cad_calc at byte %zu", name, i);
    }
    munmap(got, arena);
    munmap(want, arena);
    return 0;
}

static int run_and_compare(struct kacc *k, void (*build)(char *), const char *name)
{
    return run_and_compare_n(k, build, name, ARENA);
}

/* Big CALCs, cut into slices by the module: 1 MiB of doubles summed twice (two dependent
 * nodes), MINLOC on 64K double-int pairs, uneven sizes. */
#define BIG_ARENA (8u << 20)
#define BIG_N     (128 * 1024 + 3)
static void big(char *arena)
{
    struct cad_graph *g = new_graph();
    double *a = (double *)arena, *b = a + BIG_N, *c = b + BIG_N;
    char *pairs = (char *)(c + BIG_N);
    fill_doubles(a, 3 * BIG_N, 77);
    fill(pairs, 2 * 16 * 65536, 78);
    int n1 = cad_calc(g, CAD_OP_SUM, CAD_T_DOUBLE, a, b, BIG_N);
    int n2 = cad_calc(g, CAD_OP_SUM, CAD_T_DOUBLE, b, c, BIG_N);
    int n3 = cad_calc(g, CAD_OP_MINLOC, CAD_T_DOUBLE_INT, pairs, pairs + 16 * 65536, 65536);
    cad_connect(g, CAD_NODE_START, n1);
    cad_connect(g, n1, n2);
    cad_connect(g, CAD_NODE_START, n3);
    cad_connect(g, n2, CAD_NODE_END);
    cad_connect(g, n3, CAD_NODE_END);
}

/* A chain of 300 dependent CALCs (more than a tasklet run's budget): acc = acc * 3 + v. */
static void chain(char *arena)
{
    struct cad_graph *g = new_graph();
    uint64_t *acc = (uint64_t *)arena, *three = acc + 64, *v = acc + 128;
    for (int i = 0; i < 64; i++) {
        acc[i] = (uint64_t)i;
        three[i] = 3;
        v[i] = (uint64_t)i * 7 + 1;
    }
    int prev = CAD_NODE_START;
    for (int i = 0; i < 150; i++) {
        int a = cad_calc(g, CAD_OP_PROD, CAD_T_UINT64, three, acc, 64);
        int b = cad_calc(g, CAD_OP_SUM, CAD_T_UINT64, v, acc, 64);
        cad_connect(g, prev, a);
        cad_connect(g, a, b);
        prev = b;
    }
    cad_connect(g, prev, CAD_NODE_END);
}

/* Case "calc": reductions and a dependent chain give exactly user space's results; the
 * completion is seen on the status page (wait_done makes no system call). */
static int c_calc(void)
{
    struct kacc k = kopen();
    if (run_and_compare(&k, reduction, "reduction") || run_and_compare(&k, chain, "chain"))
        return 1;
    struct kacc_stats s0 = kt_kacc_stats();
    if (run_and_compare_n(&k, big, "big", BIG_ARENA))
        return 1;
    struct kacc_stats s1 = kt_kacc_stats();
    if (s1.calc - s0.calc != 3 || s1.slices - s0.slices < 3 * 16)
        return fail("big: %llu nodes in %llu slices (the module should cut them)",
                    (unsigned long long)(s1.calc - s0.calc),
                    (unsigned long long)(s1.slices - s0.slices));
    return 0;
}

/* A one-node graph on `buf` (int32 SUM of 256 elements). */
static void small(char *buf)
{
    struct cad_graph *g = new_graph();
    int n = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, buf, buf + PAGE, 256);
    cad_connect(g, CAD_NODE_START, n);
    cad_connect(g, n, CAD_NODE_END);
    struct cad_error e;
    cad_finalize(g, &e);
}

/* Case "status": a held graph shows RUNNING on the status page and poll() reports
 * nothing; after KICK the page shows DONE without a system call and poll() wakes. */
static int c_status(void)
{
    struct kacc k = kopen();
    char *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct kacc_issue a;
    struct pollfd p = {.fd = k.fd, .events = POLLIN};
    small(buf);
    if (issue(&k, &a, KACC_ISSUE_HOLD))
        return fail("issue: %s", strerror(errno));
    usleep(100 * 1000);
    if (k.st[a.slot].run != KACC_Q_RUNNING || k.st[a.slot].issues != 1)
        return fail("held graph: state %u issues %u", k.st[a.slot].run, k.st[a.slot].issues);
    if (poll(&p, 1, 0) != 0)
        return fail("poll reports a held graph finished");
    if (ioctl(k.fd, KACC_IOC_RELEASE, a.slot) == 0 || errno != EBUSY)
        return fail("release of a running graph: %s", strerror(errno));
    if (ioctl(k.fd, KACC_IOC_KICK, a.slot))
        return fail("kick: %s", strerror(errno));
    if (poll(&p, 1, WAIT_MS) != 1 || !(p.revents & POLLIN))
        return fail("poll did not wake (revents %x)", p.revents);
    if (wait_done(&k, a.slot) != KACC_Q_DONE || k.st[a.slot].ndone != 3)
        return fail("state %u ndone %u", k.st[a.slot].run, k.st[a.slot].ndone);
    if (ioctl(k.fd, KACC_IOC_RELEASE, a.slot))
        return fail("release: %s", strerror(errno));
    if (k.st[a.slot].run != KACC_Q_FREE)
        return fail("released slot shows %u", k.st[a.slot].run);
    return 0;
}

/* A graph with a user-op CALC (user op 0 of 1) between two SUMs, on `buf`: its nodes. */
static void with_user_op(char *buf, int *user, int *after)
{
    struct cad_owner own = {.rank = 0, .comm_size = 1, .part_size = kt_user_top(), .nuser = 1};
    block_bytes = cad_bytes(NODES, EDGES);
    if (!block)
        block = aligned_alloc(64, block_bytes);
    struct cad_graph *g = cad_init(block, block_bytes, NODES, EDGES, &own);
    int before = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, buf, buf + PAGE, 256);
    *user = cad_calc_user(g, 0, CAD_T_INT32, buf, buf + PAGE, 256, 256 * sizeof(int32_t));
    *after = cad_calc(g, CAD_OP_SUM, CAD_T_INT32, buf, buf + PAGE, 256);
    cad_connect(g, CAD_NODE_START, before);
    cad_connect(g, before, *user);
    cad_connect(g, *user, *after);
    cad_connect(g, *after, CAD_NODE_END);
    struct cad_error e;
    cad_finalize(g, &e);
}

/* The slot's offered user-op node once there is one (spinning on the page), or -1. */
static int wait_offer(const struct kacc *k, unsigned slot)
{
    const volatile struct kacc_user *u =
        (const volatile struct kacc_user *)((const char *)k->st + KACC_USER_OFF);
    long end = now_ms() + WAIT_MS;
    int32_t node;
    while ((node = __atomic_load_n(&u[slot].node, __ATOMIC_ACQUIRE)) < 0 && now_ms() < end)
        ;
    return node;
}

/* KACC_IOC_USER_DONE {slot, node}: 0 or errno. */
static int user_done(const struct kacc *k, uint32_t slot, int32_t node)
{
    struct kacc_user_done d = {.slot = slot, .node = node};
    return ioctl(k->fd, KACC_IOC_USER_DONE, &d) ? errno : 0;
}

/* Case "userop": kacc runs a graph up to its user-op CALC and offers it (user-op page,
 * poll wakes); the ioctl's slot and node are the process's word: any but the offered
 * pair is refused and changes nothing; the op run here and answered, the graph goes on
 * to DONE with the three ops' result. A graph cancelled with its offer outstanding
 * withdraws it. */
static int c_userop(void)
{
    struct kacc k = kopen();
    int32_t *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int32_t *in = buf, *io = buf + PAGE / sizeof(int32_t), want[256];
    struct kacc_issue a;
    struct pollfd p = {.fd = k.fd, .events = POLLIN};
    int user, after, err;
    for (int i = 0; i < 256; i++) {
        in[i] = i * 3 - 100;
        io[i] = i * 7;
        want[i] = 2 * (io[i] + in[i]) + 2 * in[i]; /* SUM, x2 + in (ours), SUM */
    }
    struct kacc_stats s0 = kt_kacc_stats();
    with_user_op((char *)buf, &user, &after);
    if (issue(&k, &a, 0))
        return fail("issue: %s", strerror(errno));
    if (wait_offer(&k, a.slot) != user)
        return fail("offered node %d, not the user op %d", wait_offer(&k, a.slot), user);
    if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
        return fail("poll does not report the offer (revents %x)", p.revents);
    struct {
        uint32_t slot;
        int32_t node;
        int err;
    } bad[] = {{a.slot, after, EINVAL},       {a.slot, -1, EINVAL},
               {a.slot, NODES + 100, EINVAL}, {a.slot, INT32_MIN, EINVAL},
               {a.slot + 1, user, ENOENT},    {KACC_SLOTS, user, ENOENT},
               {UINT32_MAX, user, ENOENT}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if ((err = user_done(&k, bad[i].slot, bad[i].node)) != bad[i].err)
            return fail("USER_DONE {%u, %d}: %s, not %s", bad[i].slot, bad[i].node, strerror(err),
                        strerror(bad[i].err));
    if (k.st[a.slot].run != KACC_Q_RUNNING || wait_offer(&k, a.slot) != user)
        return fail("after refused USER_DONEs: state %u, offer %d", k.st[a.slot].run,
                    wait_offer(&k, a.slot));
    for (int i = 0; i < 256; i++)
        io[i] = io[i] * 2 + in[i];
    if ((err = user_done(&k, a.slot, user)))
        return fail("USER_DONE of the offered node: %s", strerror(err));
    if (wait_done(&k, a.slot) != KACC_Q_DONE || k.st[a.slot].error)
        return fail("state %u error %d", k.st[a.slot].run, k.st[a.slot].error);
    if ((err = user_done(&k, a.slot, user)) != EINVAL)
        return fail("a second USER_DONE: %s", strerror(err));
    if (memcmp(io, want, sizeof want))
        return fail("results differ from SUM, the user op, SUM in order");
    if (ioctl(k.fd, KACC_IOC_RELEASE, a.slot))
        return fail("release: %s", strerror(errno));
    struct kacc_stats s1 = kt_kacc_stats();
    if (s1.user - s0.user != 1)
        return fail("%llu user ops counted", (unsigned long long)(s1.user - s0.user));
    with_user_op((char *)buf, &user, &after);
    if (issue(&k, &a, 0) || wait_offer(&k, a.slot) != user)
        return fail("second graph: no offer");
    if (ioctl(k.fd, KACC_IOC_CANCEL, a.slot) || k.st[a.slot].run != KACC_Q_CANCELLED)
        return fail("cancel with an offer out: state %u", k.st[a.slot].run);
    if ((err = user_done(&k, a.slot, user)) != EINVAL)
        return fail("USER_DONE after cancel: %s", strerror(err));
    if (ioctl(k.fd, KACC_IOC_RELEASE, a.slot))
        return fail("release: %s", strerror(errno));
    return 0;
}

/* Case "cancel": a held graph cancelled runs nothing, its buffers stay as they were. */
static int c_cancel(void)
{
    struct kacc k = kopen();
    char *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct kacc_issue a;
    fill(buf, 2 * PAGE, 9);
    char before[2 * PAGE];
    memcpy(before, buf, sizeof before);
    small(buf);
    if (issue(&k, &a, KACC_ISSUE_HOLD))
        return fail("issue: %s", strerror(errno));
    if (ioctl(k.fd, KACC_IOC_CANCEL, a.slot))
        return fail("cancel: %s", strerror(errno));
    if (k.st[a.slot].run != KACC_Q_CANCELLED)
        return fail("state %u after cancel", k.st[a.slot].run);
    if (ioctl(k.fd, KACC_IOC_KICK, a.slot) || wait_done(&k, a.slot) != KACC_Q_CANCELLED)
        return fail("kick after cancel: state %u", k.st[a.slot].run);
    if (memcmp(before, buf, sizeof before))
        return fail("a cancelled graph wrote its buffer");
    if (ioctl(k.fd, KACC_IOC_RELEASE, a.slot))
        return fail("release: %s", strerror(errno));
    /* cancelled inside a CALC cut into slices (progress=poll, 5 slices run): settled */
    char *arena = mmap(NULL, BIG_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct cad_error e;
    big(arena);
    cad_finalize((struct cad_graph *)block, &e);
    set_progress("poll");
    int r = issue(&k, &a, 0);
    set_progress("tasklet");
    if (r)
        return fail("big: issue: %s", strerror(errno));
    if (ioctl(k.fd, KACC_IOC_PROGRESS, 5) || k.st[a.slot].run != KACC_Q_RUNNING ||
        k.st[a.slot].ndone != 1)
        return fail("big: after 5 slices: state %u, %u nodes done", k.st[a.slot].run,
                    k.st[a.slot].ndone);
    if (ioctl(k.fd, KACC_IOC_CANCEL, a.slot) || k.st[a.slot].run != KACC_Q_CANCELLED)
        return fail("big: state %u after cancel (%s)", k.st[a.slot].run, strerror(errno));
    if (ioctl(k.fd, KACC_IOC_RELEASE, a.slot))
        return fail("big: release: %s", strerror(errno));
    return 0;
}

/* Issue a held graph on CPU 0, kick it from CPU 1; the counter that moved. */
static int kick_from_other_cpu(struct kacc *k, char *buf, const char *policy,
                               unsigned long long *counter_delta, size_t field)
{
    struct kacc_issue a;
    set_progress(policy);
    small(buf);
    on_cpu(0);
    if (issue(k, &a, KACC_ISSUE_HOLD))
        return fail("%s: issue: %s", policy, strerror(errno));
    struct kacc_stats s0 = kt_kacc_stats();
    on_cpu(1);
    if (ioctl(k->fd, KACC_IOC_KICK, a.slot))
        return fail("%s: kick: %s", policy, strerror(errno));
    if (wait_done(k, a.slot) != KACC_Q_DONE)
        return fail("%s: not done after a kick from CPU 1", policy);
    struct kacc_stats s1 = kt_kacc_stats();
    *counter_delta = *(__u64 *)((char *)&s1 + field) - *(__u64 *)((char *)&s0 + field);
    ioctl(k->fd, KACC_IOC_RELEASE, a.slot);
    return 0;
}

/* Case "ipi": an event on another CPU than the home CPU runs the graph there (tasklet:
 * "local") or sends an IPI to the home CPU (ipi); an issue runs it at home ("home"). */
static int c_ipi(void)
{
    struct kacc k = kopen();
    char *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned long long d;
    int r = kick_from_other_cpu(&k, buf, "ipi", &d, offsetof(struct kacc_stats, ipi));
    if (r || d != 1) {
        set_progress("tasklet");
        return r ? r : fail("ipi: ipi counter moved by %llu, not 1", d);
    }
    r = kick_from_other_cpu(&k, buf, "tasklet", &d, offsetof(struct kacc_stats, local));
    if (r || d != 1)
        return r ? r : fail("tasklet: local counter moved by %llu, not 1", d);
    struct kacc_stats s0 = kt_kacc_stats();
    if (run_and_compare(&k, small, "home"))
        return 1;
    struct kacc_stats s1 = kt_kacc_stats();
    if (s1.home - s0.home < 1 || s1.ipi != s0.ipi)
        return fail("issue: home +%llu ipi +%llu", (unsigned long long)(s1.home - s0.home),
                    (unsigned long long)(s1.ipi - s0.ipi));
    return 0;
}

/* Case "poll": with progress=poll a graph waits for KACC_IOC_PROGRESS. */
static int c_poll(void)
{
    struct kacc k = kopen();
    char *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct kacc_issue a;
    struct cad_error e;
    set_progress("poll");
    reduction(buf);
    cad_finalize((struct cad_graph *)block, &e);
    int r = issue(&k, &a, 0);
    usleep(300 * 1000);
    uint32_t before = k.st[a.slot].run;
    if (ioctl(k.fd, KACC_IOC_KICK, a.slot) == 0) /* an event changes nothing either */
        usleep(100 * 1000);
    uint32_t kicked = k.st[a.slot].run;
    int p = ioctl(k.fd, KACC_IOC_PROGRESS);
    uint32_t after = k.st[a.slot].run;
    set_progress("tasklet");
    if (r)
        return fail("issue: %s", strerror(errno));
    if (before != KACC_Q_RUNNING || kicked != KACC_Q_RUNNING)
        return fail("progress=poll: state %u (%u after a kick) before PROGRESS", before, kicked);
    if (p || after != KACC_Q_DONE)
        return fail("after PROGRESS: state %u (%s)", after, p ? strerror(errno) : "ok");
    ioctl(k.fd, KACC_IOC_RELEASE, a.slot);
    return 0;
}

/* Case "memlock": pinned pages are charged to RLIMIT_MEMLOCK: a process without
 * CAP_IPC_LOCK cannot pin beyond it (ENOMEM), and gets its charge back on release. */
static int c_memlock(void)
{
    struct rlimit lim = {16 * PAGE, 16 * PAGE};
    char *buf = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct kacc_issue a;
    struct cad_error e;
    if (setrlimit(RLIMIT_MEMLOCK, &lim))
        return fail("RLIMIT_MEMLOCK: %s", strerror(errno));
    if (kt_as_user(1)) /* nobody, in the devices' group: no CAP_IPC_LOCK */
        return 1;
    struct kacc k = kopen();
    struct cad_graph *g = new_graph(); /* 2 x 16 pages: beyond the limit */
    int n = cad_calc(g, CAD_OP_BXOR, CAD_T_BYTE, buf, buf + ARENA / 2, 16 * PAGE);
    cad_connect(g, CAD_NODE_START, n);
    cad_connect(g, n, CAD_NODE_END);
    cad_finalize(g, &e);
    if (issue(&k, &a, 0) == 0 || errno != ENOMEM)
        return fail("32 pages pinned under a 16-page limit (errno %d)", errno);
    for (int i = 0; i < 3; i++) { /* 2 x 4 pages, three times: the charge comes back */
        small(buf);
        if (issue(&k, &a, 0))
            return fail("8 pages under a 16-page limit, try %d: %s", i, strerror(errno));
        if (wait_done(&k, a.slot) != KACC_Q_DONE || ioctl(k.fd, KACC_IOC_RELEASE, a.slot))
            return fail("small graph %d did not finish", i);
    }
    return 0;
}

/* One process of the stress case, on `cpu`: rounds of STRESS_GRAPHS chains issued at
 * once, every other one held and kicked from the other CPU; every result checked. */
#define STRESS_GRAPHS 4
#define STRESS_ROUNDS 10
static int stress_one(int cpu)
{
    struct kacc k = kopen();
    struct kacc_issue a;
    struct cad_error e;
    char *want = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *got[STRESS_GRAPHS];
    unsigned slot[STRESS_GRAPHS];
    chain(want);
    cad_finalize((struct cad_graph *)block, &e);
    run_in_user_space();
    for (int j = 0; j < STRESS_GRAPHS; j++)
        got[j] = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    on_cpu(cpu);
    for (int r = 0; r < STRESS_ROUNDS; r++) {
        for (int j = 0; j < STRESS_GRAPHS; j++) {
            chain(got[j]);
            cad_finalize((struct cad_graph *)block, &e);
            if (issue(&k, &a, j % 2 ? KACC_ISSUE_HOLD : 0))
                return fail("CPU %d round %d: issue: %s", cpu, r, strerror(errno));
            slot[j] = a.slot;
        }
        on_cpu(1 - cpu);
        for (int j = 1; j < STRESS_GRAPHS; j += 2)
            ioctl(k.fd, KACC_IOC_KICK, slot[j]);
        on_cpu(cpu);
        for (int j = 0; j < STRESS_GRAPHS; j++) {
            if (wait_done(&k, slot[j]) != KACC_Q_DONE)
                return fail("CPU %d round %d graph %d: state %u", cpu, r, j, k.st[slot[j]].run);
            if (ioctl(k.fd, KACC_IOC_RELEASE, slot[j]))
                return fail("CPU %d: release: %s", cpu, strerror(errno));
            if (memcmp(got[j], want, ARENA))
                return fail("CPU %d round %d graph %d: wrong result", cpu, r, j);
        }
    }
    return 0;
}

/* Case "stress": two processes, one per CPU, issue and kick graphs concurrently, under
 * progress=ipi then progress=tasklet (long chains: requeued past the budget). */
static int c_stress(void)
{
    static const char *const policies[] = {"ipi", "tasklet"};
    char *why_of =
        mmap(NULL, 2 * sizeof why, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (int p = 0; p < 2; p++) {
        set_progress(policies[p]);
        pid_t pid[2];
        for (int cpu = 0; cpu < 2; cpu++) {
            pid[cpu] = fork();
            if (pid[cpu] == 0) {
                int r = stress_one(cpu);
                memcpy(why_of + cpu * sizeof why, why, sizeof why);
                _exit(r);
            }
        }
        for (int cpu = 0; cpu < 2; cpu++) {
            int st;
            waitpid(pid[cpu], &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st)) {
                set_progress("tasklet");
                return fail("%s: %s", policies[p],
                            why_of[cpu * sizeof why] ? why_of + cpu * sizeof why : "crashed");
            }
        }
    }
    return 0;
}

/* Issue `n` held graphs and, unless hold, as many running ones; print "running". */
static void load(struct kacc *k, char *buf, int n)
{
    struct kacc_issue a;
    struct cad_error e;
    for (int i = 0; i < n; i++) {
        reduction(buf + (i % 4) * (ARENA / 4) / PAGE * PAGE);
        cad_finalize((struct cad_graph *)block, &e);
        if (issue(k, &a, i % 2 ? KACC_ISSUE_HOLD : 0))
            fprintf(stderr, "load: issue %d: %s\n", i, strerror(errno));
    }
}

/* The child of a "killed" case, once its graphs are issued: tell the parent on wr, then
 * wait for the kill. */
static void ready_then_wait(int wr)
{
    if (write(wr, "x", 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* The parent: wait for the child's word on rd, take the module's counters into *s, then
 * kill and reap the child. -1 if the child died before it was ready. */
static int kill_when_ready(int rd, pid_t pid, struct kacc_stats *s)
{
    char c;
    if (read(rd, &c, 1) != 1)
        return -1;
    *s = kt_kacc_stats();
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}

/* Case "killed": a process killed with graphs issued (held and running) leaves no graph
 * and no pinned page. */
static int c_killed(void)
{
    int pipefd[2];
    if (pipe(pipefd))
        return fail("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        struct kacc k = kopen();
        char *buf =
            mmap(NULL, 4 * ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        load(&k, buf, 24);
        ready_then_wait(pipefd[1]);
    }
    struct kacc_stats s;
    if (kill_when_ready(pipefd[0], pid, &s))
        return fail("child died before issuing");
    if (s.graphs < 12 || s.pinned == 0)
        return fail("before the kill: %llu graphs, %llu pages pinned", (unsigned long long)s.graphs,
                    (unsigned long long)s.pinned);
    return 0; /* the check after every case tests that nothing is left */
}

/* Fail with why prefixed by what (fail's own arguments must not be why itself). */
static int fail_in(const char *what)
{
    char inner[sizeof why];
    memcpy(inner, why, sizeof inner);
    return fail("%s: %s", what, inner);
}

/* ---- SEND and RECV over o2g: processes of a job in this guest, over loopback TCP ---- */

#define RANKS      3
#define EAGER      (1u << 20) /* the job's eager limit */
#define DUMP       (4u << 20) /* each process's o2g dump area */
#define CTX        3          /* the collectives' context id */
#define BCAST_B    (96 << 10) /* bytes broadcast */
#define AR_N       8192       /* int64 elements allreduced */
#define COMPUTE_MS 4000       /* the no-progress case's compute phase */

/* One process of a job: its o2g file (dump area, ring) and kacc file, bound. */
struct rank {
    int r, size;
    int o2g;
    unsigned char *dump;
    struct o2g_ring_hdr *ring;
    struct o2g_cqe *cqe;
    uint32_t mask, tail;
    struct kacc k;
};

/* A connected loopback pair (*a, *b), Nagle off on both. */
static int tcp_pair(int *a, int *b)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof sa;
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&sa, &al))
        return fail("listen: %s", strerror(errno));
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(*a, (struct sockaddr *)&sa, sizeof sa))
        return fail("connect: %s", strerror(errno));
    *b = accept(l, NULL, NULL);
    close(l);
    if (*b < 0)
        return fail("accept: %s", strerror(errno));
    setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

/* The eager limit rank_open sets up o2g with (the eager case changes it). */
static uint64_t rank_eager = EAGER;

/* Rank r of size: o2g set up, socks[p] attached as peer p (but r's own and those < 0),
 * kacc bound to it. */
static int rank_open(struct rank *me, int r, int size, const int *socks)
{
    struct o2g_setup s = {.dump_len = DUMP, .max_eager = rank_eager};
    me->r = r;
    me->size = size;
    me->o2g = open(O2G_DEV, O_RDWR);
    me->dump = mmap(NULL, DUMP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    s.dump_addr = (uintptr_t)me->dump;
    if (me->o2g < 0 || ioctl(me->o2g, O2G_IOC_SETUP, &s))
        return fail("rank %d: o2g setup: %s", r, strerror(errno));
    me->ring = mmap(NULL, s.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, me->o2g, 0);
    if (me->ring == MAP_FAILED)
        return fail("rank %d: o2g ring: %s", r, strerror(errno));
    me->cqe = (struct o2g_cqe *)((char *)me->ring + O2G_RING_CQE_OFF);
    me->mask = s.entries - 1;
    me->tail = 0;
    for (int p = 0; p < size; p++) {
        struct o2g_attach a = {.fd = socks[p], .peer = p};
        if (p != r && socks[p] >= 0 && ioctl(me->o2g, O2G_IOC_ATTACH, &a))
            return fail("rank %d: attach peer %d: %s", r, p, strerror(errno));
    }
    me->k = kopen();
    if (ioctl(me->k.fd, KACC_IOC_O2G, me->o2g))
        return fail("rank %d: KACC_IOC_O2G: %s", r, strerror(errno));
    return 0;
}

/* Read the o2g ring without waiting: unexpected messages a RECV node took from the dump
 * area are still the process's records; give them back. Other entries: none expected. */
static int rank_drain(struct rank *me)
{
    uint32_t head = __atomic_load_n(&me->ring->head, __ATOMIC_ACQUIRE);
    for (; me->tail != head; me->tail++) {
        struct o2g_cqe e = me->cqe[me->tail & me->mask];
        if (e.kind != O2G_CQE_UNEXP)
            return fail("rank %d: o2g entry of kind %u (status %d)", me->r, e.kind, e.status);
        if (ioctl(me->o2g, O2G_IOC_FREE, &e.off))
            return fail("rank %d: free: %s", me->r, strerror(errno));
    }
    __atomic_store_n(&me->ring->tail, me->tail, __ATOMIC_RELEASE);
    return 0;
}

static struct cad_graph *rank_graph(const struct rank *me)
{
    static struct cad_owner own;
    own.rank = me->r;
    own.comm_size = me->size;
    own.part_base = 0;
    own.part_size = kt_user_top();
    block_bytes = cad_bytes(NODES, EDGES);
    if (!block)
        block = aligned_alloc(64, block_bytes);
    return cad_init(block, block_bytes, NODES, EDGES, &own);
}

/* Ibcast-shaped, from rank 0 down a chain: 0 sends the buffer to 1; 1 receives it, then
 * sends its halves to 2 (two SENDs); 2 receives the halves. */
static int build_bcast(const struct rank *me, char *buf)
{
    struct cad_graph *g = rank_graph(me);
    struct cad_error e;
    int h = BCAST_B / 2;
    if (me->r == 0) {
        int s = cad_send(g, buf, BCAST_B, 1, 7, CTX);
        cad_connect(g, CAD_NODE_START, s);
        cad_connect(g, s, CAD_NODE_END);
    } else if (me->r == 1) {
        int rv = cad_recv(g, buf, BCAST_B, 0, 7, CTX);
        int s1 = cad_send(g, buf, h, 2, 8, CTX), s2 = cad_send(g, buf + h, h, 2, 9, CTX);
        cad_connect(g, CAD_NODE_START, rv);
        cad_connect(g, rv, s1);
        cad_connect(g, rv, s2);
        cad_connect(g, s1, CAD_NODE_END);
        cad_connect(g, s2, CAD_NODE_END);
    } else {
        int r1 = cad_recv(g, buf, h, 1, 8, CTX), r2 = cad_recv(g, buf + h, h, 1, 9, CTX);
        cad_connect(g, CAD_NODE_START, r1);
        cad_connect(g, CAD_NODE_START, r2);
        cad_connect(g, r1, CAD_NODE_END);
        cad_connect(g, r2, CAD_NODE_END);
    }
    return cad_finalize(g, &e) ? fail("rank %d: bcast: %s", me->r, e.msg) : 0;
}

/* Iallreduce-shaped (SUM of int64): every rank sends its vector to the others, receives
 * theirs and adds them into its result in rank order. sbuf: what it sends (its vector),
 * acc: its vector, then the result; tmp: size receive buffers. */
static int build_allreduce(const struct rank *me, int64_t *sbuf, int64_t *acc, int64_t *tmp)
{
    struct cad_graph *g = rank_graph(me);
    struct cad_error e;
    int prev = CAD_NODE_START;
    for (int p = 0; p < me->size; p++) {
        if (p == me->r)
            continue;
        int s = cad_send(g, sbuf, AR_N * 8, p, 20, CTX);
        int rv = cad_recv(g, tmp + p * AR_N, AR_N * 8, p, 20, CTX);
        int c = cad_calc(g, CAD_OP_SUM, CAD_T_INT64, tmp + p * AR_N, acc, AR_N);
        cad_connect(g, CAD_NODE_START, s);
        cad_connect(g, s, CAD_NODE_END);
        cad_connect(g, CAD_NODE_START, rv);
        cad_connect(g, rv, c);
        cad_connect(g, prev, c);
        prev = c;
    }
    cad_connect(g, prev, CAD_NODE_END);
    return cad_finalize(g, &e) ? fail("rank %d: allreduce: %s", me->r, e.msg) : 0;
}

static void bcast_data(char *buf, int root)
{
    for (int i = 0; i < BCAST_B; i++)
        buf[i] = root ? (char)(i * 7 + i / 251) : 0;
}

static void ar_data(int64_t *v, int r)
{
    for (int i = 0; i < AR_N; i++)
        v[i] = (int64_t)(r + 1) * 1000003 * i - (int64_t)r * 77;
}

/* Spin on a 40x40 multiply (no system call) until the slots are DONE or ms are up;
 * 1 if they all finished in time. */
static int compute_until(struct rank *me, const unsigned *slots, int n, long ms)
{
    static double a[40][40], b[40][40], c[40][40];
    long end = now_ms() + ms;
    for (;;) {
        int done = 0;
        for (int s = 0; s < n; s++)
            done += __atomic_load_n(&me->k.st[slots[s]].run, __ATOMIC_ACQUIRE) >= KACC_Q_DONE;
        if (done == n)
            return 1;
        if (now_ms() > end) /* clock_gettime: the vDSO, no system call */
            return 0;
        for (int i = 0; i < 40; i++)
            for (int j = 0; j < 40; j++) {
                double t = 0;
                for (int k = 0; k < 40; k++)
                    t += a[i][k] * b[k][j];
                c[i][j] = t + 1;
            }
        a[1][1] = c[2][2];
    }
}

/* What one rank of the job cases does; mode: 0 bcast then allreduce checked (rank 2
 * holds its bcast graph a while: the data arrive before its RECVs are posted), 1 both
 * issued at once and the ranks compute without calls into the modules until done (1 if
 * done in time), the progress by PROGRESS calls afterwards. */
static int rank_main(struct rank *me, int mode, int *in_time)
{
    char *buf = mmap(NULL, BCAST_B, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int64_t *ar = mmap(NULL, (2 + RANKS) * AR_N * 8, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int64_t *sbuf = ar, *acc = ar + AR_N, *tmp = ar + 2 * AR_N;
    struct kacc_issue a;
    unsigned slot[2];
    bcast_data(buf, me->r == 0);
    ar_data(sbuf, me->r);
    ar_data(acc, me->r);
    if (build_bcast(me, buf))
        return 1;
    int hold = mode == 0 && me->r == 2;
    if (issue(&me->k, &a, hold ? KACC_ISSUE_HOLD : 0))
        return fail("rank %d: bcast issue: %s (%s)", me->r, strerror(errno), a.err_msg);
    slot[0] = a.slot;
    if (hold) {
        usleep(500 * 1000);
        ioctl(me->k.fd, KACC_IOC_KICK, slot[0]);
    }
    if (build_allreduce(me, sbuf, acc, tmp))
        return 1;
    if (issue(&me->k, &a, 0))
        return fail("rank %d: allreduce issue: %s (%s)", me->r, strerror(errno), a.err_msg);
    slot[1] = a.slot;
    if (mode == 1) {
        *in_time = compute_until(me, slot, 2, COMPUTE_MS);
        long end = now_ms() + WAIT_MS;
        while (!compute_until(me, slot, 2, 10) && now_ms() < end)
            ioctl(me->k.fd, KACC_IOC_PROGRESS, 0);
    }
    for (int s = 0; s < 2; s++) {
        int run = wait_done(&me->k, slot[s]);
        if (run != KACC_Q_DONE)
            return fail("rank %d: %s: state %d, error %d", me->r, s ? "allreduce" : "bcast", run,
                        me->k.st[slot[s]].error);
        if (ioctl(me->k.fd, KACC_IOC_RELEASE, slot[s]))
            return fail("rank %d: release: %s", me->r, strerror(errno));
    }
    char *want = malloc(BCAST_B);
    bcast_data(want, 1);
    if (memcmp(buf, want, BCAST_B))
        return fail("rank %d: bcast data differ", me->r);
    for (int i = 0; i < AR_N; i++) {
        int64_t w = 0;
        for (int p = 0; p < me->size; p++)
            w += (int64_t)(p + 1) * 1000003 * i - (int64_t)p * 77;
        if (acc[i] != w)
            return fail("rank %d: allreduce element %d: %lld, not %lld", me->r, i,
                        (long long)acc[i], (long long)w);
    }
    return rank_drain(me);
}

/* Run a job of RANKS processes (pinned round-robin to the CPUs); 0 if every rank passed,
 * *all_in_time: whether every rank's graphs finished during its compute phase. */
static int job(int mode, int *all_in_time)
{
    int socks[RANKS][RANKS];
    char *whys = mmap(NULL, RANKS * sizeof why + RANKS * sizeof(int), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int *in_time = (int *)(whys + RANKS * sizeof why);
    pid_t pid[RANKS];
    for (int i = 0; i < RANKS; i++)
        for (int j = i + 1; j < RANKS; j++)
            if (tcp_pair(&socks[i][j], &socks[j][i]))
                return 1;
    for (int r = 0; r < RANKS; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            struct rank me;
            on_cpu(r % 2);
            int bad = rank_open(&me, r, RANKS, socks[r]) || rank_main(&me, mode, &in_time[r]);
            memcpy(whys + r * sizeof why, why, sizeof why);
            _exit(bad);
        }
    }
    int bad = 0;
    *all_in_time = 1;
    for (int r = 0; r < RANKS; r++) {
        int st;
        waitpid(pid[r], &st, 0);
        if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !bad)
            bad = fail("%s", whys[r * sizeof why] ? whys + r * sizeof why : "a rank crashed");
        *all_in_time &= in_time[r];
    }
    for (int i = 0; i < RANKS; i++)
        for (int j = 0; j < RANKS; j++)
            if (i != j)
                close(socks[i][j]);
    return bad;
}

/* The baseline of the SEND worker's cost: ns per write() from the process of a 48-byte
 * header and AR_N * 8 payload bytes to a loopback socket whose peer o2g reads in softirq
 * (the messages land in its dump area). 0 if it could not be measured. */
static double user_send_ns(void)
{
    enum { N = 9 };
    int a, b, socks[2];
    struct rank me;
    static char msg[48 + AR_N * 8];
    if (tcp_pair(&a, &b))
        return 0;
    socks[1] = b;
    if (rank_open(&me, 0, 2, socks))
        return 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < N; i++) {
        struct mpe_wire w = {.type = MPE_W_EAGER,
                             .ctx = CTX,
                             .src = 1,
                             .tag = 50 + i,
                             .dst_world = 0,
                             .src_world = 1,
                             .len = AR_N * 8};
        mpe_wire_encode(&w, (uint8_t *)msg);
        if (write(a, msg, sizeof msg) != (ssize_t)sizeof msg)
            return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(me.k.fd);
    close(me.o2g);
    close(a);
    close(b);
    return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / N;
}

/* Case "xfer": an Ibcast-shaped and an Iallreduce-shaped graph over three processes give
 * the right data, under progress=tasklet and progress=ipi (one rank's RECVs are posted
 * after its messages came: taken from o2g's dump area). */
static int c_xfer(void)
{
    static const char *const policies[] = {"tasklet", "ipi"};
    int t;
    for (int p = 0; p < 2; p++) {
        set_progress(policies[p]);
        struct kacc_stats s0 = kt_kacc_stats();
        int r = job(0, &t);
        struct kacc_stats s1 = kt_kacc_stats();
        set_progress("tasklet");
        if (r)
            return fail_in(policies[p]);
        /* 1 + 2 bcast SENDs, 3 x 2 allreduce SENDs; as many RECVs */
        if (s1.sent - s0.sent != 9 || s1.received - s0.received != 9)
            return fail("%s: %llu SENDs, %llu RECVs completed, not 9 and 9", policies[p],
                        (unsigned long long)(s1.sent - s0.sent),
                        (unsigned long long)(s1.received - s0.received));
        printf("kmod: xfer/%s: a SEND from ready to in the socket: %.0f us on average (worker "
               "hop), %llu write_space resumes\n",
               policies[p], (double)(s1.send_ns - s0.send_ns) / 9 / 1000,
               (unsigned long long)(s1.write_space - s0.write_space));
    }
    printf("kmod: xfer: the same bytes written by the process: %.0f us per message\n",
           user_send_ns() / 1000);
    return 0;
}

/* Case "noprogress": the job's graphs complete while every process computes without any
 * call into the modules under progress=tasklet; under progress=poll they do not (the
 * baseline: the check would fail there), and finish once the processes call PROGRESS. */
static int c_noprogress(void)
{
    int t_tasklet, t_poll;
    set_progress("tasklet");
    if (job(1, &t_tasklet))
        return fail_in("tasklet");
    set_progress("poll");
    int r = job(1, &t_poll);
    set_progress("tasklet");
    if (r)
        return fail_in("poll");
    if (!t_tasklet)
        return fail("progress=tasklet: graphs not done after %d ms of computing", COMPUTE_MS);
    if (t_poll)
        return fail("progress=poll: graphs done without PROGRESS calls (the test sees nothing)");
    return 0;
}

/* One-node graph of rank `me` in `block`: a SEND (send) or RECV of bytes with tag. */
static int one_xfer(const struct rank *me, int send, void *buf, uint64_t bytes, int peer, int tag)
{
    struct cad_graph *g = rank_graph(me);
    struct cad_error e;
    int n =
        send ? cad_send(g, buf, bytes, peer, tag, CTX) : cad_recv(g, buf, bytes, peer, tag, CTX);
    cad_connect(g, CAD_NODE_START, n);
    cad_connect(g, n, CAD_NODE_END);
    return cad_finalize(g, &e) ? fail("finalize: %s", e.msg) : 0;
}

/* Issue the graph in `block`, wait for its end; its state, *error its status's error. */
static int issue_wait(struct rank *me, int *error)
{
    struct kacc_issue a;
    if (issue(&me->k, &a, 0))
        return -1;
    int run = wait_done(&me->k, a.slot);
    *error = me->k.st[a.slot].error;
    ioctl(me->k.fd, KACC_IOC_RELEASE, a.slot);
    return run;
}

/* Case "xerror": one process talking to itself (rank 0 of 4: its connection to "peer 1"
 * loops back to its own o2g, the other end attached as "peer 2"): a message longer than the RECV stops
 * the graph with -(KACC_EXFER + EMSGSIZE), whether the RECV waited for it (softirq) or it
 * waited in the dump area; a cancelled RECV leaves nothing posted in o2g; a message
 * over the eager limit goes as eager pieces and arrives whole, whether its RECV waited
 * or its pieces did (in the dump area); a SEND to a peer without connection is
 * refused. */
static int c_xerror(void)
{
    int a, b, socks[4] = {-1, -1, -1, -1}, err, run;
    struct rank me;
    struct kacc_issue ia;
    char *buf =
        mmap(NULL, EAGER + 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tcp_pair(&a, &b))
        return 1;
    socks[1] = a; /* SENDs to rank 1 go out on a */
    socks[2] = b; /* and come in on b: from rank 0 (their header), ourselves */
    if (rank_open(&me, 0, 4, socks))
        return 1;
    /* the RECV first: matched in softirq, too short */
    if (one_xfer(&me, 0, buf, PAGE, 0, 60) || issue(&me.k, &ia, 0))
        return fail("recv 60: %s", strerror(errno));
    if (one_xfer(&me, 1, buf + PAGE, 2 * PAGE, 1, 60) || issue_wait(&me, &err) != KACC_Q_DONE)
        return fail("send 60 did not complete");
    run = wait_done(&me.k, ia.slot);
    err = me.k.st[ia.slot].error;
    ioctl(me.k.fd, KACC_IOC_RELEASE, ia.slot);
    if (run != KACC_Q_CANCELLED || err != -(KACC_EXFER + EMSGSIZE))
        return fail("truncated in softirq: state %d error %d", run, err);
    /* the message first (dump area), then the RECV */
    if (one_xfer(&me, 1, buf + PAGE, 2 * PAGE, 1, 61) || issue_wait(&me, &err) != KACC_Q_DONE)
        return fail("send 61 did not complete");
    usleep(200 * 1000);
    if (one_xfer(&me, 0, buf, PAGE, 0, 61) || (run = issue_wait(&me, &err)) != KACC_Q_CANCELLED ||
        err != -(KACC_EXFER + EMSGSIZE))
        return fail("truncated from the dump area: state %d error %d", run, err);
    /* a RECV nobody sends to, cancelled */
    struct o2g_stats o0 = {0}, o1 = {0};
    ioctl(me.o2g, O2G_IOC_STATS, &o0);
    if (one_xfer(&me, 0, buf, PAGE, 0, 62) || issue(&me.k, &ia, 0))
        return fail("recv 62: %s", strerror(errno));
    usleep(100 * 1000);
    ioctl(me.o2g, O2G_IOC_STATS, &o1);
    if (o1.posted != o0.posted + 1)
        return fail("a RECV not posted in o2g: %llu, then %llu", (unsigned long long)o0.posted,
                    (unsigned long long)o1.posted);
    if (ioctl(me.k.fd, KACC_IOC_CANCEL, ia.slot) || me.k.st[ia.slot].run != KACC_Q_CANCELLED)
        return fail("cancel: state %u (%s)", me.k.st[ia.slot].run, strerror(errno));
    ioctl(me.o2g, O2G_IOC_STATS, &o1);
    if (o1.posted != o0.posted || ioctl(me.k.fd, KACC_IOC_RELEASE, ia.slot))
        return fail("after cancel: %llu posted in o2g, not %llu", (unsigned long long)o1.posted,
                    (unsigned long long)o0.posted);
    /* over the eager limit: two pieces, the RECV first, then the SEND first */
    size_t big = EAGER + PAGE / 2;
    char *src = mmap(NULL, 2 * big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *dst = src + big;
    for (int first = 0; first < 2; first++) {
        struct kacc_issue ib;
        fill(src, big, 64 + (unsigned)first);
        memset(dst, 0, big);
        if (!first && (one_xfer(&me, 0, dst, big, 0, 64) || issue(&me.k, &ib, 0)))
            return fail("recv of %zu: %s", big, strerror(errno));
        if (one_xfer(&me, 1, src, big, 1, 64) || issue_wait(&me, &err) != KACC_Q_DONE)
            return fail("send of %zu (the %s first): error %d", big, first ? "SEND" : "RECV", err);
        if (first) {
            usleep(200 * 1000);
            if (one_xfer(&me, 0, dst, big, 0, 64) || issue(&me.k, &ib, 0))
                return fail("recv of %zu: %s", big, strerror(errno));
        }
        run = wait_done(&me.k, ib.slot);
        err = me.k.st[ib.slot].error;
        ioctl(me.k.fd, KACC_IOC_RELEASE, ib.slot);
        if (run != KACC_Q_DONE || memcmp(src, dst, big))
            return fail("%zu bytes in pieces (the %s first): state %d error %d, %s", big,
                        first ? "SEND" : "RECV", run, err,
                        memcmp(src, dst, big) ? "data differ" : "data whole");
    }
    munmap(src, 2 * big);
    /* refusals */
    if (one_xfer(&me, 1, buf, 64, 3, 63) || issue(&me.k, &ia, 0) == 0 ||
        ia.err_code != KACC_ENOCONN)
        return fail("SEND without a connection: code %d \"%s\"", ia.err_code, ia.err_msg);
    return rank_drain(&me);
}

/* Case "xkilled": a process killed with a RECV that never comes and a SEND its peer
 * never reads (stuck in the socket) leaves no graph, no pinned page in kacc or o2g. */
static int c_xkilled(void)
{
    int a, b, pipefd[2];
    if (tcp_pair(&a, &b))
        return 1;
    if (pipe(pipefd))
        return fail("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        struct rank me;
        int socks[2] = {-1, a};
        struct kacc_issue ia;
        struct cad_error e;
        size_t big = EAGER; /* more than loopback's socket buffers take */
        char *buf =
            mmap(NULL, big + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (rank_open(&me, 0, 2, socks))
            _exit(1);
        for (int i = 0; i < 3; i++) {
            struct cad_graph *g = rank_graph(&me);
            int rv = cad_recv(g, buf + big, PAGE, 1, 30 + i, CTX);
            int s = cad_send(g, buf, big, 1, 40 + i, CTX);
            cad_connect(g, CAD_NODE_START, rv);
            cad_connect(g, CAD_NODE_START, s);
            cad_connect(g, rv, CAD_NODE_END);
            cad_connect(g, s, CAD_NODE_END);
            if (cad_finalize(g, &e) || issue(&me.k, &ia, 0))
                _exit(2);
        }
        usleep(300 * 1000); /* the first SEND is partly in the socket */
        ready_then_wait(pipefd[1]);
    }
    struct kacc_stats s;
    if (kill_when_ready(pipefd[0], pid, &s))
        return fail("child died before issuing");
    struct o2g_stats o = {0};
    int fd = open(O2G_DEV, O_RDWR);
    ioctl(fd, O2G_IOC_STATS, &o);
    close(fd);
    close(a);
    close(b);
    if (s.graphs < 3 || s.pinned == 0)
        return fail("before the kill: %llu graphs, %llu pages pinned", (unsigned long long)s.graphs,
                    (unsigned long long)s.pinned);
    if (o.pinned_pages || o.posted || o.attached)
        return fail("o2g after the kill: %llu pages pinned, %llu posted, %llu attached",
                    (unsigned long long)o.pinned_pages, (unsigned long long)o.posted,
                    (unsigned long long)o.attached);
    return 0;
}

/* Case "xlost": a RECV from a peer whose only connection fails ends its graph with
 * -(KACC_EXFER + ECONNRESET), whether it was posted before the failure (o2g fails what is
 * queued) or after it (o2g refuses it: queued, it would wait for good). Rank 0 of 4 as in
 * xerror; peer 2's connection (b) fails when a is shut for writing. */
static int c_xlost(void)
{
    int a, b, socks[4] = {-1, -1, -1, -1}, err, run;
    struct rank me;
    struct kacc_issue ia;
    char *buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const int lost = -(KACC_EXFER + ECONNRESET);
    if (tcp_pair(&a, &b))
        return 1;
    socks[1] = a;
    socks[2] = b;
    if (rank_open(&me, 0, 4, socks))
        return 1;
    if (one_xfer(&me, 0, buf, PAGE, 2, 70) || issue(&me.k, &ia, 0))
        return fail("recv 70: %s", strerror(errno));
    usleep(100 * 1000);
    if (me.k.st[ia.slot].run != KACC_Q_RUNNING)
        return fail("recv 70 ended before its connection did: state %u", me.k.st[ia.slot].run);
    shutdown(a, SHUT_WR);
    run = wait_done(&me.k, ia.slot);
    err = me.k.st[ia.slot].error;
    ioctl(me.k.fd, KACC_IOC_RELEASE, ia.slot);
    if (run != KACC_Q_CANCELLED || err != lost)
        return fail("posted before the failure: state %d error %d, not %d", run, err, lost);
    if (one_xfer(&me, 0, buf, PAGE, 2, 71) || issue(&me.k, &ia, 0))
        return fail("recv 71: %s", strerror(errno));
    run = wait_done(&me.k, ia.slot);
    err = me.k.st[ia.slot].error;
    if (run < KACC_Q_DONE) {
        ioctl(me.k.fd, KACC_IOC_CANCEL, ia.slot);
        ioctl(me.k.fd, KACC_IOC_RELEASE, ia.slot);
        return fail("posted after the failure: still waiting after %d ms", WAIT_MS);
    }
    ioctl(me.k.fd, KACC_IOC_RELEASE, ia.slot);
    if (run != KACC_Q_CANCELLED || err != lost)
        return fail("posted after the failure: state %d error %d, not %d", run, err, lost);
    /* the ring: the failed connection's end, nothing else */
    uint32_t head = __atomic_load_n(&me.ring->head, __ATOMIC_ACQUIRE);
    struct o2g_cqe e = me.cqe[me.tail & me.mask];
    if (head != me.tail + 1 || e.kind != O2G_CQE_CONN || e.src != 2)
        return fail("o2g ring: %u entries, the first of kind %u from %d", head - me.tail, e.kind,
                    e.src);
    __atomic_store_n(&me.ring->tail, head, __ATOMIC_RELEASE);
    close(a);
    close(b);
    return 0;
}

/* ---- hostile users (nobody, in the devices' group) ---- */

#define SMALL_DUMP (16 * PAGE) /* an o2g dump area that fits nobody's RLIMIT_MEMLOCK */

/* An o2g file set up with a dump area at dump (SMALL_DUMP bytes) and eager limit; its fd,
 * or -1 with errno. */
static int o2g_with(void *dump, uint64_t eager)
{
    struct o2g_setup s = {.dump_addr = (uintptr_t)dump, .dump_len = SMALL_DUMP, .max_eager = eager};
    int fd = open(O2G_DEV, O_RDWR);
    if (fd < 0 || ioctl(fd, O2G_IOC_SETUP, &s) == 0)
        return fd;
    int err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* Case "eager": o2g refuses an eager limit outside [O2G_MIN_EAGER, O2G_MAX_EAGER] (kacc
 * cuts messages into pieces of that size: 0 or 1 byte pieces, a stride that wraps), and
 * at the smallest one kacc's messages in many pieces still arrive whole. As nobody. */
static int c_eager(void)
{
    static const uint64_t bad[] = {
        0, 1, O2G_MIN_EAGER - 1, O2G_MAX_EAGER + 1, UINT64_MAX, UINT64_MAX - MPE_WIRE_HDR + 1};
    static const uint64_t good[] = {O2G_MIN_EAGER, O2G_MAX_EAGER};
    if (kt_as_user(1))
        return 1;
    void *dump = mmap(NULL, SMALL_DUMP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int fd = o2g_with(dump, bad[i]);
        if (fd >= 0 || errno != EINVAL) {
            if (fd >= 0)
                close(fd);
            return fail("o2g set up with eager limit %llu (errno %d)", (unsigned long long)bad[i],
                        fd >= 0 ? 0 : errno);
        }
    }
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int fd = o2g_with(dump, good[i]);
        if (fd < 0)
            return fail("eager limit %llu refused: %s", (unsigned long long)good[i],
                        strerror(errno));
        close(fd);
    }
    /* the smallest limit: a message of 5 pieces to ourselves, the RECV first */
    int a, b, socks[4] = {-1, -1, -1, -1}, err;
    struct rank me;
    struct kacc_issue ia;
    size_t bytes = 4 * O2G_MIN_EAGER + 100;
    char *src = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *dst = src + 2 * PAGE;
    if (tcp_pair(&a, &b))
        return 1;
    socks[1] = a;
    socks[2] = b;
    rank_eager = O2G_MIN_EAGER;
    if (rank_open(&me, 0, 4, socks))
        return 1;
    fill(src, bytes, 7);
    if (one_xfer(&me, 0, dst, bytes, 0, 80) || issue(&me.k, &ia, 0))
        return fail("recv in pieces: %s", strerror(errno));
    if (one_xfer(&me, 1, src, bytes, 1, 80) || issue_wait(&me, &err) != KACC_Q_DONE)
        return fail("send in pieces: error %d", err);
    int run = wait_done(&me.k, ia.slot);
    err = me.k.st[ia.slot].error;
    ioctl(me.k.fd, KACC_IOC_RELEASE, ia.slot);
    if (run != KACC_Q_DONE || memcmp(src, dst, bytes))
        return fail("%zu bytes in %u-byte pieces: state %d error %d, %s", bytes, O2G_MIN_EAGER, run,
                    err, memcmp(src, dst, bytes) ? "data differ" : "data whole");
    close(a);
    close(b);
    return rank_drain(&me);
}

#define KMEM_PARAM   "/sys/module/kacc/parameters/kmem_per_file"
#define KMEM_ASSUMED (64ull << 20) /* the bound if the parameter is missing (no fix) */
#define KMEM_SLACK   8192          /* a graph's kernel memory beyond its block, at most */

/* The module parameter bounding a file's kernel memory, or KMEM_ASSUMED. */
static uint64_t kmem_bound(void)
{
    unsigned long long v = KMEM_ASSUMED;
    FILE *f = fopen(KMEM_PARAM, "r");
    if (f && fscanf(f, "%llu", &v) != 1)
        v = KMEM_ASSUMED;
    if (f)
        fclose(f);
    return v;
}

/* Case "kmem": graphs of the largest block that pin nothing (START to END) are refused
 * with EDQUOT once a file's graphs hold kmem_per_file bytes of kernel memory, not
 * before; a released graph makes room again. As nobody. */
static int c_kmem(void)
{
    if (kt_as_user(1))
        return 1;
    uint64_t bound = kmem_bound();
    uint32_t edges = CAD_MAX_EDGES; /* the most that fit in KACC_MAX_GRAPH with NODES */
    while (edges && (!cad_bytes(NODES, edges) || cad_bytes(NODES, edges) > KACC_MAX_GRAPH))
        edges -= EDGES;
    size_t bytes = cad_bytes(NODES, edges);
    void *big = aligned_alloc(64, bytes);
    struct cad_owner own = {.rank = 0, .comm_size = 1, .part_base = 0, .part_size = kt_user_top()};
    struct cad_graph *g = cad_init(big, bytes, NODES, edges, &own);
    struct cad_error e;
    if (!g)
        return fail("no graph of %zu bytes", bytes);
    cad_connect(g, CAD_NODE_START, CAD_NODE_END);
    if (cad_finalize(g, &e))
        return fail("finalize: %s", e.msg);
    struct kacc k = kopen();
    struct kacc_issue a;
    unsigned slots[KACC_SLOTS];
    uint64_t most = bound / bytes + 2; /* beyond the bound: the module must have refused */
    unsigned n = 0;
    int refused = 0;
    while (n < most && n < KACC_SLOTS) {
        memset(&a, 0, sizeof a);
        a.graph = (uintptr_t)big;
        a.bytes = bytes;
        if (ioctl(k.fd, KACC_IOC_ISSUE, &a)) {
            refused = errno;
            break;
        }
        slots[n++] = a.slot;
    }
    if (refused != EDQUOT)
        return fail("%u graphs of %zu bytes issued (bound %llu), then errno %d, not EDQUOT", n,
                    bytes, (unsigned long long)bound, refused);
    if ((uint64_t)n * bytes > bound || (uint64_t)(n + 1) * (bytes + KMEM_SLACK) <= bound)
        return fail("refused after %u graphs of %zu bytes: not at the bound %llu", n, bytes,
                    (unsigned long long)bound);
    if (ioctl(k.fd, KACC_IOC_RELEASE, slots[n - 1]) || ioctl(k.fd, KACC_IOC_ISSUE, &a))
        return fail("no room after a release: %s", strerror(errno));
    if (wait_done(&k, a.slot) != KACC_Q_DONE)
        return fail("the graph issued after a release did not finish");
    return 0;
}

#define LOCKUP_THRESH "/proc/sys/kernel/watchdog_thresh"
#define LOCKUP_S      1           /* the soft lockup watchdog's threshold here (it reports at 2x) */
#define LONG_NODES    64          /* CALCs of the long graph, in a chain */
#define LONG_BYTES    (32u << 20) /* the buffers of each */
#define KLOG_BYTES    (1 << 20)

/* Soft lockup reports in the kernel log so far (klogctl: root only). */
static int lockups(void)
{
    static char log[KLOG_BYTES];
    int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof log - 1), c = 0;
    log[n > 0 ? n : 0] = 0;
    for (char *p = log; (p = strstr(p, "soft lockup")); p++)
        c++;
    return c;
}

/* The nobody side of "progress0": a chain of LONG_NODES sums of LONG_BYTES, issued held,
 * run by one KACC_IOC_PROGRESS with budget 0; the result checked. */
static int progress0_child(void)
{
    size_t n = LONG_BYTES / sizeof(double);
    double *in =
        mmap(NULL, 2 * LONG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double *acc = in + n;
    struct cad_error e;
    struct kacc_issue a;
    if (kt_as_user(1))
        return 1;
    for (size_t i = 0; i < n; i++) {
        in[i] = (double)(i % 1000);
        acc[i] = 1.0;
    }
    struct cad_graph *g = new_graph();
    int prev = CAD_NODE_START;
    for (int i = 0; i < LONG_NODES; i++) {
        int c = cad_calc(g, CAD_OP_SUM, CAD_T_DOUBLE, in, acc, n);
        cad_connect(g, prev, c);
        prev = c;
    }
    cad_connect(g, prev, CAD_NODE_END);
    if (cad_finalize(g, &e))
        return fail("finalize: %s", e.msg);
    struct kacc k = kopen();
    if (issue(&k, &a, KACC_ISSUE_HOLD))
        return fail("issue: %s", strerror(errno));
    long t0 = now_ms();
    if (ioctl(k.fd, KACC_IOC_PROGRESS, 0))
        return fail("PROGRESS: %s", strerror(errno));
    long took = now_ms() - t0;
    if (k.st[a.slot].run != KACC_Q_DONE)
        return fail("state %u after PROGRESS with budget 0", k.st[a.slot].run);
    for (size_t i = 0; i < n; i++)
        if (acc[i] != 1.0 + LONG_NODES * (double)(i % 1000))
            return fail("element %zu: %g", i, acc[i]);
    printf("kmod: progress0: %d x %u MiB summed in %ld ms\n", LONG_NODES, LONG_BYTES >> 20, took);
    return 0;
}

/* Case "progress0": KACC_IOC_PROGRESS with budget 0 (all there is) of a graph of
 * seconds of CALCs, as nobody, completes it without holding the CPU in one stretch: no
 * soft lockup report, with the watchdog's threshold lowered to LOCKUP_S meanwhile (and
 * RLIMIT_MEMLOCK raised for the pins, as root, before becoming nobody). */
static int c_progress0(void)
{
    char old[32] = "10";
    struct rlimit lim = {RLIM_INFINITY, RLIM_INFINITY};
    FILE *f = fopen(LOCKUP_THRESH, "r");
    if (!f || !fgets(old, sizeof old, f))
        return fail("no %s", LOCKUP_THRESH);
    fclose(f);
    if (setrlimit(RLIMIT_MEMLOCK, &lim))
        return fail("RLIMIT_MEMLOCK: %s", strerror(errno));
    int before = lockups();
    f = fopen(LOCKUP_THRESH, "w");
    if (!f || fprintf(f, "%d\n", LOCKUP_S) < 0 || fclose(f))
        return fail("cannot set %s", LOCKUP_THRESH);
    int bad = kt_child("progress0", progress0_child);
    sleep(2 * LOCKUP_S); /* a report comes at the watchdog's next check */
    f = fopen(LOCKUP_THRESH, "w");
    if (f) {
        fputs(old, f);
        fclose(f);
    }
    int after = lockups();
    if (after != before)
        return fail("%d soft lockup report(s) while the graph ran", after - before);
    return bad ? fail("the nobody side failed (its line above)") : 0;
}

#define TRAFFIC    (16u << 20) /* bytes written on the accepted socket: beyond its buffers */
#define SNDTIMEO_S 3           /* a blocking write that waited this long was not woken */
#define RCVTIMEO_S 60          /* the reader's patience */

/* Write len bytes on fd, blocking; 0, or -1 if a write failed or waited SNDTIMEO_S for
 * room (SO_SNDTIMEO: it returns short then) without being woken. */
static int write_all(int fd, const char *p, size_t len)
{
    struct timeval tv = {.tv_sec = SNDTIMEO_S};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    while (len) {
        long t0 = now_ms();
        ssize_t w = write(fd, p, len);
        if (w <= 0 || ((size_t)w < len && now_ms() - t0 >= SNDTIMEO_S * 1000))
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Read len bytes from fd (within RCVTIMEO_S per read); 0 or -1. */
static int read_all(int fd, char *p, size_t len)
{
    struct timeval tv = {.tv_sec = RCVTIMEO_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* A client connected to the listener l (loopback, its port); the accepted end in *acc. */
static int connect_to(int l, int *acc)
{
    struct sockaddr_in sa;
    socklen_t al = sizeof sa;
    if (getsockname(l, (struct sockaddr *)&sa, &al))
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa))
        return -1;
    *acc = accept(l, NULL, NULL);
    return *acc < 0 ? -1 : c;
}

/* Case "listen": a socket given to kacc (KACC_IOC_CONN) that the process disconnects
 * (connect AF_UNSPEC) and makes a listener: the connections it accepts copied kacc's
 * sk_write_space. After the kacc file is closed, a blocking write of more than the
 * socket buffers on an accepted one and reads work (its writer is woken), the listener
 * accepts again, and the kernel reports nothing. kacc refuses sockets that are not
 * established. As nobody. */
static int c_listen(void)
{
    int a, b, socks[2] = {-1, -1};
    struct rank me;
    if (kt_as_user(1))
        return 1;
    if (tcp_pair(&a, &b) || rank_open(&me, 0, 2, socks))
        return 1;
    struct kacc_conn_arg ca = {.fd = a, .peer = 1};
    if (ioctl(me.k.fd, KACC_IOC_CONN, &ca))
        return fail("KACC_IOC_CONN: %s", strerror(errno));
    struct sockaddr un = {.sa_family = AF_UNSPEC};
    if (connect(a, &un, sizeof un) || listen(a, 4))
        return fail("disconnect and listen: %s", strerror(errno));
    int child, child2;
    int c = connect_to(a, &child);
    if (c < 0)
        return fail("connect to the listener: %s", strerror(errno));
    munmap((void *)me.k.st, KACC_MAP_BYTES);
    close(me.k.fd); /* the kacc file's release */
    char *out = malloc(TRAFFIC), *in = malloc(TRAFFIC);
    fill(out, TRAFFIC, 9);
    pid_t pid = fork();
    if (pid == 0) /* the client reads what the accepted socket writes */
        _exit(read_all(c, in, TRAFFIC) || memcmp(in, out, TRAFFIC) ? 1 : 0);
    int wr = write_all(child, out, TRAFFIC), st = 0;
    waitpid(pid, &st, 0);
    if (wr)
        return fail("a blocking write on the accepted socket waited %d s unwoken", SNDTIMEO_S);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        return fail("the client did not read what the accepted socket wrote");
    if (write_all(c, out, PAGE) || read_all(child, in, PAGE) || memcmp(in, out, PAGE))
        return fail("reading on the accepted socket: %s", strerror(errno));
    int c2 = connect_to(a, &child2);
    if (c2 < 0 || write_all(child2, out, PAGE) || read_all(c2, in, PAGE))
        return fail("the listener after the kacc file's release: %s", strerror(errno));
    close(c2);
    close(child2);
    close(c);
    close(child);
    close(b);
    close(a);
    /* not established: refused */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct rank me2;
    if (rank_open(&me2, 0, 2, socks))
        return 1;
    ca.fd = s;
    if (ioctl(me2.k.fd, KACC_IOC_CONN, &ca) == 0 || errno != ENOTCONN)
        return fail("an unconnected socket taken (errno %d)", errno);
    return 0;
}

#define RAMFS "/mnt/r/kacc" /* kacc-init mounts a ramfs at /mnt/r: not shmem */
#define TMPFS "/mnt/t/kacc" /* ... and a tmpfs at /mnt/t: shmem */

/* A mapping of 4 pages of file path (flags: MAP_SHARED or MAP_PRIVATE), or NULL. */
static char *map_file(const char *path, int flags)
{
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, 4 * PAGE))
        return NULL;
    char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, flags, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* Issue a CALC (bxor of a page of in into out) and wait: 0 if it ran right, else -1 with
 * errno, a->err_* filled on a refusal. */
static int calc_on(struct kacc *k, char *in, char *out, struct kacc_issue *a)
{
    struct cad_graph *g = new_graph();
    struct cad_error e;
    int n = cad_calc(g, CAD_OP_BXOR, CAD_T_BYTE, in, out, PAGE);
    cad_connect(g, CAD_NODE_START, n);
    cad_connect(g, n, CAD_NODE_END);
    cad_finalize(g, &e);
    memset(in, 0x5a, PAGE);
    memset(out, 0x0f, PAGE);
    if (issue(k, a, 0))
        return -1;
    int run = wait_done(k, a->slot);
    ioctl(k->fd, KACC_IOC_RELEASE, a->slot);
    errno = 0;
    return run == KACC_Q_DONE && out[0] == (0x5a ^ 0x0f) && out[PAGE - 1] == (0x5a ^ 0x0f) ? 0 : -1;
}

/* Case "pinfile": a buffer in a shared mapping of a file not in shmem (ramfs) is refused
 * for kacc's long-term pins (CAD_EBUF) and for o2g's (dump area, POST: EOPNOTSUPP);
 * anonymous memory, shared anonymous memory, a tmpfs file and a private file mapping
 * still work. As nobody. */
static int c_pinfile(void)
{
    if (kt_as_user(1))
        return 1;
    struct kacc k = kopen();
    struct kacc_issue a;
    char *anon = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *sanon = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *ram = map_file(RAMFS, MAP_SHARED), *ramp = map_file(RAMFS, MAP_PRIVATE);
    char *tmp = map_file(TMPFS, MAP_SHARED);
    if (!ram || !ramp || !tmp)
        return fail("cannot map files in %s and %s: %s", RAMFS, TMPFS, strerror(errno));
    if (calc_on(&k, anon, ram, &a) == 0 || errno != EINVAL || a.err_code != CAD_EBUF)
        return fail("inout in a shared ramfs mapping: errno %d code %d \"%s\"", errno, a.err_code,
                    a.err_msg);
    if (calc_on(&k, ram, anon, &a) == 0 || errno != EINVAL || a.err_code != CAD_EBUF)
        return fail("in in a shared ramfs mapping: errno %d code %d", errno, a.err_code);
    char *const ok_in[] = {anon, sanon, tmp, ramp};
    static const char *const names[] = {"anonymous", "shared anonymous", "tmpfs", "private ramfs"};
    for (int i = 0; i < 4; i++)
        if (calc_on(&k, ok_in[i] + 2 * PAGE, ok_in[i], &a))
            return fail("a %s buffer: errno %d code %d \"%s\"", names[i], errno, a.err_code,
                        a.err_msg);
    /* o2g: a dump area there, a POST buffer there */
    int fd = open(RAMFS "-dump", O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, SMALL_DUMP))
        return fail("ramfs dump file: %s", strerror(errno));
    char *dump = mmap(NULL, SMALL_DUMP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    int o = o2g_with(dump, O2G_MIN_EAGER);
    if (o >= 0 || errno != EOPNOTSUPP)
        return fail("o2g dump area in a shared ramfs mapping: fd %d errno %d", o, errno);
    void *adump =
        mmap(NULL, SMALL_DUMP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    o = o2g_with(adump, O2G_MIN_EAGER);
    if (o < 0)
        return fail("o2g with an anonymous dump area: %s", strerror(errno));
    struct o2g_post p = {
        .cookie = 1, .buf = (uintptr_t)ram, .len = PAGE, .ctx = CTX, .src = 0, .tag = 1};
    if (ioctl(o, O2G_IOC_POST, &p) == 0 || errno != EOPNOTSUPP)
        return fail("o2g POST into a shared ramfs mapping: errno %d", errno);
    p.buf = (uintptr_t)tmp;
    if (ioctl(o, O2G_IOC_POST, &p))
        return fail("o2g POST into a tmpfs mapping: %s", strerror(errno));
    close(o);
    return 0;
}

#define XCLOSE_WAIT_MS 30000 /* the killed process's release must end before this */
#define XCLOSE_HALF    PAGE  /* payload bytes of the message its RECV is bound to, of 2x */

/* Case "xclose": a process killed with a RECV bound to a message whose sender stopped
 * halfway and a SEND its peer does not read (zero window): its release ends (the
 * process is reaped within XCLOSE_WAIT_MS) and leaves no graph, no pinned page in kacc
 * or o2g. As nobody. */
static int c_xclose(void)
{
    int a, b, c, d, pipefd[2];
    if (tcp_pair(&a, &b) || tcp_pair(&c, &d) || pipe(pipefd))
        return 1;
    /* peer 2's message on d: its header and half of its payload, then nothing */
    static uint8_t msg[MPE_WIRE_HDR + XCLOSE_HALF];
    struct mpe_wire w = {.type = MPE_W_EAGER,
                         .ctx = CTX,
                         .src = 2,
                         .tag = 50,
                         .src_world = 2,
                         .dst_world = 0,
                         .len = 2 * XCLOSE_HALF};
    mpe_wire_encode(&w, msg);
    if (write(d, msg, sizeof msg) != (ssize_t)sizeof msg)
        return fail("write the half message: %s", strerror(errno));
    struct o2g_stats o0 = kt_o2g_stats(), o1;
    pid_t pid = fork();
    if (pid == 0) { /* the hostile process: nobody, in the devices' group */
        struct rank me;
        int socks[3] = {-1, a, c};
        struct kacc_issue ia;
        struct cad_error e;
        size_t big = EAGER; /* more than loopback's socket buffers take */
        uint32_t ms = 1;
        close(pipefd[0]);
        if (kt_as_user(1))
            _exit(1);
        char *buf = mmap(NULL, big + 2 * XCLOSE_HALF, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED || rank_open(&me, 0, 3, socks))
            _exit(1);
        ioctl(me.o2g, O2G_IOC_WAIT, &ms); /* o2g reads the half message (an ioctl kicks) */
        struct cad_graph *g = rank_graph(&me);
        int rv = cad_recv(g, buf + big, 2 * XCLOSE_HALF, 2, 50, CTX);
        int s = cad_send(g, buf, big, 1, 51, CTX);
        cad_connect(g, CAD_NODE_START, rv);
        cad_connect(g, CAD_NODE_START, s);
        cad_connect(g, rv, CAD_NODE_END);
        cad_connect(g, s, CAD_NODE_END);
        if (cad_finalize(g, &e) || issue(&me.k, &ia, 0))
            _exit(2);
        ready_then_wait(pipefd[1]);
    }
    close(pipefd[1]); /* the child's end only: its death ends the read below */
    char ch;
    if (read(pipefd[0], &ch, 1) != 1) {
        int st = 0;
        waitpid(pid, &st, 0);
        return fail("the process ended (status %d) before it issued its graph",
                    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    /* The RECV is bound to the arriving message, and the SEND's bytes wait in a socket
     * whose peer never reads (b's receive queue stops growing at its window). */
    int bound = 0, stuck = 0, queued = -1;
    for (long end = now_ms() + XCLOSE_WAIT_MS; now_ms() < end && !(bound && stuck);) {
        o1 = kt_o2g_stats();
        bound = o1.deferred > o0.deferred;
        int q = 0, out = 0;
        ioctl(b, FIONREAD, &q);
        ioctl(a, SIOCOUTQ, &out);
        stuck = out > 0 && q > 0 && q == queued;
        queued = q;
        usleep(50 * 1000); /* a poll of the two conditions, not an ordering */
    }
    if (!bound || !stuck)
        return fail("before the kill: the RECV %s bound, the SEND %s stuck", bound ? "" : "not",
                    stuck ? "" : "not");
    struct kacc_stats s0 = kt_kacc_stats();
    kill(pid, SIGKILL);
    long end = now_ms() + XCLOSE_WAIT_MS;
    int reaped = 0;
    while (!(reaped = waitpid(pid, NULL, WNOHANG) == pid) && now_ms() < end)
        usleep(50 * 1000);
    struct kacc_stats s = kt_kacc_stats();
    struct o2g_stats o = kt_o2g_stats();
    if (s0.graphs == 0 || s0.pinned == 0)
        return fail("before the kill: %llu graphs, %llu pages pinned",
                    (unsigned long long)s0.graphs, (unsigned long long)s0.pinned);
    if (!reaped)
        return fail("the killed process's release still waits after %d ms: %llu graphs, %llu "
                    "pages pinned",
                    XCLOSE_WAIT_MS, (unsigned long long)s.graphs, (unsigned long long)s.pinned);
    if (s.graphs || s.pinned || o.pinned_pages || o.posted || o.attached)
        return fail("after the release: kacc %llu graphs %llu pinned, o2g %llu pinned %llu posted "
                    "%llu attached",
                    (unsigned long long)s.graphs, (unsigned long long)s.pinned,
                    (unsigned long long)o.pinned_pages, (unsigned long long)o.posted,
                    (unsigned long long)o.attached);
    close(a);
    close(b);
    close(c);
    close(d);
    return 0;
}

/* `kacctest hold SECONDS`: graphs issued and held until killed (the rmmod case). */
static int hold(int seconds)
{
    struct kacc k = kopen();
    char *buf = mmap(NULL, 4 * ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    load(&k, buf, 8);
    printf("running\n");
    fflush(stdout);
    sleep((unsigned)seconds);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void);
} cases[] = {
    {"refuse", c_refuse},   {"calc", c_calc},       {"status", c_status},
    {"cancel", c_cancel},   {"ipi", c_ipi},         {"poll", c_poll},
    {"killed", c_killed},   {"memlock", c_memlock}, {"stress", c_stress},
    {"xfer", c_xfer},       {"xerror", c_xerror},   {"noprogress", c_noprogress},
    {"xkilled", c_xkilled}, {"userop", c_userop},   {"xlost", c_xlost},
    {"eager", c_eager},     {"kmem", c_kmem},       {"progress0", c_progress0},
    {"listen", c_listen},   {"pinfile", c_pinfile}, {"xclose", c_xclose},
};

/* Run one case in a child (a crash fails the case, not the run), then check leftovers. */
static int run_case(const char *name, int (*fn)(void))
{
    if (kt_child(name, fn))
        return 1;
    struct kacc_stats s = kt_kacc_stats();
    if (s.graphs || s.pinned) {
        printf("FAIL %s: left %llu graphs, %llu pages pinned\n", name, (unsigned long long)s.graphs,
               (unsigned long long)s.pinned);
        return 1;
    }
    printf("ok %s\n", name);
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "hold"))
        return hold(atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "stats")) {
        struct kacc_stats s = kt_kacc_stats();
        printf("graphs %llu pinned %llu issued %llu refused %llu finished %llu cancelled %llu "
               "calc %llu local %llu ipi %llu home %llu polled %llu slices %llu sent %llu "
               "received %llu write_space %llu send_ns %llu user %llu\n",
               s.graphs, s.pinned, s.issued, s.refused, s.finished, s.cancelled, s.calc, s.local,
               s.ipi, s.home, s.polled, s.slices, s.sent, s.received, s.write_space, s.send_ns,
               s.user);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        size_t c = 0;
        while (c < sizeof cases / sizeof cases[0] && strcmp(cases[c].name, argv[i]))
            c++;
        if (c == sizeof cases / sizeof cases[0]) {
            printf("FAIL %s: no such case\n", argv[i]);
            failed++;
            continue;
        }
        failed += run_case(cases[c].name, cases[c].fn);
    }
    return failed;
}
