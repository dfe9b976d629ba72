/*
 * fort_rt.c: the Fortran bindings' handle tables, sentinels and status translation
 * (fort_rt.h), and C's MPI_Comm_c2f, MPI_Comm_f2c and friends (mpi.h), which are the same
 * tables. A table maps a Fortran integer to the C handle at that index: the predefined
 * handles first (bindings.def's order), then the handles the program made, each in the
 * first free slot. The tables are not locked: a program calls the Fortran bindings from
 * one thread at a time (MPI_THREAD_SERIALIZED at most).
 */
#include "fort_rt.h"
#include <stdlib.h>
#include <string.h>

/* A table's first allocation, in slots; it doubles when full. */
#define FORT_TABLE_MIN 64

/* gfortran aligns a common block of 16 bytes or more to 16, smaller ones less: the C
 * definitions, which the link takes for the blocks, are aligned as the largest. */
#define FORT_COMMON_ALIGN 16
_Alignas(FORT_COMMON_ALIGN) MPI_Fint ukmpi_f_bottom_;
_Alignas(FORT_COMMON_ALIGN) MPI_Fint ukmpi_f_in_place_;
_Alignas(FORT_COMMON_ALIGN) MPI_Fint ukmpi_f_status_ignore_[FORT_STATUS_SIZE];
_Alignas(FORT_COMMON_ALIGN) MPI_Fint ukmpi_f_statuses_ignore_[FORT_STATUS_SIZE];

struct fort_table {
    void **obj;
    int n, cap;
};
static struct fort_table tables[FORT_NKINDS];

/* Any context, first use of a kind: the predefined handles copied in. */
static int table_ready(enum fort_kind kind)
{
    struct fort_table *t = &tables[kind];
    const struct fort_predef *p = &fort_predefs[kind];
    if (t->obj)
        return 1;
    int cap = p->n > FORT_TABLE_MIN ? p->n : FORT_TABLE_MIN;
    t->obj = calloc((size_t)cap, sizeof(*t->obj));
    if (!t->obj)
        return 0;
    for (int i = 0; i < p->n; i++)
        t->obj[i] = p->obj[i];
    t->n = p->n;
    t->cap = cap;
    return 1;
}

/* A wrapper's input handle: the C handle of integer f, null for unknown integers. */
void *fort_f2c(enum fort_kind kind, MPI_Fint f)
{
    if (!table_ready(kind) || f < 0 || f >= tables[kind].n)
        return NULL;
    return tables[kind].obj[f];
}

