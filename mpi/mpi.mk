# The portable MPI core (freestanding C: the same files build into the unikernel, Linux
# programs and host tests). Host unit tests link the parts that need no platform: the
# matching engine and the wire codec (the engine proper needs mpe_plat.h's functions).
MPI_CORE_UNIT_SRCS := mpi/core/match.c mpi/core/match_rank.c mpi/core/mpe_wire.c
UNIT_SRCS += $(MPI_CORE_UNIT_SRCS)
UNIT_INC += -Impi/core
