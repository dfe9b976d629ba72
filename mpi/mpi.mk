# The portable MPI core (freestanding C: the same files build into the unikernel, Linux
# programs and host tests). Host unit tests link these sources directly.
MPI_CORE_SRCS := $(wildcard mpi/core/*.c)
UNIT_SRCS += $(MPI_CORE_SRCS)
UNIT_INC += -Impi/core
