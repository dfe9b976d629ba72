/*
 * waitio_serv.c: waitio-serv, host discovery between batch jobs (spec 5.1). PB 0's job
 * publishes the master's host for the user and job name (`waitio-serv -d -m HOST`); the
 * other jobs read it (`export WAITIO_MASTER_HOST=$(waitio-serv -c)`).
 *
 * Our mechanism: one file per (user, job name), $WAITIO_SERV_DIR/<user>.<job>.host
 * (default directory $HOME/.waitio-serv; on a cluster it must be on a file system every
 * job sees), holding the host name. It is written atomically (a temporary file, then
 * rename), so a reader never sees half a name.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HOST_MAX       256
#define DEFAULT_WAIT_S 60
#define POLL_MS        200

static const char usage[] =
    "usage: waitio-serv [-d] -m HOST | -c [-t SECONDS] | -r   [-j JOBNAME]\n"
    "  -m HOST  publish HOST as the WaitIO master host of this user and job name; stays\n"
    "           in the foreground until SIGINT/SIGTERM, then withdraws it\n"
    "  -d       with -m: publish and return at once (the entry stays until -r or the\n"
    "           next -m)\n"
    "  -c       print the published master host, waiting up to -t SECONDS (default 60)\n"
    "           for it to appear; exit status 1 if it does not\n"
    "  -r       withdraw the entry\n"
    "  -j NAME  job name (default: $WAITIO_JOB_NAME, $PJM_JOBNAME, $SLURM_JOB_NAME,\n"
    "           $PBS_JOBNAME, else \"default\")\n"
    "Entries are files $WAITIO_SERV_DIR/<user>.<job>.host (default directory\n"
    "$HOME/.waitio-serv), so cooperating jobs need a directory they all see.\n";

static char path[PATH_MAX];
static volatile sig_atomic_t stop;

/* Signal handler. */
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* main thread: the first set variable of a NULL-terminated list, or `dflt`. */
static const char *first_env(const char *const *names, const char *dflt)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v)
            return v;
    }
    return dflt;
}

/* main thread: the entry's path for `job` into path[]; the directory is created. 0/-1. */
static int entry_path(const char *job)
{
    const char *dir = getenv("WAITIO_SERV_DIR");
    char def[PATH_MAX / 2];
    struct passwd *pw = getpwuid(getuid());
    const char *user = pw ? pw->pw_name : "unknown";
    if (!dir || !*dir) {
        const char *home = getenv("HOME");
        snprintf(def, sizeof def, "%s/.waitio-serv", home && *home ? home : "/tmp");
        dir = def;
    }
    if (mkdir(dir, 0700) && errno != EEXIST) {
        fprintf(stderr, "waitio-serv: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    for (const char *p = job; *p; p++)
        if (*p == '/') {
            fprintf(stderr, "waitio-serv: a job name may not contain '/'\n");
            return -1;
        }
    if ((size_t)snprintf(path, sizeof path, "%s/%s.%s.host", dir, user, job) >= sizeof path) {
        fprintf(stderr, "waitio-serv: path too long\n");
        return -1;
    }
    return 0;
}

/* main thread: write the entry atomically. 0/-1. */
static int publish(const char *host)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", host) < 0 || fclose(f) || rename(tmp, path)) {
        fprintf(stderr, "waitio-serv: %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* main thread: print the entry, waiting up to `secs`. 0/1. */
static int client(int secs)
{
    struct timespec nap = {0, POLL_MS * 1000000L};
    for (long waited = 0;; waited += POLL_MS) {
        FILE *f = fopen(path, "r");
        char host[HOST_MAX];
        if (f && fgets(host, sizeof host, f)) {
            fclose(f);
            host[strcspn(host, "\r\n")] = 0;
            if (host[0]) {
                printf("%s\n", host);
                return 0;
            }
        } else if (f) {
            fclose(f);
        }
        if (waited >= (long)secs * 1000) {
            fprintf(stderr, "waitio-serv: no master host published at %s within %d s\n", path,
                    secs);
            return 1;
        }
        nanosleep(&nap, NULL);
    }
}

int main(int argc, char **argv)
{
    static const char *const jobvars[] = {"WAITIO_JOB_NAME", "PJM_JOBNAME", "SLURM_JOB_NAME",
                                          "PBS_JOBNAME", NULL};
    const char *host = NULL, *job = first_env(jobvars, "default");
    int detach = 0, want_client = 0, remove_it = 0, secs = DEFAULT_WAIT_S, opt;
    while ((opt = getopt(argc, argv, "dm:ct:rj:h")) != -1) {
        switch (opt) {
        case 'd':
            detach = 1;
            break;
        case 'm':
            host = optarg;
            break;
        case 'c':
            want_client = 1;
            break;
        case 't':
            secs = atoi(optarg);
            break;
        case 'r':
            remove_it = 1;
            break;
        case 'j':
            job = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!!host + want_client + remove_it != 1 || optind != argc) {
        fputs(usage, stderr);
        return 2;
    }
    if (entry_path(job))
        return 1;
    if (want_client)
        return client(secs);
    if (remove_it)
        return unlink(path) && errno != ENOENT ? 1 : 0;
    if (strlen(host) >= HOST_MAX || strpbrk(host, "\r\n") || publish(host))
        return 1;
    if (detach)
        return 0;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    while (!stop)
        pause();
    unlink(path);
    return 0;
}
