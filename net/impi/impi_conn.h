/* impi_conn.h: a non-blocking TCP connection with an input buffer and an output queue,
 * driven by epoll. Single-threaded; the connection owns both buffers. */
#ifndef IMPI_CONN_H
#define IMPI_CONN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct impi_conn {
    int fd;
    uint8_t *in; /* unconsumed input is in[in_off .. in_len) */
    size_t in_off, in_len, in_cap;
    uint8_t *out; /* pending output is out[out_off .. out_len) */
    size_t out_off, out_len, out_cap;
    bool eof;      /* peer closed its side */
    bool want_out; /* EPOLLOUT currently registered */
    uint64_t rx_bytes, tx_bytes;
    char name[64]; /* for log messages */
};

/* Main thread: initialise c around fd (may be -1) and name it. */
void impi_conn_init(struct impi_conn *c, int fd, const char *name);
/* Main thread: close the fd (unregistering it from ep) and free the buffers. */
void impi_conn_close(struct impi_conn *c, int ep);
/* Main thread: register fd with ep for input, with data pointer `tag`. */
int impi_conn_watch(struct impi_conn *c, int ep, void *tag);
/* Main thread: read what is available (at most `limit` bytes buffered). Returns 0, or -1
 * on a socket error (errno); sets c->eof when the peer closed. */
int impi_conn_read(struct impi_conn *c, size_t limit);
/* Main thread: pointer to and length of the unconsumed input. */
static inline const uint8_t *impi_conn_data(const struct impi_conn *c)
{
    return c->in + c->in_off;
}
static inline size_t impi_conn_avail(const struct impi_conn *c)
{
    return c->in_len - c->in_off;
}
/* Main thread: drop n bytes of consumed input. */
void impi_conn_consume(struct impi_conn *c, size_t n);
/* Main thread: queue n bytes (copied) for output; reserve returns space for n bytes the
 * caller fills at once. Returns -1 on allocation failure. */
int impi_conn_send(struct impi_conn *c, const void *data, size_t n);
uint8_t *impi_conn_reserve(struct impi_conn *c, size_t n);
/* Main thread: write as much queued output as the socket takes and (un)register EPOLLOUT
 * on ep accordingly. Returns -1 on a socket error. */
int impi_conn_flush(struct impi_conn *c, int ep, void *tag);
/* Main thread: bytes still queued for output. */
static inline size_t impi_conn_pending(const struct impi_conn *c)
{
    return c->out_len - c->out_off;
}
#endif
