/*
 * cad_err.c: error messages for struct cad_error, built piece by piece because the core
 * has no printf. Messages are cut at CAD_MSG_LEN - 1 characters, never overrun.
 */
#include "cad_internal.h"
#include <string.h>

/* Any context. */
const char *cad_type_name(int type)
{
    static const char *const names[] = {"?", "START", "END", "SEND", "RECV", "CALC"};
    return type > 0 && type <= CAD_CALC ? names[type] : names[0];
}

/* Any context. */
void cad_msg_str(struct cad_error *err, const char *s)
{
    if (!err)
        return;
    size_t len = strlen(err->msg);
    while (*s && len < CAD_MSG_LEN - 1)
        err->msg[len++] = *s++;
    err->msg[len] = 0;
}

/* Any context. Digits are produced backwards into a local buffer, then appended. */
void cad_msg_udec(struct cad_error *err, uint64_t v)
{
    char buf[24], *p = buf + sizeof buf;
    *--p = 0;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    cad_msg_str(err, p);
}

/* Any context. */
void cad_msg_dec(struct cad_error *err, int64_t v)
{
    if (v < 0) {
        cad_msg_str(err, "-");
        cad_msg_udec(err, 0 - (uint64_t)v); /* INT64_MIN has no positive int64 */
        return;
    }
    cad_msg_udec(err, (uint64_t)v);
}

/* Any context. */
void cad_msg_hex(struct cad_error *err, uint64_t v)
{
    char buf[24], *p = buf + sizeof buf;
    *--p = 0;
    do
        *--p = "0123456789abcdef"[v & 15];
    while (v >>= 4);
    *--p = 'x';
    *--p = '0';
    cad_msg_str(err, p);
}

/* Any context. */
int cad_fail(struct cad_error *err, int code, int node, int type)
{
    if (err) {
        err->node = node;
        err->code = code;
        err->msg[0] = 0;
        if (node >= 0) {
            cad_msg_str(err, "node ");
            cad_msg_dec(err, node);
            cad_msg_str(err, " (");
            cad_msg_str(err, cad_type_name(type));
            cad_msg_str(err, "): ");
        } else {
            cad_msg_str(err, "graph: ");
        }
    }
    return -code;
}
