/*
 * ukf.h: the parser of a node's output-file stream (unikernel/kernel/files.h has the
 * format), and what it hands its sink. Used by qemu/ukfiles and its fuzz target.
 *
 * The stream comes from a guest: every number is range-checked, every path must be
 * canonical (uk/fspath.h, so it stays inside the output directory), every id must be
 * open; the first record that breaks a rule ends the parse with a reason and its offset.
 * The records before it have been applied.
 */
#ifndef UKF_H
#define UKF_H
#include <stddef.h>
#include <stdint.h>

#define UKF_IDS     256 /* ids the kernel hands out: kernel/files.h FILES_OUT_MAX */
#define UKF_ERR_MAX 128

struct ukf_sink {
    /* File `id` (< UKF_IDS, not open) opens at canonical, non-empty `path`. */
    int (*open)(void *ctx, int id, int trunc, const char *path);
    /* len bytes at offset off of open file `id`. */
    int (*write)(void *ctx, int id, uint64_t off, const void *data, size_t len);
    void (*close)(void *ctx, int id);
};

/* Any thread: parse the whole stream buf[len], calling s's functions in order (open and
 * write return 0, or non-zero to stop the parse). 0, or -1 with a reason in
 * err[UKF_ERR_MAX]. Ids still open at the end are closed. */
int ukf_parse(const uint8_t *buf, size_t len, const struct ukf_sink *s, void *ctx,
              char err[UKF_ERR_MAX]);

#endif
