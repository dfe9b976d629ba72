# WaitIO (issue 14): the freestanding core (mpi/waitio/wio_*.c), the Linux library and
# waitio-serv (mpi/waitio/linux/), the public headers, and their tests. See
# mpi/waitio/README.md.
WIO_DIR       := mpi/waitio
WIO_WIRE_SRCS := $(WIO_DIR)/wio_wire.c
# The freestanding core: the codec, matching, requests, groups, connections.
WIO_CORE_SRCS := $(WIO_WIRE_SRCS) $(addprefix $(WIO_DIR)/wio_,api.c conn.c group.c match.c \
                 rx.c text.c tx.c)
WIO_HDRS      := $(wildcard $(WIO_DIR)/*.h) $(wildcard $(WIO_DIR)/include/*.h)

UNIT_SRCS += $(WIO_CORE_SRCS)
UNIT_INC  += -I$(WIO_DIR) -I$(WIO_DIR)/include

# libFuzzer target of the codec and its seed generator (tests/fuzz/run.sh runs it).
$(B)/fuzz/wio_fuzz_wire: tests/fuzz/wio_fuzz_wire.c $(WIO_WIRE_SRCS) $(WIO_HDRS) \
                         tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -I$(WIO_DIR) -o $@ $< $(WIO_WIRE_SRCS)
$(B)/fuzz/wio-fuzz-seeds: tests/fuzz/wio_fuzz_seeds.c $(WIO_WIRE_SRCS) $(WIO_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -I$(WIO_DIR) -o $@ $< $(WIO_WIRE_SRCS)
.PHONY: wio-fuzz-seeds
# Regenerate tests/fuzz/corpus/wio_wire from the codec's own encodings.
wio-fuzz-seeds: $(B)/fuzz/wio-fuzz-seeds
	rm -rf tests/fuzz/corpus/wio_wire && mkdir -p tests/fuzz/corpus/wio_wire
	$(B)/fuzz/wio-fuzz-seeds tests/fuzz/corpus/wio_wire
fuzz: $(B)/fuzz/wio_fuzz_wire
ALL_TARGETS += $(B)/fuzz/wio_fuzz_wire $(B)/fuzz/wio-fuzz-seeds

# The WaitIO-MPI layer (its helper adds it):
# -include mpi/waitio/wmpi/wmpi.mk
