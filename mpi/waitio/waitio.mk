# WaitIO: the freestanding core (mpi/waitio/wio_*.c), the Linux library and
# waitio-serv (mpi/waitio/linux/), the public headers, and their tests. See
# mpi/waitio/README.md.
WIO_DIR       := mpi/waitio
WIO_WIRE_SRCS := $(WIO_DIR)/wio_wire.c
# The freestanding core: the codec, matching, requests, groups, connections.
WIO_CORE_SRCS := $(WIO_WIRE_SRCS) $(addprefix $(WIO_DIR)/wio_,api.c conn.c group.c match.c \
                 rx.c text.c truef.c tx.c)
WIO_HDRS      := $(wildcard $(WIO_DIR)/*.h) $(wildcard $(WIO_DIR)/include/*.h)

UNIT_SRCS += $(WIO_CORE_SRCS)
UNIT_INC  += -I$(WIO_DIR) -I$(WIO_DIR)/include

# libFuzzer target of the codec and its seed generator (tests/fuzz/run.sh runs it).
$(B)/fuzz/wio_fuzz_wire: tests/fuzz/wio_fuzz_wire.c $(WIO_WIRE_SRCS) $(WIO_HDRS) \
                         tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -I$(WIO_DIR) -o $@ $< $(WIO_WIRE_SRCS)
# The core's receive path on any stream (it will run in the unikernel's NIC interrupt).
$(B)/fuzz/wio_fuzz_rx: tests/fuzz/wio_fuzz_rx.c $(WIO_CORE_SRCS) $(WIO_HDRS) \
                       tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -I$(WIO_DIR) -I$(WIO_DIR)/include -o $@ $< $(WIO_CORE_SRCS)
$(B)/fuzz/wio-fuzz-seeds: tests/fuzz/wio_fuzz_seeds.c $(WIO_WIRE_SRCS) $(WIO_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -I$(WIO_DIR) -o $@ $< $(WIO_WIRE_SRCS)
.PHONY: wio-fuzz-seeds
# Regenerate tests/fuzz/corpus/wio_wire and wio_rx from the codec's own encodings.
wio-fuzz-seeds: $(B)/fuzz/wio-fuzz-seeds
	rm -rf tests/fuzz/corpus/wio_wire tests/fuzz/corpus/wio_rx
	mkdir -p tests/fuzz/corpus/wio_wire tests/fuzz/corpus/wio_rx
	$(B)/fuzz/wio-fuzz-seeds tests/fuzz/corpus/wio_wire tests/fuzz/corpus/wio_rx
fuzz: $(B)/fuzz/wio_fuzz_wire $(B)/fuzz/wio_fuzz_rx
ALL_TARGETS += $(B)/fuzz/wio_fuzz_wire $(B)/fuzz/wio_fuzz_rx $(B)/fuzz/wio-fuzz-seeds

# The Linux library: core + platform, compiled with Open MPI's mpicc (start-up uses the
# PB's own MPI). Programs build with
#   mpicc prog.c -I build/waitio/include -L build/waitio/lib -lwaitio
WIO_OUT       := $(B)/waitio
WIO_LX_SRCS   := $(WIO_DIR)/wio_init.c $(addprefix $(WIO_DIR)/linux/,wio_linux_boot.c wio_linux_net.c)
WIO_LX_HDRS   := $(WIO_HDRS) $(wildcard $(WIO_DIR)/linux/*.h)
WIO_LIB_OBJS  := $(patsubst $(WIO_DIR)/%.c,$(WIO_OUT)/obj/%.o,$(WIO_CORE_SRCS) $(WIO_LX_SRCS))
WIO_CFLAGS    := -std=gnu11 $(OPT) $(WARN) $(WERROR) -D_GNU_SOURCE -fPIC \
                 -I$(WIO_DIR) -I$(WIO_DIR)/include -I$(WIO_DIR)/linux
WIO_PUBLIC    := $(WIO_OUT)/include/waitio.h $(WIO_OUT)/include/waitio_mpi.h

$(WIO_OUT)/obj/%.o: $(WIO_DIR)/%.c $(WIO_LX_HDRS) | deps
	@mkdir -p $(@D)
	mpicc $(WIO_CFLAGS) -c -o $@ $<
$(WIO_OUT)/lib/libwaitio.a: $(WIO_LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(WIO_OUT)/include/%.h: $(WIO_DIR)/include/%.h
	@mkdir -p $(@D)
	cp $< $@
$(WIO_OUT)/bin/waitio-serv: $(WIO_DIR)/linux/waitio_serv.c | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -o $@ $<

# Test programs, written as users write them (tests/waitio/progs/*.c).
$(WIO_OUT)/test/%: tests/waitio/progs/%.c $(WIO_OUT)/lib/libwaitio.a $(WIO_PUBLIC)
	@mkdir -p $(@D)
	mpicc -O2 -g -Wall -o $@ $< -I $(WIO_OUT)/include -L $(WIO_OUT)/lib -lwaitio
$(WIO_OUT)/test/wio-inject: tests/waitio/progs/wio_inject.c $(WIO_WIRE_SRCS) $(WIO_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -I$(WIO_DIR) -o $@ $< $(WIO_WIRE_SRCS)

WIO_TESTS := $(addprefix $(WIO_OUT)/test/,pingpong badpeer wio-inject)
ALL_TARGETS += $(WIO_OUT)/lib/libwaitio.a $(WIO_PUBLIC) $(WIO_OUT)/bin/waitio-serv $(WIO_TESTS)
TEST_SUITES += waitio-base=tests/waitio/base.sh

# The WaitIO-MPI layer (libwaitio_mpi.a) and its suite.
include mpi/waitio/wmpi/wmpi.mk

# The unikernel build of both libraries.
include mpi/waitio/uk/wio_uk.mk
