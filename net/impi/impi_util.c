/* impi_util.c: logging, address parsing and socket helpers (see impi_util.h). */
#include "impi_util.h"
#include "impi_wire.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int impi_verbose;
const char *impi_progname = "impi";

/* Main thread: see impi_util.h. */
void impi_log(int level, const char *fmt, ...)
{
    if (level > impi_verbose)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", impi_progname, line);
}

/* Main thread: see impi_util.h. */
double impi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Main thread: see impi_util.h. */
int impi_parse_ip(const char *s, uint32_t *ip)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *ip = ntohl(a.s_addr);
    return 0;
}

/* Main thread: see impi_util.h. */
int impi_parse_ipport(const char *s, uint32_t *ip, uint16_t *port)
{
    char tmp[64];
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof tmp)
        return -1;
    memcpy(tmp, s, (size_t)(colon - s));
    tmp[colon - s] = 0;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 1 || p > 65535 || impi_parse_ip(tmp, ip))
        return -1;
    *port = (uint16_t)p;
    return 0;
}

/* Main thread: see impi_util.h. */
const char *impi_ipstr(uint32_t ip)
{
    static char bufs[4][16];
    static int k;
    char *b = bufs[k++ & 3];
    snprintf(b, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
    return b;
}

/* Main thread: see impi_util.h. */
void impi_sock_setup(int fd)
{
    int one = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Main thread: see impi_util.h. */
int impi_listen(uint32_t ip, uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(ip);
    sa.sin_port = htons(*port);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&sa, &sl)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    impi_sock_setup(fd);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Main thread: see impi_util.h. */
int impi_connect(uint32_t src, uint32_t ip, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (src) {
        sa.sin_addr.s_addr = htonl(src);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa)) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
    }
    impi_sock_setup(fd);
    sa.sin_addr.s_addr = htonl(ip);
    sa.sin_port = htons(port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Main thread: see impi_util.h. */
uint32_t impi_default_ip(void)
{
    struct ifaddrs *ifa, *i;
    uint32_t ip = 0x7f000001;
    if (getifaddrs(&ifa))
        return ip;
    for (i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        uint32_t a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
        if ((a >> 24) != 127) {
            ip = a;
            break;
        }
    }
    freeifaddrs(ifa);
    return ip;
}

/* True when s starts like a decimal number: a digit, or '-' and a digit (strto* would
 * also take blanks, '+' and an empty string). */
static int decimal_start(const char *s)
{
    return isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]));
}

/* Main thread: see impi_util.h. */
int impi_parse_int(const char *s, long min, long max, long *v)
{
    char *end;
    if (!decimal_start(s))
        return -1;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (*end || errno || x < min || x > max)
        return -1;
    *v = x;
    return 0;
}

/* Main thread: see impi_util.h. */
int impi_parse_key(const char *s, uint64_t *v)
{
    char *end;
    uint64_t x;
    if (!decimal_start(s))
        return -1;
    errno = 0;
    if (s[0] == '-')
        x = (uint64_t)strtoll(s, &end, 10); /* the bits LAM's atoll puts on the wire */
    else
        x = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *v = x;
    return 0;
}

/* Main thread: see impi_util.h. */
int impi_parse_seconds(const char *s, double *v)
{
    char *end;
    if (!isdigit((unsigned char)s[0]) && s[0] != '.')
        return -1;
    errno = 0;
    double x = strtod(s, &end);
    if (*end || errno || !isfinite(x) || x < 0)
        return -1;
    *v = x;
    return 0;
}

/* Main thread: see impi_util.h. */
int impi_parse_auth(const char *s, uint32_t *mask)
{
    uint32_t m = 0;
    const char *t = s;
    for (;;) {
        size_t n = strcspn(t, ",");
        if (n == 4 && !strncmp(t, "none", n))
            m |= 1u << IMPI_AUTH_NONE;
        else if (n == 3 && !strncmp(t, "key", n))
            m |= 1u << IMPI_AUTH_KEY;
        else if (n == 1 && (t[0] == '0' || t[0] == '1'))
            m |= 1u << (t[0] == '0' ? IMPI_AUTH_NONE : IMPI_AUTH_KEY);
        else
            return -1; /* a typo, an empty item, another case: never "accept anything" */
        if (!t[n])
            break;
        t += n + 1;
    }
    *mask = m;
    return 0;
}

/* Main thread: see impi_util.h. */
void impi_bad_option(const char *opt, const char *value, const char *want)
{
    fprintf(stderr, "%s: option %s: '%s' is not %s\n", impi_progname, opt, value, want);
}
