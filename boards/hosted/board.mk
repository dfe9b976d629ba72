# Board: hosted, the unikernel booted by host-kmod/ukload on CPUs and memory that a running
# Linux keeps for it (Linux booted with maxcpus=N and memmap=SIZE$HOSTED_BASE; see
# host-kmod/ukload/ukload_shm.h for the range's layout). `make BOARD=hosted` builds it into
# build/hosted/.
#
# Differences from the QEMU board: the image is linked at HOSTED_BASE + UKL_KERNEL_OFF
# inside the reserved range, not at 1 MiB (Linux owns low memory); no PIC, PIT, CMOS,
# I/O APIC, UART, ACPI or PCI (they are Linux's): the CPU count and TSC rate come from
# the command line (boards/hosted/hosted.c), the console and the exit code go through
# shared memory, and the NIC is a pair of rings to Linux's ukvnic0 (ukvnic.c). The local APIC
# switches to x2APIC whenever CPUID offers it (lapic.c), even where Linux runs xAPIC: mixed
# modes worked once under TCG (QEMU 10 without interrupt remapping), untested on hardware.
# Hazard: HOSTED_BASE must equal ukload.ko's phys_base parameter (the module refuses an
# ELF whose segments lie outside its range) and lie below 2 GiB (the boot page tables
# alias only 0..2 GiB at KERNEL_VIRT_BASE, unikernel/arch/x86_64/boot.S).
# The other CPUs start through HOSTED_TRAMP, the page ukload.ko started the first one
# through (its tramp_phys parameter, default 0x70000): the loader is done with it by then,
# and the loader's memory map hands it to us (smp.c reaches it through the direct map).
# Hazard: the direct map rounds that page out to 2 MiB, so Linux's first 2 MiB are mapped
# (never touched); and until vmm_init() the boot page tables map 0..4 GiB 1:1. Nothing but
# the kernel's own correctness keeps it off Linux's memory: there is no hypervisor.
HOSTED_BASE := 0x20000000
HOSTED_KERNEL := 0x20200000
HOSTED_TRAMP := 0x70000
BOARD_DEFS := -DBOARD_HOSTED -DHOSTED_BASE=$(HOSTED_BASE) -DKERNEL_PHYS_BASE=$(HOSTED_KERNEL) \
              -DAP_TRAMPOLINE_PHYS=$(HOSTED_TRAMP) -Iboards/hosted -Ihost-kmod/ukload
BOARD_SRCS := boards/hosted/hosted.c
# The NIC: the shared-memory rings to Linux's ukvnic0 (ukload_shm.h), not virtio-net.
BOARD_NIC := unikernel/drivers/ukvnic.c
BOARD_LDFLAGS := --defsym=UK_PHYS_BASE=$(HOSTED_KERNEL)
