/* job.c: see job.h. */
#include "pvas/job.h"
#include "pvas/pvas.h"
#include "pvas/job_place.h"
#include "mpi/mpe_job.h"
#include "mpi/impi_uk.h"
#include "uk/net.h"
#include "kernel/bootinfo.h"
#include "kernel/cpio.h"
#include "kernel/files.h"
#include "kernel/smp.h"
#include "kernel/vmm.h"
#include "kernel/fmt.h"
#include "uk/console.h"
#include "uk/power.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define JOB_MAX_ARGS 64

#define JOB_IMPI_BUFFER (32ull << 20) /* default of UKMPI_IMPI_BUFFER */

struct job {
    char image[64];
    int size, nodes;
    int output;      /* the ranks may write output files (files.h) */
    enum mempol mem; /* mem=: where the ranks' memory comes from (kernel/mempol.h) */
    struct impi_uk_cfg impi;
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

/* Task context: a decimal number up to max, the whole string. */
static int parse_num(const char *v, uint64_t max, uint64_t *out)
{
    uint64_t n = 0;
    if (!*v)
        return -1;
    for (; *v; v++) {
        if (*v < '0' || *v > '9' || n > (max - (uint64_t)(*v - '0')) / 10)
            return -1;
        n = n * 10 + (uint64_t)(*v - '0');
    }
    *out = n;
    return 0;
}

/* Task context: one impi_KEY=value line of job.conf (qemu/ukrun --impi-*). */
static int parse_impi(struct impi_uk_cfg *c, const char *key, const char *v)
{
    uint64_t n;
    const char *end;
    if (!strcmp(key, "server")) {
        if (net_parse_ip(v, &c->server_ip, &end) != 0 || *end != ':' ||
            parse_num(end + 1, UINT16_MAX, &n) != 0 || n == 0)
            return -1;
        c->server_port = (uint16_t)n;
        c->on = 1;
        return 0;
    }
    if (!strcmp(key, "client")) {
        if (parse_num(v, IMPI_MAX_CLIENTS - 1, &n) != 0)
            return -1;
        c->client = (int)n;
        return 0;
    }
    if (!strcmp(key, "auth")) {
        if (strcmp(v, "none") && strcmp(v, "key"))
            return -1;
        c->auth = strcmp(v, "none") ? IMPI_AUTH_KEY : IMPI_AUTH_NONE;
        return 0;
    }
    if (!strcmp(key, "key"))
        return parse_num(v, INT64_MAX, &c->key); /* LAM reads it with atoll() */
    return -1;
}

/* Task context: the job's IMPI settings are whole (a key without a server is a mistake),
 * and the kernel's share of the environment (UKMPI_IMPI_BUFFER) is read. */
static int check_impi(struct job *j)
{
    static const char buf_var[] = "UKMPI_IMPI_BUFFER=";
    j->impi.buffer = JOB_IMPI_BUFFER;
    for (int i = 0; i < j->envc; i++)
        if (!strncmp(j->envp[i], buf_var, sizeof buf_var - 1) &&
            (parse_num(j->envp[i] + sizeof buf_var - 1, UINT64_MAX, &j->impi.buffer) != 0 ||
             j->impi.buffer < (1u << 20))) {
            kprintf("job: %s: not a number of bytes of at least 1 MiB\n", j->envp[i]);
            return -1;
        }
    return 0;
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
        else if (!strcmp(line, "output") && (!strcmp(v, "0") || !strcmp(v, "1")))
            j->output = v[0] == '1';
        else if (!strcmp(line, "mem")) {
            if (mempol_parse(v, &j->mem) != 0) {
                kprintf("job: job.conf: mem=%s: not ddr, mcdram or interleave\n", v);
                return -1;
            }
        } else if (!strncmp(line, "impi_", 5)) {
            if (parse_impi(&j->impi, line + 5, v) != 0) {
                kprintf("job: job.conf: bad %s=%s\n", line, v);
                return -1;
            }
        } else if (!strcmp(line, "arg") && j->argc < JOB_MAX_ARGS)
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
    if (cpio_find(a, len, "job.conf", &conf) || parse_conf(&j, conf.data, conf.size) ||
        check_impi(&j))
        return EXIT_BOOT;
    if (cpio_find(a, len, j.image, &image)) {
        kprintf("job: image '%s' is not in the initrd\n", j.image);
        return EXIT_BOOT;
    }
    if (files_init(a, len, j.output) != 0)
        return EXIT_BOOT;
    int node = (int)cmdline_get_u64("node", 0);
    j.nodes = (int)cmdline_get_u64("nodes", (uint64_t)j.nodes);
    char pol[16];
    if (cmdline_get("mem", pol, sizeof pol) && mempol_parse(pol, &j.mem) != 0) {
        kprintf("job: mem=%s on the command line: not ddr, mcdram or interleave\n", pol);
        return EXIT_BOOT;
    }
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
    pvas_on_task_exit(as, rank_exited);
    kprintf("job: node %d of %d runs ranks %d-%d of %d (%s) on %d CPUs\n", node, j.nodes, first,
            first + count - 1, j.size, j.image, smp_ncpus());

    /* The MPI engine, and with several nodes their connections, before any rank runs; in
     * an IMPI job, the other clients' ranks join MPI_COMM_WORLD around ours. */
    int wfirst, wsize;
    if (mpe_job_start(as, node, j.nodes, j.size, first, count, &j.impi, &wfirst, &wsize) != 0)
        return EXIT_MPI;
    if (j.impi.on)
        kprintf("job: IMPI client %d: ranks %d-%d of MPI_COMM_WORLD's %d\n", j.impi.client,
                wfirst + first, wfirst + first + count - 1, wsize);
    first += wfirst;
    pvas_set_placement(as, first, wsize, 0);
    pvas_set_local(as, count);
    pvas_set_mempol(as, j.mem);

    /* argv[0] is the image name; each rank gets UK_RANK etc. in its own environment. */
    memmove(j.argv + 1, j.argv, (size_t)j.argc * sizeof *j.argv);
    j.argv[0] = j.image;
    j.argv[j.argc + 1] = 0;
    char e_rank[32], e_size[32], e_node[32];
    j.envp[j.envc] = e_rank;
    j.envp[j.envc + 1] = e_size;
    j.envp[j.envc + 2] = e_node;
    j.envp[j.envc + 3] = 0;
    kformat(e_size, sizeof e_size, "UK_SIZE=%d", wsize);
    kformat(e_node, sizeof e_node, "UK_NODE=%d", node);
    job_place_start(j.mem);
    for (int k = 0; k < count; k++) {
        kformat(e_rank, sizeof e_rank, "UK_RANK=%d", first + k);
        struct pvas_task *t = pvas_spawn(as, img, j.argv, j.envp, err, sizeof err);
        if (!t) {
            kprintf("job: cannot start rank %d: %s\n", first + k, err);
            return EXIT_BOOT;
        }
        job_place_spawned(t);
    }
    int rc = pvas_wait(as) & EXIT_STATUS_MASK; /* exit(256) is a success, as in rank_exited */
    job_place_end();
    if (rc == 0 && mpe_job_end() != 0)
        rc = EXIT_MPI;
    kprintf("job: %d ranks on node %d finished, exit code %d\n", count, node, rc);
    return rc;
}
