# The kernel's newlib glue: every unikernel/libc/*.c, compiled by the kernel makefile with
# $(KERNEL_CFLAGS) and linked into every kernel image (it must come before libc.a so the
# stubs and locks here win over newlib's defaults).
KLIBC_SRCS := $(wildcard unikernel/libc/*.c)

# `make libc-check`: compile the glue and the newlib-based kernel tests on their own, as the
# kernel makefile will, to catch errors before a kernel exists to link them into.
LIBC_CHECK_SRCS := $(KLIBC_SRCS) $(wildcard tests/uk/libc_*.c tests/uk/lwip_*.c)
LIBC_CHECK_OBJS := $(patsubst %.c,$(B)/libc-check/%.o,$(LIBC_CHECK_SRCS))

$(B)/libc-check/%.o: %.c $(wildcard unikernel/include/uk/*.h) $(LWIP_PORT_HDRS) \
                     | $(NEWLIB_K_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(KERNEL_CFLAGS) -Iunikernel $(LWIP_CFLAGS) -c -o $@ $<

.PHONY: libc-check
libc-check: $(LIBC_CHECK_OBJS)

# `libc-host` suite: the glue and the newlib ktests as a Linux process, linked against our
# app-flavor newlib (not glibc) with a fake kernel API (tests/unit/libc_host/). Proves the
# newlib build, the glue and the printf/malloc tests before a kernel boots.
LIBC_HOST_BIN  := $(B)/libc-host/libc-host-tests
LIBC_HOST_SRCS := $(KLIBC_SRCS) $(wildcard tests/unit/libc_host/*.c tests/unit/libc_host/*.S)

$(LIBC_HOST_BIN): $(LIBC_HOST_SRCS) $(wildcard tests/uk/libc_*.c unikernel/include/uk/*.h) \
                  | $(NEWLIB_U_STAMP) deps
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(OPT) $(WARN) $(WERROR) -fno-stack-protector -fPIE -nostdinc \
	    -DUK_CPU_ID_EXTERN -isystem $(NEWLIB_U_INC) -idirafter $(GCC_INC) -Iunikernel/include \
	    -nostdlib -static -no-pie -Wl,-z,noexecstack -o $@ $(LIBC_HOST_SRCS) \
	    $(NEWLIB_U_LIBDIR)/libc.a $(NEWLIB_U_LIBDIR)/libm.a $(LIBGCC)

ALL_TARGETS += $(LIBC_HOST_BIN)
TEST_SUITES += libc-host=$(LIBC_HOST_BIN)
