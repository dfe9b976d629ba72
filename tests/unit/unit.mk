# Host unit tests: every tests/unit/*.c plus the portable sources modules list in UNIT_SRCS,
# linked into one runner. Modules append their sources and include dirs:
#   UNIT_SRCS += mpi/impi/impi_codec.c      UNIT_INC += -Impi/impi
UNIT_SRCS += $(wildcard tests/unit/*.c)
UNIT_BIN  := $(B)/unit/unit-tests

$(UNIT_BIN): $(UNIT_SRCS) $(wildcard tests/unit/*.h) | deps
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -fsanitize=address,undefined -fno-omit-frame-pointer \
	    -Itests/unit $(UNIT_INC) -o $@ $(UNIT_SRCS) -pthread

ALL_TARGETS += $(UNIT_BIN)
TEST_SUITES += unit=$(UNIT_BIN)
