/*
 * dtpoolsconf.h: the configure answers of MPICH's datatype pool generator (test/mpi/
 * dtpools, which the suite's datatype-heavy tests link) for programs built with
 * mpi/bin/ukmpicc. tests/mpich/run.sh puts it where dtpools' sources look for it.
 */
#ifndef DTPOOLSCONF_H_INCLUDED
#define DTPOOLSCONF_H_INCLUDED
#define HAVE_INTTYPES_H  1
#define HAVE_LIMITS_H    1
#define HAVE_MEMSET      1
#define HAVE_STDINT_H    1
#define HAVE_STDLIB_H    1
#define HAVE_STRDUP      1
#define HAVE_STRINGS_H   1
#define HAVE_STRING_H    1
#define HAVE_SYS_STAT_H  1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H    1
#define STDC_HEADERS     1
#endif
