# The unikernel images.
#
#   $(B)/uk/ukernel.elf         PVH ELF for `qemu -kernel` (the job kernel)
#   $(B)/uk/ukernel-mb.bin      the same code as a flat Multiboot1 image (GRUB, bare metal)
#   $(B)/uk/ukernel-test.elf    + every tests/uk/*.c (KTEST), run with test=NAME
#   $(B)/uk/ukernel-test-mb.bin its Multiboot1 twin (tests boot both paths)
#
# Each image is linked twice: the first link gives the addresses for the backtrace symbol
# table (mk/gen-ksyms.sh), the second adds the table after the text, which moves nothing.

UK_DIRS := unikernel/arch/x86_64 unikernel/kernel unikernel/drivers unikernel/pvas net/uknet \
           unikernel/mpi mpi/core mpi/cad mpi/impi
UK_SRCS := $(foreach d,$(UK_DIRS),$(wildcard $(d)/*.c $(d)/*.S))
# The NIC driver behind vnet.h: virtio-net over PCI, or the board's own (BOARD_NIC).
UK_NIC_DRIVERS := unikernel/drivers/vnet.c unikernel/drivers/ukvnic.c
BOARD_NIC ?= unikernel/drivers/vnet.c
UK_SRCS := $(filter-out unikernel/arch/x86_64/multiboot.S $(filter-out $(BOARD_NIC),$(UK_NIC_DRIVERS)),\
           $(UK_SRCS)) $(BOARD_SRCS)
UK_TEST_SRCS := $(wildcard tests/uk/*.c tests/knl/*.c)

# newlib's headers come with KERNEL_CFLAGS (mk/newlib.mk); without it, freestanding only.
KERNEL_CFLAGS ?= $(KERNEL_ARCH_FLAGS) -nostdinc -idirafter $(GCC_INC) -Iunikernel/include \
                 $(OPT) $(WARN) $(WERROR)
# MPE_PLAT_INLINE: the engine's per-operation platform calls inline (mpi/core/mpe_plat.h).
UK_CFLAGS := $(KERNEL_CFLAGS) -Iunikernel -Iunikernel/include -Impi/core -Impi/cad -Impi/impi -MMD -MP $(LWIP_INC) \
             '-DMPE_PLAT_INLINE="mpi/mpe_uk_inline.h"'

UK_ASFLAGS := -m64 -Iunikernel -Iunikernel/include -D__ASSEMBLER__ -MMD -MP $(BOARD_DEFS)

UK_OBJ := $(B)/uk/obj
uk_obj = $(patsubst %,$(UK_OBJ)/%.o,$(1))

UK_OBJS := $(call uk_obj,$(UK_SRCS) $(KLIBC_SRCS))
UK_TEST_OBJS := $(call uk_obj,$(UK_TEST_SRCS)) $(B)/uk/apps_blob.o
UK_MB_OBJ := $(call uk_obj,unikernel/arch/x86_64/multiboot.S)
UK_LIBGCC := $(shell $(CC) -print-libgcc-file-name)
UK_LIBS = $(if $(NEWLIB_K_LIBDIR),-L$(NEWLIB_K_LIBDIR) -lc -lm) $(UK_LIBGCC)
# BOARD_LDFLAGS before -T: the script's DEFINED() sees only symbols defined ahead of it.
UK_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack $(BOARD_LDFLAGS) \
              -T linker/kernel.ld

$(UK_OBJ)/%.c.o: %.c mk/config.mk | deps $(NEWLIB_K_STAMP) $(LWIP_SRC_STAMP)
	@mkdir -p $(@D)
	$(CC) $(UK_CFLAGS) -c $< -o $@

$(UK_OBJ)/%.S.o: %.S mk/config.mk | deps
	@mkdir -p $(@D)
	$(CC) $(UK_ASFLAGS) -c $< -o $@

-include $(shell find $(UK_OBJ) -name '*.d' 2>/dev/null)

# $(call uk_image,name,objects,extra libraries)
define uk_image
$(B)/uk/$(1).pass1.elf: $(2) linker/kernel.ld $(3)
	$(LD) $(UK_LDFLAGS) -o $$@ $(2) --start-group $(3) $$(UK_LIBS) --end-group
$(B)/uk/$(1).ksyms.S: $(B)/uk/$(1).pass1.elf mk/gen-ksyms.sh
	mk/gen-ksyms.sh $$< $$@
$(B)/uk/$(1).ksyms.o: $(B)/uk/$(1).ksyms.S
	$(CC) $(UK_ASFLAGS) -c $$< -o $$@
$(B)/uk/$(1).elf: $(B)/uk/$(1).pass1.elf $(B)/uk/$(1).ksyms.o
	$(LD) $(UK_LDFLAGS) -o $$@ $(2) $(B)/uk/$(1).ksyms.o --start-group $(3) $$(UK_LIBS) --end-group
	@cmp -s <(nm $(B)/uk/$(1).pass1.elf | grep ' [tT] ' | sort) \
	        <(nm $$@ | grep ' [tT] ' | sort) || { echo "$$@: text moved between links"; exit 1; }
$(B)/uk/$(1)-mb.elf: $(B)/uk/$(1).pass1.elf $(B)/uk/$(1).ksyms.o $(UK_MB_OBJ)
	$(LD) $(UK_LDFLAGS) -o $$@ $(UK_MB_OBJ) $(2) $(B)/uk/$(1).ksyms.o --start-group $(3) $$(UK_LIBS) --end-group
$(B)/uk/$(1)-mb.bin: $(B)/uk/$(1)-mb.elf
	$(OBJCOPY) -O binary $$< $$@
endef

$(eval $(call uk_image,ukernel,$(UK_OBJS),$(LWIP_LIB)))
$(eval $(call uk_image,ukernel-test,$(UK_OBJS) $(UK_TEST_OBJS),$(LWIP_LIB)))

ALL_TARGETS += $(B)/uk/ukernel.elf $(B)/uk/ukernel-mb.bin $(B)/uk/ukernel-test.elf \
               $(B)/uk/ukernel-test-mb.bin

# libFuzzer targets of what the kernel reads from the initrd, compiled on the host (clang +
# libclang-rt-14-dev) from the kernel's own files; tests/fuzz/run.sh runs them, seeded by
# tests/fuzz/pvas_images.c: the image validator (pure parsing: pvas_image_check.c,
# pvas_symbols.c) and the cpio reader. UBSan findings are fatal (misaligned reads too).
PVAS_CHECK_SRCS := unikernel/pvas/pvas_image_check.c unikernel/pvas/pvas_symbols.c \
                   unikernel/kernel/fmt.c
PVAS_CHECK_HDRS := $(wildcard unikernel/pvas/*.h) unikernel/kernel/range.h \
                   unikernel/kernel/fmt.h unikernel/include/memlayout.h
FUZZ_KFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
               -Iunikernel -Iunikernel/include
$(B)/fuzz/pvas_fuzz_image: tests/fuzz/pvas_fuzz_image.c $(PVAS_CHECK_SRCS) $(PVAS_CHECK_HDRS) | deps
	@mkdir -p $(@D)
	clang $(FUZZ_KFLAGS) -o $@ $< $(PVAS_CHECK_SRCS)
$(B)/fuzz/cpio_fuzz: tests/fuzz/cpio_fuzz.c unikernel/kernel/cpio.c unikernel/kernel/cpio.h \
                     unikernel/kernel/range.h | deps
	@mkdir -p $(@D)
	clang $(FUZZ_KFLAGS) -o $@ $< unikernel/kernel/cpio.c

ALL_TARGETS += $(B)/fuzz/pvas_fuzz_image $(B)/fuzz/cpio_fuzz
