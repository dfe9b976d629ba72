# Board: QEMU/TCG (the default). `make BOARD=knl` picks boards/knl/ instead.
#
# What differs between boards is set here and nowhere else:
#   BOARD_DEFS   preprocessor overrides of memlayout.h (PART_SIZE, MAX_CPUS, ...)
#
# QEMU guests here have 512 MiB to a few GiB: the paper's 64 GiB partitions still fit the
# 128 TiB lower half (256 partitions = 16 TiB of address space, none of it committed until
# used), so the default layout stays. xAPIC only: QEMU 7.2's TCG has no x2APIC.
BOARD_DEFS :=
