/*
 * bench_pvas.c: PVAS figures for `make bench`, each with a baseline from the same boot:
 *  - page-table memory per task as the job grows, against one address space per task
 *    that maps every peer's partition (what a process-per-rank design with shared-memory
 *    attachments, XPMEM or KNEM style, needs: the paper's N^2 argument);
 *  - spawn time;
 *  - context switch between two tasks yielding on one CPU, in one address space (PVAS)
 *    against two address spaces (processes), with the CR3 loads counted.
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "uk/time.h"
#include "kernel/fmt.h"
#include "kernel/pmm.h"
#include "kernel/sched.h"
#include "kernel/vmm.h"
#include "pvas/pvas.h"
#include "ktest_apps.h"
#include "memlayout.h"

static struct pvas_image *img;
static char *exit_argv[] = {"modes", "exit", "0", 0}, *envp[] = {0};

/* The address ranges a task has mapped: its image+heap start and its stack. */
static void map_peer(struct pvas_as *into, struct pvas_as *from, uint64_t base)
{
    uint64_t ranges[2][2] = {
        {base + PART_IMAGE_OFF, base + PART_IMAGE_OFF + 0x40000},
        {base + PART_SIZE - PART_GUARD - PART_STACK_SIZE, base + PART_SIZE - PART_GUARD}};
    for (int r = 0; r < 2; r++)
        for (uint64_t va = ranges[r][0]; va < ranges[r][1]; va += PAGE_SIZE) {
            uint64_t pa = vmm_translate(pvas_pml4(from), va);
            if (pa != (uint64_t)-1)
                vmm_map(pvas_pml4(into), va, pa, VM_W | VM_SHARED);
        }
}

static void page_tables(int n)
{
    char err[128];
    /* PVAS: one address space, n tasks. */
    struct pvas_as *as = pvas_create();
    for (int i = 0; i < n; i++)
        pvas_spawn(as, img, exit_argv, envp, err, sizeof err);
    pvas_wait(as);
    uint64_t pvas_bytes = (pvas_table_frames(as) + 1) * PAGE_SIZE; /* + the PML4 */
    pvas_destroy(as);

    /* Processes: n address spaces, each with its own task and every peer mapped in. */
    struct pvas_as *p[64];
    uint64_t base[64], proc_frames = 0;
    for (int i = 0; i < n; i++) {
        p[i] = pvas_create();
        base[i] = pvas_spawn(p[i], img, exit_argv, envp, err, sizeof err)->base;
        pvas_wait(p[i]);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                map_peer(p[i], p[j], base[j]);
    for (int i = 0; i < n; i++) {
        proc_frames += pvas_table_frames(p[i]) + 1;
        pvas_destroy(p[i]);
    }
    kprintf("bench: pt_tasks=%d pvas_bytes_per_task=%lu procs_bytes_per_task=%lu\n", n,
            pvas_bytes / (uint64_t)n, proc_frames * PAGE_SIZE / (uint64_t)n);
}

/* Two tasks yielding to each other N times on CPU 0, in one or two address spaces. */
static void switches(int same_as)
{
    char err[128], *argv[] = {"modes", "yield", "20000", 0};
    struct pvas_as *a = pvas_create(), *b = same_as ? a : pvas_create();
    pvas_set_placement(a, 0, 2, 0);
    if (!same_as)
        pvas_set_placement(b, 1, 2, 0); /* also on CPU 0 */
    uint64_t sw0 = sched_switches(0), cr0 = sched_cr3_loads(0), t0 = rdtsc();
    pvas_spawn(a, img, argv, envp, err, sizeof err);
    pvas_spawn(b, img, argv, envp, err, sizeof err);
    pvas_wait(a);
    if (!same_as)
        pvas_wait(b);
    uint64_t cycles = rdtsc() - t0, sw = sched_switches(0) - sw0, cr = sched_cr3_loads(0) - cr0;
    kprintf("bench: switch_%s_cycles=%lu switch_%s_cr3_loads=%lu switch_%s_switches=%lu\n",
            same_as ? "pvas" : "procs", cycles / (sw ? sw : 1), same_as ? "pvas" : "procs", cr,
            same_as ? "pvas" : "procs", sw);
    pvas_destroy(a);
    if (!same_as)
        pvas_destroy(b);
}

KTEST(bench_pvas)
{
    size_t len;
    const void *elf = ktest_app("modes", &len);
    char err[128];
    img = elf ? pvas_image_open("modes", elf, len, err, sizeof err) : 0;
    if (!img)
        return 1;
    for (int n = 1; n <= 32; n *= 2)
        page_tables(n);

    uint64_t spawn[21];
    struct pvas_as *as = pvas_create();
    for (int i = 0; i < 21; i++) {
        uint64_t t0 = rdtsc();
        pvas_spawn(as, img, exit_argv, envp, err, sizeof err);
        spawn[i] = rdtsc() - t0;
    }
    pvas_wait(as);
    pvas_destroy(as);
    uint64_t med = ktest_median(spawn, 21);
    kprintf("bench: spawn_cycles=%lu spawn_us=%lu\n", med, med * 1000000 / tsc_hz);

    switches(1);
    switches(0);
    pvas_image_close(img);
    return 0;
}
