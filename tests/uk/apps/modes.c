/*
 * modes.c: one program for the fault and exit tests. argv[1] says what to do:
 *   exit N           return N from main
 *   rank-exit R N    rank R exits with N; the others wait forever (the job must stop them)
 *   null             write through a NULL pointer
 *   stack            recurse until the stack's guard page
 *   write ADDR       write to the hexadecimal address ADDR (another job's partition)
 *   text             write to its own code (a present, read-only page)
 *   spin             compute forever (for pvas_destroy's kill)
 *   yield N          yield the CPU N times, then exit (context-switch benchmark)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ukapp.h>

__attribute__((noinline)) static void write_null(void)
{
    volatile int *p = 0;
    __asm__ volatile("" : "+r"(p));
    *p = 1;
}

#pragma GCC diagnostic ignored "-Winfinite-recursion"
__attribute__((noinline)) static int deep(int n)
{
    volatile char pad[1024];
    pad[0] = (char)n;
    return deep(n + 1) + pad[0];
}

__attribute__((noinline)) static void poke(unsigned long addr)
{
    *(volatile long *)addr = 42;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "exit";
    int r = uk_rank();
    if (!strcmp(m, "exit"))
        return argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(m, "rank-exit")) {
        if (r == atoi(argv[2])) {
            printf("rank %d: exiting with %s\n", r, argv[3]);
            return atoi(argv[3]);
        }
        printf("rank %d: waiting\n", r);
        for (;;)
            uk_yield();
    }
    if (!strcmp(m, "null")) {
        printf("rank %d: writing through NULL\n", r);
        write_null();
    }
    if (!strcmp(m, "stack")) {
        printf("rank %d: recursing\n", r);
        return deep(0);
    }
    if (!strcmp(m, "write")) {
        unsigned long a = strtoul(argv[2], 0, 16);
        printf("rank %d: writing to 0x%lx\n", r, a);
        poke(a);
    }
    if (!strcmp(m, "text")) {
        printf("rank %d: writing to its own code\n", r);
        poke((unsigned long)&write_null);
    }
    if (!strcmp(m, "yield")) {
        for (int i = atoi(argv[2]); i > 0; i--)
            uk_yield();
        return 0;
    }
    if (!strcmp(m, "spin")) {
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    printf("rank %d: still here after '%s'\n", r, m);
    return 3;
}
