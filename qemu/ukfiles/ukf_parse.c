/* ukf_parse.c: see ukf.h. */
#include "ukf.h"
#include "uk/fspath.h"
#include <stdio.h>
#include <string.h>

#define UKF_HELLO    "ukfiles 1\n"
#define UKF_LINE_MAX 80 /* longer than any record header line the kernel writes */
#define UKF_NUMS     3

/* Any thread: the header line at buf[*off]: its verb and up to UKF_NUMS decimal numbers,
 * each at most `max[i]`. *off moves past the '\n'. 0, or -1 with err set. */
static int header(const uint8_t *buf, size_t len, size_t *off, char *verb, uint64_t *num, int want,
                  const uint64_t *max, char *err)
{
    size_t o = *off, end = o;
    while (end < len && end - o < UKF_LINE_MAX && buf[end] != '\n')
        end++;
    if (end >= len || buf[end] != '\n') {
        snprintf(err, UKF_ERR_MAX, "%s record header at byte %zu",
                 end >= len ? "truncated" : "overlong", o);
        return -1;
    }
    *verb = (char)buf[o++];
    for (int i = 0; i < want; i++) {
        if (o >= end || buf[o] != ' ' || o + 1 >= end || buf[o + 1] < '0' || buf[o + 1] > '9')
            goto bad;
        o++;
        uint64_t v = 0;
        while (o < end && buf[o] >= '0' && buf[o] <= '9') {
            unsigned d = (unsigned)(buf[o++] - '0');
            if (d > max[i] || v > (max[i] - d) / 10)
                goto bad;
            v = v * 10 + d;
        }
        num[i] = v;
    }
    if (o != end)
        goto bad;
    *off = end + 1;
    return 0;
bad:
    snprintf(err, UKF_ERR_MAX, "malformed '%c' record at byte %zu", *verb, *off);
    return -1;
}

/* Any thread; see ukf.h. */
int ukf_parse(const uint8_t *buf, size_t len, const struct ukf_sink *s, void *ctx,
              char err[UKF_ERR_MAX])
{
    uint8_t open[UKF_IDS] = {0};
    size_t off = sizeof UKF_HELLO - 1;
    int rc = -1;
    err[0] = 0;
    if (len < off || memcmp(buf, UKF_HELLO, off)) {
        snprintf(err, UKF_ERR_MAX, "not an output-file stream (no \"ukfiles 1\" line)");
        return -1;
    }
    while (off < len) {
        size_t at = off;
        char verb = (char)buf[off];
        uint64_t n[UKF_NUMS];
        if (verb == 'O') {
            const uint64_t max[] = {UKF_IDS - 1, 1, FS_PATH_MAX - 1};
            char path[FS_PATH_MAX];
            if (header(buf, len, &off, &verb, n, 3, max, err))
                goto out;
            if (len - off < n[2]) {
                snprintf(err, UKF_ERR_MAX, "truncated path at byte %zu", off);
                goto out;
            }
            memcpy(path, buf + off, n[2]);
            path[n[2]] = 0;
            off += n[2];
            if (n[2] == 0 || !fs_path_canonical(path, sizeof path) || memchr(path, 0, n[2])) {
                snprintf(err, UKF_ERR_MAX, "unsafe path in the record at byte %zu", at);
                goto out;
            }
            if (open[n[0]]) {
                snprintf(err, UKF_ERR_MAX, "id %d opened twice (byte %zu)", (int)n[0], at);
                goto out;
            }
            if (s->open(ctx, (int)n[0], (int)n[1], path)) {
                snprintf(err, UKF_ERR_MAX, "cannot create '%.64s'", path);
                goto out;
            }
            open[n[0]] = 1;
        } else if (verb == 'W') {
            const uint64_t max[] = {UKF_IDS - 1, INT64_MAX, INT64_MAX};
            if (header(buf, len, &off, &verb, n, 3, max, err))
                goto out;
            if (!open[n[0]] || len - off < n[2] || n[2] > INT64_MAX - n[1]) {
                snprintf(err, UKF_ERR_MAX, "%s in the record at byte %zu",
                         !open[n[0]]        ? "write to an id that is not open"
                         : len - off < n[2] ? "truncated data"
                                            : "offset past 2^63",
                         at);
                goto out;
            }
            if (s->write(ctx, (int)n[0], n[1], buf + off, n[2])) {
                snprintf(err, UKF_ERR_MAX, "cannot write (record at byte %zu)", at);
                goto out;
            }
            off += n[2];
        } else if (verb == 'C') {
            const uint64_t max[] = {UKF_IDS - 1};
            if (header(buf, len, &off, &verb, n, 1, max, err))
                goto out;
            if (!open[n[0]]) {
                snprintf(err, UKF_ERR_MAX, "close of an id that is not open (byte %zu)", at);
                goto out;
            }
            s->close(ctx, (int)n[0]);
            open[n[0]] = 0;
        } else {
            snprintf(err, UKF_ERR_MAX, "unknown record at byte %zu", at);
            goto out;
        }
    }
    rc = 0;
out:
    for (int id = 0; id < UKF_IDS; id++)
        if (open[id])
            s->close(ctx, id);
    return rc;
}
