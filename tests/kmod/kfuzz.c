/*
 * kfuzz: a random ioctl-sequence test of host-kmod/o2g and host-kmod/kacc (syzkaller in
 * spirit, small and self-contained), run by tests/kmod/run.sh (o2g/fuzz) and
 * tests/kmod/kacc.sh (kacc/fuzz) inside their Debian guests, never on the host.
 *
 *   kfuzz o2g|kacc SEED SECONDS [--ops N] [--avoid LIST] [--trace FILE]
 *
 * As root it forks the fuzzer, which becomes nobody in the devices' group (kt_as_user(1):
 * the hostile but admitted user), and watches it. The fuzzer runs 2-4 threads on one table
 * of objects (files of /dev/o2g and /dev/kacc, loopback TCP sockets, buffers); each thread
 * loops: pick an operation by weighted random choice, pick its arguments (mostly valid,
 * sometimes edge values: 0, 1, page-1, huge, ~0, unmapped or read-only memory, closed or
 * foreign fds), run it. Operations: open, SETUP, mmap/munmap of the rings, socket pairs,
 * ATTACH/DETACH of any socket (connected, listening, unconnected, shut down, closed,
 * disconnected with connect(AF_UNSPEC)), bytes and native headers written into the peer
 * end, POST/CANCEL/FREE/WAIT, reading the ring and freeing its records, kacc ISSUE of
 * graphs built with mpi/cad's builder (valid, then some randomly mutated), CANCEL,
 * RELEASE, KICK, PROGRESS, USER_DONE, KACC_IOC_O2G/CONN, close in random order, fork (the
 * child runs its own operations and exits or is killed). Errors returned by the modules
 * are expected and ignored: what counts is the kernel log (the guest script checks it),
 * the fuzzer ending in time (a process stuck in a module is a bug) and the modules
 * holding nothing once every file is closed (checked here).
 *
 * Bounds: SECONDS of wall clock for the operations, at most N operations over all threads
 * and processes (--ops, default 1000000), no operation blocks for long (sockets are
 * non-blocking, waits and polls take at most 30 ms); after the budget the fuzzer closes
 * everything and must exit within KF_GRACE seconds, else it is reported stuck with the
 * kernel stacks of its processes.
 *
 * Reproducing: SEED fixes every thread's and child's sequence of choices (each has its
 * own generator derived from SEED), so `kfuzz o2g SEED SECONDS` replays the run; with
 * threads racing the interleaving differs, so a race may need a few runs. The last
 * KF_TLINES operations of every thread and process (with the guest's monotonic time, the
 * clock of the kernel log) are written to the trace file (--trace, /tmp/kfuzz.trace).
 *
 * --avoid LIST (comma-separated, or "none") leaves out the operation families of known,
 * still open module bugs, so that the case stays useful until they are fixed:
 *   listen     an attached socket (or one that was) disconnected with connect(AF_UNSPEC)
 *              and made a listener: its children inherit o2g's callbacks (use after free)
 *   max_eager  O2G_IOC_SETUP with an eager limit beyond the dump area (huge, ~0) or tiny
 *              (1..1023): unchecked, it overflows kacc's piece arithmetic
 *   release    messages left half-written on a connection (a header without all of its
 *              payload): a kacc RECV being filled by one makes the kacc file's release
 *              wait for it without bound
 *   mmap       mmap() of a device file while another thread of the process is in one of
 *              its ioctls (found by kfuzz): o2g_mmap takes the file's mutex under the
 *              mm's mmap_lock, SETUP and POST take mmap_lock (account_locked_vm,
 *              pinning) under that mutex: an ABBA deadlock, both threads stuck for good
 *   xfer_size  a mutated graph whose SEND or RECV names more than 256 MiB (found by
 *              kfuzz): kacc_net_prepare sizes its piece array from the byte count before
 *              kacc_prepare refuses it (a kvmalloc WARNING past INT_MAX bytes, an
 *              uncharged allocation below)
 * kfuzz itself avoids none of them unless told; the guest scripts pass kfuzz_avoid= from
 * the kernel command line: tests/kmod/guestlib.sh's KMOD_FUZZ_AVOID, which by default
 * avoids all of them until the modules are fixed (then drop each from that default).
 *
 * Output: "kfuzz: ..." lines (the seed, what ran), then "kfuzz: clean" or "kfuzz: FAIL
 * why"; exit status 0 or 1.
 */
#define _GNU_SOURCE
#include "../../host-kmod/kacc/kacc_uapi.h"
#include "../../host-kmod/o2g/o2g_uapi.h"
#include "cad.h"
#include "kt.h"
#include "mpe_wire.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE       4096
#define KF_GRACE   45 /* seconds the fuzzer may take to close everything and exit */
#define KF_FILES   10 /* device files in the table */
#define KF_SOCKS   40 /* sockets in the table */
#define KF_ORPHANS 16 /* ring mappings left behind by closed files */
#define KF_KIDS    3  /* forked children alive at once */
#define KF_POOL    8  /* valid read-write buffers */
#define KF_POOLB   (16 * PAGE)
#define KF_NODES   24 /* graph capacity */
#define KF_EDGES   96
#define KF_TSLOTS  256 /* trace rings: threads and processes */
#define KF_TLINES  48  /* operations kept per ring */
#define KF_TLEN    144
#define PARAM      "/sys/module/kacc/parameters/progress"

enum { AV_LISTEN = 1, AV_MAX_EAGER = 2, AV_RELEASE = 4, AV_MMAP = 8, AV_XFER_SIZE = 16 };
static unsigned avoid;
static int kacc_mode;
static uint64_t seed;
static long budget_s;
static uint64_t max_ops = 1000000;
static const char *trace_path = "/tmp/kfuzz.trace";

/* ---- random choices: xorshift64*, one generator per thread and process ---- */

