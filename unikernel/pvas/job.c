/* job.c: see job.h. */
#include "pvas/job.h"
#include "pvas/pvas.h"
#include "mpi/mpe_job.h"
#include "kernel/bootinfo.h"
#include "kernel/cpio.h"
#include "kernel/smp.h"
#include "kernel/vmm.h"
#include "kernel/fmt.h"
#include "uk/console.h"
#include "uk/power.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define JOB_MAX_ARGS 64

struct job {
    char image[64];
    int size, nodes;
    char *argv[JOB_MAX_ARGS + 2];
    int argc;
    char *envp[JOB_MAX_ARGS + 4];
    int envc;
};

static const void *initrd(size_t *len)
{
    *len = bootinfo.initrd_size;
    return bootinfo.initrd_size ? P2V(bootinfo.initrd_phys) : 0;
}

/* Task context; see job.h. */
int job_present(void)
{
    size_t len;
    const void *a = initrd(&len);
    struct cpio_file f;
    return a && cpio_find(a, len, "job.conf", &f) == 0;
}

static int parse_conf(struct job *j, const char *text, size_t len)
{
    char line[512];
    size_t i = 0;
    while (i < len) {
        size_t n = 0;
        while (i < len && text[i] != '\n' && n < sizeof line - 1)
            line[n++] = text[i++];
        line[n] = 0;
        if (i < len && text[i] != '\n') {
            kprintf("job: job.conf: line too long\n");
            return -1;
        }
        i++;
        if (!n || line[0] == '#')
            continue;
        char *eq = strchr(line, '=');
        if (!eq) {
            kprintf("job: job.conf: not key=value: %s\n", line);
            return -1;
        }
        *eq = 0;
        const char *v = eq + 1;
        if (!strcmp(line, "image"))
            kformat(j->image, sizeof j->image, "%s", v);
        else if (!strcmp(line, "size"))
            j->size = atoi(v);
        else if (!strcmp(line, "nodes"))
            j->nodes = atoi(v);
        else if (!strcmp(line, "arg") && j->argc < JOB_MAX_ARGS)
            j->argv[j->argc++] = strdup(v);
        else if (!strcmp(line, "env") && j->envc < JOB_MAX_ARGS)
            j->envp[j->envc++] = strdup(v);
        else {
            kprintf("job: job.conf: unknown key '%s' (or too many)\n", line);
            return -1;
        }
    }
    return 0;
}

#define EXIT_SIGNAL_BASE 128 /* the application runtime's kill(): 128 + signal, as a shell */

/* Any context. What an exit code of 128 + signal means, or "" (the runtime's kill() ends a
 * task that signals itself with 128 + the signal, abort() included). */
static const char *signal_note(int code)
{
    switch (code - EXIT_SIGNAL_BASE) {
    case SIGABRT:
        return " (128 + SIGABRT: abort())";
    case SIGKILL:
        return " (128 + SIGKILL: killed)";
    case SIGSEGV:
        return " (128 + SIGSEGV)";
    case SIGTERM:
        return " (128 + SIGTERM)";
    default:
        return "";
    }
}

/* Scheduler context: a rank that fails ends the job (job.h). Its code counts as a process
 * exit status: the low 8 bits, so exit(256) is a success and exit(-1) is 255, as under
 * POSIX. A rank that leaves MPI without MPI_Finalize is ended with a failing code by the
 * MPI library (mpi/lib/init.c), which prints why. */
static void rank_exited(struct pvas_task *t)
{
    int code = t->task.exit_code & EXIT_STATUS_MASK;
    if (code == 0)
        return;
    machine_stop_others();
    kprintf("job: rank %d (pid %d) exited with code %d%s: stopped the other %d ranks of this "
            "node\n",
            t->rank, t->task.pid, code, signal_note(code), pvas_live(t->as) - 1);
    machine_exit(code);
}

/* Task context; see job.h. */
int job_run(void)
{
    size_t len;
    const void *a = initrd(&len);
    struct cpio_file conf, image;
    struct job j = {.size = 1, .nodes = 1};
    char err[160];
    if (cpio_find(a, len, "job.conf", &conf) || parse_conf(&j, conf.data, conf.size))
        return EXIT_BOOT;
    if (cpio_find(a, len, j.image, &image)) {
        kprintf("job: image '%s' is not in the initrd\n", j.image);
        return EXIT_BOOT;
    }
    int node = (int)cmdline_get_u64("node", 0);
    j.nodes = (int)cmdline_get_u64("nodes", (uint64_t)j.nodes);
    if (j.nodes < 1 || node >= j.nodes || j.size < j.nodes) {
        kprintf("job: cannot place %d ranks on node %d of %d\n", j.size, node, j.nodes);
        return EXIT_BOOT;
    }
    int base = j.size / j.nodes, extra = j.size % j.nodes;
    int count = base + (node < extra), first = node * base + (node < extra ? node : extra);

    struct pvas_image *img = pvas_image_open(j.image, image.data, image.size, err, sizeof err);
    struct pvas_as *as = img ? pvas_create() : 0;
    if (!img || !as) {
        kprintf("job: %s\n", img ? "out of memory" : err);
        return EXIT_BOOT;
    }
    pvas_set_placement(as, first, j.size, 0);
    pvas_on_task_exit(as, rank_exited);
    kprintf("job: node %d of %d runs ranks %d-%d of %d (%s) on %d CPUs\n", node, j.nodes, first,
            first + count - 1, j.size, j.image, smp_ncpus());

    /* The MPI engine, and with several nodes their connections, before any rank runs. */
    if (mpe_job_start(as, node, j.nodes, j.size, first, count) != 0)
        return EXIT_MPI;

    /* argv[0] is the image name; each rank gets UK_RANK etc. in its own environment. */
    memmove(j.argv + 1, j.argv, (size_t)j.argc * sizeof *j.argv);
    j.argv[0] = j.image;
    j.argv[j.argc + 1] = 0;
    char e_rank[32], e_size[32], e_node[32];
    j.envp[j.envc] = e_rank;
    j.envp[j.envc + 1] = e_size;
    j.envp[j.envc + 2] = e_node;
    j.envp[j.envc + 3] = 0;
    kformat(e_size, sizeof e_size, "UK_SIZE=%d", j.size);
    kformat(e_node, sizeof e_node, "UK_NODE=%d", node);
    for (int k = 0; k < count; k++) {
        kformat(e_rank, sizeof e_rank, "UK_RANK=%d", first + k);
        if (!pvas_spawn(as, img, j.argv, j.envp, err, sizeof err)) {
            kprintf("job: cannot start rank %d: %s\n", first + k, err);
            return EXIT_BOOT;
        }
    }
    int rc = pvas_wait(as) & EXIT_STATUS_MASK; /* exit(256) is a success, as in rank_exited */
    if (rc == 0 && mpe_job_end() != 0)
        rc = EXIT_MPI;
    kprintf("job: %d ranks on node %d finished, exit code %d\n", count, node, rc);
    return rc;
}
