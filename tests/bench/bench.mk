# Benchmarks (tests/bench/run.sh): figures and ratios against baselines from the same run.
$(B)/bench/null-kernel.elf: tests/bench/null_kernel.S | deps
	@mkdir -p $(@D)
	$(CC) -m64 -c $< -o $(@:.elf=.o)
	$(LD) -nostdlib -static -Ttext=0x100000 -e start -z noexecstack -o $@ $(@:.elf=.o)

ALL_TARGETS += $(B)/bench/null-kernel.elf