struct rng {
    uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

static uint64_t below(struct rng *r, uint64_t n)
{
    return n ? rnd(r) % n : 0;
}

static int chance(struct rng *r, int pct)
{
    return (int)below(r, 100) < pct;
}

static struct rng rng_for(uint64_t s, uint64_t stream)
{
    struct rng r = {s * 0x9e3779b97f4a7c15ull + stream * 0xbf58476d1ce4e5b9ull + 1};
    for (int i = 0; i < 8; i++)
        rnd(&r);
    return r;
}

/* An edge value for a size or count: 0, 1, around a page, huge, ~0. */
static uint64_t edge_u64(struct rng *r)
{
    static const uint64_t v[] = {0,           1,
                                 PAGE - 1,    PAGE,
                                 PAGE + 1,    1024,
                                 65535,       1u << 20,
                                 1u << 26,    (1ull << 26) + PAGE,
                                 0x7fffffff,  0x80000000,
                                 0xffffffffu, 1ull << 40,
                                 ~0ull >> 1,  ~0ull - PAGE + 1,
                                 ~0ull};
    return v[below(r, sizeof v / sizeof v[0])];
}

/* ---- the trace: a ring of the last operations per thread, in shared memory ---- */

struct tring {
    int pid, used;
    uint32_t next;
    char line[KF_TLINES][KF_TLEN];
};

/* Operation names and counters (every process adds to them). */
enum op {
    OP_OPEN_O2G,
    OP_SETUP,
    OP_MAP_RING,
    OP_UNMAP,
    OP_PAIR,
    OP_ODD_SOCK,
    OP_ATTACH,
    OP_DETACH,
    OP_ABUSE,
    OP_LISTEN,
    OP_WRITE,
    OP_READ,
    OP_POST,
    OP_CANCEL,
    OP_FREE,
    OP_DRAIN,
    OP_WAIT,
    OP_POLL,
    OP_BADIOCTL,
    OP_CLOSE_FILE,
    OP_CLOSE_SOCK,
    OP_FORK,
    OP_REAP,
    OP_MEM,
    OP_OPEN_KACC,
    OP_KMAP,
    OP_KO2G,
    OP_KCONN,
    OP_ISSUE,
    OP_KCANCEL,
    OP_KRELEASE,
    OP_KPROGRESS,
    OP_KKICK,
    OP_KUSER,
    OP_N
};
static const char *const op_name[OP_N] = {
    "open_o2g", "setup",   "map_ring", "unmap",     "pair",     "odd_sock", "attach",
    "detach",   "abuse",   "listen",   "write",     "read",     "post",     "cancel",
    "free",     "drain",   "wait",     "poll",      "badioctl", "close",    "close_sock",
    "fork",     "reap",    "mem",      "open_kacc", "kmap",     "ko2g",     "kconn",
    "issue",    "kcancel", "krelease", "kprogress", "kkick",    "kuser"};

struct shared {
    uint64_t ops, tried[OP_N];
    int nrings;
    struct tring ring[KF_TSLOTS];
};
static struct shared *sh;
static __thread struct tring *my_ring;
static __thread char *cur_line;

static void ring_take(void)
{
    int i = __atomic_fetch_add(&sh->nrings, 1, __ATOMIC_RELAXED);
    my_ring = i < KF_TSLOTS ? &sh->ring[i] : NULL;
    if (my_ring) {
        my_ring->pid = (int)getpid();
        my_ring->used = 1;
    }
}

/* Record an operation before it runs (so a hang or an oops still shows it), with the
 * time of the kernel log. trace_rc completes the line afterwards. */
static void trace(const char *fmt, ...)
{
    struct timespec t;
    va_list ap;
    if (!my_ring) {
        cur_line = NULL;
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    cur_line = my_ring->line[my_ring->next++ % KF_TLINES];
    int n = snprintf(cur_line, KF_TLEN, "[%5ld.%06ld] ", (long)t.tv_sec, t.tv_nsec / 1000);
    va_start(ap, fmt);
    vsnprintf(cur_line + n, KF_TLEN - (size_t)n, fmt, ap);
    va_end(ap);
}

static long trace_rc(long rc)
{
    if (cur_line) {
        size_t n = strlen(cur_line);
        if (rc < 0)
            snprintf(cur_line + n, KF_TLEN - n, " = %s", strerrorname_np(errno));
        else
            snprintf(cur_line + n, KF_TLEN - n, " = %ld", rc);
    }
    return rc;
}

/* ---- the table of objects, shared by the threads of a process ---- */

enum fkind { F_NONE, F_O2G, F_KACC };
struct kfile {
    enum fkind kind;
    int fd;
    /* o2g */
    int ready;
    uint32_t entries, ring_bytes, tail;
    void *ring;
    size_t ring_len;
    void *dump;
    size_t dump_len;
    uint64_t max_eager;
    uint64_t conns; /* bitmap of the connection ids ATTACH returned */
    /* kacc */
    void *st;
    size_t st_len;
    uint64_t slots[KACC_SLOTS / 64]; /* slots ISSUE returned */
};

enum skind { S_NONE, S_RX, S_TX, S_LISTEN, S_OTHER };
struct ksock {
    enum skind kind;
    int fd, peer; /* peer: the other end's index or -1 */
    int attached; /* ever attached (the listen family) */
    int mine;     /* made by this process (the release family: who may write) */
    in_port_t port;
};

struct orphan {
    void *addr;
    size_t len;
};

/* avoid=mmap: mmap() alone (write side), every other operation on the read side */
static pthread_rwlock_t maplock = PTHREAD_RWLOCK_INITIALIZER;

static struct {
    pthread_mutex_t lock;  /* the table; never held across a call that may block */
    pthread_mutex_t wlock; /* avoid=release: whole messages, one writer at a time */
    struct kfile f[KF_FILES];
    struct ksock s[KF_SOCKS];
    struct orphan orph[KF_ORPHANS];
    pid_t kids[KF_KIDS];
    unsigned char *pool[KF_POOL]; /* read-write, never unmapped */
    unsigned char *ro;            /* read-only page */
    unsigned char *hole;          /* an unmapped page between two mapped ones */
    unsigned char *memfd_buf;     /* MAP_SHARED memfd pages */
    int is_child;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER, .wlock = PTHREAD_MUTEX_INITIALIZER};

static long deadline_ms, start_ms;

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void lock(void)
{
    pthread_mutex_lock(&T.lock);
}

static void unlock(void)
{
    pthread_mutex_unlock(&T.lock);
}

/* A random used file slot of kind k (F_NONE: any), or -1. Table locked. */
static int pick_file(struct rng *r, enum fkind k)
{
    int idx[KF_FILES], n = 0;
    for (int i = 0; i < KF_FILES; i++)
        if (T.f[i].kind != F_NONE && (k == F_NONE || T.f[i].kind == k))
            idx[n++] = i;
    return n ? idx[below(r, (uint64_t)n)] : -1;
}

static int pick_sock(struct rng *r, enum skind k)
{
    int idx[KF_SOCKS], n = 0;
    for (int i = 0; i < KF_SOCKS; i++)
        if (T.s[i].kind != S_NONE && (k == S_NONE || T.s[i].kind == k))
            idx[n++] = i;
    return n ? idx[below(r, (uint64_t)n)] : -1;
}

static int free_sock_slot(void)
{
    for (int i = 0; i < KF_SOCKS; i++)
        if (T.s[i].kind == S_NONE)
            return i;
    return -1;
}

/* A file descriptor for an argument: mostly one of kind k, sometimes anything (a socket,
 * the other device, a closed number, -1). */
static int any_fd(struct rng *r, enum fkind k)
{
    int i;
    lock();
    switch (below(r, 10)) {
    case 0:
        i = pick_sock(r, S_NONE);
        i = i < 0 ? -1 : T.s[i].fd;
        break;
    case 1:
        i = pick_file(r, F_NONE);
        i = i < 0 ? -1 : T.f[i].fd;
        break;
    case 2:
        i = (int)below(r, 3) == 0 ? -1 : (int)below(r, 1100);
        break;
    default:
        i = pick_file(r, k);
        i = i < 0 ? -1 : T.f[i].fd;
    }
    unlock();
    return i;
}

/* A buffer for a receive, a graph node or a setup: where and how long. Mostly a valid
 * read-write region; else read-only, a hole, NULL, a kernel address, a fresh mapping the
 * caller unmaps after the call (*transient), the memfd pages, or a ring. */
static uint64_t pick_buf(struct rng *r, uint64_t *len, void **transient, size_t *tlen)
{
    unsigned char *b = T.pool[below(r, KF_POOL)];
    uint64_t max = KF_POOLB;
    *transient = NULL;
    switch (below(r, 20)) {
    case 0:
        b = T.ro, max = PAGE;
        break;
    case 1:
        b = T.hole, max = PAGE;
        break;
    case 2:
        b = NULL;
        break;
    case 3:
        *len = below(r, 2) ? PAGE : edge_u64(r);
        return 0xffff888000000000ull + below(r, 1 << 20);
    case 4: {
        size_t n = (1 + below(r, 8)) * PAGE;
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            memset(p, 0x5a, n);
            *transient = p, *tlen = n, b = p, max = n;
        }
        break;
    }
    case 5:
        b = T.memfd_buf, max = 4 * PAGE;
        break;
    case 6: {
        lock();
        int i = pick_file(r, F_NONE);
        if (i >= 0 && T.f[i].ring)
            b = T.f[i].ring, max = T.f[i].ring_len;
        else if (i >= 0 && T.f[i].st)
            b = T.f[i].st, max = T.f[i].st_len;
        unlock();
        break;
    }
    }
    uint64_t off = below(r, 4) ? 0 : below(r, max);
    switch (below(r, 12)) {
    case 0:
        *len = 0;
        break;
    case 1:
        *len = edge_u64(r);
        break;
    case 2:
        *len = max - off + below(r, 2 * PAGE); /* past the end */
        break;
    default:
        *len = 1 + below(r, max - off);
    }
    return (uint64_t)(uintptr_t)b + off;
}

static void drop_transient(void *p, size_t n)
{
    if (p)
        munmap(p, n);
}

/* ---- o2g operations ---- */

static void op_open(struct rng *r, enum fkind k)
{
    lock();
    int i = 0;
    while (i < KF_FILES && T.f[i].kind != F_NONE)
        i++;
    if (i == KF_FILES) {
        unlock();
        return;
    }
    T.f[i].kind = k; /* reserved while opening */
    T.f[i].fd = -1;
    unlock();
    trace("open %s", k == F_O2G ? O2G_DEV : KACC_DEV);
    int fd = (int)trace_rc(open(k == F_O2G ? O2G_DEV : KACC_DEV, O_RDWR | O_CLOEXEC));
    lock();
    if (fd < 0) {
        T.f[i].kind = F_NONE;
    } else {
        memset(&T.f[i], 0, sizeof T.f[i]);
        T.f[i].kind = k;
        T.f[i].fd = fd;
    }
    unlock();
    (void)r;
}

static void op_setup(struct rng *r)
{
    struct o2g_setup s = {0};
    void *dump = NULL;
    size_t pages = 1 + below(r, 64);
    if (chance(r, 20))
        pages = 256 + below(r, 512); /* up to 3 MiB: past RLIMIT_MEMLOCK with others */
    size_t len = pages * PAGE;
    dump = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (dump == MAP_FAILED)
        return;
    s.dump_addr = (uintptr_t)dump;
    s.dump_len = len;
    s.max_eager = below(r, 2) ? len : 1024 + below(r, len);
    switch (below(r, 16)) {
    case 0:
        s.dump_len = edge_u64(r);
        break;
    case 1:
        s.dump_addr += below(r, PAGE);
        break;
    case 2: {
        uint64_t l;
        void *t;
        size_t tl;
        s.dump_addr = pick_buf(r, &l, &t, &tl);
        drop_transient(t, tl);
        break;
    }
    case 3:
        s.max_eager = 0;
        break;
    case 4:
        if (!(avoid & AV_MAX_EAGER))
            s.max_eager = below(r, 2) ? edge_u64(r) : 1 + below(r, 1023);
        break;
    case 5:
        if (!(avoid & AV_MAX_EAGER))
            s.max_eager = ~0ull;
        break;
    }
    int fd = chance(r, 5) ? any_fd(r, F_O2G) : -1;
    lock();
    int i = pick_file(r, F_O2G);
    if (fd < 0 && i >= 0)
        fd = T.f[i].fd;
    unlock();
    trace("setup fd%d dump=%#llx len=%llu eager=%llu", fd, (unsigned long long)s.dump_addr,
          (unsigned long long)s.dump_len, (unsigned long long)s.max_eager);
    int rc = (int)trace_rc(ioctl(fd, O2G_IOC_SETUP, chance(r, 3) ? (void *)8 : &s));
    int drop = 0; /* 1: munmap the dump area now that it is pinned; -1: keep it mapped */
    lock();
    if (!rc && i >= 0 && T.f[i].fd == fd && !T.f[i].ready) {
        T.f[i].ready = 1;
        T.f[i].entries = s.entries;
        T.f[i].ring_bytes = s.ring_bytes;
        T.f[i].dump = dump;
        T.f[i].dump_len = len;
        T.f[i].max_eager = s.max_eager;
        if (s.dump_addr == (uintptr_t)dump && chance(r, 10)) {
            T.f[i].dump = NULL; /* pinned: the module keeps writing its pages */
            drop = 1;
        } else {
            drop = -1;
        }
    } else if (!rc) {
        drop = -1; /* set up on a file we lost track of (or on other memory) */
    }
    unlock();
    /* only our own mapping: the address given may be a pool buffer or a ring */
    if (drop == 1 || (!drop && rc))
        munmap(dump, len);
}

/* mmap a file's ring (o2g) or status pages (kacc) with random length, offset, protection. */
static void op_map(struct rng *r, enum fkind k)
{
    lock();
    int i = pick_file(r, k);
    if (i < 0) {
        unlock();
        return;
    }
    int fd = T.f[i].fd;
    size_t want = k == F_O2G ? T.f[i].ring_bytes : KACC_MAP_BYTES;
    unlock();
    size_t len = want ? want : PAGE;
    off_t off = 0;
    int prot = k == F_O2G ? PROT_READ | PROT_WRITE : PROT_READ;
    switch (below(r, 8)) {
    case 0:
        len = PAGE * (1 + below(r, 8));
        break;
    case 1:
        off = (off_t)(PAGE * (1 + below(r, 4)));
        break;
    case 2:
        prot = PROT_READ | PROT_WRITE; /* kacc: refused */
        break;
    case 3:
        len = len + PAGE;
        break;
    }
    trace("mmap fd%d len=%zu off=%lld prot=%d", fd, len, (long long)off, prot);
    void *p = mmap(NULL, len, prot, chance(r, 5) ? MAP_PRIVATE : MAP_SHARED, fd, off);
    trace_rc(p == MAP_FAILED ? -1 : 0);
    if (p == MAP_FAILED)
        return;
    lock();
    int keep = 0;
    if (T.f[i].fd == fd && T.f[i].kind == k) {
        if (k == F_O2G && !T.f[i].ring && prot & PROT_WRITE && !off && len >= 128) {
            T.f[i].ring = p, T.f[i].ring_len = len, keep = 1;
        } else if (k == F_KACC && !T.f[i].st && !off) {
            T.f[i].st = p, T.f[i].st_len = len, keep = 1;
        }
    }
    unlock();
    if (!keep)
        munmap(p, len);
}

/* munmap a ring, the status pages or a mapping a closed file left (its release runs
 * here when nothing else holds the file). */
static void op_unmap(struct rng *r)
{
    void *p = NULL;
    size_t n = 0;
    lock();
    int j = (int)below(r, KF_ORPHANS);
    if (T.orph[j].addr) {
        p = T.orph[j].addr, n = T.orph[j].len;
        T.orph[j].addr = NULL;
    } else {
        int i = pick_file(r, F_NONE);
        if (i >= 0 && T.f[i].ring) {
            p = T.f[i].ring, n = T.f[i].ring_len;
            T.f[i].ring = NULL;
        } else if (i >= 0 && T.f[i].st) {
            p = T.f[i].st, n = T.f[i].st_len;
            T.f[i].st = NULL;
        }
    }
    unlock();
    if (p) { /* outside the lock: the last reference to a file runs its release */
        trace("munmap %p+%zu", p, n);
        trace_rc(munmap(p, n));
    }
}

/* A listener on 127.0.0.1 (port from the kernel). */
static int listener(in_port_t *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l < 0)
        return -1;
    if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 4) ||
        getsockname(l, (struct sockaddr *)&a, &al)) {
        close(l);
        return -1;
    }
    *port = a.sin_port;
    return l;
}

