/* impi_util.h: logging, address parsing and socket helpers shared by impi-server and
 * impi-relay (Linux user space, single-threaded). */
#ifndef IMPI_UTIL_H
#define IMPI_UTIL_H
#include <netinet/in.h>
#include <stdint.h>

extern int impi_verbose;          /* -v count */
extern const char *impi_progname; /* prefix of every log line */

/* Main thread: log at verbosity `level` (0 = always) to stderr. */
void impi_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Main thread: monotonic time in seconds. */
double impi_now(void);
/* Main thread: parse "a.b.c.d" into *ip (host order); 0 on success. */
int impi_parse_ip(const char *s, uint32_t *ip);
/* Main thread: parse "a.b.c.d:port"; 0 on success. */
int impi_parse_ipport(const char *s, uint32_t *ip, uint16_t *port);
/* Main thread: "a.b.c.d" for a host-order address, in a static rotating buffer. */
const char *impi_ipstr(uint32_t ip);
/* Main thread: non-blocking listening socket on ip:port (port 0 = any); the bound port is
 * returned in *port. Returns the fd or -1 (errno set). */
int impi_listen(uint32_t ip, uint16_t *port);
/* Main thread: non-blocking connect to ip:port from source address `src` (0 = any): the
 * source matters because LAM checks that a connecting host comes from its advertised
 * address (spec §4). Returns the fd (connect may be in progress) or -1. */
int impi_connect(uint32_t src, uint32_t ip, uint16_t port);
/* Main thread: set O_NONBLOCK and TCP_NODELAY on fd. */
void impi_sock_setup(int fd);
/* Main thread: the first non-loopback IPv4 address of this machine, else 127.0.0.1. */
uint32_t impi_default_ip(void);

/* Option values, checked whole: a value these reject must end the program (exit 2) with
 * a message naming the option, never fall back to 0 as atoi/strtoull would. Each returns
 * 0 on success and leaves *v alone on failure. */
/* Main thread: a decimal integer in [min, max]. */
int impi_parse_int(const char *s, long min, long max, long *v);
/* Main thread: an authentication key as LAM reads IMPI_AUTH_KEY (decimal, atoll): an
 * int64, negative ones as their two's complement, or a uint64. */
int impi_parse_key(const char *s, uint64_t *v);
/* Main thread: a duration in seconds, finite and >= 0. */
int impi_parse_seconds(const char *s, double *v);
/* Main thread: "none", "key" or both comma-separated ("0"/"1" as synonyms) into a mask
 * of 1 << IMPI_AUTH_*. */
int impi_parse_auth(const char *s, uint32_t *mask);
/* Main thread: print "<progname>: option <opt>: '<value>' is not <want>" to stderr. */
void impi_bad_option(const char *opt, const char *value, const char *want);
#endif
