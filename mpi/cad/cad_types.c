/*
 * cad_types.c: the element types and which predefined op is defined on which, following
 * MPI's table of reduction ops (MPI 4.0, section 6.9.2): MIN/MAX on integers and floating
 * types; SUM/PROD also on complex; logical ops on integers and logicals; bitwise ops on
 * integers and bytes; MINLOC/MAXLOC only on the value-index pairs.
 */
#include "cad_internal.h"

enum kind { K_NONE, K_INT, K_FLOAT, K_COMPLEX, K_BOOL, K_BYTE, K_PAIR, K_DERIVED };

#define BIT(op) (1u << (op))
#define ARITH   (BIT(CAD_OP_SUM) | BIT(CAD_OP_PROD))
#define MINMAX  (BIT(CAD_OP_MIN) | BIT(CAD_OP_MAX))
#define LOGIC   (BIT(CAD_OP_LAND) | BIT(CAD_OP_LOR) | BIT(CAD_OP_LXOR))
#define BITWISE (BIT(CAD_OP_BAND) | BIT(CAD_OP_BOR) | BIT(CAD_OP_BXOR))
#define LOC     (BIT(CAD_OP_MINLOC) | BIT(CAD_OP_MAXLOC))

static const uint32_t ops_of_kind[] = {
    [K_NONE] = 0,
    [K_INT] = ARITH | MINMAX | LOGIC | BITWISE,
    [K_FLOAT] = ARITH | MINMAX,
    [K_COMPLEX] = ARITH,
    [K_BOOL] = LOGIC,
    [K_BYTE] = BITWISE,
    [K_PAIR] = LOC,
    [K_DERIVED] = 0,
};

static const struct {
    uint8_t size, kind;
    const char *name;
} types[CAD_T_COUNT] = {
    [CAD_T_INT8] = {1, K_INT, "INT8"},
    [CAD_T_INT16] = {2, K_INT, "INT16"},
    [CAD_T_INT32] = {4, K_INT, "INT32"},
    [CAD_T_INT64] = {8, K_INT, "INT64"},
    [CAD_T_UINT8] = {1, K_INT, "UINT8"},
    [CAD_T_UINT16] = {2, K_INT, "UINT16"},
    [CAD_T_UINT32] = {4, K_INT, "UINT32"},
    [CAD_T_UINT64] = {8, K_INT, "UINT64"},
    [CAD_T_FLOAT] = {sizeof(float), K_FLOAT, "FLOAT"},
    [CAD_T_DOUBLE] = {sizeof(double), K_FLOAT, "DOUBLE"},
    [CAD_T_LONG_DOUBLE] = {sizeof(long double), K_FLOAT, "LONG_DOUBLE"},
    [CAD_T_C_FLOAT_COMPLEX] = {2 * sizeof(float), K_COMPLEX, "C_FLOAT_COMPLEX"},
    [CAD_T_C_DOUBLE_COMPLEX] = {2 * sizeof(double), K_COMPLEX, "C_DOUBLE_COMPLEX"},
    [CAD_T_C_LONG_DOUBLE_COMPLEX] = {2 * sizeof(long double), K_COMPLEX, "C_LONG_DOUBLE_COMPLEX"},
    [CAD_T_BOOL] = {1, K_BOOL, "BOOL"},
    [CAD_T_BYTE] = {1, K_BYTE, "BYTE"},
    [CAD_T_FLOAT_INT] = {sizeof(struct cad_float_int), K_PAIR, "FLOAT_INT"},
    [CAD_T_DOUBLE_INT] = {sizeof(struct cad_double_int), K_PAIR, "DOUBLE_INT"},
    [CAD_T_LONG_INT] = {sizeof(struct cad_long_int), K_PAIR, "LONG_INT"},
    [CAD_T_2INT] = {sizeof(struct cad_2int), K_PAIR, "2INT"},
    [CAD_T_SHORT_INT] = {sizeof(struct cad_short_int), K_PAIR, "SHORT_INT"},
    [CAD_T_LONG_DOUBLE_INT] = {sizeof(struct cad_long_double_int), K_PAIR, "LONG_DOUBLE_INT"},
    [CAD_T_DERIVED] = {0, K_DERIVED, "DERIVED"},
};

static const char *const op_names[CAD_OP_COUNT] = {
    [CAD_OP_SUM] = "SUM",   [CAD_OP_PROD] = "PROD",     [CAD_OP_MIN] = "MIN",
    [CAD_OP_MAX] = "MAX",   [CAD_OP_LAND] = "LAND",     [CAD_OP_LOR] = "LOR",
    [CAD_OP_LXOR] = "LXOR", [CAD_OP_BAND] = "BAND",     [CAD_OP_BOR] = "BOR",
    [CAD_OP_BXOR] = "BXOR", [CAD_OP_MINLOC] = "MINLOC", [CAD_OP_MAXLOC] = "MAXLOC",
    [CAD_OP_USER] = "USER",
};

static int known_type(int dtype)
{
    return dtype > 0 && dtype < CAD_T_COUNT;
}

/* Any context. */
size_t cad_type_size(int dtype)
{
    return known_type(dtype) ? types[dtype].size : 0;
}

/* Any context. A user op takes any known type: the user function interprets the data. */
int cad_op_defined(int op, int dtype)
{
    if (!known_type(dtype) || op <= 0 || op >= CAD_OP_COUNT)
        return 0;
    if (op == CAD_OP_USER)
        return 1;
    return (ops_of_kind[types[dtype].kind] >> op) & 1;
}

/* Any context. */
const char *cad_op_name(int op)
{
    return op > 0 && op < CAD_OP_COUNT ? op_names[op] : "?";
}

/* Any context. */
const char *cad_dtype_name(int dtype)
{
    return known_type(dtype) ? types[dtype].name : "?";
}
