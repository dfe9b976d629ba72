#!/usr/bin/env bash
# boards/knl/mkiso.sh OUT.iso KERNEL [INITRD] [-- KERNEL ARGUMENTS...]: a BIOS-bootable ISO
# (grub-mkrescue: grub-pc-bin, xorriso; mk/deps.d/56-grub-iso.sh) whose GRUB loads KERNEL
# through its Multiboot2 header (build/knl/uk/ukernel-mb.bin, or any *-mb.bin; with
# MKISO_MULTIBOOT=1 through its Multiboot1 header instead), with
# INITRD (a job's initrd, as qemu/ukrun packs it) as its module, without a menu: what a
# KNL node's GRUB (or PXE-chained GRUB) does. qemu/ukboot boots an .iso through the
# machine's firmware (-cdrom), not -kernel.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1 kernel=$2 initrd=
shift 2
if [ $# -gt 0 ] && [ "$1" != -- ]; then initrd=$1; shift; fi
[ "${1:-}" = -- ] && shift
cmdline="$*"
# GRUB's commands for the two protocols: Multiboot2 by default (it hands over the RSDP).
load=multiboot2 mod=module2
[ "${MKISO_MULTIBOOT:-2}" = 1 ] && load=multiboot mod=module
[ -f "$kernel" ] || { echo "mkiso: no kernel $kernel" >&2; exit 2; }
[ -z "$initrd" ] || [ -f "$initrd" ] || { echo "mkiso: no initrd $initrd" >&2; exit 2; }
command -v grub-mkrescue >/dev/null || { echo "mkiso: grub-mkrescue missing: make deps" >&2; exit 2; }

tree=$(mktemp -d) log=$(mktemp) # the log outside the tree: it would go into the ISO
trap 'rm -rf "$tree" "$log"' EXIT
mkdir -p "$tree/boot/grub"
cp "$kernel" "$tree/boot/ukernel"
[ -z "$initrd" ] || cp "$initrd" "$tree/boot/initrd"
# No menu, no wait: the machine boots the kernel at once. GRUB writes to the VGA console
# only (none under -nographic), so the serial line carries the kernel's output alone.
{
    echo "set timeout=0"
    echo "set default=0"
    echo "menuentry ukmpi {"
    echo "    $load /boot/ukernel $cmdline"
    [ -z "$initrd" ] || echo "    $mod /boot/initrd initrd"
    echo "    boot"
    echo "}"
} >"$tree/boot/grub/grub.cfg"
# Only the BIOS platform (i386-pc): a KNL node's firmware boots legacy GRUB as well, and
# grub-mkrescue adds EFI only where grub-efi's modules are installed (not here).
grub-mkrescue -o "$out" "$tree" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
