# newlib, built twice from Debian's newlib-source by mk/newlib.sh into the cache:
#   kernel flavor: for code linked into the kernel image (-mcmodel=kernel, no red zone);
#   app flavor:    position independent, for static-PIE application images.
# Each lives in $(CACHE)/newlib-<flavor>-<hash of mk/newlib.sh, its flags, gcc's version>,
# so changing any of them builds a fresh copy and an unchanged one is never rebuilt.
#
# Exports: NEWLIB_{K,U}_INC, NEWLIB_{K,U}_LIBDIR (libc.a, libm.a), NEWLIB_{K,U}_STAMP (a
# file rules can depend on), KERNEL_CFLAGS (the flags of every kernel C file), LIBGCC.

NEWLIB_K_CFLAGS := -mcmodel=kernel -mno-red-zone -fno-pic -fno-pie -fno-stack-protector \
                   -ffreestanding -O2 -g
# -mno-red-zone for applications too: they run in ring 0 (docs/architecture.md §3.1), so
# an interrupt does not switch stacks through the TSS; it pushes its frame right below the
# application's rsp, where a red zone would be.
NEWLIB_U_CFLAGS := -fPIE -mno-red-zone -fno-stack-protector -ffreestanding -O2 -g

newlib_hash = $(shell { cat mk/newlib.sh; $(CC) -dumpfullversion; echo '$(1)'; } 2>/dev/null | \
                sha1sum | cut -c1-10)
NEWLIB_K_DIR := $(CACHE)/newlib-kernel-$(call newlib_hash,$(NEWLIB_K_CFLAGS))
NEWLIB_U_DIR := $(CACHE)/newlib-app-$(call newlib_hash,$(NEWLIB_U_CFLAGS))

NEWLIB_K_INC    := $(NEWLIB_K_DIR)/x86_64-elf/include
NEWLIB_K_LIBDIR := $(NEWLIB_K_DIR)/x86_64-elf/lib
NEWLIB_U_INC    := $(NEWLIB_U_DIR)/x86_64-elf/include
NEWLIB_U_LIBDIR := $(NEWLIB_U_DIR)/x86_64-elf/lib
# The script writes FLAGS last before the rename, so its presence means a complete build.
NEWLIB_K_STAMP  := $(NEWLIB_K_DIR)/FLAGS
NEWLIB_U_STAMP  := $(NEWLIB_U_DIR)/FLAGS

# libgcc for the kernel link (soft helpers such as __popcountdi2); built -fPIC by Debian,
# which is harmless in a -mcmodel=kernel image.
LIBGCC := $(shell $(CC) -print-libgcc-file-name)

# Every kernel C file: newlib's headers, then gcc's freestanding ones, never glibc's.
KERNEL_CFLAGS = $(KERNEL_ARCH_FLAGS) -nostdinc -isystem $(NEWLIB_K_INC) -idirafter $(GCC_INC) \
                -Iunikernel/include $(OPT) $(WARN) $(WERROR)

$(NEWLIB_K_STAMP): | deps
	@./mk/newlib.sh kernel $(NEWLIB_K_DIR) '$(NEWLIB_K_CFLAGS)'

$(NEWLIB_U_STAMP): | deps
	@./mk/newlib.sh app $(NEWLIB_U_DIR) '$(NEWLIB_U_CFLAGS)'

.PHONY: newlib
newlib: $(NEWLIB_K_STAMP) $(NEWLIB_U_STAMP)

ALL_TARGETS += newlib

include unikernel/libc/libc.mk
include unikernel/libc/app/app.mk
