/*
 * badpeer.c: the real side of the bad-input tests, written against the public API. PB 0
 * (two processes) and a fake PB 1 (wio-inject, one process). Group rank 0 receives from
 * the fake until a receive fails (at most 3), printing each result; then ranks 0 and 1
 * exchange messages to show that the failure touched nothing else.
 */
#include <mpi.h>
#include "waitio.h"
#include <string.h>

#define BUF (2u << 20)

/* Every process of the real PB 0 runs this. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (waitio_init(argc > 1 ? atoi(argv[1]) : 10)) {
        fprintf(stderr, "badpeer: waitio_init failed\n");
        MPI_Finalize();
        return 1;
    }
    waitio_filter_func_t func[4] = {truef, truef, NULL, NULL};
    int order[4] = {1, 2, 0, 0}, rank, size, bad = 0;
    waitio_group_t g = waitio_create_group(0, func, order);
    waitio_group_rank(g, &rank);
    waitio_group_size(g, &size);
    char *buf = malloc(BUF), *out = malloc(BUF);
    waitio_req_t r, s;
    if (rank == 0)
        for (int i = 0; i < 3; i++) {
            waitio_irecv(g, size - 1, buf, BUF, 0, &r);
            int rc = waitio_wait(&r);
            printf("badpeer: receive %d from the fake %s\n", i, rc ? "failed" : "ok");
            fflush(stdout);
            if (rc)
                break;
        }
    /* The two real processes still talk (eager and rendezvous). */
    for (size_t n = 1000; n <= BUF; n += BUF - 1000) {
        for (size_t i = 0; i < n; i++)
            out[i] = (char)(i * 3 + rank);
        waitio_irecv(g, !rank, buf, n, 1, &r);
        waitio_isend(g, !rank, out, n, 1, &s);
        bad |= waitio_wait(&r) | waitio_wait(&s);
        for (size_t i = 0; i < n && !bad; i++)
            bad = buf[i] != (char)(i * 3 + !rank);
    }
    printf("badpeer: rank %d: %s\n", rank, bad ? "FAIL others affected" : "PASS others unaffected");
    fflush(stdout);
    waitio_finalize();
    MPI_Finalize();
    return bad;
}
