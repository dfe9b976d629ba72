# The one entry point. `make help` lists the targets.
#
# Every target depends on `deps` (order-only), so on a fresh Debian 12 machine the first
# `make run` or `make test` installs what is missing and then builds. Outputs go to build/;
# the slow, rarely changing third-party builds (newlib, lwIP sources, LAM) go to the cache
# ($UKMPI_CACHE, default ~/.cache/ukmpi), keyed by what they were built from.

.DEFAULT_GOAL := all
SHELL := /bin/bash
# The board (boards/): qemu by default; another board builds into build/BOARD.
BOARD ?= qemu
B := build$(if $(filter-out qemu,$(BOARD)),/$(BOARD))
export UKMPI_CACHE ?= $(HOME)/.cache/ukmpi
CACHE := $(UKMPI_CACHE)

# Module makefiles append to these.
ALL_TARGETS :=
TEST_SUITES :=   # name=command pairs, run by tests/run-suites.sh
BENCH_CMDS :=
CHECK_SRCS :=

include mk/config.mk
include mk/newlib.mk
include mk/lwip.mk
include unikernel/unikernel.mk
include tests/uk/uk.mk
include net/impi.mk
include mpi/mpi.mk
include mpi/linux/linux.mk
include mpi/fortran/fortran.mk
include tests/fuzz/fuzz.mk
include qemu/ukfiles/ukfiles.mk
include mpi/waitio/waitio.mk
include tests/mpi/mpi.mk
include tests/knl/knl.mk
include tests/bench/bench.mk
include net/net.mk
include host-kmod/o2g/o2g.mk
include host-kmod/kacc/kacc.mk
include host-kmod/ukload/ukload.mk
include tests/kmod/kmod.mk
# Last: unit.mk's rule lists the UNIT_SRCS that the modules above appended.
include tests/unit/unit.mk

.PHONY: all deps run test test-full bench check help clean

# `make run` alone needs only the demo's part of the dependencies (mk/deps.d/0*, 1*: the
# compilers, QEMU, newlib and lwIP) and of the build: not LAM, Open MPI, the fuzzers or
# the tests. Every other goal installs everything.
DEPS_SET := $(if $(filter-out run,$(MAKECMDGOALS)),all,$(if $(MAKECMDGOALS),run,all))
RUN_TARGETS := $(B)/uk/ukernel.elf $(B)/apps/demo $(B)/net/ukhub

deps:
	@UKMPI_DEPS=$(DEPS_SET) ./mk/deps.sh

all: $(ALL_TARGETS) | deps

run: $(RUN_TARGETS) | deps
	@qemu/ukrun-demo

test: all | deps
	@tests/run-suites.sh $(TEST_SUITES)

# make test, then every test of MPICH's suite rather than its subset (about an hour);
# the module fuzz cases (o2g/fuzz, kacc/fuzz) run 120 s each instead of 20, from a seed
# drawn for the run instead of make test's fixed one.
test-full: export KMOD_FUZZ_SECS ?= 120
test-full: export KMOD_FUZZ_SEED ?= $(shell echo $$RANDOM$$RANDOM)
test-full: test
	@tests/mpich/run.sh --full

bench: all | deps
	@tests/bench/run.sh

check: | deps
	@./mk/check.sh

clean:
	rm -rf $(B)

help:
	@echo "make deps   install missing Debian packages, fetch source packages (idempotent)"
	@echo "make all    build the unikernel, the tests and the Linux programs"
	@echo "make run    boot the default demo under QEMU"
	@echo "make test   run every test suite (closing line: N passed, N failed)"
	@echo "make test-full  make test, then all of MPICH's test suite (tests/mpich/)"
	@echo "make bench  run the benchmarks (figures as ratios against baselines)"
	@echo "make fuzz   every fuzz target for 10^6 executions (FUZZ_RUNS; make test: seconds)"
	@echo "make check  static checks: warnings as errors, clang-format"
