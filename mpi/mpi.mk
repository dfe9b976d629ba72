# The portable MPI core (freestanding C: the same files build into the unikernel, Linux
# programs and host tests). Host unit tests link the parts that need no platform: the
# matching engine and the wire codec (the engine proper needs mpe_plat.h's functions).
MPI_CORE_UNIT_SRCS := mpi/core/match.c mpi/core/match_rank.c mpi/core/mpe_wire.c
UNIT_SRCS += $(MPI_CORE_UNIT_SRCS)
UNIT_INC += -Impi/core

# CAD graphs (non-blocking collectives): builder, validator, ready-set logic, CALC kernels.
# Freestanding and platform-free, so all of it is unit-tested on the host.
MPI_CAD_SRCS := $(wildcard mpi/cad/*.c)
UNIT_SRCS += $(MPI_CAD_SRCS)
UNIT_INC += -Impi/cad
$(B)/unit/unit-tests: $(wildcard mpi/cad/*.h)

# The MPI library applications link (ukmpicc adds it): mpi/lib/*.c built with the
# application flags, like the application runtime.
MPI_LIB_SRCS := $(wildcard mpi/lib/*.c)
MPI_LIB_OBJS := $(patsubst %.c,$(B)/app/obj/%.o,$(MPI_LIB_SRCS))
MPI_LIB := $(B)/app/libmpi.a
MPI_LIB_INC := -Impi/include -Impi/lib -Impi/core -Iunikernel/libc/app -Iunikernel/include

$(B)/app/obj/mpi/lib/%.o: mpi/lib/%.c $(wildcard mpi/lib/*.h mpi/include/*.h mpi/core/*.h) \
                          mk/config.mk | $(NEWLIB_U_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(APP_CFLAGS) $(WARN) $(WERROR) $(MPI_LIB_INC) -c $< -o $@

$(MPI_LIB): $(MPI_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(APP_CONF): $(MPI_LIB)
ALL_TARGETS += $(MPI_LIB)

# Example programs (plain MPI); `make run` starts the demo.
MPI_EXAMPLES := $(patsubst mpi/examples/%.c,$(B)/apps/%,$(wildcard mpi/examples/*.c))
$(B)/apps/%: mpi/examples/%.c $(APP_CONF) mpi/bin/ukmpicc
	@mkdir -p $(@D)
	mpi/bin/ukmpicc -O2 -g $(WARN) $(WERROR) $< -o $@
ALL_TARGETS += $(MPI_EXAMPLES)
