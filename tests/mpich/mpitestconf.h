/*
 * mpitestconf.h: what MPICH's test suite (test/mpi, tests/mpich/run.sh) would learn from
 * its configure script, answered for programs built with mpi/bin/ukmpicc (newlib on the
 * unikernel, x86_64). Written here, not generated: the suite's configure cannot run
 * against our compiler wrapper. What the library does not provide (MPI-IO, spawn,
 * one-sided windows, threads beyond SERIALIZED, Fortran) is left undefined, which makes
 * the suite's optional parts skip themselves.
 */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED

#define HAVE_STDARG_H             1
#define HAVE_STDINT_H             1
#define HAVE_INTTYPES_H           1
#define HAVE_STDLIB_H             1
#define HAVE_STRING_H             1
#define HAVE_STRINGS_H            1
#define HAVE_MEMORY_H             1
#define HAVE_UNISTD_H             1
#define HAVE_SYS_TYPES_H          1
#define HAVE_SYS_STAT_H           1
#define HAVE_SYS_TIME_H           1
#define STDC_HEADERS              1
#define HAVE_STRDUP               1
#define HAVE_USLEEP               1
#define HAVE_LONG_LONG            1
#define HAVE_LONG_DOUBLE          1
#define HAVE__BOOL                1
#define HAVE_FLOAT__COMPLEX       1
#define HAVE_DOUBLE__COMPLEX      1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define USE_LONG_DOUBLE_COMPLEX   1

/* No threads: a rank is one task with one thread (mpithreadtest.h's "none"). */
#define THREAD_PACKAGE_NAME 1 /* THREAD_PACKAGE_NONE */

#define SIZEOF_SHORT      2
#define SIZEOF_INT        4
#define SIZEOF_LONG       8
#define SIZEOF_LONG_LONG  8
#define SIZEOF_VOID_P     8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t      long

#define PACKAGE_NAME    "mpich-testsuite"
#define PACKAGE_VERSION "4.0.2"
#define VERSION         "4.0.2"

#endif
