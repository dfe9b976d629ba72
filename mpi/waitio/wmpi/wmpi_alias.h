/*
 * wmpi_alias.h: the upper-case names (spec 7.3). Every waitio_mpi_xxx also exists as the
 * weak alias WAITIO_MPI_Xxx, as the site library gives it with `#pragma weak`; Fortran and
 * C callers use them without a prototype in waitio_mpi.h. An alias must sit in the
 * translation unit that defines its target, so each file invokes this macro right after
 * the function it names.
 */
#ifndef WMPI_ALIAS_H
#define WMPI_ALIAS_H

#define WMPI_ALIAS(upper, lower) extern __typeof__(lower) upper __attribute__((weak, alias(#lower)))

#endif /* WMPI_ALIAS_H */
