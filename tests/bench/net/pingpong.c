/*
 * pingpong.c: the Linux side of the network benchmark: a static program that is the
 * whole user space (/init) of a Debian-kernel guest booted by qemu/uknodes on the same
 * virtio-net NIC and hub as the unikernel. It loads the virtio-net modules, sets the
 * address from "node=I ip=A.B.C.D" on the kernel command line, and runs the protocol of
 * tests/uk/net_bench.c: node 1 echoes on port 6000 and sinks on 6001; node 0 prints
 *   bench: tcp_rtt_us=X tcp_bulk_MBps=Y
 * The guest ends through isa-debug-exit (exit code 0 = success), like the unikernel.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PINGS  1000
#define WARMUP 50

static void finish(int code)
{
    fflush(stdout);
    if (ioperm(0xf4, 4, 1) == 0)
        outb((unsigned char)code, 0xf4); /* QEMU exits with (code << 1) | 1 */
    _exit(code);
}

static void die(const char *what)
{
    printf("pingpong: %s: %s\n", what, strerror(errno));
    finish(5);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void load_modules(void)
{
    static const char *const mods[] = {
        "virtio_ring", "virtio",   "virtio_pci_modern_dev", "virtio_pci_legacy_dev",
        "virtio_pci",  "failover", "net_failover",          "virtio_net"};
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
        char p[64];
        snprintf(p, sizeof p, "/m/%s.ko", mods[i]);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            die(p);
        if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST)
            die(p);
        close(fd);
    }
}

static void if_up(const char *name, uint32_t ip, uint32_t mask)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq r;
    memset(&r, 0, sizeof r);
    strncpy(r.ifr_name, name, IFNAMSIZ - 1);
    struct sockaddr_in *a = (struct sockaddr_in *)&r.ifr_addr;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(ip);
    if (ioctl(s, SIOCSIFADDR, &r) != 0)
        die("SIOCSIFADDR");
    a->sin_addr.s_addr = htonl(mask);
    if (ioctl(s, SIOCSIFNETMASK, &r) != 0)
        die("SIOCSIFNETMASK");
    if (ioctl(s, SIOCGIFFLAGS, &r) != 0)
        die("SIOCGIFFLAGS");
    r.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &r) != 0)
        die("SIOCSIFFLAGS");
    close(s);
}

static void full_write(int fd, const void *b, size_t n)
{
    const char *p = b;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r <= 0)
            die("write");
        p += r, n -= (size_t)r;
    }
}

static void full_read(int fd, void *b, size_t n)
{
    char *p = b;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            die("read");
        p += r, n -= (size_t)r;
    }
}

static int listen_on(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4) != 0)
        die("listen");
    return s;
}

static int connect_to(uint32_t ip, int port)
{
    for (int tries = 0; tries < 600; tries++) {
        int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(ip);
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return s;
        }
        close(s);
        usleep(100000);
    }
    die("connect");
    return -1;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    char cmd[1024] = "";
    mkdir("/proc", 0755);
    mount("proc", "/proc", "proc", 0, 0);
    FILE *f = fopen("/proc/cmdline", "r");
    if (f) {
        if (!fgets(cmd, sizeof cmd, f))
            cmd[0] = 0;
        fclose(f);
    }
    int node = 0;
    uint32_t ip = 0x0a000001, peer;
    uint64_t total = 32u << 20;
    char *p;
    if ((p = strstr(cmd, "node=")))
        node = atoi(p + 5);
    if ((p = strstr(cmd, " ip="))) {
        struct in_addr a;
        char buf[32];
        sscanf(p + 4, "%31[0-9.]", buf);
        if (inet_aton(buf, &a))
            ip = ntohl(a.s_addr);
    }
    if ((p = strstr(cmd, "bench_bytes=")))
        total = strtoull(p + 12, 0, 0);
    peer = ip - (uint32_t)node + (uint32_t)(1 - node);
    load_modules();
    if_up("eth0", ip, 0xffffff00u);
    int one = 1;
    if (node == 1) {
        int le = listen_on(6000), ls = listen_on(6001);
        int e = accept(le, 0, 0);
        setsockopt(e, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        char c;
        while (read(e, &c, 1) == 1)
            full_write(e, &c, 1);
        close(e);
        int s = accept(ls, 0, 0);
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        uint64_t n, got = 0;
        full_read(s, &n, 8);
        static char buf[65536];
        while (got < n) {
            ssize_t r = read(s, buf, sizeof buf);
            if (r <= 0)
                die("read");
            got += (uint64_t)r;
        }
        full_write(s, "!", 1);
        while (read(s, buf, sizeof buf) > 0) /* until the client closes */
            ;
        finish(0);
    }
    static double rtt[PINGS];
    int e = connect_to(peer, 6000);
    for (int i = 0; i < WARMUP + PINGS; i++) {
        char c = 'x';
        double t0 = now_us();
        full_write(e, &c, 1);
        full_read(e, &c, 1);
        if (i >= WARMUP)
            rtt[i - WARMUP] = now_us() - t0;
    }
    close(e);
    qsort(rtt, PINGS, sizeof rtt[0], cmp);
    int s = connect_to(peer, 6001);
    static char buf[65536];
    memset(buf, 7, sizeof buf);
    double t0 = now_us();
    full_write(s, &total, 8);
    for (uint64_t sent = 0; sent < total;) {
        size_t n = total - sent < sizeof buf ? (size_t)(total - sent) : sizeof buf;
        full_write(s, buf, n);
        sent += n;
    }
    char c;
    full_read(s, &c, 1);
    double dt = now_us() - t0;
    close(s);
    printf("bench: tcp_rtt_us=%.3f tcp_bulk_MBps=%.2f\n", rtt[PINGS / 2], total / dt);
    usleep(200000);
    finish(0);
}
