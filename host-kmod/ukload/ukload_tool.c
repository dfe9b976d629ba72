// SPDX-License-Identifier: GPL-2.0
/*
 * ukload: the user side of ukload.ko (/dev/ukload, ukload_uapi.h).
 *
 *   ukload load [-c CPUS] [-i INITRD] IMAGE [ARG...]
 *                                        copy IMAGE (and INITRD: a job, as qemu/ukrun
 *                                        packs it) in; ARGs are its command line; CPUS:
 *                                        Linux's numbers, comma-separated, the first
 *                                        boots (default 1)
 *   ukload boot [-w SECONDS]             start it on the CPUs given to load; -w: then
 *                                        as console -w, the wait timed from the boot
 *   ukload console [-w SECONDS]          print its console; -w: follow it until the
 *                                        unikernel exits, then exit with its code and
 *                                        say on stderr how long it waited (124 if
 *                                        SECONDS pass first)
 *   ukload stop                          INIT the CPU (the image must be loaded again)
 *   ukload status                        one line: module state, unikernel state, exit
 *
 * Errors: the module's refusal (its reason is in the kernel log) as the errno's text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ukload_shm.h"
#include "ukload_uapi.h"

#define DEV "/dev/ukload"
#define POLL_NS 1000000L /* console poll period: 1 ms (exit times to the ms) */
#define NS_PER_S 1000000000L
#define NS_PER_MS 1000000L
#define EXIT_TIMEOUT 124 /* as timeout(1) */
#define CHUNK 4096

static int fail(const char *what)
{
	fprintf(stderr, "ukload: %s: %s (the kernel log says why)\n", what, strerror(errno));
	return 1;
}

/* "3,2": the first CPU and the set; 1 and a message if malformed. */
static int parse_cpus(const char *s, struct ukload_load *a)
{
	char *end;
	int n = 0;

	a->cpus = 0;
	for (;;) {
		unsigned long c = strtoul(s, &end, 10);

		if (end == s || c >= UKLOAD_MAX_CPU || (*end && *end != ',')) {
			fprintf(stderr, "ukload load: bad CPU list (numbers below %d)\n",
				UKLOAD_MAX_CPU);
			return 1;
		}
		if (!n++)
			a->cpu = c;
		a->cpus |= 1ULL << c;
		if (!*end)
			return 0;
		s = end + 1;
	}
}

/* The whole file into a new buffer (the caller frees it); 1 and a message on failure. */
static int slurp(const char *path, char **buf, size_t *len)
{
	struct stat st;
	int f = open(path, O_RDONLY);

	if (f < 0 || fstat(f, &st) < 0)
		return fail(path);
	*buf = malloc(st.st_size ? st.st_size : 1);
	if (!*buf || read(f, *buf, st.st_size) != st.st_size)
		return fail(path);
	close(f);
	*len = st.st_size;
	return 0;
}

static int cmd_load(int fd, int argc, char **argv)
{
	struct ukload_load a = { .cpu = 1, .cpus = 1ULL << 1 };
	char cmdline[UKLOAD_CMDLINE_MAX + 1] = "";
	size_t used = 0;
	char *img, *initrd = NULL;
	size_t len, initrd_len = 0;
	int i = 0, rc;

	for (; i + 2 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c") && !parse_cpus(argv[i + 1], &a))
			continue;
		if (!strcmp(argv[i], "-i") && !slurp(argv[i + 1], &initrd, &initrd_len))
			continue;
		return 2;
	}
	if (i >= argc) {
		fprintf(stderr, "ukload load: no image\n");
		return 2;
	}
	if (slurp(argv[i], &img, &len))
		return 1;
	for (i++; i < argc; i++) {
		int n = snprintf(cmdline + used, sizeof(cmdline) - used, "%s%s", used ? " " : "",
				 argv[i]);

		if (n < 0 || (size_t)n >= sizeof(cmdline) - used) {
			fprintf(stderr, "ukload load: command line too long\n");
			return 2;
		}
		used += n;
	}
	a.elf = (unsigned long)img;
	a.elf_len = len;
	a.initrd = (unsigned long)initrd;
	a.initrd_len = initrd_len;
	a.cmdline = (unsigned long)cmdline;
	a.cmdline_len = used;
	rc = ioctl(fd, UKLOAD_LOAD, &a);
	free(img);
	free(initrd);
	return rc ? fail("load") : 0;
}