/* A wrapper's output handle: the integer of a C handle, a new slot the first time. */
MPI_Fint fort_c2f(enum fort_kind kind, void *handle)
{
    if (!handle)
        return FORT_NULL_HANDLE;
    if (!table_ready(kind))
        return FORT_HANDLE_NONE;
    struct fort_table *t = &tables[kind];
    int free_slot = -1;
    for (int i = 1; i < t->n; i++) {
        if (t->obj[i] == handle)
            return i;
        if (!t->obj[i] && i >= fort_predefs[kind].n && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0) {
        if (t->n == t->cap) {
            void **grown = realloc(t->obj, 2 * (size_t)t->cap * sizeof(*grown));
            if (!grown)
                return FORT_HANDLE_NONE;
            t->obj = grown;
            t->cap *= 2;
        }
        free_slot = t->n++;
    }
    t->obj[free_slot] = handle;
    return free_slot;
}

/* A wrapper whose call made the handle null (MPI_Comm_free, a completed request): the
 * integer's slot is free again. Predefined slots are never freed. */
void fort_release(enum fort_kind kind, MPI_Fint f)
{
    if (table_ready(kind) && f >= fort_predefs[kind].n && f < tables[kind].n)
        tables[kind].obj[f] = NULL;
}

/* A wrapper's choice buffer: the sentinels' common blocks become C's sentinels. */
void *fort_buf(void *buf)
{
    if (buf == &ukmpi_f_bottom_)
        return MPI_BOTTOM;
    if (buf == &ukmpi_f_in_place_)
        return MPI_IN_PLACE;
    return buf;
}

/* A wrapper's status argument: is it MPI_STATUS_IGNORE? */
int fort_status_ignored(const MPI_Fint *f)
{
    return f == ukmpi_f_status_ignore_;
}

/* A wrapper's array of statuses: is it MPI_STATUSES_IGNORE? */
int fort_statuses_ignored(const MPI_Fint *f)
{
    return f == ukmpi_f_statuses_ignore_;
}

/* A wrapper after the C call: its status into the Fortran array. */
void fort_status_c2f(const MPI_Status *c, MPI_Fint *f)
{
    unsigned long long count = c->mpi_count_;
    f[FORT_SOURCE - 1] = c->MPI_SOURCE;
    f[FORT_TAG - 1] = c->MPI_TAG;
    f[FORT_ERROR - 1] = c->MPI_ERROR;
    f[FORT_CANCELLED - 1] = c->mpi_cancelled_;
    f[FORT_COUNT_LO - 1] = (MPI_Fint)(unsigned)count;
    f[FORT_COUNT_HI - 1] = (MPI_Fint)(unsigned)(count >> FORT_COUNT_SHIFT);
}

/* A wrapper taking a status (MPI_Get_count): the Fortran array as a C status. */
void fort_status_f2c(const MPI_Fint *f, MPI_Status *c)
{
    c->MPI_SOURCE = f[FORT_SOURCE - 1];
    c->MPI_TAG = f[FORT_TAG - 1];
    c->MPI_ERROR = f[FORT_ERROR - 1];
    c->mpi_cancelled_ = f[FORT_CANCELLED - 1];
    c->mpi_count_ =
        (size_t)((unsigned long long)(unsigned)f[FORT_COUNT_LO - 1] |
                 (unsigned long long)(unsigned)f[FORT_COUNT_HI - 1] << FORT_COUNT_SHIFT);
}

/* A wrapper's CHARACTER*(*) output: C's string, cut to the Fortran length, blank padded. */
void fort_str_c2f(const char *c, char *f, size_t flen)
{
    size_t n = strlen(c);
    if (n > flen)
        n = flen;
    memcpy(f, c, n);
    memset(f + n, ' ', flen - n);
}

/* --- C's conversion functions (MPI-3.1 17.2.4): any C caller ----------------------- */

/* Any C caller. */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm)
{
    return fort_c2f(FORT_COMM, comm);
}
/* Any C caller. */
MPI_Comm MPI_Comm_f2c(MPI_Fint comm)
{
    return fort_f2c(FORT_COMM, comm);
}
/* Any C caller. */
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype)
{
    return fort_c2f(FORT_DTYPE, datatype);
}
/* Any C caller. */
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype)
{
    return fort_f2c(FORT_DTYPE, datatype);
}
/* Any C caller. */
MPI_Fint MPI_Op_c2f(MPI_Op op)
{
    return fort_c2f(FORT_OP, op);
}
/* Any C caller. */
MPI_Op MPI_Op_f2c(MPI_Fint op)
{
    return fort_f2c(FORT_OP, op);
}
/* Any C caller. */
MPI_Fint MPI_Group_c2f(MPI_Group group)
{
    return fort_c2f(FORT_GROUP, group);
}
/* Any C caller. */
MPI_Group MPI_Group_f2c(MPI_Fint group)
{
    return fort_f2c(FORT_GROUP, group);
}
/* Any C caller. */
MPI_Fint MPI_Request_c2f(MPI_Request request)
{
    return fort_c2f(FORT_REQ, request);
}
/* Any C caller. */
MPI_Request MPI_Request_f2c(MPI_Fint request)
{
    return fort_f2c(FORT_REQ, request);
}
/* A C caller holding a Fortran status (MPI-3.1 17.2.5). */
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!c_status || !f_status)
        return MPI_ERR_ARG;
    fort_status_c2f(c_status, f_status);
    return MPI_SUCCESS;
}
/* Any C caller. */
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status || !c_status)
        return MPI_ERR_ARG;
    fort_status_f2c(f_status, c_status);
    return MPI_SUCCESS;
}
