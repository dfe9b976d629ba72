/*
 * world.c: how MPI_COMM_WORLD is made of IMPI clients (docs/architecture.md §3.13). A
 * job that runs alone is one client; a job that joined an IMPI job (qemu/ukrun
 * --impi-server) shares MPI_COMM_WORLD with other clients (LAM/MPI, GridMPI, ...), whose
 * ranks come before or after ours, client by client. Collectives that span clients follow
 * LAM's algorithms (coll_*.c), and what LAM cannot do across clients fails clearly.
 */
#include "mpi_impl.h"
#include <stdio.h>
#include <stdlib.h>

_Static_assert(WORLD_MAX_CLIENTS <= 256, "client numbers travel as uint8_t (cad_coll.client)");

static int nclients = 1;
static int32_t first[WORLD_MAX_CLIENTS + 1];

/* Test only: UKMPI_IMPI_FAKE_CLIENTS=F1,F2,... makes a job that runs alone look like IMPI
 * clients starting at world ranks 0, F1, F2, ... to the library. Every rank is still ours
 * and reached natively, so the IMPI collectives and refusals run end to end without LAM
 * (tests/uk/cases/impi_coll_*.case). Returns the number of clients, 0 if unset or bad. */
static int fake_clients(int32_t *f)
{
    const char *s = getenv("UKMPI_IMPI_FAKE_CLIENTS");
    int n = 1;
    f[0] = 0;
    while (s && *s && n < WORLD_MAX_CLIENTS) {
        char *end;
        f[n++] = (int32_t)strtol(s, &end, 10);
        if (end == s || (*end && *end != ','))
            return 0;
        s = *end ? end + 1 : end;
    }
    return s && !*s ? n : 0;
}

/* Task context (MPI_Init, once the engine is known; host tests call world_set). */
void world_init(int size)
{
    int32_t f[WORLD_MAX_CLIENTS];
    int n = mpi_engine->clients(f, WORLD_MAX_CLIENTS);
    if (n == 1 && getenv("UKMPI_IMPI_FAKE_CLIENTS")) {
        n = fake_clients(f);
        world_set(n, f, size);
        if (world_nclients() != n) /* a typo must not pass for a layout */
            fprintf(stderr, "mpi: UKMPI_IMPI_FAKE_CLIENTS=%s: not first ranks 0 < F1 <= ... < %d\n",
                    getenv("UKMPI_IMPI_FAKE_CLIENTS"), size);
        return;
    }
    world_set(n, f, size);
}

/* Task context: the layout: n clients, client i starting at world rank f[i], `size` ranks
 * in all. An impossible layout (the engine's own) leaves one client. */
void world_set(int n, const int32_t *f, int size)
{
    nclients = 1;
    first[0] = 0;
    first[1] = size;
    if (n < 1 || n > WORLD_MAX_CLIENTS || f[0] != 0)
        return;
    for (int i = 1; i < n; i++)
        if (f[i] < f[i - 1] || f[i] > size)
            return;
    for (int i = 0; i < n; i++)
        first[i] = f[i];
    first[n] = size;
    nclients = n;
}

/* Any context after MPI_Init. */
int world_nclients(void)
{
    return nclients;
}

/* Any context after MPI_Init: the client of world rank w (0 for a rank out of range). */
int world_client(int w)
{
    int c = 0;
    while (c + 1 < nclients && w >= first[c + 1])
        c++;
    return c;
}

/* Task context. */
uint8_t *world_client_map(const int *world, int n, int *err)
{
    *err = MPI_SUCCESS;
    int spans = 0;
    for (int i = 1; i < n && !spans; i++)
        spans = world_client(world[i]) != world_client(world[0]);
    if (!spans)
        return 0;
    uint8_t *m = malloc((size_t)n);
    if (!m) {
        *err = MPI_ERR_NO_MEM;
        return 0;
    }
    for (int i = 0; i < n; i++)
        m[i] = (uint8_t)world_client(world[i]); /* < WORLD_MAX_CLIENTS */
    return m;
}

/* Task context. */
int world_refuse(const char *fn, const char *what)
{
    fprintf(stderr, "mpi: %s: %s across IMPI clients: LAM/MPI cannot do that\n", fn, what);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
