/*
 * pvas_test.c: address spaces made and torn down by the kernel itself: no frame leaks over
 * 200 spawn/destroy cycles, a task killed by pvas_destroy() while it computes, and a write
 * into another address space's partition ending the job with a report.
 */
#include "uk/ktest.h"
#include "uk/console.h"
#include "kernel/fmt.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "pvas/pvas.h"
#include "ktest_apps.h"
#include "memlayout.h"

static struct pvas_image *open_modes(void)
{
    size_t len;
    const void *elf = ktest_app("modes", &len);
    char err[128];
    struct pvas_image *img = elf ? pvas_image_open("modes", elf, len, err, sizeof err) : 0;
    if (!img)
        kprintf("pvas: cannot open the test image: %s\n", elf ? err : "not built in");
    return img;
}

/* One address space, two tasks (one per CPU if there are two), run to the end, destroyed. */
static int cycle(struct pvas_image *img, int code)
{
    char arg[8], err[128];
    kformat(arg, sizeof arg, "%d", code);
    char *argv[] = {"modes", "exit", arg, 0}, *envp[] = {0};
    struct pvas_as *as = pvas_create();
    if (!as)
        return -1;
    for (int k = 0; k < 2; k++)
        if (!pvas_spawn(as, img, argv, envp, err, sizeof err)) {
            kprintf("pvas: spawn failed: %s\n", err);
            return -1;
        }
    int rc = pvas_wait(as);
    pvas_destroy(as);
    return rc;
}

KTEST(pvas_spawn_destroy)
{
    struct pvas_image *img = open_modes();
    if (!img || cycle(img, 0) != 0) /* warm-up: the kernel heap grows once */
        return 1;
    uint64_t before = pmm_free_frames();
    int bad = 0;
    for (int i = 1; i <= 200; i++)
        if (cycle(img, i % 7) != i % 7) /* the exit code comes back through pvas_wait */
            bad++;
    uint64_t after = pmm_free_frames();
    kprintf("pvas: 200 cycles of create + 2 x spawn + wait + destroy: %d wrong exit codes; "
            "free frames %lu before, %lu after\n",
            bad, before, after);
    pvas_image_close(img);
    return bad || before != after;
}

KTEST(pvas_destroy_kills)
{
    struct pvas_image *img = open_modes();
    char err[128], *argv[] = {"modes", "spin", 0}, *envp[] = {0};
    struct pvas_as *as = img ? pvas_create() : 0;
    if (!as)
        return 1;
    pvas_set_placement(as, 0, 1, smp_ncpus() > 1 ? 1 : 0);
    struct pvas_task *t = pvas_spawn(as, img, argv, envp, err, sizeof err);
    if (!t)
        return 1;
    for (int k = 0; k < 100; k++)
        task_yield(); /* let it start spinning */
    uint64_t before = pmm_free_frames();
    pvas_destroy(as); /* must not hang: the spinning task is killed at its next interrupt */
    kprintf("pvas: destroyed an address space with a spinning task; %lu frames returned\n",
            pmm_free_frames() - before);
    pvas_image_close(img);
    return 0;
}

KTEST(pvas_other_job)
{
    struct pvas_image *img = open_modes();
    char err[128], target[32];
    struct pvas_as *a = img ? pvas_create() : 0, *b = img ? pvas_create() : 0;
    if (!a || !b)
        return 1;
    char *wait_argv[] = {"modes", "rank-exit", "99", "0", 0}, *envp[] = {0};
    struct pvas_task *victim = pvas_spawn(b, img, wait_argv, envp, err, sizeof err);
    if (!victim)
        return 1;
    /* The intruder in the first address space writes into the victim's partition. */
    kformat(target, sizeof target, "%lx", victim->base + PART_IMAGE_OFF + 0x1000);
    char *argv[] = {"modes", "write", target, 0};
    pvas_set_placement(a, 0, 1, 0);
    if (!pvas_spawn(a, img, argv, envp, err, sizeof err))
        return 1;
    pvas_wait(a); /* never returns: the fault ends the machine */
    kprintf("pvas: the write into another address space did not fault\n");
    return 1;
}

/* How many ranks share a CPU (uk_abi->cpu_ranks, which makes MPI waits on a shared CPU
 * sleep at once instead of polling): round-robin placement from first_cpu, known before
 * any task starts. */
KTEST(pvas_cpu_tasks)
{
    struct pvas_as *as = pvas_create();
    if (!as || smp_ncpus() != 2)
        return 1;
    int bad = pvas_cpu_tasks(as, 0) != 0 || pvas_cpu_tasks(as, 1) != 0;
    pvas_set_placement(as, 0, 5, 1);
    pvas_set_local(as, 5); /* CPUs 1, 0, 1, 0, 1 */
    bad |= pvas_cpu_tasks(as, 0) != 2 || pvas_cpu_tasks(as, 1) != 3;
    pvas_set_local(as, 1);
    bad |= pvas_cpu_tasks(as, 0) != 0 || pvas_cpu_tasks(as, 1) != 1;
    kprintf("pvas: cpu tasks %s\n", bad ? "WRONG" : "ok");
    pvas_destroy(as);
    return bad;
}
