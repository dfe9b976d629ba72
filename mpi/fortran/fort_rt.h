/*
 * fort_rt.h: the run time of the Fortran bindings (gfortran's calling convention): the
 * integer handle tables (C's handles are pointers, Fortran's are INTEGERs), the status
 * layout of INTEGER(MPI_STATUS_SIZE) arrays, and the sentinels MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE, which are Fortran common blocks recognised by
 * address. The wrappers themselves are generated from mpi/fortran/bindings.def by
 * mpi/fortran/gen.py, which also reads the FORT_ constants below.
 */
#ifndef FORT_RT_H
#define FORT_RT_H
#include "mpi.h"

/* The Fortran status: MPI_SOURCE, MPI_TAG, MPI_ERROR (1-based, as Fortran indexes it),
 * then the cancelled flag and the received byte count as two INTEGERs (low, high). */
#define FORT_STATUS_SIZE 6
#define FORT_SOURCE      1
#define FORT_TAG         2
#define FORT_ERROR       3
#define FORT_CANCELLED   4
#define FORT_COUNT_LO    5
#define FORT_COUNT_HI    6
#define FORT_COUNT_SHIFT 32
/* Fortran LOGICAL values as gfortran stores them. */
#define FORT_TRUE        1
#define FORT_FALSE       0
/* The integer of every null handle; predefined handles follow from 1. */
#define FORT_NULL_HANDLE 0
/* What MPI_Comm_c2f and friends return when the table cannot grow (out of memory): it
 * converts back to the null handle, so the next call with it fails with MPI_ERR_COMM etc. */
#define FORT_HANDLE_NONE (-1)

/* The kinds of handles with a table. */
enum fort_kind { FORT_COMM, FORT_DTYPE, FORT_OP, FORT_GROUP, FORT_REQ, FORT_NKINDS };

/* The predefined handles of one kind, index = Fortran integer (entry 0 is null). */
struct fort_predef {
    void *const *obj;
    int n;
};
/* Generated from bindings.def (build/.../mpi_fort.c). */
extern const struct fort_predef fort_predefs[FORT_NKINDS];

/* The common blocks of mpif.h and the mpi module; gfortran names a common block /x/ x_. */
extern MPI_Fint ukmpi_f_bottom_, ukmpi_f_in_place_;
extern MPI_Fint ukmpi_f_status_ignore_[FORT_STATUS_SIZE];
extern MPI_Fint ukmpi_f_statuses_ignore_[FORT_STATUS_SIZE];

void *fort_f2c(enum fort_kind kind, MPI_Fint f);
MPI_Fint fort_c2f(enum fort_kind kind, void *handle);
void fort_release(enum fort_kind kind, MPI_Fint f);
void *fort_buf(void *buf);
int fort_status_ignored(const MPI_Fint *f);
int fort_statuses_ignored(const MPI_Fint *f);
void fort_status_c2f(const MPI_Status *c, MPI_Fint *f);
void fort_status_f2c(const MPI_Fint *f, MPI_Status *c);
void fort_str_c2f(const char *c, char *f, size_t flen);

#endif