/* Connect fd to 127.0.0.1:port without blocking for more than 100 ms. */
static int connect_to(int fd, in_port_t port)
{
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = port};
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    if (rc && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        rc = poll(&p, 1, 100) == 1 ? 0 : -1;
    }
    return rc;
}

static int add_sock(enum skind k, int fd, int peer, in_port_t port)
{
    int i = free_sock_slot();
    if (i < 0) {
        close(fd);
        return -1;
    }
    T.s[i] = (struct ksock){.kind = k, .fd = fd, .peer = peer, .mine = 1, .port = port};
    return i;
}

/* A connected loopback pair: rx (the accepted end, the one to attach) and tx (the
 * writer's); the listener is kept sometimes. */
static void op_pair(struct rng *r)
{
    in_port_t port;
    int one = 1;
    lock();
    int room = 0;
    for (int i = 0; i < KF_SOCKS; i++)
        room += T.s[i].kind == S_NONE;
    unlock();
    if (room < 3)
        return;
    trace("pair");
    int l = listener(&port);
    if (l < 0)
        return;
    int tx = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (tx < 0 || connect_to(tx, port)) {
        close(l);
        if (tx >= 0)
            close(tx);
        return;
    }
    struct pollfd p = {.fd = l, .events = POLLIN};
    poll(&p, 1, 100);
    int rx = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (rx < 0) {
        close(l);
        close(tx);
        return;
    }
    setsockopt(tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (chance(r, 20)) {
        int small = 4096;
        setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    lock();
    int a = add_sock(S_RX, rx, -1, 0), b = add_sock(S_TX, tx, -1, 0);
    if (a >= 0 && b >= 0)
        T.s[a].peer = b, T.s[b].peer = a;
    if (chance(r, 30))
        add_sock(S_LISTEN, l, -1, port);
    else
        close(l);
    unlock();
    trace_rc(rx);
}

/* Sockets ATTACH must refuse: unconnected TCP, UDP, a unix stream pair. */
static void op_odd_sock(struct rng *r)
{
    int fd, sv[2];
    switch (below(r, 3)) {
    case 0:
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        break;
    case 1:
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        break;
    default:
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
            return;
        close(sv[1]);
        fd = sv[0];
    }
    if (fd < 0)
        return;
    trace("odd_sock fd%d", fd);
    lock();
    add_sock(S_OTHER, fd, -1, 0);
    unlock();
}

static void op_attach(struct rng *r)
{
    struct o2g_attach a = {0};
    lock();
    int fi = pick_file(r, F_O2G);
    int fd = fi < 0 ? -1 : T.f[fi].fd;
    int si = pick_sock(r, chance(r, 70) ? S_RX : S_NONE);
    /* avoid=listen: only sockets this process's table marks as attached (a child's
     * attach of an inherited socket would not be seen by the parent's op_listen) */
    if (si >= 0 && (avoid & AV_LISTEN) && !T.s[si].mine)
        si = -1;
    a.fd = si < 0 ? -1 : T.s[si].fd;
    if (si >= 0)
        T.s[si].attached = 1;
    unlock();
    if (chance(r, 10))
        fd = any_fd(r, F_O2G);
    if (chance(r, 5) && !(avoid & AV_LISTEN))
        a.fd = any_fd(r, F_NONE);
    a.peer = chance(r, 90) ? (int)below(r, 4) : (int)rnd(r);
    a.flags = chance(r, 25) ? O2G_ATTACH_KFREE : chance(r, 5) ? (uint32_t)rnd(r) : 0;
    trace("attach fd%d sock%d peer=%d flags=%#x", fd, a.fd, a.peer, a.flags);
    int rc = (int)trace_rc(ioctl(fd, O2G_IOC_ATTACH, chance(r, 3) ? (void *)1 : &a));
    if (!rc) {
        lock();
        if (fi >= 0 && T.f[fi].fd == fd && a.conn < 64)
            T.f[fi].conns |= 1ull << a.conn;
        unlock();
        if (chance(r, 10)) { /* twice: EBUSY */
            trace("attach again fd%d sock%d", fd, a.fd);
            trace_rc(ioctl(fd, O2G_IOC_ATTACH, &a));
        }
    }
}

static void op_detach(struct rng *r)
{
    uint32_t id = (uint32_t)below(r, 8);
    lock();
    int fi = pick_file(r, F_O2G);
    int fd = fi < 0 ? -1 : T.f[fi].fd;
    if (fi >= 0 && T.f[fi].conns && chance(r, 80)) {
        do
            id = (uint32_t)below(r, 64);
        while (!(T.f[fi].conns >> id & 1));
        T.f[fi].conns &= ~(1ull << id);
    }
    unlock();
    if (chance(r, 5))
        id = (uint32_t)edge_u64(r);
    trace("detach fd%d conn=%u", fd, id);
    trace_rc(ioctl(fd, O2G_IOC_DETACH, chance(r, 3) ? NULL : &id));
}

/* What a process may do to a socket the module holds: shut it down, close its fd (the
 * file keeps its reference), disconnect it with connect(AF_UNSPEC), connect it again. */
static void op_abuse(struct rng *r)
{
    lock();
    int si = pick_sock(r, chance(r, 60) ? S_RX : S_NONE);
    if (si < 0) {
        unlock();
        return;
    }
    int fd = T.s[si].fd, how = (int)below(r, 5);
    if (how == 1) /* close: out of the table */
        T.s[si].kind = S_NONE;
    int li = pick_sock(r, S_LISTEN);
    in_port_t port = li < 0 ? 0 : T.s[li].port;
    unlock();
    switch (how) {
    case 0: {
        int h = (int)below(r, 3);
        trace("shutdown sock%d %d", fd, h);
        trace_rc(shutdown(fd, h));
        break;
    }
    case 1:
        trace("close sock%d", fd);
        trace_rc(close(fd));
        break;
    case 2:
    case 3: {
        struct sockaddr sa = {.sa_family = AF_UNSPEC};
        trace("connect sock%d AF_UNSPEC", fd);
        trace_rc(connect(fd, &sa, sizeof sa));
        break;
    }
    default:
        if (!port)
            break;
        trace("connect sock%d port %u", fd, ntohs(port));
        trace_rc(connect_to(fd, port));
    }
}

/* The listen family: a socket (attached, or that was) disconnected and made a listener,
 * then a connection to it, accepted: the child socket inherits the parent's callbacks
 * and sk_user_data. Its peer writes into it. */
static void op_listen(struct rng *r)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    lock();
    int si = pick_sock(r, S_RX);
    int fd = si < 0 ? -1 : T.s[si].fd;
    if (si >= 0 && (avoid & AV_LISTEN) && T.s[si].attached)
        fd = -1;
    if (fd >= 0)
        T.s[si].kind = S_LISTEN; /* whatever happens, it is no receiver any more */
    unlock();
    if (fd < 0)
        return;
    struct sockaddr sa = {.sa_family = AF_UNSPEC};
    trace("listen sock%d: AF_UNSPEC", fd);
    trace_rc(connect(fd, &sa, sizeof sa));
    trace("listen sock%d", fd);
    if (trace_rc(listen(fd, 4)))
        return;
    /* the port after listen(): a disconnected socket may be bound to a new one */
    if (getsockname(fd, (struct sockaddr *)&a, &al) || !a.sin_port)
        return;
    lock();
    T.s[si].port = a.sin_port;
    unlock();
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0)
        return;
    trace("listen: connect to %u", ntohs(a.sin_port));
    if (trace_rc(connect_to(c, a.sin_port))) {
        close(c);
        return;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    poll(&p, 1, 100);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); /* accept must not block */
    int ch = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    trace("listen: accepted %d", ch);
    char junk[64];
    memset(junk, 0x55, sizeof junk);
    send(c, junk, sizeof junk, MSG_DONTWAIT | MSG_NOSIGNAL);
    lock();
    int a1 = ch >= 0 ? add_sock(S_RX, ch, -1, 0) : -1;
    int b1 = add_sock(S_TX, c, -1, 0);
    if (a1 >= 0 && b1 >= 0)
        T.s[a1].peer = b1, T.s[b1].peer = a1;
    unlock();
}

