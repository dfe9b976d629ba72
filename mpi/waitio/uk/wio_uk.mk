# The unikernel build of libwaitio (`ukmpicc prog.c -lwaitio`): the freestanding core,
# start-up (wio_init.c over the PB's MPI, our own) and the unikernel platform
# (mpi/waitio/uk/), compiled with the application flags into ukmpicc's library directory.
WIO_UK_SRCS := $(WIO_CORE_SRCS) $(WIO_DIR)/wio_init.c $(wildcard $(WIO_DIR)/uk/*.c)
WIO_UK_OBJS := $(patsubst $(WIO_DIR)/%.c,$(B)/app/waitio/%.o,$(WIO_UK_SRCS))
WIO_UK_INC  := -I$(WIO_DIR) -I$(WIO_DIR)/include -I$(WIO_DIR)/uk -Impi/include \
               -Iunikernel/include -Iunikernel/libc/app

$(B)/app/waitio/%.o: $(WIO_DIR)/%.c $(WIO_HDRS) $(wildcard $(WIO_DIR)/uk/*.h) mk/config.mk \
                     | $(NEWLIB_U_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(APP_CFLAGS) $(WARN) $(WERROR) $(WIO_UK_INC) -c $< -o $@
$(APP_LIBDIR_EXTRA)/libwaitio.a: $(WIO_UK_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(APP_LIBDIR_EXTRA)/libwaitio.a

# The WaitIO-MPI layer for the unikernel (`ukmpicc prog.c -lwaitio_mpi -lwaitio`): the same
# sources as Linux's libwaitio_mpi.a over our own MPI.
WMPI_UK_OBJS := $(patsubst $(WMPI_DIR)/%.c,$(B)/app/wmpi/%.o,$(WMPI_SRCS))
$(B)/app/wmpi/%.o: $(WMPI_DIR)/%.c $(WMPI_HDRS) mk/config.mk | $(NEWLIB_U_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(APP_CFLAGS) $(WARN) $(WERROR) $(WIO_UK_INC) -c $< -o $@
$(APP_LIBDIR_EXTRA)/libwaitio_mpi.a: $(WMPI_UK_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
ALL_TARGETS += $(APP_LIBDIR_EXTRA)/libwaitio_mpi.a

# The unikernel PBs, alone and coupled with Linux PBs through waitio-gw (needs root).
TEST_SUITES += waitio-uk=tests/waitio/uk.sh
