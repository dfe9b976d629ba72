/*
 * pingpong.c: a WaitIO program written as a user would, from the public API only
 * (<mpi.h> and "waitio.h"). Every process of every PB joins one group (filters, order
 * {1,2,0,0}); group ranks are paired twice: r with r^1 (inside a PB when PBs have two
 * processes) and r with r + size/2 (across PBs). Each pair ping-pongs messages of
 * 0 B .. MAX bytes (argv[1], default 16 MiB), then exchanges several messages at once in
 * both directions, every byte checked. Prints one PASS/FAIL line per process.
 * argv[2]: waitio_init's timeout in seconds (default 10, as the published test.c).
 */
#include <mpi.h>
#include "waitio.h"
#include <string.h>

#define OUTSTANDING 8

/* Our own filter selecting every process, as the published test.c defines it. */
int truef(int pbid, int n)
{
    return 1;
}

static int rank, failures;

/* The expected byte i of a message with `seed`. */
static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)(i * 31 + seed * 7 + (i >> 11));
}

/* Main thread: b[0..n) gets the pattern of `seed`. */
static void fill(char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)pattern(i, seed);
}

/* Main thread: count a failure unless b[0..n) holds the pattern of `seed`. */
static void check(const char *what, const char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)b[i] != pattern(i, seed)) {
            fprintf(stderr, "pingpong: rank %d: %s: %zu bytes, byte %zu wrong\n", rank, what, n, i);
            failures++;
            return;
        }
}

/* Main thread: wait for r; a non-zero result counts as a failure. */
static void waitok(waitio_req_t *r, const char *what, size_t n)
{
    if (waitio_wait(r)) {
        fprintf(stderr, "pingpong: rank %d: waitio_wait failed (%s, %zu bytes)\n", rank, what, n);
        failures++;
    }
}

/* One pair: `first` sends first; messages of every size, there and back. */
static void pingpong(waitio_group_t g, int peer, int first, size_t max, char *s, char *r)
{
    static const size_t sizes[] = {0,     1,     7,     128,    129,     1000,    4096,
                                   65535, 65536, 65537, 300000, 1 << 20, 4 << 20, 16 << 20};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes && sizes[k] <= max; k++) {
        size_t n = sizes[k];
        waitio_req_t req;
        memset(r, 0, n);
        if (first) {
            fill(s, n, k);
            waitio_isend(g, peer, s, n, 10, &req);
            waitok(&req, "ping send", n);
            waitio_irecv(g, peer, r, n, 11, &req);
            waitok(&req, "pong recv", n);
            check("pong", r, n, k + 100);
        } else {
            waitio_irecv(g, peer, r, n, 10, &req);
            waitok(&req, "ping recv", n);
            check("ping", r, n, k);
            fill(s, n, k + 100);
            waitio_isend(g, peer, s, n, 11, &req);
            waitok(&req, "pong send", n);
        }
    }
}

/* Several messages outstanding at once in both directions, same tag: FIFO order. */
static void burst(waitio_group_t g, int peer, size_t max)
{
    static const size_t sizes[OUTSTANDING] = {5, 100000, 0, 128, 129, 70000, 1, 3 << 20};
    char *s[OUTSTANDING], *r[OUTSTANDING];
    waitio_req_t sq[OUTSTANDING], rq[OUTSTANDING];
    for (int i = 0; i < OUTSTANDING; i++) {
        size_t n = sizes[i] <= max ? sizes[i] : max;
        s[i] = malloc(n + 1);
        r[i] = calloc(1, n + 1);
        fill(s[i], n, 200 + i);
        waitio_irecv(g, peer, r[i], n, 12, &rq[i]);
    }
    for (int i = 0; i < OUTSTANDING; i++)
        waitio_isend(g, peer, s[i], sizes[i] <= max ? sizes[i] : max, 12, &sq[i]);
    for (int i = OUTSTANDING - 1; i >= 0; i--) {
        size_t n = sizes[i] <= max ? sizes[i] : max;
        waitok(&rq[i], "burst recv", n);
        waitok(&sq[i], "burst send", n);
        check("burst", r[i], n, 200 + i);
        free(s[i]);
        free(r[i]);
    }
}

/* Every process of both PBs runs this. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 16u << 20;
    if (waitio_init(argc > 2 ? atoi(argv[2]) : 10)) {
        fprintf(stderr, "pingpong: waitio_init failed\n");
        MPI_Finalize();
        return 1;
    }
    int npb, pbid, nprocs[16], size;
    waitio_pb_size(&npb);
    waitio_pb_rank(&pbid);
    waitio_get_nprocs(nprocs);
    waitio_filter_func_t func[4] = {truef, truef, NULL, NULL};
    int order[4] = {1, 2, 0, 0};
    waitio_group_t g = waitio_create_group(0, func, order);
    if (!g) {
        fprintf(stderr, "pingpong: waitio_create_group failed\n");
        exit(1);
    }
    waitio_group_rank(g, &rank);
    waitio_group_size(g, &size);
    char *s = malloc(max + 1), *r = malloc(max + 1);
    if (size % 2 == 0) {
        pingpong(g, rank ^ 1, !(rank & 1), max, s, r); /* 0-1, 2-3: inside a PB with 2+2 */
        burst(g, rank ^ 1, max);
        int half = size / 2, peer = (rank + half) % size;
        if (peer != (rank ^ 1)) { /* 0-2, 1-3: across PBs */
            pingpong(g, peer, rank < half, max, s, r);
            burst(g, peer, max);
        }
    }
    /* A message to oneself never touches a socket. */
    waitio_req_t a, b;
    fill(s, 1000, 9);
    waitio_isend(g, rank, s, 1000, 13, &a);
    waitio_irecv(g, rank, r, 1000, 13, &b);
    waitok(&a, "self send", 1000);
    waitok(&b, "self recv", 1000);
    check("self", r, 1000, 9);
    printf("pingpong: %s rank %d of %d (PB %d of %d, %d+%d processes)\n",
           failures ? "FAIL" : "PASS", rank, size, pbid, npb, nprocs[0], npb > 1 ? nprocs[1] : 0);
    fflush(stdout);
    free(s);
    free(r);
    waitio_finalize();
    MPI_Finalize();
    return failures != 0;
}