/* Send all of b within ms (poll for room); 0 or -1. */
static int send_all(int fd, const unsigned char *b, size_t n, int ms)
{
    long end = now_ms() + ms;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k > 0) {
            b += k, n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN)
            return -1;
        if (now_ms() >= end)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        poll(&p, 1, 10);
    }
    return 0;
}

/* Bytes into a socket (mostly the writer's end of an attached pair): native headers of
 * every type with matching-friendly envelopes (ctx, src 0..3, tag 0..7) and payloads,
 * corrupt headers, random bytes, partial messages (unless avoid=release). */
static void op_write(struct rng *r)
{
    static __thread unsigned char b[MPE_WIRE_HDR + 70000];
    lock();
    int si = pick_sock(r, chance(r, 85) ? S_TX : S_NONE);
    int fd = si < 0 ? -1 : T.s[si].fd;
    int mine = si >= 0 && T.s[si].mine;
    uint64_t eager = 4096;
    if (si >= 0 && T.s[si].peer >= 0) {
        /* the receiving file's eager limit, when known: messages near it */
        for (int i = 0; i < KF_FILES; i++)
            if (T.f[i].kind == F_O2G && T.f[i].ready && T.f[i].max_eager)
                eager = T.f[i].max_eager;
    }
    unlock();
    if (fd < 0)
        return;
    size_t n, whole;
    struct mpe_wire h = {.type = (uint8_t)(MPE_W_HELLO + below(r, MPE_W_TYPES - 1)),
                         .ctx = (uint32_t)below(r, 4),
                         .src = (int32_t)below(r, 4),
                         .tag = (int32_t)below(r, 8)};
    if (chance(r, 60))
        h.type = MPE_W_EAGER;
    int payload = h.type == MPE_W_EAGER || h.type == MPE_W_DATA;
    uint64_t cap = eager < 65536 ? eager : 65536;
    h.len = payload ? below(r, cap + 1) : below(r, 1 << 20);
    if (chance(r, 5))
        h.len = edge_u64(r);
    if (chance(r, 5))
        h.len = eager + 1;
    mpe_wire_encode(&h, b);
    whole = MPE_WIRE_HDR + (payload && h.len <= 65536 ? h.len : 0);
    n = whole;
    for (size_t k = MPE_WIRE_HDR; k < n; k++)
        b[k] = (unsigned char)(k * 7);
    int partial = payload && h.len > 65536; /* a header whose payload never comes */
    switch (below(r, 10)) {
    case 0: /* random bytes */
        n = 1 + below(r, 200);
        for (size_t k = 0; k < n; k++)
            b[k] = (unsigned char)rnd(r);
        partial = 0; /* a valid header by chance: 1 in 2^24 */
        break;
    case 1: /* a corrupt header */
        b[below(r, MPE_WIRE_HDR)] ^= (unsigned char)(1 + below(r, 255));
        break;
    case 2: /* cut short */
        n = below(r, whole);
        partial = 1;
        break;
    }
    int whole_only = (avoid & AV_RELEASE) != 0;
    if (whole_only && (partial || !mine))
        return;
    trace("write sock%d type=%u len=%llu bytes=%zu", fd, h.type, (unsigned long long)h.len, n);
    if (whole_only) {
        /* one writer at a time, all of it; a message that cannot be finished ends the
         * stream (FIN), so that no receive waits for its rest */
        pthread_mutex_lock(&T.wlock);
        int rc = send_all(fd, b, n, 200);
        if (rc)
            shutdown(fd, SHUT_WR);
        pthread_mutex_unlock(&T.wlock);
        trace_rc(rc);
    } else {
        trace_rc(send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL));
    }
}

/* Read what kacc's SENDs (or anyone) wrote to a socket. */
static void op_read(struct rng *r)
{
    static __thread unsigned char b[65536];
    lock();
    int si = pick_sock(r, S_NONE);
    int fd = si < 0 ? -1 : T.s[si].fd;
    unlock();
    trace("read sock%d", fd);
    trace_rc(recv(fd, b, below(r, 2) ? sizeof b : 1 + below(r, 100), MSG_DONTWAIT));
}

static void op_post(struct rng *r)
{
    struct o2g_post p = {0};
    void *t;
    size_t tl = 0;
    lock();
    int fi = pick_file(r, F_O2G);
    int fd = fi < 0 ? -1 : T.f[fi].fd;
    unlock();
    if (chance(r, 5))
        fd = any_fd(r, F_O2G);
    uint64_t len;
    p.buf = pick_buf(r, &len, &t, &tl);
    p.len = len;
    if (chance(r, 50) && p.len > 70000)
        p.len = 1 + below(r, 70000);
    p.cookie = chance(r, 90) ? below(r, 32) : rnd(r);
    p.ctx = (uint32_t)below(r, 4);
    p.src = chance(r, 20) ? O2G_ANY_SOURCE : chance(r, 5) ? (int32_t)rnd(r) : (int32_t)below(r, 4);
    p.tag = chance(r, 20) ? O2G_ANY_TAG : chance(r, 5) ? (int32_t)rnd(r) : (int32_t)below(r, 8);
    trace("post fd%d cookie=%llu buf=%#llx len=%llu ctx=%u src=%d tag=%d", fd,
          (unsigned long long)p.cookie, (unsigned long long)p.buf, (unsigned long long)p.len, p.ctx,
          p.src, p.tag);
    int rc = (int)trace_rc(ioctl(fd, O2G_IOC_POST, chance(r, 2) ? (void *)16 : &p));
    if (!rc && (p.result == O2G_POST_UNEXP || p.result == O2G_POST_RTS) && chance(r, 80)) {
        trace("free fd%d off=%llu (post's)", fd, (unsigned long long)p.off);
        trace_rc(ioctl(fd, O2G_IOC_FREE, &p.off));
    }
    drop_transient(t, tl); /* pinned: the receive still owns the pages */
}

static void op_cancel(struct rng *r)
{
    uint64_t cookie = chance(r, 90) ? below(r, 32) : rnd(r);
    int fd = any_fd(r, F_O2G);
    trace("cancel fd%d cookie=%llu", fd, (unsigned long long)cookie);
    trace_rc(ioctl(fd, O2G_IOC_CANCEL, chance(r, 3) ? NULL : &cookie));
}

static void op_free(struct rng *r)
{
    uint64_t off = below(r, 2) ? below(r, 64) * O2G_DUMP_CHUNK : edge_u64(r);
    int fd = any_fd(r, F_O2G);
    trace("free fd%d off=%llu", fd, (unsigned long long)off);
    trace_rc(ioctl(fd, O2G_IOC_FREE, &off));
}

/* The consumer: read the ring's new entries (acquire), free their records, advance tail
 * (release); sometimes write nonsense into tail. */
static void op_drain(struct rng *r)
{
    uint64_t offs[64];
    int n = 0;
    lock();
    int fi = pick_file(r, F_O2G);
    if (fi < 0 || !T.f[fi].ring || !T.f[fi].entries) {
        unlock();
        return;
    }
    struct kfile *f = &T.f[fi];
    struct o2g_ring_hdr *h = f->ring;
    struct o2g_cqe *cqe = (struct o2g_cqe *)((char *)f->ring + O2G_RING_CQE_OFF);
    uint32_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
    while (f->tail != head && n < 64) {
        size_t at = O2G_RING_CQE_OFF + (f->tail & (f->entries - 1)) * sizeof(struct o2g_cqe);
        if (at + sizeof(struct o2g_cqe) > f->ring_len)
            break;
        struct o2g_cqe e = cqe[f->tail & (f->entries - 1)];
        if (e.kind != O2G_CQE_RECV && e.kind != O2G_CQE_CONN)
            offs[n++] = e.off;
        f->tail++;
    }
    __atomic_store_n(&h->tail, chance(r, 2) ? (uint32_t)rnd(r) : f->tail, __ATOMIC_RELEASE);
    int fd = f->fd;
    unlock();
    trace("drain fd%d: %d records", fd, n);
    for (int i = 0; i < n; i++)
        if (chance(r, 50)) /* else left for a POST to take (O2G_POST_UNEXP) */
            ioctl(fd, O2G_IOC_FREE, &offs[i]);
    if (n && chance(r, 10))
        trace_rc(ioctl(fd, O2G_IOC_FREE, &offs[0])); /* twice */
}

