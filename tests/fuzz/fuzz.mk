# Host libFuzzer targets of the CAD validator and the NIC's receive filter, their
# seed generators, and `make fuzz`: every target of tests/fuzz/run.sh (these, IMPI's in
# net/impi.mk, the engine's receive parsers in mpi/mpi.mk) for FUZZ_RUNS executions each
# (default 10^6, FUZZ_MAX_SECONDS (900) at most per target) instead of make test's few
# seconds. Each target builds from the portable sources it checks, with ASan and UBSan
# (findings fatal); harness files are left out of the coverage (harness.ignore).
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
               -fsanitize-coverage-ignorelist=tests/fuzz/harness.ignore

$(B)/fuzz/cad_fuzz_validate: tests/fuzz/cad_fuzz_validate.c $(MPI_CAD_SRCS) $(MPI_CAD_HDRS) \
                             tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Impi/cad -o $@ $< $(MPI_CAD_SRCS)
$(B)/fuzz/cad-fuzz-seeds: tests/fuzz/cad_fuzz_seeds.c $(MPI_CAD_SRCS) $(MPI_CAD_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Impi/cad -o $@ $< $(MPI_CAD_SRCS)

VNET_FRAME := unikernel/drivers/vnet_frame.c
$(B)/fuzz/vnet_fuzz_frame: tests/fuzz/vnet_fuzz_frame.c $(VNET_FRAME) \
                           unikernel/drivers/vnet_frame.h tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Iunikernel -o $@ $< $(VNET_FRAME)
$(B)/fuzz/vnet-fuzz-seeds: tests/fuzz/vnet_fuzz_seeds.c $(VNET_FRAME) \
                           unikernel/drivers/vnet_frame.h | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Iunikernel -o $@ $< $(VNET_FRAME)

.PHONY: cad-fuzz-seeds vnet-fuzz-seeds fuzz
# Regenerate the seed corpora in the tree from the builders and the filter's own checks.
cad-fuzz-seeds: $(B)/fuzz/cad-fuzz-seeds
	rm -rf tests/fuzz/corpus/cad_validate && mkdir -p tests/fuzz/corpus/cad_validate
	$(B)/fuzz/cad-fuzz-seeds tests/fuzz/corpus/cad_validate
vnet-fuzz-seeds: $(B)/fuzz/vnet-fuzz-seeds
	rm -rf tests/fuzz/corpus/vnet_frame && mkdir -p tests/fuzz/corpus/vnet_frame
	$(B)/fuzz/vnet-fuzz-seeds tests/fuzz/corpus/vnet_frame

FUZZ_BINS := $(IMPI_FUZZ) $(B)/fuzz/mpe_fuzz_rx $(B)/fuzz/mpe_fuzz_impi \
             $(B)/fuzz/cad_fuzz_validate $(B)/fuzz/vnet_fuzz_frame
fuzz: $(FUZZ_BINS) | deps
	@FUZZ_RUNS=$${FUZZ_RUNS:-1000000} tests/fuzz/run.sh

ALL_TARGETS += $(B)/fuzz/cad_fuzz_validate $(B)/fuzz/cad-fuzz-seeds $(B)/fuzz/vnet_fuzz_frame \
               $(B)/fuzz/vnet-fuzz-seeds
