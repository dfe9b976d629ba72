# Board: Xeon Phi-class many-core node (Knights Landing: up to 72 cores x 4 threads,
# x2APIC with APIC ids above 255, MCDRAM as a second memory node), booted by GRUB/PXE
# through the Multiboot1 image (build/uk/ukernel-mb.bin) or by the host loader module.
#
# Differences from the QEMU board: room for 288 CPUs, and one partition per hardware
# thread at the paper's 64 GiB. Not booted on such hardware by our tests (none here):
# `make BOARD=knl all` builds it into build/knl/; it boots under QEMU as well
# (qemu/ukboot --machine q35 --smp 4 build/knl/uk/ukernel.elf).
# The MPI engine keeps per-CPU state too (mpi/core/mpe_plat.h); mpe_uk.c asserts it fits.
BOARD_DEFS := -DMAX_CPUS=288 -DMPE_MAX_CPUS=288