static void op_wait(struct rng *r)
{
    uint32_t ms = 1 + (uint32_t)below(r, 30);
    int fd = any_fd(r, F_O2G);
    trace("wait fd%d %u ms", fd, ms);
    trace_rc(ioctl(fd, O2G_IOC_WAIT, &ms));
}

static void op_poll(struct rng *r)
{
    struct pollfd p = {.fd = any_fd(r, chance(r, 50) ? F_O2G : F_KACC), .events = POLLIN};
    trace("poll fd%d", p.fd);
    trace_rc(poll(&p, 1, (int)below(r, 10)));
}

/* Wrong commands, sizes and pointers on either device. */
static void op_badioctl(struct rng *r)
{
    static const unsigned long cmds[] = {
        O2G_IOC_SETUP,    O2G_IOC_ATTACH,    O2G_IOC_DETACH, O2G_IOC_POST,   O2G_IOC_CANCEL,
        O2G_IOC_FREE,     O2G_IOC_WAIT,      O2G_IOC_STATS,  KACC_IOC_ISSUE, KACC_IOC_CANCEL,
        KACC_IOC_RELEASE, KACC_IOC_PROGRESS, KACC_IOC_KICK,  KACC_IOC_STATS, KACC_IOC_O2G,
        KACC_IOC_CONN,    KACC_IOC_USER_DONE};
    unsigned long cmd = cmds[below(r, sizeof cmds / sizeof cmds[0])];
    if (chance(r, 20))
        cmd = _IOC(_IOC_READ | _IOC_WRITE, below(r, 2) ? O2G_IOC_MAGIC : KACC_IOC_MAGIC,
                   below(r, 12), below(r, 256));
    static const uint64_t args[] = {0, 1, 8, 0xffff888000000000ull, ~0ull, 0x7ffffffff000ull};
    uint64_t arg = args[below(r, sizeof args / sizeof args[0])];
    int fd = any_fd(r, F_NONE);
    if (cmd == O2G_IOC_WAIT)
        return; /* a bad pointer is EFAULT; a good one of 0 waits forever */
    trace("badioctl fd%d cmd=%#lx arg=%#llx", fd, cmd, (unsigned long long)arg);
    trace_rc(ioctl(fd, cmd, arg));
}

/* Close a device file. Its ring may stay mapped (then the file lives on until munmap). */
static void op_close_file(struct rng *r)
{
    lock();
    int i = pick_file(r, F_NONE);
    if (i < 0 || T.f[i].fd < 0) {
        unlock();
        return;
    }
    struct kfile f = T.f[i];
    memset(&T.f[i], 0, sizeof T.f[i]);
    for (int k = 0; k < 2; k++) {
        void *p = k ? f.st : f.ring;
        size_t n = k ? f.st_len : f.ring_len;
        if (!p)
            continue;
        int j = 0;
        while (j < KF_ORPHANS && T.orph[j].addr)
            j++;
        if (j < KF_ORPHANS && chance(r, 50))
            T.orph[j] = (struct orphan){p, n};
        else
            munmap(p, n);
    }
    unlock();
    trace("close fd%d (%s)", f.fd, f.kind == F_O2G ? "o2g" : "kacc");
    trace_rc(close(f.fd));
}

