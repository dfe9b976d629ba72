# Board: Xeon Phi-class many-core node (Knights Landing: up to 72 cores x 4 threads,
# x2APIC with APIC ids above 255, MCDRAM as a second memory node), booted by GRUB/PXE
# through the kernel's Multiboot2 header (build/knl/uk/ukernel-mb.bin, Multiboot1 too)
# or by the host loader module.
#
# Differences from the QEMU board: room for 288 CPUs with APIC ids up to MAX_APIC_ID (KNL
# numbers threads core*4+thread over up to 76 tiles' worth of ids; 1023 leaves room), and
# one partition per hardware thread at the paper's 64 GiB. The local APIC runs in x2APIC
# mode (chosen at boot from CPUID, unikernel/arch/x86_64/lapic.c): under QEMU that takes
# the backports QEMU 10 (qemu/qemu-bpo; qemu/ukboot --board knl picks it). Not booted on
# such hardware by our tests (none here): `make BOARD=knl all` builds it into build/knl/;
# qemu/ukboot --board knl boots it.
# The MPI engine keeps per-CPU state too (mpi/core/mpe_plat.h); mpe_uk.c asserts it fits.
BOARD_DEFS := -DMAX_CPUS=288 -DMPE_MAX_CPUS=288 -DMAX_APIC_ID=1023

# The bootable ISO (GRUB through the kernel's Multiboot header, boards/knl/mkiso.sh): the
# job kernel alone (it runs the demo); a job's ISO adds its initrd (tests/knl/run.sh).
$(B)/uk/ukernel.iso: $(B)/uk/ukernel-mb.bin boards/knl/mkiso.sh | deps
	boards/knl/mkiso.sh $@ $<
ALL_TARGETS += $(B)/uk/ukernel.iso
