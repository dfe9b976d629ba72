/*
 * libFuzzer target: the output-file stream parser of qemu/ukfiles (ukf_parse.c) on any
 * bytes, as a guest could send them. The sink checks the parser's promises: every path it
 * hands out is canonical and inside the tree, every id is in range and opened once before
 * it is written or closed, and every write lies inside the input. A trap or a sanitizer
 * report is a finding. Seeds: tests/fuzz/corpus/ukf (hand-written streams).
 */
#include "ukf.h"
#include "uk/fspath.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t opened[UKF_IDS];
static const uint8_t *in_lo, *in_hi;

/* Independently of fspath.h: could `path` name something outside the tree, or be empty? */
static int escapes(const char *path)
{
    size_t n = strlen(path);
    if (n == 0 || n >= FS_PATH_MAX || path[0] == '/' || path[n - 1] == '/' || strstr(path, "//"))
        return 1;
    for (const char *c = path; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : 0) {
        size_t len = strcspn(c, "/");
        if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return 1;
    }
    return 0;
}

static int f_open(void *ctx, int id, int trunc, const char *path)
{
    (void)ctx;
    if (id < 0 || id >= UKF_IDS || opened[id] || (trunc != 0 && trunc != 1) || escapes(path))
        __builtin_trap();
    opened[id] = 1;
    return 0;
}

static int f_write(void *ctx, int id, uint64_t off, const void *p, size_t len)
{
    (void)ctx;
    (void)off;
    const uint8_t *b = p;
    if (id < 0 || id >= UKF_IDS || !opened[id] || b < in_lo || b > in_hi ||
        len > (size_t)(in_hi - b))
        __builtin_trap();
    return 0;
}

static void f_close(void *ctx, int id)
{
    (void)ctx;
    if (id < 0 || id >= UKF_IDS || !opened[id])
        __builtin_trap();
    opened[id] = 0;
}

static const struct ukf_sink sink = {f_open, f_write, f_close};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[UKF_ERR_MAX];
    memset(opened, 0, sizeof opened);
    in_lo = data;
    in_hi = data + size;
    int rc = ukf_parse(data, size, &sink, 0, err);
    for (int id = 0; id < UKF_IDS; id++)
        if (opened[id])
            __builtin_trap(); /* the parser closes what is left open */
    if (rc != 0 && !err[0])
        __builtin_trap(); /* a failure always says why */
    return 0;
}
