# The knl board's bootable ISO (boards/knl/mkiso.sh): GRUB for BIOS (grub-pc-bin: the
# i386-pc modules and grub-mkrescue; not grub-pc, which would manage the host's own boot
# loader) and xorriso, which grub-mkrescue writes the ISO with. The kernel boots from it
# through its Multiboot header, as on a real machine's GRUB.
PKGS+=(grub-pc-bin grub-common xorriso)
