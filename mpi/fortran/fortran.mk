# The Fortran bindings (gfortran's convention), for the Linux home: mpi/fortran/gen.py
# makes the C wrappers, mpif.h and the `mpi` module's source from bindings.def into
# $(B)/fortran/; the wrappers go into both libraries (build/linux/libukmpi.a, and the
# unikernel's libmpi.a, which has no Fortran run time to use them yet); mpif.h and mpi.mod
# go to $(B)/linux/include/, where `mpi/bin/ukmpifort --linux` finds them.
FORT_GEN := $(B)/fortran/mpi_fort.c $(B)/fortran/mpif.h $(B)/fortran/mpi.f90
FORT_INC := $(B)/linux/include

# One run of the generator makes the three files (a grouped target).
$(FORT_GEN) &: mpi/fortran/gen.py mpi/fortran/bindings.def mpi/include/mpi.h \
               mpi/fortran/fort_rt.h | deps
	@mkdir -p $(@D)
	python3 mpi/fortran/gen.py mpi/fortran/bindings.def mpi/include/mpi.h \
	    mpi/fortran/fort_rt.h $(B)/fortran

$(B)/linux/obj/fortran-gen/mpi_fort.o: $(B)/fortran/mpi_fort.c mpi/fortran/fort_rt.h | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -pthread $(MLX_INC) -c $< -o $@
$(MLX_LIB): $(B)/linux/obj/fortran-gen/mpi_fort.o

$(B)/app/obj/fortran-gen/mpi_fort.o: $(B)/fortran/mpi_fort.c mpi/fortran/fort_rt.h \
                                     mk/config.mk | $(NEWLIB_U_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(APP_CFLAGS) $(WARN) $(WERROR) $(MPI_LIB_INC) -c $< -o $@
$(MPI_LIB): $(B)/app/obj/fortran-gen/mpi_fort.o

# The module: its object holds nothing a program needs (constants, common blocks and
# interfaces only), so only mpi.mod is kept.
$(FORT_INC)/mpi.mod: $(B)/fortran/mpi.f90 | deps
	@mkdir -p $(@D)
	gfortran -Wall -Werror -J $(FORT_INC) -c $< -o $(B)/fortran/mpi_mod.o
	@touch $@ # gfortran leaves an unchanged .mod as it was
$(FORT_INC)/mpif.h: $(B)/fortran/mpif.h
	@mkdir -p $(@D)
	cp $< $@

ALL_TARGETS += $(FORT_INC)/mpi.mod $(FORT_INC)/mpif.h

# tests/fortran/progs/ (use mpi, include 'mpif.h') built with ukmpifort --linux, run by
# ukmpirun, compared with the same sources built and run with Debian's Open MPI.
TEST_SUITES += fortran=tests/fortran/run.sh
