/*
 * wio_text.c: a tiny line builder for the core's error messages (the core is freestanding:
 * no snprintf). Output is always NUL-terminated and silently cut at the buffer's end.
 */
#include "wio_core.h"

/* Any context; buf[cap] (cap >= 1) is the caller's. */
void wio_text_init(struct wio_text *t, char *buf, size_t cap)
{
    t->buf = buf;
    t->cap = cap;
    t->len = 0;
    buf[0] = 0;
}

/* Any context. */
void wio_text_str(struct wio_text *t, const char *s)
{
    while (*s && t->len + 1 < t->cap)
        t->buf[t->len++] = *s++;
    t->buf[t->len] = 0;
}

/* Any context: v in decimal. */
void wio_text_u64(struct wio_text *t, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char s[24];
    for (int i = 0; i < n; i++)
        s[i] = d[n - 1 - i];
    s[n] = 0;
    wio_text_str(t, s);
}

/* Any context: "peer 3 (PB 1 rank 0, 127.0.0.1:40001)", every name of a process. */
void wio_text_peer(struct wio_text *t, struct wio_core *c, uint32_t index)
{
    wio_text_str(t, "peer ");
    wio_text_u64(t, index);
    if (index >= c->nprocs) {
        wio_text_str(t, " (unknown)");
        return;
    }
    struct wio_peer *p = &c->peers[index];
    wio_text_str(t, " (PB ");
    wio_text_u64(t, p->pb);
    wio_text_str(t, " rank ");
    wio_text_u64(t, p->rank);
    wio_text_str(t, ", ");
    for (int i = 0; i < 4; i++) {
        wio_text_u64(t, p->addr.ip[i]);
        wio_text_str(t, i < 3 ? "." : ":");
    }
    wio_text_u64(t, p->addr.port);
    wio_text_str(t, ")");
}
