# The portable MPI core (freestanding C: the same files build into the unikernel, Linux
# programs and host tests). Host unit tests link all of it: the engine proper runs on
# tests/unit/mpe_host_plat.c (mpe_plat.h on simulated nodes, in UNIT_SRCS through
# unit.mk's wildcard).
# The engine runs CAD graphs (mpe_cad.c), so it links mpi/cad/ too.
MPI_CORE_SRCS := $(wildcard mpi/core/*.c)
MPI_CORE_HDRS := $(wildcard mpi/core/*.h)
MPI_CAD_SRCS := $(wildcard mpi/cad/*.c)
MPI_CAD_HDRS := $(wildcard mpi/cad/*.h)
UNIT_SRCS += $(MPI_CORE_SRCS)
UNIT_INC += -Impi/core
$(B)/unit/unit-tests: $(MPI_CORE_HDRS)

# libFuzzer target of the engine's receive path, on the same host platform (clang +
# libclang-rt-14-dev); tests/fuzz/run.sh runs it with the IMPI targets. UBSan findings are
# made fatal so that the fuzzer stops on them. `make mpe-fuzz-seeds` rewrites its corpus.
MPE_FUZZ_SRCS := $(MPI_CORE_SRCS) $(MPI_CAD_SRCS) $(IMPI_CODEC) tests/unit/mpe_host_plat.c
MPE_FUZZ_HDRS := $(MPI_CORE_HDRS) $(MPI_CAD_HDRS) tests/unit/mpe_host_plat.h tests/fuzz/mpe_fuzz.h
$(B)/fuzz/mpe_fuzz_rx: tests/fuzz/mpe_fuzz_rx.c $(MPE_FUZZ_SRCS) $(MPE_FUZZ_HDRS) tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -fsanitize-coverage-ignorelist=tests/fuzz/harness.ignore \
	    -Impi/core -Impi/cad -Impi/impi -Itests/unit -o $@ $< $(MPE_FUZZ_SRCS)
$(B)/fuzz/mpe-fuzz-seeds: tests/fuzz/mpe_fuzz_seeds.c mpi/core/mpe_wire.c $(MPE_FUZZ_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Impi/core -o $@ $< mpi/core/mpe_wire.c

# The same for the IMPI links' receive parser (mpe_impi_rx.c): a node as an IMPI host fed
# what a remote host says. `make mpe-impi-fuzz-seeds` rewrites its corpus.
$(B)/fuzz/mpe_fuzz_impi: tests/fuzz/mpe_fuzz_impi.c $(MPE_FUZZ_SRCS) $(MPE_FUZZ_HDRS) \
                         tests/fuzz/mpe_fuzz_impi.h tests/fuzz/harness.ignore | deps
	@mkdir -p $(@D)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -fsanitize-coverage-ignorelist=tests/fuzz/harness.ignore \
	    -Impi/core -Impi/cad -Impi/impi -Itests/unit -o $@ $< $(MPE_FUZZ_SRCS)
$(B)/fuzz/mpe-impi-fuzz-seeds: tests/fuzz/mpe_fuzz_impi_seeds.c tests/fuzz/mpe_fuzz_impi.h \
                               $(IMPI_CODEC) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -Impi/impi -o $@ $< $(IMPI_CODEC)

.PHONY: mpe-fuzz-seeds mpe-impi-fuzz-seeds
mpe-fuzz-seeds: $(B)/fuzz/mpe-fuzz-seeds
	rm -rf tests/fuzz/corpus/mpe_rx && mkdir -p tests/fuzz/corpus/mpe_rx
	$(B)/fuzz/mpe-fuzz-seeds tests/fuzz/corpus/mpe_rx
mpe-impi-fuzz-seeds: $(B)/fuzz/mpe-impi-fuzz-seeds
	rm -rf tests/fuzz/corpus/mpe_impi && mkdir -p tests/fuzz/corpus/mpe_impi
	$(B)/fuzz/mpe-impi-fuzz-seeds tests/fuzz/corpus/mpe_impi

ALL_TARGETS += $(B)/fuzz/mpe_fuzz_rx $(B)/fuzz/mpe-fuzz-seeds $(B)/fuzz/mpe_fuzz_impi \
               $(B)/fuzz/mpe-impi-fuzz-seeds

# CAD graphs (non-blocking collectives): builder, validator, ready-set logic, CALC kernels.
# Freestanding and platform-free, so all of it is unit-tested on the host.
UNIT_SRCS += $(MPI_CAD_SRCS)
UNIT_INC += -Impi/cad
$(B)/unit/unit-tests: $(MPI_CAD_HDRS)

# The MPI library applications link (ukmpicc adds it): mpi/lib/*.c built with the
# application flags, like the application runtime.
# The library builds its collectives' graphs, so mpi/cad/ is in it too; and the Fortran
# bindings' run time (mpi/fortran/fort_rt.c: handle tables, MPI_Comm_c2f and friends),
# whose generated wrappers mpi/fortran/fortran.mk adds.
MPI_LIB_SRCS := $(wildcard mpi/lib/*.c) $(MPI_CAD_SRCS) mpi/fortran/fort_rt.c
MPI_LIB_OBJS := $(patsubst %.c,$(B)/app/obj/%.o,$(MPI_LIB_SRCS))
MPI_LIB := $(B)/app/libmpi.a
MPI_LIB_INC := -Impi/include -Impi/lib -Impi/core -Impi/cad -Impi/fortran \
               -Iunikernel/libc/app -Iunikernel/include

$(B)/app/obj/mpi/%.o: mpi/%.c $(wildcard mpi/lib/*.h mpi/include/*.h mpi/core/*.h mpi/cad/*.h \
                                    mpi/fortran/*.h) \
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

# The MPI library's portable parts (mpi/lib/: datatypes, reductions, groups, errors, the
# stubs of unimplemented functions, the IMPI client layout) also build on the host, for
# the unit tests. The communicator, point-to-point and init files need the kernel and are
# not listed.
MPI_LIB_UNIT_SRCS := $(addprefix mpi/lib/,dtype.c dtype_make.c dtype_flat.c dtype_query.c \
                       status.c op.c op_kernels.c group.c errh.c errh_user.c misc.c topo_dims.c \
                       unimpl.c world.c)
UNIT_SRCS += $(MPI_LIB_UNIT_SRCS)
UNIT_INC += -Impi/include -Impi/lib

# The README's "Not implemented" list names exactly the stubs in unimpl.c (a script, no
# build needed).
TEST_SUITES += docs=tests/docs/unimpl.sh

# mpi.h stays strict C99 and complete enough for typical programs: tests/mpi_h/ holds a
# few, compiled against it (syntax only; they are never run).
MPI_H_CHECKS := $(wildcard tests/mpi_h/*.c)
$(B)/mpi/mpi-h-check.stamp: mpi/include/mpi.h $(MPI_H_CHECKS) | deps
	@mkdir -p $(@D)
	@for f in $(MPI_H_CHECKS); do \
	    $(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Impi/include -fsyntax-only $$f || exit 1; \
	done
	@touch $@
ALL_TARGETS += $(B)/mpi/mpi-h-check.stamp
