/*
 * cad_internal.h: what the mpi/cad/ files share and nobody else needs: building error
 * messages without a printf (the core is freestanding) and the build-error record.
 */
#ifndef MPI_CAD_INTERNAL_H
#define MPI_CAD_INTERNAL_H
#include "cad.h"

/* Any context. Start err's message: "node N (TYPE): " for node >= 0, "graph: " otherwise;
 * returns -code so that callers can `return cad_fail(...)` after appending. err may be NULL
 * (then all the cad_msg_* calls do nothing). */
int cad_fail(struct cad_error *err, int code, int node, int type);
void cad_msg_str(struct cad_error *err, const char *s);
void cad_msg_dec(struct cad_error *err, int64_t v);
void cad_msg_udec(struct cad_error *err, uint64_t v);
void cad_msg_hex(struct cad_error *err, uint64_t v);

/* Any context: the type's name for messages ("SEND", ...; "?" if unknown). */
const char *cad_type_name(int type);

/* Any context: names for messages ("SUM", "DOUBLE"; "?" if unknown). */
const char *cad_op_name(int op);
const char *cad_dtype_name(int dtype);

/* The value-index pairs of MINLOC/MAXLOC, laid out as MPI's C structs are on LP64. */
struct cad_float_int {
    float v;
    int32_t i;
};
struct cad_double_int {
    double v;
    int32_t i;
};
struct cad_long_int {
    int64_t v;
    int32_t i;
};
struct cad_2int {
    int32_t v, i;
};
struct cad_short_int {
    int16_t v;
    int32_t i;
};
struct cad_long_double_int {
    long double v;
    int32_t i;
};

/* Any context: the header and layout checks of cad_validate (cad_finalize runs them before
 * it writes the successor lists, whose place it computes from the header). */
int cad_check_header(const struct cad_graph *g, size_t bytes, struct cad_error *err);

/* Task context (builder): remember the first build error; returns -code. */
int cad_build_fail(struct cad_graph *g, int code, int node);

#endif
