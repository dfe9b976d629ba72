# The application runtime: crt0 and libukapp.a (newlib's system calls on the kernel's ABI
# table), built with the application flags, and the configuration ukmpicc reads.
# The shared glue (unikernel/libc/libc_{io,time,mem,stubs}.c) is compiled here a second time.

# newlib's <sys/features.h> declares the optional POSIX options only for RTEMS and Cygwin;
# these say which ones the runtime serves, so <time.h>, <sched.h> declare them as on Linux:
#   _POSIX_{,THREAD_}CPUTIME: CLOCK_{PROCESS,THREAD}_CPUTIME_ID (libc_time.c);
#   _POSIX_TIMERS, _POSIX_MONOTONIC_CLOCK: clock_gettime/getres, nanosleep, CLOCK_MONOTONIC
#     (libc_time.c, app_sleep.c; timer_create and friends are declared but not provided);
#   _POSIX_PRIORITY_SCHEDULING: sched_yield (app_sys.c; the sched_*param calls are not).
APP_POSIX := -D_POSIX_CPUTIME=200809L -D_POSIX_THREAD_CPUTIME=200809L \
             -D_POSIX_TIMERS=200809L -D_POSIX_MONOTONIC_CLOCK=200809L \
             -D_POSIX_PRIORITY_SCHEDULING=200809L
APP_CFLAGS := -std=gnu11 -fPIE -mno-red-zone -fno-stack-protector -fno-omit-frame-pointer \
              $(APP_POSIX) \
              -nostdinc -isystem $(NEWLIB_U_INC) -idirafter $(GCC_INC) $(OPT)
APP_RT_SRCS := $(wildcard unikernel/libc/app/*.c) \
               $(addprefix unikernel/libc/,libc_io.c libc_time.c libc_mem.c libc_stubs.c)
APP_RT_OBJS := $(patsubst %.c,$(B)/app/obj/%.o,$(APP_RT_SRCS))
APP_CRT0 := $(B)/app/crt0.o
APP_RTLIB := $(B)/app/libukapp.a
APP_CONF := $(B)/app/ukmpicc.conf
# Optional libraries programs name with -l (libwaitio.a, libwaitio_mpi.a), after newlib's.
APP_LIBDIR_EXTRA := $(B)/app/lib

$(B)/app/obj/%.o: %.c mk/config.mk | $(NEWLIB_U_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(APP_CFLAGS) $(WARN) $(WERROR) -Iunikernel/include -c $< -o $@

$(APP_CRT0): unikernel/libc/app/crt0.S | deps
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

$(APP_RTLIB): $(APP_RT_OBJS)
	rm -f $@ && ar rcs $@ $^

# ukmpicc sources this: everything it needs to know about where things are.
$(APP_CONF): $(APP_CRT0) $(APP_RTLIB) unikernel/libc/app/app.mk mk/newlib.mk
	@{ echo "APP_CFLAGS='$(APP_CFLAGS)'"; \
	   echo "APP_CRT0='$(abspath $(APP_CRT0))'"; \
	   echo "APP_LIBDIR='$(NEWLIB_U_LIBDIR)'"; \
	   echo "APP_LIBDIRS='$(abspath $(APP_LIBDIR_EXTRA))'"; \
	   echo "APP_LIBS='$(abspath $(MPI_LIB)) $(abspath $(APP_RTLIB)) $(NEWLIB_U_LIBDIR)/libm.a $(NEWLIB_U_LIBDIR)/libc.a $(abspath $(APP_RTLIB)) $(LIBGCC)'"; \
	   echo "APP_INC='-I$(abspath mpi/include) -I$(abspath mpi/waitio/include) -I$(abspath mpi/cad) -I$(abspath unikernel/libc/app) -I$(abspath unikernel/include)'"; } > $@

ALL_TARGETS += $(APP_CONF)