static void op_close_sock(struct rng *r)
{
    lock();
    int si = pick_sock(r, S_NONE);
    int fd = si < 0 ? -1 : T.s[si].fd;
    if (si >= 0) {
        T.s[si].kind = S_NONE;
        for (int k = 0; k < KF_SOCKS; k++)
            if (T.s[k].peer == si)
                T.s[k].peer = -1;
    }
    unlock();
    if (fd < 0)
        return;
    if (chance(r, 30)) { /* an abortive close: RST */
        struct linger l = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    trace("close sock%d", fd);
    trace_rc(close(fd));
}

/* Memory games: munmap a dump area after setup (the module holds its pages), mprotect a
 * pool buffer read-only for a moment, lower RLIMIT_MEMLOCK. */
static void op_mem(struct rng *r)
{
    lock();
    int i = pick_file(r, F_O2G);
    void *d = i >= 0 ? T.f[i].dump : NULL;
    size_t n = i >= 0 ? T.f[i].dump_len : 0;
    if (d && chance(r, 50))
        T.f[i].dump = NULL;
    else
        d = NULL;
    unlock();
    if (d) {
        trace("munmap dump %p+%zu", d, n);
        trace_rc(munmap(d, n));
    } else if (chance(r, 20)) {
        struct rlimit l;
        getrlimit(RLIMIT_MEMLOCK, &l);
        if (l.rlim_cur > (256 << 10)) {
            l.rlim_cur /= 2;
            trace("memlock limit %llu", (unsigned long long)l.rlim_cur);
            trace_rc(setrlimit(RLIMIT_MEMLOCK, &l));
        }
    }
}

/* ---- kacc operations ---- */

static uint64_t top;

static void op_ko2g(struct rng *r)
{
    int kfd = any_fd(r, F_KACC), ofd = any_fd(r, F_O2G);
    trace("kacc o2g fd%d <- fd%d", kfd, ofd);
    trace_rc(
        ioctl(kfd, KACC_IOC_O2G, chance(r, 5) ? (unsigned long)edge_u64(r) : (unsigned long)ofd));
}

static void op_kconn(struct rng *r)
{
    struct kacc_conn_arg a;
    int kfd = any_fd(r, F_KACC);
    lock();
    int si = pick_sock(r, S_NONE);
    if (si >= 0 && (avoid & AV_LISTEN) && !T.s[si].mine)
        si = -1;
    a.fd = si < 0 ? -1 : T.s[si].fd;
    if (si >= 0)
        T.s[si].attached = 1; /* kacc's sk_write_space: the listen family too */
    unlock();
    a.peer = chance(r, 90) ? (int)below(r, 4) : (int)rnd(r);
    trace("kacc conn fd%d sock%d peer=%d", kfd, a.fd, a.peer);
    trace_rc(ioctl(kfd, KACC_IOC_CONN, &a));
}

/* A buffer of at least `need` bytes for a graph node: mostly valid, else pick_buf's. */
static uint64_t node_buf(struct rng *r, uint64_t need, void **t, size_t *tl)
{
    uint64_t len;
    if (chance(r, 99) && need <= KF_POOLB) {
        *t = NULL;
        return (uint64_t)(uintptr_t)T.pool[below(r, KF_POOL)] + below(r, KF_POOLB - need + 1);
    }
    return pick_buf(r, &len, t, tl);
}

/* Randomly mutate a built graph: bytes flipped, fields set to edge values. */
static void mutate(struct rng *r, unsigned char *g, size_t bytes)
{
    int k = 1 + (int)below(r, 4);
    while (k--) {
        size_t at = below(r, 4) == 0 ? below(r, CAD_HDR_SIZE) : below(r, bytes);
        switch (below(r, 4)) {
        case 0:
            g[at] ^= (unsigned char)(1u << below(r, 8));
            break;
        case 1:
            g[at] = (unsigned char)rnd(r);
            break;
        default: {
            uint64_t v = edge_u64(r);
            size_t w = (size_t)1 << below(r, 4); /* 1, 2, 4, 8 bytes */
            at &= ~(w - 1);
            if (at + w <= bytes)
                memcpy(g + at, &v, w);
        }
        }
    }
}

/* ISSUE a graph built with mpi/cad's builder: CALCs (valid op and type pairs, user ops),
 * SENDs and RECVs to peers 0..3, a random DAG; finalized (sometimes only sealed), then
 * sometimes mutated; the argument's pointer, size and flags sometimes wrong. */
static void op_issue(struct rng *r)
{
    static __thread _Alignas(64) unsigned char block[8192];
    void *t[2 * KF_NODES + 1];
    size_t tl[2 * KF_NODES + 1];
    int nt = 0;
    struct cad_owner own = {
        .rank = (int32_t)below(r, 4), .comm_size = 4, .part_base = 0, .part_size = top, .nuser = 2};
    size_t bytes = cad_bytes(KF_NODES, KF_EDGES);
    struct cad_graph *g = cad_init(block, sizeof block, KF_NODES, KF_EDGES, &own);
    if (!g || bytes > sizeof block)
        return;
    int nn = 1 + (int)below(r, chance(r, 80) ? 6 : KF_NODES - 2), made[KF_NODES], nm = 0;
    int calc_only = chance(r, 50); /* SENDs and RECVs are refused without o2g and a peer */
    for (int i = 0; i < nn; i++) {
        int node, kind = calc_only ? 0 : (int)below(r, 10);
        if (kind < 5) {
            int op = CAD_OP_SUM, dt = CAD_T_INT32;
            for (int tries = 0; tries < 20; tries++) {
                int o = 1 + (int)below(r, CAD_OP_USER - 1), d = 1 + (int)below(r, CAD_T_COUNT - 2);
                if (cad_op_defined(o, d)) {
                    op = o, dt = d;
                    break;
                }
            }
            size_t es = cad_type_size(dt);
            uint64_t count = 1 + below(r, chance(r, 90) ? 256 : KF_POOLB / (es ? es : 1));
            uint64_t in = node_buf(r, count * es, &t[nt], &tl[nt]);
            nt += t[nt] != NULL;
            uint64_t io = node_buf(r, count * es, &t[nt], &tl[nt]);
            nt += t[nt] != NULL;
            if (chance(r, 10))
                node = cad_calc_user(g, (int)below(r, 3), dt, (void *)(uintptr_t)in,
                                     (void *)(uintptr_t)io, count, count * es);
            else
                node = cad_calc(g, op, dt, (void *)(uintptr_t)in, (void *)(uintptr_t)io, count);
        } else {
            uint64_t len = chance(r, 80) ? below(r, 8192) : below(r, KF_POOLB);
            uint64_t b = node_buf(r, len, &t[nt], &tl[nt]);
            nt += t[nt] != NULL;
            int peer = chance(r, 95) ? (int)below(r, 4) : (int)rnd(r);
            int tag = (int)below(r, 8);
            uint32_t ctx = (uint32_t)below(r, 4);
            node = kind < 8 ? cad_recv(g, (void *)(uintptr_t)b, len, peer, tag, ctx)
                            : cad_send(g, (const void *)(uintptr_t)b, len, peer, tag, ctx);
        }
        if (node < 0)
            continue;
        /* after START or after an earlier node: a DAG by construction */
        int from = nm && chance(r, 60) ? made[below(r, (uint64_t)nm)] : CAD_NODE_START;
        cad_connect(g, from, node);
        if (nm && chance(r, 20))
            cad_connect(g, made[below(r, (uint64_t)nm)], node);
        made[nm++] = node;
    }
    /* every node without successors goes to END */
    for (int i = 0; i < nm; i++) {
        int has = 0;
        struct cad_edge *e = cad_edges(g);
        for (uint32_t k = 0; k < g->nedges; k++)
            has |= e[k].from == made[i];
        if (!has || chance(r, 5))
            cad_connect(g, made[i], CAD_NODE_END);
    }
    if (!nm)
        cad_connect(g, CAD_NODE_START, CAD_NODE_END);
    struct cad_error e;
    if (chance(r, 90))
        cad_finalize(g, &e);
    else
        cad_seal(g, &e);
    int mutated = chance(r, 30);
    if (mutated)
        mutate(r, block, bytes);
    if (mutated && (avoid & AV_XFER_SIZE)) {
        /* the builder's layout (a mutated header may say otherwise: rare) */
        struct cad_node *n = (struct cad_node *)(block + CAD_HDR_SIZE);
        for (int i = 0; i < KF_NODES; i++)
            if ((n[i].type == CAD_SEND || n[i].type == CAD_RECV) && n[i].u.x.bytes > (256u << 20))
                n[i].u.x.bytes = 256u << 20;
    }
    struct kacc_issue a = {.graph = (uintptr_t)block, .bytes = bytes};
    a.flags = chance(r, 15) ? KACC_ISSUE_HOLD : chance(r, 3) ? (uint32_t)rnd(r) : 0;
    switch (below(r, 20)) {
    case 0:
        a.bytes = edge_u64(r);
        break;
    case 1:
        a.bytes = CAD_HDR_SIZE + below(r, bytes);
        break;
    case 2:
        a.graph = below(r, 2) ? 0 : 0xffff888000000000ull;
        break;
    case 3:
        a.bytes = sizeof block + PAGE * 64; /* past the block: reads the stack beyond */
        a.bytes = a.bytes > KACC_MAX_GRAPH ? KACC_MAX_GRAPH : a.bytes;
        break;
    }
    lock();
    int ki = pick_file(r, F_KACC);
    int fd = ki < 0 ? -1 : T.f[ki].fd;
    unlock();
    trace("issue fd%d nodes=%u edges=%u bytes=%llu flags=%#x%s", fd, g->nnodes, g->nedges,
          (unsigned long long)a.bytes, a.flags, mutated ? " mutated" : "");
    int rc = (int)trace_rc(ioctl(fd, KACC_IOC_ISSUE, &a));
    if (!rc) {
        lock();
        if (ki >= 0 && T.f[ki].fd == fd && a.slot < KACC_SLOTS)
            T.f[ki].slots[a.slot / 64] |= 1ull << (a.slot % 64);
        unlock();
    }
    for (int i = 0; i < nt; i++)
        drop_transient(t[i], tl[i]); /* pinned by the graph */
}

/* A slot of a kacc file: mostly one ISSUE returned, else random or an edge value. */
static unsigned long pick_slot(struct rng *r, int *fd, int clear)
{
    unsigned long slot = below(r, 8);
    lock();
    int ki = pick_file(r, F_KACC);
    *fd = ki < 0 ? -1 : T.f[ki].fd;
    if (ki >= 0 && chance(r, 85)) {
        for (int tries = 0; tries < 16; tries++) {
            unsigned s = (unsigned)below(r, KACC_SLOTS);
            if (T.f[ki].slots[s / 64] >> (s % 64) & 1) {
                slot = s;
                if (clear)
                    T.f[ki].slots[s / 64] &= ~(1ull << (s % 64));
                break;
            }
        }
        /* finished graphs from the status page, when mapped */
        if (T.f[ki].st && T.f[ki].st_len >= KACC_STATUS_BYTES && chance(r, 50)) {
            const struct kacc_status *st = T.f[ki].st;
            for (unsigned s = 0; s < KACC_SLOTS; s++)
                if (__atomic_load_n(&st[s].run, __ATOMIC_ACQUIRE) >= KACC_Q_DONE) {
                    slot = s;
                    break;
                }
        }
    }
    unlock();
    if (chance(r, 5))
        slot = (unsigned long)edge_u64(r);
    return slot;
}

static void op_kslot(struct rng *r, unsigned long cmd, const char *what)
{
    int fd;
    unsigned long slot = pick_slot(r, &fd, cmd == KACC_IOC_RELEASE);
    trace("%s fd%d slot=%lu", what, fd, slot);
    trace_rc(ioctl(fd, cmd, slot));
}

static void op_kprogress(struct rng *r)
{
    static const unsigned long b[] = {0, 1, 2, 3, 16, 1000, ~0ul};
    int fd = any_fd(r, F_KACC);
    unsigned long budget = b[below(r, sizeof b / sizeof b[0])];
    trace("progress fd%d budget=%lu", fd, budget);
    trace_rc(ioctl(fd, KACC_IOC_PROGRESS, budget));
}

/* USER_DONE: the node the user-op page offers (the process "ran" it), or a wrong one. */
static void op_kuser(struct rng *r)
{
    struct kacc_user_done d = {.slot = (uint32_t)below(r, 8), .node = (int32_t)below(r, 8)};
    lock();
    int ki = pick_file(r, F_KACC);
    int fd = ki < 0 ? -1 : T.f[ki].fd;
    if (ki >= 0 && T.f[ki].st && T.f[ki].st_len >= KACC_MAP_BYTES && chance(r, 80)) {
        const struct kacc_user *u =
            (const struct kacc_user *)((const char *)T.f[ki].st + KACC_USER_OFF);
        for (unsigned s = 0; s < KACC_SLOTS; s++) {
            int32_t node = __atomic_load_n(&u[s].node, __ATOMIC_ACQUIRE);
            if (node >= 0) {
                d.slot = s, d.node = node;
                break;
            }
        }
    }
    unlock();
    if (chance(r, 10))
        d.node = (int32_t)rnd(r);
    trace("user_done fd%d slot=%u node=%d", fd, d.slot, d.node);
    trace_rc(ioctl(fd, KACC_IOC_USER_DONE, &d));
}

/* ---- the loop ---- */

static void run_ops(struct rng *r, long until_ms, uint64_t my_max);

/* fork: the child (one thread) runs its own operations on inherited and new objects,
 * then exits, closing everything, or is killed later by op_reap. */
static void op_fork(struct rng *r)
{
    lock();
    int k = 0;
    while (k < KF_KIDS && T.kids[k])
        k++;
    unlock();
    if (k == KF_KIDS || T.is_child)
        return; /* children do not fork */
    uint64_t cs = rnd(r);
    trace("fork");
    pid_t pid = fork();
    if (pid == 0) {
        struct rng cr = rng_for(cs, 1);
        T.is_child = 1;
        memset(T.kids, 0, sizeof T.kids);
        for (int i = 0; i < KF_SOCKS; i++)
            T.s[i].mine = 0; /* the parent's: not written to under avoid=release */
        ring_take();
        trace("child of %d, seed %llu", (int)getppid(), (unsigned long long)cs);
        long until = now_ms() + 200 + (long)below(&cr, 2000);
        run_ops(&cr, until < deadline_ms ? until : deadline_ms, 300);
        if (avoid & AV_RELEASE) /* no receive left waiting for a message's rest */
            for (int i = 0; i < KF_SOCKS; i++)
                if (T.s[i].kind != S_NONE && T.s[i].mine)
                    shutdown(T.s[i].fd, SHUT_RDWR);
        if (chance(&cr, 30))
            kill(getpid(), SIGKILL); /* dies with everything open */
        _exit(0);
    }
    trace_rc(pid);
    if (pid > 0) {
        lock();
        T.kids[k] = pid;
        unlock();
    }
}

static void op_reap(struct rng *r)
{
    lock();
    int k = (int)below(r, KF_KIDS);
    pid_t pid = T.kids[k];
    unlock();
    if (!pid)
        return;
    if (chance(r, 30)) {
        trace("kill %d", (int)pid);
        kill(pid, SIGKILL);
    }
    if (waitpid(pid, NULL, WNOHANG) == pid) {
        lock();
        T.kids[k] = 0;
        unlock();
    }
}

struct wop {
    enum op op;
    int w;
};

static const struct wop o2g_ops[] = {
    {OP_OPEN_O2G, 4},   {OP_SETUP, 6},   {OP_MAP_RING, 4}, {OP_UNMAP, 2},    {OP_PAIR, 6},
    {OP_ODD_SOCK, 1},   {OP_ATTACH, 10}, {OP_DETACH, 4},   {OP_ABUSE, 4},    {OP_LISTEN, 2},
    {OP_WRITE, 16},     {OP_READ, 3},    {OP_POST, 12},    {OP_CANCEL, 4},   {OP_FREE, 3},
    {OP_DRAIN, 8},      {OP_WAIT, 3},    {OP_POLL, 2},     {OP_BADIOCTL, 2}, {OP_CLOSE_FILE, 2},
    {OP_CLOSE_SOCK, 3}, {OP_FORK, 1},    {OP_REAP, 2},     {OP_MEM, 1},
};
static const struct wop kacc_ops[] = {
    {OP_OPEN_KACC, 3}, {OP_KMAP, 2},     {OP_KO2G, 4},      {OP_KCONN, 3}, {OP_ISSUE, 16},
    {OP_KCANCEL, 4},   {OP_KRELEASE, 6}, {OP_KPROGRESS, 5}, {OP_KKICK, 2}, {OP_KUSER, 3},
};

static enum op choose(struct rng *r)
{
    int total = 0;
    for (size_t i = 0; i < sizeof o2g_ops / sizeof o2g_ops[0]; i++)
        total += o2g_ops[i].w;
    if (kacc_mode)
        for (size_t i = 0; i < sizeof kacc_ops / sizeof kacc_ops[0]; i++)
            total += 2 * kacc_ops[i].w; /* kacc's operations count double there */
    int x = (int)below(r, (uint64_t)total);
    for (size_t i = 0; i < sizeof o2g_ops / sizeof o2g_ops[0]; i++)
        if ((x -= o2g_ops[i].w) < 0)
            return o2g_ops[i].op;
    for (size_t i = 0; i < sizeof kacc_ops / sizeof kacc_ops[0]; i++)
        if ((x -= 2 * kacc_ops[i].w) < 0)
            return kacc_ops[i].op;
    return OP_POST;
}

static void run_op(struct rng *r, enum op op);

static void run_one(struct rng *r, enum op op)
{
    __atomic_fetch_add(&sh->tried[op], 1, __ATOMIC_RELAXED);
    if (avoid & AV_MMAP) {
        if (op == OP_MAP_RING || op == OP_KMAP)
            pthread_rwlock_wrlock(&maplock);
        else
            pthread_rwlock_rdlock(&maplock);
    }
    run_op(r, op);
    if (avoid & AV_MMAP)
        pthread_rwlock_unlock(&maplock);
}

static void run_op(struct rng *r, enum op op)
{
    switch (op) {
    case OP_OPEN_O2G:
        op_open(r, F_O2G);
        break;
    case OP_SETUP:
        op_setup(r);
        break;
    case OP_MAP_RING:
        op_map(r, F_O2G);
        break;
    case OP_UNMAP:
        op_unmap(r);
        break;
    case OP_PAIR:
        op_pair(r);
        break;
    case OP_ODD_SOCK:
        op_odd_sock(r);
        break;
    case OP_ATTACH:
        op_attach(r);
        break;
    case OP_DETACH:
        op_detach(r);
        break;
    case OP_ABUSE:
        op_abuse(r);
        break;
    case OP_LISTEN:
        op_listen(r);
        break;
    case OP_WRITE:
        op_write(r);
        break;
    case OP_READ:
        op_read(r);
        break;
    case OP_POST:
        op_post(r);
        break;
    case OP_CANCEL:
        op_cancel(r);
        break;
    case OP_FREE:
        op_free(r);
        break;
    case OP_DRAIN:
        op_drain(r);
        break;
    case OP_WAIT:
        op_wait(r);
        break;
    case OP_POLL:
        op_poll(r);
        break;
    case OP_BADIOCTL:
        op_badioctl(r);
        break;
    case OP_CLOSE_FILE:
        op_close_file(r);
        break;
    case OP_CLOSE_SOCK:
        op_close_sock(r);
        break;
    case OP_FORK:
        op_fork(r);
        break;
    case OP_REAP:
        op_reap(r);
        break;
    case OP_MEM:
        op_mem(r);
        break;
    case OP_OPEN_KACC:
        op_open(r, F_KACC);
        break;
    case OP_KMAP:
        op_map(r, F_KACC);
        break;
    case OP_KO2G:
        op_ko2g(r);
        break;
    case OP_KCONN:
        op_kconn(r);
        break;
    case OP_ISSUE:
        op_issue(r);
        break;
    case OP_KCANCEL:
        op_kslot(r, KACC_IOC_CANCEL, "kcancel");
        break;
    case OP_KRELEASE:
        op_kslot(r, KACC_IOC_RELEASE, "krelease");
        break;
    case OP_KPROGRESS:
        op_kprogress(r);
        break;
    case OP_KKICK:
        op_kslot(r, KACC_IOC_KICK, "kick");
        break;
    case OP_KUSER:
        op_kuser(r);
        break;
    case OP_N:
        break;
    }
}

static void run_ops(struct rng *r, long until_ms, uint64_t my_max)
{
    for (uint64_t i = 0; i < my_max && now_ms() < until_ms; i++) {
        if (__atomic_fetch_add(&sh->ops, 1, __ATOMIC_RELAXED) >= max_ops)
            break;
        /* a fresh table fills up first: open, set up, connect */
        enum op op = choose(r);
        run_one(r, op);
    }
}

struct thr {
    pthread_t t;
    struct rng r;
};

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    ring_take();
    run_ops(&t->r, deadline_ms, UINT64_MAX);
    return NULL;
}

