# The WaitIO-MPI layer (mpi/waitio/wmpi/, spec section 7 and the King collectives of
# section 9): libwaitio_mpi.a, built with the PB's own MPI compiler (Open MPI's mpicc on
# Linux) over the public base API only. mpi/waitio/waitio.mk includes this file at its end.
WMPI_DIR  := mpi/waitio/wmpi
WMPI_SRCS := $(wildcard $(WMPI_DIR)/*.c)
WMPI_HDRS := $(wildcard $(WMPI_DIR)/*.h) $(wildcard mpi/waitio/include/*.h)
WMPI_OBJS := $(patsubst $(WMPI_DIR)/%.c,$(B)/waitio/wmpi/%.o,$(WMPI_SRCS))
WMPI_LIB  := $(B)/waitio/lib/libwaitio_mpi.a
MPICC     ?= mpicc

$(B)/waitio/wmpi/%.o: $(WMPI_DIR)/%.c $(WMPI_HDRS) | deps
	@mkdir -p $(@D)
	$(MPICC) $(HOST_CFLAGS) -Impi/waitio/include -c $< -o $@

$(WMPI_LIB): $(WMPI_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(WMPI_LIB)
# Coupled Open MPI jobs on loopback: WaitIO-MPI point-to-point, King collectives, aliases.
TEST_SUITES += wmpi=tests/waitio/wmpi.sh
