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
	$(CC) $(KERNEL_CFLAGS) $(LWIP_CFLAGS) -c -o $@ $<

.PHONY: libc-check
libc-check: $(LIBC_CHECK_OBJS)
