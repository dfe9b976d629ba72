# The portable MPI core (freestanding C: the same files build into the unikernel, Linux
# programs and host tests). Host unit tests link these sources directly.
MPI_CORE_SRCS := $(wildcard mpi/core/*.c)
UNIT_SRCS += $(MPI_CORE_SRCS)
UNIT_INC += -Impi/core

# The MPI library's portable parts (mpi/lib/: datatypes, reductions, groups, errors, the
# stubs of unimplemented functions) also build on the host, for the unit tests. The
# communicator, point-to-point and init files need the kernel and are not listed.
MPI_LIB_UNIT_SRCS := $(addprefix mpi/lib/,dtype.c dtype_make.c dtype_flat.c dtype_query.c \
                       status.c op.c op_kernels.c group.c errh.c misc.c topo_dims.c unimpl.c)
UNIT_SRCS += $(MPI_LIB_UNIT_SRCS)
UNIT_INC += -Impi/include -Impi/lib

# mpi.h stays strict C99 and complete enough for typical programs: tests/mpi_h/ holds a
# few, compiled against it (syntax only; they are never run).
MPI_H_CHECKS := $(wildcard tests/mpi_h/*.c)
$(B)/mpi/mpi-h-check.stamp: mpi/include/mpi.h $(MPI_H_CHECKS) | deps
	@mkdir -p $(@D)
	@for f in $(MPI_H_CHECKS); do \
	    $(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Impi/include -fsyntax-only $$f || exit 1; \
	done
	@touch $@
ALL_TARGETS += $(B)/mpi/mpi-h-check.stamp
