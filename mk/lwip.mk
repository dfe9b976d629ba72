# lwIP 2.1.3 from Debian's source package, unpacked into the cache by `make deps`
# (mk/deps.d/10-newlib-lwip.sh); nothing of lwIP is copied into this repository.
# Compiled with the kernel's flags and our port (net/lwip-port/) into one archive.
#
# Exports: LWIP_DIR (the unpacked source), LWIP_INC (the -I flags for code calling lwIP),
# LWIP_CFLAGS (= LWIP_INC, for kernel code including lwIP headers), LWIP_LIB (the archive).

LWIP_DIR   := $(CACHE)/src/lwip
LWIP_INC   := -Inet/lwip-port/include -I$(LWIP_DIR)/src/include
LWIP_CFLAGS = $(LWIP_INC)
LWIP_LIB   := $(B)/lwip/liblwip.a
LWIP_STAMP := $(LWIP_DIR)/.unpacked
LWIP_SRC_STAMP := $(LWIP_STAMP)
LWIP_PORT_HDRS := $(wildcard net/lwip-port/include/*.h net/lwip-port/include/arch/*.h)

# Core, IPv4, TCP/UDP, Ethernet (file names of lwIP 2.1.3).
LWIP_CORE_SRCS := init.c def.c dns.c inet_chksum.c ip.c mem.c memp.c netif.c pbuf.c raw.c \
                  stats.c sys.c tcp.c tcp_in.c tcp_out.c timeouts.c udp.c
LWIP_IPV4_SRCS := autoip.c dhcp.c etharp.c icmp.c igmp.c ip4.c ip4_addr.c ip4_frag.c
LWIP_SRCS := $(addprefix core/,$(LWIP_CORE_SRCS)) $(addprefix core/ipv4/,$(LWIP_IPV4_SRCS)) \
             netif/ethernet.c

# lwIP's own code is not written for our -Wshadow/-Wmissing-prototypes set and is not ours
# to fix; the port is held to the full warning set (LWIP_PORT_OBJS below).
LWIP_THIRD_PARTY_CFLAGS := -w

LWIP_OBJS := $(patsubst %.c,$(B)/lwip/src/%.o,$(LWIP_SRCS))
LWIP_PORT_OBJS := $(B)/lwip/port/lwip_port.o $(B)/lwip/port/lwip_chksum.o

$(B)/lwip/src/%.o: $(LWIP_STAMP) $(LWIP_PORT_HDRS) | $(NEWLIB_K_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(KERNEL_CFLAGS) $(LWIP_THIRD_PARTY_CFLAGS) $(LWIP_INC) -c -o $@ $(LWIP_DIR)/src/$*.c

# The port includes the kernel's headers too (uk/cpu.h's inline cpu_id): -MMD tracks them
# (and the uk/ list, for a build tree from before the .d files).
$(B)/lwip/port/%.o: net/lwip-port/%.c $(LWIP_PORT_HDRS) $(wildcard unikernel/include/uk/*.h) \
                    | $(LWIP_STAMP) $(NEWLIB_K_STAMP) deps
	@mkdir -p $(@D)
	$(CC) $(KERNEL_CFLAGS) $(LWIP_INC) -MMD -MP -c -o $@ $<
-include $(LWIP_PORT_OBJS:.o=.d)

$(LWIP_LIB): $(LWIP_OBJS) $(LWIP_PORT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# `make deps` creates it; the rule only gives make something to wait for.
$(LWIP_STAMP): | deps

ALL_TARGETS += $(LWIP_LIB)

# ---- Host test: the same lwipopts.h and lwIP sources, the host port, a TCP echo over
# the loopback netif (tests/unit/lwip/). A suite of its own: lwIP is not linked into the
# main unit runner.
LWIP_HOST_BIN := $(B)/lwip-host/lwip-host-tests
LWIP_HOST_FLAGS := -std=gnu11 $(OPT) -D_GNU_SOURCE -DLWIP_PORT_HOST \
                   -fsanitize=address,undefined -fno-omit-frame-pointer
LWIP_HOST_OBJS := $(patsubst %.c,$(B)/lwip-host/src/%.o,$(LWIP_SRCS))
LWIP_HOST_TEST_SRCS := tests/unit/ut_main.c net/lwip-port/lwip_port_host.c \
                       net/lwip-port/lwip_chksum.c $(wildcard tests/unit/lwip/*.c) \
                       tests/uk/lwip_echo_core.c

$(B)/lwip-host/src/%.o: $(LWIP_STAMP) $(LWIP_PORT_HDRS) | deps
	@mkdir -p $(@D)
	$(CC) $(LWIP_HOST_FLAGS) -w $(LWIP_INC) -c -o $@ $(LWIP_DIR)/src/$*.c

$(LWIP_HOST_BIN): $(LWIP_HOST_OBJS) $(LWIP_HOST_TEST_SRCS) $(wildcard tests/uk/lwip_echo*.h) \
                  tests/unit/ut.h | deps
	@mkdir -p $(@D)
	$(CC) $(LWIP_HOST_FLAGS) $(WARN) -Wno-clobbered $(WERROR) -Itests/unit -Itests/uk $(LWIP_INC) -o $@ \
	    $(LWIP_HOST_TEST_SRCS) $(LWIP_HOST_OBJS)

ALL_TARGETS += $(LWIP_HOST_BIN)
TEST_SUITES += lwip-host=$(LWIP_HOST_BIN)