static int status(int fd, struct ukload_status *s)
{
	return ioctl(fd, UKLOAD_STATUS, s);
}

/* Copies what the ring holds past the file position to stdout; returns bytes copied. */
static long drain(int fd)
{
	char buf[CHUNK];
	long total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, n, stdout);
		total += n;
	}
	fflush(stdout);
	return total;
}

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * NS_PER_S + t.tv_nsec;
}

/* start: when the wait began (for boot -w: before the start-up IPIs). */
static int cmd_console(int fd, int argc, char **argv, long start)
{
	const struct timespec tick = { 0, POLL_NS };
	struct ukload_status s;
	long limit_ns = 0;

	if (argc >= 2 && !strcmp(argv[0], "-w"))
		limit_ns = atol(argv[1]) * NS_PER_S;
	for (;;) {
		drain(fd);
		if (!limit_ns)
			return 0;
		if (status(fd, &s))
			return fail("status");
		if (s.shm_state == UKL_STATE_EXITED) {
			drain(fd); /* the exit line went out before the exit word */
			fprintf(stderr, "ukload: exit %u after %ld ms\n", s.exit_code,
				(now_ns() - start) / NS_PER_MS);
			return s.exit_code;
		}
		if (now_ns() - start >= limit_ns) {
			fprintf(stderr, "ukload: no exit after %ld s\n", limit_ns / NS_PER_S);
			return EXIT_TIMEOUT;
		}
		nanosleep(&tick, NULL);
	}
}

static int cmd_status(int fd)
{
	static const char *const mod[] = { "idle", "loaded", "running" };
	static const char *const uk[] = { "-", "booting", "up", "exited" };
	struct ukload_status s;

	if (status(fd, &s))
		return fail("status");
	printf("module %s cpu %u cpus 0x%llx unikernel %s", s.state < 3 ? mod[s.state] : "?", s.cpu,
	       (unsigned long long)s.cpus, s.shm_state < 4 ? uk[s.shm_state] : "?");
	if (s.shm_state == UKL_STATE_EXITED)
		printf(" exit %u", s.exit_code);
	printf(" console %llu bytes", (unsigned long long)s.cons_head);
	printf(" range 0x%llx+0x%llx\n", (unsigned long long)s.phys_base,
	       (unsigned long long)s.phys_size);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int fd;

	if (!*cmd) {
		fprintf(stderr, "usage: ukload load [-c CPU] IMAGE [ARG...] | boot");
		fprintf(stderr, " | console [-w S] | stop | status\n");
		return 2;
	}
	fd = open(DEV, O_RDONLY);
	if (fd < 0)
		return fail(DEV " (is ukload.ko loaded?)");
	if (!strcmp(cmd, "load"))
		return cmd_load(fd, argc - 2, argv + 2);
	if (!strcmp(cmd, "boot")) {
		long start = now_ns();

		if (ioctl(fd, UKLOAD_BOOT))
			return fail("boot");
		return argc > 2 ? cmd_console(fd, argc - 2, argv + 2, start) : 0;
	}
	if (!strcmp(cmd, "stop"))
		return ioctl(fd, UKLOAD_STOP) ? fail("stop") : 0;
	if (!strcmp(cmd, "console"))
		return cmd_console(fd, argc - 2, argv + 2, now_ns());
	if (!strcmp(cmd, "status"))
		return cmd_status(fd);
	fprintf(stderr, "ukload: unknown command %s\n", cmd);
	return 2;
}
