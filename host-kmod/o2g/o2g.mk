# host-kmod/o2g: the O2G kernel module, built against Debian's linux-headers of the
# version of the guest kernel (tests/bench/linux-kernel.sh resolves the same version from
# linux-image-amd64; mk/deps.d/60-kmod.sh installs the headers). Output: $(B)/kmod/o2g/.
# Kbuild writes next to its sources, so the sources are linked into $(B)/kmod/o2g first.
O2G_KVER := $(shell apt-cache depends linux-headers-amd64 2>/dev/null | \
	sed -n 's/.*Depends: linux-headers-\([0-9].*\)/\1/p' | head -n1)
O2G_KDIR := /usr/src/linux-headers-$(O2G_KVER)
O2G_DIR := $(B)/kmod/o2g
O2G_KO := $(O2G_DIR)/o2g.ko
O2G_SRCS := $(wildcard host-kmod/o2g/*.c host-kmod/o2g/*.h host-kmod/compat/*.h) \
	host-kmod/o2g/Kbuild mpi/core/match.c mpi/core/match.h mpi/core/mpe_wire.c \
	mpi/core/mpe_wire.h mpi/core/lockfree.h mpi/core/mpe_plat.h

ALL_TARGETS += $(O2G_KO)

# A stamp named after the headers' version: when Debian moves linux-image-amd64 on, the
# new stamp is newer than the module and the module is built again for the new kernel.
$(O2G_DIR)/kver.$(O2G_KVER):
	@mkdir -p $(O2G_DIR) && rm -f $(O2G_DIR)/kver.* && touch $@

$(O2G_KO): $(O2G_SRCS) $(O2G_DIR)/kver.$(O2G_KVER) | deps
	@test -d $(O2G_KDIR) || { echo "o2g: no $(O2G_KDIR) (make deps)" >&2; exit 1; }
	@mkdir -p $(O2G_DIR)
	@for s in host-kmod/o2g/*.c host-kmod/o2g/*.h host-kmod/o2g/Kbuild \
		mpi/core/match.c mpi/core/mpe_wire.c; do \
		d=$(O2G_DIR)/$${s#host-kmod/o2g/}; d=$${d/mpi\/core\//}; \
		ln -sfn $(CURDIR)/$$s $$d; done
	$(MAKE) -s -C $(O2G_KDIR) M=$(abspath $(O2G_DIR)) O2G_CORE=$(CURDIR)/mpi/core \
		KMOD_COMPAT=$(CURDIR)/host-kmod/compat modules

.PHONY: o2g
o2g: $(O2G_KO)
