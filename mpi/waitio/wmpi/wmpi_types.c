/*
 * wmpi_types.c: the published datatypes and reduction ops (spec 7.4), their sizes, their
 * local-MPI equivalents, the element-wise reductions the Kings apply, and the layer's one
 * error printer.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

#include "wmpi_int.h"

/* Any caller, any time: one line "call: message" on stderr; returns the error value 1. */
int wmpi_err(const char *call, const char *fmt, ...)
{
    va_list ap;
    char msg[256];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", call, msg);
    return 1;
}

/* Any caller: the natural C size of a published datatype (LP64), error on anything else. */
int wmpi_type_bytes(const char *call, WAITIO_MPI_Datatype dt, size_t *size)
{
    switch (dt) {
    case WAITIO_MPI_INT:
        *size = sizeof(int);
        return 0;
    case WAITIO_MPI_LONG:
        *size = sizeof(long);
        return 0;
    case WAITIO_MPI_CHAR:
        *size = sizeof(char);
        return 0;
    case WAITIO_MPI_FLOAT:
        *size = sizeof(float);
        return 0;
    case WAITIO_MPI_DOUBLE:
        *size = sizeof(double);
        return 0;
    }
    return wmpi_err(call, "unknown datatype %#x", (unsigned)dt);
}

/* Any caller: count elements of dt in bytes, checked for sign and overflow. */
int wmpi_bytes(const char *call, int count, WAITIO_MPI_Datatype dt, size_t *bytes)
{
    size_t size = 0;

    if (wmpi_type_bytes(call, dt, &size))
        return 1;
    if (count < 0)
        return wmpi_err(call, "negative count %d", count);
    if ((size_t)count > SIZE_MAX / size)
        return wmpi_err(call, "count %d of %zu-byte elements overflows", count, size);
    *bytes = (size_t)count * size;
    return 0;
}

/* Any caller: as wmpi_bytes, for data that also travels through the local MPI as bytes. */
int wmpi_int_bytes(const char *call, int count, WAITIO_MPI_Datatype dt, int *bytes)
{
    size_t b = 0;

    if (wmpi_bytes(call, count, dt, &b))
        return 1;
    if (b > INT_MAX)
        return wmpi_err(call, "%zu bytes exceed the local MPI's int count", b);
    *bytes = (int)b;
    return 0;
}

/* waitio_mpi_type_size: the public query; *size untouched on error. */
int waitio_mpi_type_size(WAITIO_MPI_Datatype dt, int *size)
{
    size_t s = 0;

    if (!size)
        return wmpi_err("waitio_mpi_type_size", "NULL size pointer");
    if (wmpi_type_bytes("waitio_mpi_type_size", dt, &s))
        return 1;
    *size = (int)s;
    return 0;
}
WMPI_ALIAS(WAITIO_MPI_Type_size, waitio_mpi_type_size);

/* Any caller: (dt, op) must be a reduction we implement; the local MPI's names for them.
 * CHAR reduces as signed char (C's char on x86-64); MPI forbids reductions on MPI_CHAR. */
int wmpi_op_check(const char *call, WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, MPI_Datatype *mdt,
                  MPI_Op *mop)
{
    switch (dt) {
    case WAITIO_MPI_INT:
        *mdt = MPI_INT;
        break;
    case WAITIO_MPI_LONG:
        *mdt = MPI_LONG;
        break;
    case WAITIO_MPI_CHAR:
        *mdt = MPI_SIGNED_CHAR;
        break;
    case WAITIO_MPI_FLOAT:
        *mdt = MPI_FLOAT;
        break;
    case WAITIO_MPI_DOUBLE:
        *mdt = MPI_DOUBLE;
        break;
    default:
        return wmpi_err(call, "unknown datatype %#x", (unsigned)dt);
    }
    switch (op) {
    case WAITIO_MPI_SUM:
        *mop = MPI_SUM;
        break;
    case WAITIO_MPI_MAX:
        *mop = MPI_MAX;
        break;
    case WAITIO_MPI_MIN:
        *mop = MPI_MIN;
        break;
    default:
        return wmpi_err(call, "unknown reduction op %#x", (unsigned)op);
    }
    return 0;
}

/* One element-wise loop per (type, op). MAX and MIN compare with the accumulator, which
 * starts as the first contribution: no sentinel such as DBL_MIN (spec 9.3's quirk). */
#define WMPI_REDUCE(T, acc, in, n, op)                                                             \
    do {                                                                                           \
        T *a_ = (T *)(acc);                                                                        \
        const T *b_ = (const T *)(in);                                                             \
        for (size_t i_ = 0; i_ < (n); i_++) {                                                      \
            if ((op) == WAITIO_MPI_SUM)                                                            \
                a_[i_] = (T)(a_[i_] + b_[i_]);                                                     \
            else if ((op) == WAITIO_MPI_MAX)                                                       \
                a_[i_] = b_[i_] > a_[i_] ? b_[i_] : a_[i_];                                        \
            else                                                                                   \
                a_[i_] = b_[i_] < a_[i_] ? b_[i_] : a_[i_];                                        \
        }                                                                                          \
    } while (0)

/* A King combining contributions: acc and in hold count elements of dt each. */
void wmpi_op_apply(WAITIO_MPI_Datatype dt, WAITIO_MPI_Op op, void *acc, const void *in,
                   size_t count)
{
    switch (dt) {
    case WAITIO_MPI_INT:
        WMPI_REDUCE(int, acc, in, count, op);
        break;
    case WAITIO_MPI_LONG:
        WMPI_REDUCE(long, acc, in, count, op);
        break;
    case WAITIO_MPI_CHAR:
        WMPI_REDUCE(signed char, acc, in, count, op);
        break;
    case WAITIO_MPI_FLOAT:
        WMPI_REDUCE(float, acc, in, count, op);
        break;
    case WAITIO_MPI_DOUBLE:
        WMPI_REDUCE(double, acc, in, count, op);
        break;
    }
}
