/* fmt.c: kvformat(), see fmt.h. */
#include "kernel/fmt.h"
#include <stdint.h>

struct out {
    char *buf;
    size_t size, n;
};

static void put(struct out *o, char c)
{
    if (o->n + 1 < o->size)
        o->buf[o->n++] = c;
}

static void put_num(struct out *o, uint64_t v, int base, int upper, int neg, int width, int zero,
                    int left)
{
    char tmp[24];
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    int len = 0;
    do {
        tmp[len++] = digits[v % (unsigned)base];
        v /= (unsigned)base;
    } while (v);
    int total = len + neg;
    if (!left && zero && neg)
        put(o, '-');
    for (; !left && total < width; width--)
        put(o, zero ? '0' : ' ');
    if (!(zero && !left) && neg)
        put(o, '-');
    while (len)
        put(o, tmp[--len]);
    for (; left && total < width; width--)
        put(o, ' ');
}

/* Any context. */
size_t kvformat(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {buf, size, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        int left = 0, zero = 0, width = 0, lng = 0;
        for (;; fmt++) {
            if (fmt[1] == '-')
                left = 1;
            else if (fmt[1] == '0')
                zero = 1;
            else
                break;
        }
        while (fmt[1] >= '0' && fmt[1] <= '9')
            width = width * 10 + (*++fmt - '0');
        while (fmt[1] == 'l' || fmt[1] == 'z') {
            fmt++;
            lng++;
        }
        switch (*++fmt) {
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            put_num(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, 0, v < 0, width, zero, left);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            put_num(&o, v, *fmt == 'u' ? 10 : 16, *fmt == 'X', 0, width, zero, left);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uint64_t)va_arg(ap, void *), 16, 0, 0, width, 1, 0);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            int len = 0;
            while (s[len])
                len++;
            for (; !left && len < width; width--)
                put(&o, ' ');
            for (int i = 0; i < len; i++)
                put(&o, s[i]);
            for (; left && len < width; width--)
                put(&o, ' ');
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        case '\0':
            fmt--;
            break;
        default:
            put(&o, '%');
            put(&o, *fmt);
        }
    }
    if (o.size)
        o.buf[o.n] = '\0';
    return o.n;
}

/* Any context. */
size_t kformat(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = kvformat(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
