# Benchmarks (tests/bench/run.sh): figures and ratios against baselines from the same run.
$(B)/bench/null-kernel.elf: tests/bench/null_kernel.S | deps
	@mkdir -p $(@D)
	$(CC) -m64 -c $< -o $(@:.elf=.o)
	$(LD) -nostdlib -static -Ttext=0x100000 -e start -z noexecstack -o $@ $(@:.elf=.o)

ALL_TARGETS += $(B)/bench/null-kernel.elf

# The integer sort of the Linux-build benchmarks (linux.bench.sh) must sort: checked in
# `make test` on loopback (is_test.sh); the benchmark itself runs only in `make bench`.
TEST_SUITES += is-sort=tests/bench/is_test.sh

# One part alone: `make bench-linux` (the Linux build against Open MPI and MPICH in Debian
# guests, and the KACC figures there: Ibcast with ours, libnbc and kacc.ko; `make bench`
# runs both with every other tests/bench/*.bench.sh).
.PHONY: bench-linux
bench-linux: all | deps
	@tests/bench/linux.bench.sh
	@tests/bench/linux-nbc.bench.sh