/* fork() from a thread: the child must not inherit a locked table. */
static void atfork_prepare(void)
{
    pthread_mutex_lock(&T.wlock);
    pthread_mutex_lock(&T.lock);
}

static void atfork_after(void)
{
    pthread_mutex_unlock(&T.lock);
    pthread_mutex_unlock(&T.wlock);
}

/* A crash of the fuzzer itself: its address in the trace (after the operation that made
 * it), then the default action. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    trace("signal %d at %p", sig, si->si_addr);
    signal(sig, SIG_DFL);
    raise(sig);
    (void)uc;
}

/* The fuzzer process (nobody): buffers, threads, then everything closed in random order. */
static int fuzz(void)
{
    struct rng r = rng_for(seed, 0);
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
    signal(SIGPIPE, SIG_IGN);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    pthread_atfork(atfork_prepare, atfork_after, atfork_after);
    ring_take();
    top = kt_user_top();
    for (int i = 0; i < KF_POOL; i++) {
        T.pool[i] =
            mmap(NULL, KF_POOLB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (T.pool[i] == MAP_FAILED)
            return fail("mmap pool");
        memset(T.pool[i], (int)i, KF_POOLB);
    }
    T.ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T.hole = mmap(NULL, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (T.ro == MAP_FAILED || T.hole == MAP_FAILED)
        return fail("mmap");
    T.hole += PAGE;
    munmap(T.hole, PAGE); /* mapped on both sides: nothing lands in it */
    int mfd = memfd_create("kfuzz", MFD_CLOEXEC);
    if (mfd >= 0 && !ftruncate(mfd, 4 * PAGE))
        T.memfd_buf = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (!T.memfd_buf || T.memfd_buf == MAP_FAILED)
        T.memfd_buf = T.pool[0];

    int nthr = 2 + (int)below(&r, 3);
    struct thr thr[4];
    for (int i = 0; i < nthr; i++) {
        thr[i].r = rng_for(seed, 100 + (uint64_t)i);
        if (pthread_create(&thr[i].t, NULL, thread_main, &thr[i]))
            return fail("pthread_create");
    }
    for (int i = 0; i < nthr; i++)
        pthread_join(thr[i].t, NULL);

    /* the end: children killed, then files and sockets closed in random order */
    for (int k = 0; k < KF_KIDS; k++)
        if (T.kids[k])
            kill(T.kids[k], SIGKILL);
    if (avoid & AV_RELEASE)
        for (int i = 0; i < KF_SOCKS; i++)
            if (T.s[i].kind != S_NONE)
                shutdown(T.s[i].fd, SHUT_RDWR);
    for (int left = 1; left;) {
        left = 0;
        int fi = pick_file(&r, F_NONE), si = pick_sock(&r, S_NONE);
        if (fi >= 0 && (si < 0 || chance(&r, 50)))
            op_close_file(&r);
        else if (si >= 0)
            op_close_sock(&r);
        left = fi >= 0 || si >= 0;
    }
    for (int j = 0; j < KF_ORPHANS; j++)
        if (T.orph[j].addr)
            munmap(T.orph[j].addr, T.orph[j].len);
    for (int k = 0; k < KF_KIDS; k++)
        if (T.kids[k])
            waitpid(T.kids[k], NULL, 0);
    trace("done");
    return 0;
}

/* ---- the watcher (root) ---- */

/* What a module still holds with no file open: a string, empty when nothing. */
static void leftovers(char *out, size_t n)
{
    struct o2g_stats o = kt_o2g_stats();
    out[0] = 0;
    if (o.pinned_pages || o.attached || o.posted || o.dropped)
        snprintf(out, n, "o2g holds %llu pages pinned, %llu sockets, %llu receives, dropped %llu",
                 (unsigned long long)o.pinned_pages, (unsigned long long)o.attached,
                 (unsigned long long)o.posted, (unsigned long long)o.dropped);
    if (kacc_mode) {
        struct kacc_stats k = kt_kacc_stats();
        size_t l = strlen(out);
        if (k.graphs || k.pinned)
            snprintf(out + l, n - l, "%skacc holds %llu graphs, %llu pages pinned", l ? "; " : "",
                     (unsigned long long)k.graphs, (unsigned long long)k.pinned);
    }
}

/* Print the state and kernel stack of every process of nobody (the fuzzer's): where it
 * is stuck. */
static void show_stuck(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], line[256];
        int pid = atoi(e->d_name), uid = -1;
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/status", pid);
        FILE *f = fopen(path, "r");
        char state[256] = "";
        while (f && fgets(line, sizeof line, f)) {
            if (!strncmp(line, "Uid:", 4))
                uid = atoi(line + 5);
            if (!strncmp(line, "State:", 6))
                snprintf(state, sizeof state, "%s", line + 7);
        }
        if (f)
            fclose(f);
        if (uid != KT_UID_NOBODY)
            continue;
        state[strcspn(state, "\n")] = 0;
        printf("kfuzz: stuck pid %d: %s\n", pid, state);
        snprintf(path, sizeof path, "/proc/%d/task", pid);
        DIR *td = opendir(path);
        struct dirent *te;
        while (td && (te = readdir(td))) {
            if (atoi(te->d_name) <= 0)
                continue;
            snprintf(path, sizeof path, "/proc/%d/task/%s/stack", pid, te->d_name);
            f = fopen(path, "r");
            printf("kfuzz:   task %s:", te->d_name);
            for (int k = 0; f && k < 8 && fgets(line, sizeof line, f); k++) {
                line[strcspn(line, "\n")] = 0;
                printf(" %s", line);
            }
            printf("\n");
            if (f)
                fclose(f);
        }
        if (td)
            closedir(td);
    }
    if (d)
        closedir(d);
}

