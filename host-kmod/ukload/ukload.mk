# host-kmod/ukload: the unikernel loader module, built like host-kmod/o2g (o2g.mk:
# the same kernel headers, O2G_KVER/O2G_KDIR), and its user tool, static (the test guest
# has no libc). Output: $(B)/kmod/ukload/ukload.ko and $(B)/kmod/ukload/ukload.
# Kbuild writes next to its sources, so the sources are linked into $(B)/kmod/ukload first.
UKLOAD_DIR := $(B)/kmod/ukload
UKLOAD_KO := $(UKLOAD_DIR)/ukload.ko
UKLOAD_TOOL := $(UKLOAD_DIR)/ukload
UKLOAD_SRCS := $(wildcard host-kmod/ukload/ukload_*.c host-kmod/ukload/*.h \
	host-kmod/ukload/*.S) host-kmod/ukload/Kbuild
UKLOAD_KSRCS := $(filter-out host-kmod/ukload/ukload_tool.c,$(UKLOAD_SRCS))

ALL_TARGETS += $(UKLOAD_KO) $(UKLOAD_TOOL)

$(UKLOAD_DIR)/kver.$(O2G_KVER):
	@mkdir -p $(UKLOAD_DIR) && rm -f $(UKLOAD_DIR)/kver.* && touch $@

$(UKLOAD_KO): $(UKLOAD_KSRCS) $(UKLOAD_DIR)/kver.$(O2G_KVER) | deps
	@test -d $(O2G_KDIR) || { echo "ukload: no $(O2G_KDIR) (make deps)" >&2; exit 1; }
	@mkdir -p $(UKLOAD_DIR)
	@for s in $(UKLOAD_KSRCS); do ln -sfn $(CURDIR)/$$s $(UKLOAD_DIR)/$${s#host-kmod/ukload/}; done
	$(MAKE) -s -C $(O2G_KDIR) M=$(abspath $(UKLOAD_DIR)) modules

$(UKLOAD_TOOL): host-kmod/ukload/ukload_tool.c host-kmod/ukload/ukload_uapi.h \
		host-kmod/ukload/ukload_shm.h | deps
	@mkdir -p $(@D)
	gcc -static -O2 -Wall -Wextra -o $@ $<

.PHONY: ukload
ukload: $(UKLOAD_KO) $(UKLOAD_TOOL)
