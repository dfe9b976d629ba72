/*
 * ranks.c: what every rank of a PVAS job must see. Each rank writes its own globals and
 * heap, lets the other ranks of its CPU run, and then checks that its globals kept its own
 * values (data and bss are private), that its heap lies in its own partition, and that it
 * can read every other local rank's globals with plain loads (same address space).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ukapp.h>

volatile int in_bss;       /* bss */
volatile int in_data = -1; /* data */

int main(int argc, char **argv)
{
    int r = uk_rank(), n = uk_size(), bad = 0;
    uint64_t base, size;
    uk_partition(&base, &size);
    in_bss = 1000 + r;
    in_data = 2000 + r;
    printf("rank %d of %d: pid %d on cpu %d, partition at 0x%lx\n", r, n, getpid(), uk_cpu(),
           (unsigned long)base);

    /* Heap: allocations from 16 B to 4 MiB, filled, all inside the partition. */
    char *blocks[19];
    for (int i = 0; i < 19; i++) {
        size_t len = (size_t)16 << i;
        blocks[i] = malloc(len);
        if (!blocks[i] || (uint64_t)blocks[i] < base || (uint64_t)blocks[i] + len > base + size) {
            printf("rank %d: heap block of %zu bytes at %p is outside the partition\n", r, len,
                   (void *)blocks[i]);
            bad++;
        } else {
            memset(blocks[i], r, len);
        }
    }
    for (int k = 0; k < 200; k++) /* let the other ranks of this CPU run and write theirs */
        uk_yield();

    if (in_bss != 1000 + r || in_data != 2000 + r) {
        printf("rank %d: globals changed under us: %d %d\n", r, in_bss, in_data);
        bad++;
    }
    for (int i = 0; i < 19; i++)
        for (size_t j = 0; blocks[i] && j < ((size_t)16 << i); j += 4093)
            if (blocks[i][j] != (char)r) {
                printf("rank %d: heap block %d was overwritten\n", r, i);
                bad++;
                break;
            }

    /* Plain loads of the globals of every rank on this node (the others are on other
     * nodes: no shared memory with them); wait (bounded) until each wrote them. */
    int seen = 0, local = 0;
    for (int s = 0; s < n; s++) {
        volatile int *peer = uk_peer_addr(s, (const void *)&in_bss);
        if (!peer)
            continue;
        local++;
        time_t t0 = time(0);
        while (*peer != 1000 + s && time(0) - t0 < 20)
            uk_yield();
        if (*peer == 1000 + s)
            seen++;
        else
            printf("rank %d: rank %d's global reads %d, expected %d\n", r, s, *peer, 1000 + s);
    }
    printf("rank %d: private globals %s, heap in partition %s, read %d of %d local ranks' "
           "globals (%d ranks in the job)\n",
           r, in_bss == 1000 + r ? "ok" : "BAD", bad ? "BAD" : "ok", seen, local, n);
    return bad || seen != local;
}