static void write_trace(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    int n = sh->nrings < KF_TSLOTS ? sh->nrings : KF_TSLOTS;
    for (int i = 0; i < n; i++) {
        struct tring *t = &sh->ring[i];
        if (!t->used)
            continue;
        fprintf(f, "== ring %d, pid %d, %u operations\n", i, t->pid, t->next);
        uint32_t first = t->next > KF_TLINES ? t->next - KF_TLINES : 0;
        for (uint32_t k = first; k < t->next; k++)
            fprintf(f, "%s\n", t->line[k % KF_TLINES]);
    }
    fclose(f);
}

/* The kernel log, read as it grows (/dev/kmsg from its end): at its first report of a
 * bug (kmodlib.sh's KMOD_BUG_RE), the trace as it is then goes to TRACE.first, so that
 * the operations that led to it are kept even if the run goes on for long. */
static int kmsg = -1, kmsg_hit;

static void kmsg_open(void)
{
    kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (kmsg >= 0)
        lseek(kmsg, 0, SEEK_END);
}

static void kmsg_check(void)
{
    static const char *const bug[] = {"BUG",
                                      "WARNING",
                                      "Oops",
                                      "general protection",
                                      "Call Trace",
                                      "Poison overwritten",
                                      "Redzone",
                                      "Object padding",
                                      "soft lockup",
                                      "rcu: INFO",
                                      "blocked for more than"};
    char rec[2048];
    ssize_t n;
    while (kmsg >= 0 && !kmsg_hit && (n = read(kmsg, rec, sizeof rec - 1)) != 0) {
        if (n < 0) {
            if (errno == EPIPE) /* overwritten meanwhile: go on from here */
                continue;
            return;
        }
        rec[n] = 0;
        for (size_t i = 0; i < sizeof bug / sizeof bug[0]; i++)
            if (strstr(rec, bug[i])) {
                char path[300];
                snprintf(path, sizeof path, "%s.first", trace_path);
                write_trace(path);
                kmsg_hit = 1;
                printf("kfuzz: the kernel reported a bug (trace then: %s): %s", path,
                       strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
                break;
            }
    }
}

static void set_policy(const char *p)
{
    FILE *f = fopen(PARAM, "w");
    if (f) {
        fputs(p, f);
        fclose(f);
    }
}

static int parse_avoid(const char *s)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    avoid = 0;
    for (char *w = strtok(buf, ","); w; w = strtok(NULL, ",")) {
        if (!strcmp(w, "listen"))
            avoid |= AV_LISTEN;
        else if (!strcmp(w, "max_eager"))
            avoid |= AV_MAX_EAGER;
        else if (!strcmp(w, "release"))
            avoid |= AV_RELEASE;
        else if (!strcmp(w, "mmap"))
            avoid |= AV_MMAP;
        else if (!strcmp(w, "xfer_size"))
            avoid |= AV_XFER_SIZE;
        else if (strcmp(w, "none"))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    (void)kt_child; /* kt.h's; the watcher here waits with a deadline of its own */
    if (argc < 4 || (strcmp(argv[1], "o2g") && strcmp(argv[1], "kacc"))) {
        fprintf(stderr, "usage: kfuzz o2g|kacc SEED SECONDS [--ops N] [--avoid "
                        "listen,max_eager,release,mmap,xfer_size|none] [--trace FILE]\n");
        return 2;
    }
    kacc_mode = !strcmp(argv[1], "kacc");
    seed = strtoull(argv[2], NULL, 0);
    budget_s = atol(argv[3]);
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ops"))
            max_ops = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--trace"))
            trace_path = argv[i + 1];
        else if (!strcmp(argv[i], "--avoid") && !parse_avoid(argv[i + 1]))
            continue;
        else {
            fprintf(stderr, "kfuzz: bad option %s %s\n", argv[i], argv[i + 1]);
            return 2;
        }
    }
    char av[64];
    snprintf(av, sizeof av, "%s%s%s%s%s", avoid & AV_LISTEN ? ",listen" : "",
             avoid & AV_MAX_EAGER ? ",max_eager" : "", avoid & AV_RELEASE ? ",release" : "",
             avoid & AV_MMAP ? ",mmap" : "", avoid & AV_XFER_SIZE ? ",xfer_size" : "");
    printf("kfuzz: %s seed %llu, %ld s, at most %llu operations (again: kfuzz %s %llu %ld "
           "--avoid %s)\n",
           argv[1], (unsigned long long)seed, budget_s, (unsigned long long)max_ops, argv[1],
           (unsigned long long)seed, budget_s, av[0] ? av + 1 : "none");
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        printf("kfuzz: FAIL mmap\n");
        return 1;
    }
    start_ms = now_ms();
    deadline_ms = start_ms + budget_s * 1000;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* its group: the children killed with it */
        if (kt_as_user(1)) {
            printf("kfuzz: FAIL %s\n", why);
            _exit(1);
        }
        int bad = fuzz();
        if (bad)
            printf("kfuzz: FAIL %s\n", why);
        fflush(stdout);
        _exit(bad);
    }
    if (pid < 0) {
        printf("kfuzz: FAIL fork\n");
        return 1;
    }
    setpgid(pid, pid);
    kmsg_open();
    /* watch: kacc's progress policy switched now and then (root's parameter), the
     * fuzzer's end awaited until the budget and the grace are spent */
    struct rng r = rng_for(seed, 7);
    static const char *const pol[] = {"tasklet", "ipi", "poll"};
    int st = 0, done = 0, stuck = 0;
    long give_up = deadline_ms + KF_GRACE * 1000L, next_pol = now_ms() + 1000;
    while (!done) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            done = 1;
            break;
        }
        kmsg_check();
        if (now_ms() > give_up) {
            stuck = 1;
            break;
        }
        if (kacc_mode && now_ms() > next_pol && now_ms() < deadline_ms) {
            set_policy(pol[below(&r, 3)]);
            next_pol = now_ms() + 500 + (long)below(&r, 2000);
        }
        usleep(50000);
    }
    if (kacc_mode)
        set_policy("tasklet");
    char why_bad[512] = "";
    if (stuck) {
        show_stuck();
        snprintf(why_bad, sizeof why_bad,
                 "the fuzzer did not end %d s after its budget (stuck in a module: see the "
                 "stacks above)",
                 KF_GRACE);
        kill(-pid, SIGKILL);
        for (int i = 0; i < 100 && waitpid(pid, &st, WNOHANG) != pid; i++)
            usleep(100000);
    } else if (WIFSIGNALED(st)) {
        snprintf(why_bad, sizeof why_bad, "the fuzzer died of signal %d", WTERMSIG(st));
    } else if (WEXITSTATUS(st)) {
        snprintf(why_bad, sizeof why_bad, "the fuzzer failed (exit %d)", WEXITSTATUS(st));
    }
    kmsg_check();
    /* everything closed: the modules must hold nothing (a moment for deferred work) */
    kill(-pid, SIGKILL); /* any child still alive */
    char left[256] = "";
    for (int i = 0; i < 50; i++) {
        leftovers(left, sizeof left);
        if (!left[0])
            break;
        usleep(100000);
    }
    write_trace(trace_path);
    printf("kfuzz: %llu operations in %.1f s by %d threads and processes:",
           (unsigned long long)sh->ops, (double)(now_ms() - start_ms) / 1000,
           sh->nrings < KF_TSLOTS ? sh->nrings : KF_TSLOTS);
    for (int i = 0; i < OP_N; i++)
        if (sh->tried[i])
            printf(" %s %llu", op_name[i], (unsigned long long)sh->tried[i]);
    printf("\n");
    if (!why_bad[0] && left[0])
        snprintf(why_bad, sizeof why_bad, "after every file closed: %s", left);
    if (why_bad[0]) {
        printf("kfuzz: FAIL %s (trace: %s)\n", why_bad, trace_path);
        return 1;
    }
    printf("kfuzz: clean\n");
    return 0;
}
