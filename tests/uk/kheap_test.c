/*
 * kheap_test.c: in-kernel test: after the kernel heap shrinks and grows again, every CPU
 * sees the same memory at the same heap address.
 *
 * Heap pages are global mappings shared by all CPUs, and this kernel has no TLB shootdown:
 * a CPU that touched a heap page keeps its translation until it flushes it itself. If the
 * heap gave a page's frame back when newlib's malloc trims (negative sbrk) and mapped a
 * fresh frame at the same address when it grows again, that CPU would go on reading and
 * writing the old frame, which the frame allocator may have handed to someone else: two
 * CPUs would see different memory at one address (issue 12: payload bytes in malloc's
 * chunk links under an MPI bandwidth run).
 *
 * CPU 1 writes every page of a block at the top of the heap; CPU 0 frees it and trims the
 * heap (the break must go below the block), allocates the same block again and writes a
 * new pattern; CPU 1 must read the new pattern, and what CPU 1 writes then CPU 0 must see.
 * A failure names the page and the frames involved.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uk/ktest.h>
#include "kernel/smp.h"
#include "kernel/vmm.h"
#include <memlayout.h>

/* Above newlib's default trim threshold (128 KiB), so a free at the top trims by itself;
 * the test calls malloc_trim() too. */
#define KHEAP_TEST_PAGES 64
#define KHEAP_TEST_LEN   (KHEAP_TEST_PAGES * PAGE_SIZE)
#define FILL_OLD         0xa5 /* CPU 1's first write, before the heap shrinks */
#define FILL_NEW         0x5a /* CPU 0's write after it grew again */
#define FILL_BACK        0x3c /* CPU 1's write after that */
#define TEST_CPU         1

struct kheap_probe {
    volatile uint8_t *p;
    int write; /* 1: store `fill` in the first byte of each page; 0: compare it */
    uint8_t fill;
    int bad_page; /* first page that did not hold `fill` (-1: none) */
    uint8_t seen;
};

/* CPU TEST_CPU, scheduler context (smp_run): one access per page, so that this CPU holds a
 * translation for each of them. */
static void kheap_probe_pages(void *arg)
{
    struct kheap_probe *pr = arg;
    pr->bad_page = -1;
    for (int i = 0; i < KHEAP_TEST_PAGES; i++) {
        volatile uint8_t *b = pr->p + (size_t)i * PAGE_SIZE;
        if (pr->write) {
            *b = pr->fill;
        } else if (*b != pr->fill && pr->bad_page < 0) {
            pr->bad_page = i;
            pr->seen = *b;
        }
    }
}

/* Task context (BSP): runs the probe on TEST_CPU and reports a page it saw differently. */
static int kheap_probe_on_cpu(struct kheap_probe *pr, const uint64_t *old_frame)
{
    if (smp_run(TEST_CPU, kheap_probe_pages, pr) != 0) {
        printf("kheap_shrink_smp: cpu %d is not online\n", TEST_CPU);
        return 1;
    }
    if (pr->bad_page < 0)
        return 0;
    uint64_t va = (uint64_t)pr->p + (uint64_t)pr->bad_page * PAGE_SIZE;
    printf("kheap_shrink_smp: cpu %d read 0x%02x at heap address 0x%lx where cpu 0 wrote "
           "0x%02x: the page table maps it to physical 0x%lx, cpu %d still reads physical "
           "0x%lx (before the heap shrank) through a stale TLB entry\n",
           TEST_CPU, pr->seen, (unsigned long)va, pr->fill,
           (unsigned long)vmm_translate(kernel_pml4, va), TEST_CPU,
           (unsigned long)old_frame[pr->bad_page]);
    return 1;
}

/* Task context (the ktest runner, BSP); needs 2 CPUs. */
KTEST(kheap_shrink_smp)
{
    static uint64_t old_frame[KHEAP_TEST_PAGES];
    if (smp_ncpus() <= TEST_CPU) {
        printf("kheap_shrink_smp: needs %d CPUs\n", TEST_CPU + 1);
        return 1;
    }
    malloc_trim(0);
    uint8_t *p = malloc(KHEAP_TEST_LEN);
    if (!p)
        return 1;
    struct kheap_probe pr = {.p = p, .write = 1, .fill = FILL_OLD};
    if (kheap_probe_on_cpu(&pr, old_frame))
        return 1;
    for (int i = 0; i < KHEAP_TEST_PAGES; i++)
        old_frame[i] = vmm_translate(kernel_pml4, (uint64_t)p + (uint64_t)i * PAGE_SIZE);

    free(p);
    malloc_trim(0);
    uint8_t *brk = sbrk(0);
    if (brk > p + PAGE_SIZE) { /* the setup, not the kernel, is wrong */
        printf("kheap_shrink_smp: the heap did not shrink below the block (break %p, "
               "block %p)\n",
               (void *)brk, (void *)p);
        return 1;
    }
    uint8_t *q = malloc(KHEAP_TEST_LEN);
    if (q != p) {
        printf("kheap_shrink_smp: the block came back at %p, not %p\n", (void *)q, (void *)p);
        return 1;
    }
    memset(q, FILL_NEW, KHEAP_TEST_LEN);
    pr = (struct kheap_probe){.p = q, .write = 0, .fill = FILL_NEW};
    if (kheap_probe_on_cpu(&pr, old_frame))
        return 1;

    pr = (struct kheap_probe){.p = q, .write = 1, .fill = FILL_BACK};
    if (kheap_probe_on_cpu(&pr, old_frame))
        return 1;
    for (int i = 0; i < KHEAP_TEST_PAGES; i++)
        if (q[(size_t)i * PAGE_SIZE] != FILL_BACK) {
            printf("kheap_shrink_smp: cpu %d wrote 0x%02x at heap page %p, cpu 0 reads 0x%02x\n",
                   TEST_CPU, FILL_BACK, (void *)(q + (size_t)i * PAGE_SIZE),
                   q[(size_t)i * PAGE_SIZE]);
            return 1;
        }
    free(q);
    printf("kheap_shrink_smp: %d pages: cpu %d saw what cpu 0 wrote after the heap shrank and "
           "grew again, and the other way round\n",
           KHEAP_TEST_PAGES, TEST_CPU);
    return 0;
}
