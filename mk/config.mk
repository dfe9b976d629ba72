# Toolchain and flags shared by every module makefile.

# The board (boards/NAME/board.mk, chosen by BOARD in the top Makefile): its overrides of
# memlayout.h reach every kernel file through KERNEL_ARCH_FLAGS below.
include boards/$(BOARD)/board.mk

CC       := gcc
LD       := ld
OBJCOPY  := objcopy
GCC_INC  := $(shell $(CC) -print-file-name=include)

# Warnings: the same everywhere; `make check` (and CI) turn them into errors.
WARN     := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wvla
WERROR   ?=
OPT      ?= -O2 -g

# Host programs and host unit tests (Linux user space).
HOST_CFLAGS := -std=gnu11 $(OPT) $(WARN) $(WERROR) -D_GNU_SOURCE

# Kernel code: top 2 GiB (mcmodel=kernel), no red zone (interrupts use the stack),
# frame pointers for backtraces, SSE allowed (newlib passes doubles in SSE registers;
# interrupt entry saves the FPU state), newlib's headers instead of the host's.
KERNEL_ARCH_FLAGS := -m64 -mcmodel=kernel -mno-red-zone -fno-pic -fno-pie \
            -fno-stack-protector -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
            -ffreestanding -fno-builtin-printf -fno-common -fno-asynchronous-unwind-tables \
            -fno-delete-null-pointer-checks -fno-optimize-sibling-calls $(BOARD_DEFS)
