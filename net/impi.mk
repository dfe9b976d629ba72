# IMPI: the freestanding codec (mpi/impi/), the Linux server and relay (net/impi/), their
# unit tests, fuzz targets, interop tests against LAM/MPI 7.1.4 and benchmarks.
IMPI_CODEC := mpi/impi/impi_startup.c mpi/impi/impi_packet.c mpi/impi/impi_flow.c
IMPI_HDRS  := $(wildcard mpi/impi/*.h net/impi/*.h)

UNIT_SRCS += $(IMPI_CODEC)
UNIT_INC  += -Impi/impi

# libFuzzer targets (clang + libclang-rt-14-dev) and the seed-corpus generator.
IMPI_FUZZ := $(addprefix $(B)/fuzz/impi_fuzz_,startup packet coll_reply)
$(B)/fuzz/impi_fuzz_%: tests/fuzz/impi_fuzz_%.c $(IMPI_CODEC) $(IMPI_HDRS) | deps
	@mkdir -p $(@D)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -Impi/impi -o $@ $< $(IMPI_CODEC)
$(B)/fuzz/impi-fuzz-seeds: tests/fuzz/impi_fuzz_seeds.c $(IMPI_CODEC) $(IMPI_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Impi/impi -Itests/unit -o $@ $< $(IMPI_CODEC)

.PHONY: impi-fuzz-seeds
# Regenerates tests/fuzz/corpus/ from the codec's own encodings.
impi-fuzz-seeds: $(B)/fuzz/impi-fuzz-seeds
	mkdir -p tests/fuzz/corpus/startup tests/fuzz/corpus/packet tests/fuzz/corpus/coll_reply
	$(B)/fuzz/impi-fuzz-seeds tests/fuzz/corpus

ALL_TARGETS += $(IMPI_FUZZ) $(B)/fuzz/impi-fuzz-seeds
TEST_SUITES += impi-fuzz=tests/fuzz/run.sh

# Linux programs.
IMPI_NET_COMMON := net/impi/impi_util.c net/impi/impi_conn.c
$(B)/net/impi-server: net/impi/impi_server.c $(IMPI_NET_COMMON) $(IMPI_CODEC) $(IMPI_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Impi/impi -Inet/impi -o $@ $< $(IMPI_NET_COMMON) $(IMPI_CODEC)
ALL_TARGETS += $(B)/net/impi-server

# Interop tests against LAM/MPI 7.1.4 (root: network namespaces, unprivileged LAM user).
TEST_SUITES += impi-interop=tests/interop/run.sh
# Hostile peers against the server and relay (loopback, no LAM, no root; about 15 s).
TEST_SUITES += impi-hostile=tests/interop/hostile.sh
IMPI_RELAY_SRCS := net/impi/impi_relay.c net/impi/impi_relay_fwd.c net/impi/impi_relay_map.c \
                   net/impi/impi_relay_link.c net/impi/impi_relay_dump.c
$(B)/net/impi-relay: $(IMPI_RELAY_SRCS) $(IMPI_NET_COMMON) $(IMPI_CODEC) $(IMPI_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Impi/impi -Inet/impi -o $@ $(IMPI_RELAY_SRCS) $(IMPI_NET_COMMON) $(IMPI_CODEC)
ALL_TARGETS += $(B)/net/impi-relay
