/*
 * kacc_stats.c: prints the kacc module's counters (KACC_IOC_STATS, host-kmod/kacc/kacc_uapi.h)
 * on one line, "kaccstats node=N key=value...", or "kaccstats node=N none (why)" when
 * /dev/kacc cannot be read. Run by the Linux benchmark guests' /init (guest/init) on every
 * VM after a job with the module loaded, so that tests/bench/linux-nbc.bench.sh can tell
 * whether the job's collectives ran as kacc graphs or in the library's own progress.
 *   kacc_stats NODE
 */
#include "../../../host-kmod/kacc/kacc_uapi.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* main: the guest's /init, once per job; prints one line and exits 0 either way (the
 * benchmark reports a missing line itself). */
int main(int argc, char **argv)
{
    struct kacc_stats s;
    const char *node = argc > 1 ? argv[1] : "?";
    int fd = open(KACC_DEV, O_RDONLY);

    memset(&s, 0, sizeof s);
    if (fd < 0 || ioctl(fd, KACC_IOC_STATS, &s) < 0) {
        printf("kaccstats node=%s none (%s: %s)\n", node, KACC_DEV, strerror(errno));
        return 0;
    }
    close(fd);
    printf("kaccstats node=%s graphs=%llu pinned=%llu issued=%llu refused=%llu finished=%llu "
           "cancelled=%llu calc=%llu local=%llu ipi=%llu home=%llu polled=%llu slices=%llu "
           "sent=%llu received=%llu write_space=%llu send_ns=%llu\n",
           node, s.graphs, s.pinned, s.issued, s.refused, s.finished, s.cancelled, s.calc, s.local,
           s.ipi, s.home, s.polled, s.slices, s.sent, s.received, s.write_space, s.send_ns);
    return 0;
}
