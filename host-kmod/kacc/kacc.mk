# host-kmod/kacc: the KACC kernel module, built like host-kmod/o2g (o2g.mk: the
# same kernel headers, O2G_KVER/O2G_KDIR). Output: $(B)/kmod/kacc/kacc.ko.
# Kbuild writes next to its sources, so the sources are linked into $(B)/kmod/kacc first.
KACC_DIR := $(B)/kmod/kacc
KACC_KO := $(KACC_DIR)/kacc.ko
KACC_CAD_SRCS := mpi/cad/cad_validate.c mpi/cad/cad_exec.c mpi/cad/cad_calc.c \
	mpi/cad/cad_err.c mpi/cad/cad_types.c mpi/cad/cad_build.c
KACC_SRCS := $(wildcard host-kmod/kacc/*.c host-kmod/kacc/*.h host-kmod/compat/*.h) \
	host-kmod/kacc/Kbuild $(KACC_CAD_SRCS) mpi/cad/cad.h mpi/cad/cad_internal.h \
	mpi/core/mpe_wire.c mpi/core/mpe_wire.h host-kmod/o2g/o2g_kern.h

ALL_TARGETS += $(KACC_KO)

$(KACC_DIR)/kver.$(O2G_KVER):
	@mkdir -p $(KACC_DIR) && rm -f $(KACC_DIR)/kver.* && touch $@

# kacc.ko imports o2g.ko's symbols: o2g is built first, its Module.symvers given.
$(KACC_KO): $(KACC_SRCS) $(KACC_DIR)/kver.$(O2G_KVER) $(O2G_KO) | deps
	@test -d $(O2G_KDIR) || { echo "kacc: no $(O2G_KDIR) (make deps)" >&2; exit 1; }
	@mkdir -p $(KACC_DIR)
	@for s in host-kmod/kacc/*.c host-kmod/kacc/*.h host-kmod/kacc/Kbuild \
		$(KACC_CAD_SRCS) mpi/core/mpe_wire.c; do \
		d=$(KACC_DIR)/$${s#host-kmod/kacc/}; d=$${d/mpi\/cad\//}; d=$${d/mpi\/core\//}; \
		ln -sfn $(CURDIR)/$$s $$d; done
	$(MAKE) -s -C $(O2G_KDIR) M=$(abspath $(KACC_DIR)) KACC_CAD=$(CURDIR)/mpi/cad \
		KACC_CORE=$(CURDIR)/mpi/core KACC_O2G=$(CURDIR)/host-kmod/o2g \
		KBUILD_EXTRA_SYMBOLS=$(abspath $(O2G_DIR))/Module.symvers \
		KMOD_COMPAT=$(CURDIR)/host-kmod/compat modules

.PHONY: kacc
kacc: $(KACC_KO)
