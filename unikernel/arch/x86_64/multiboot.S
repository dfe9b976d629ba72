/*
 * multiboot.S: the Multiboot1 and Multiboot2 headers, linked only into ukernel-mb.bin (a
 * flat image for GRUB: `multiboot` or `multiboot2`, and other Multiboot loaders). It is kept out of the PVH ELF on purpose: QEMU's
 * -kernel tries Multiboot before PVH, so a header here would divert QEMU from PVH.
 *
 * Flag 16 ("address fields valid") lets the loader place the flat image without reading
 * ELF headers: load_addr is where the image starts, bss_end_addr where the loader stops
 * zeroing, entry_addr the 32-bit entry in boot.S.
 *
 * Multiboot2 (GRUB's `multiboot2`; what a UEFI machine's GRUB must use: only Multiboot2
 * hands over the ACPI RSDP, which such firmware keeps out of the BIOS areas) says the same
 * with an address tag and an entry tag; the loader enters mb_start with %eax = 0x36d76289,
 * and bootinfo.c tells the two apart by that magic. The header must lie in the first
 * 32 KiB, 8-byte aligned, and so must each of its tags.
 */
#define MB_MAGIC 0x1BADB002
#define MB_FLAGS ((1 << 1) | (1 << 16)) /* memory map, address fields */

    .section .multiboot, "a"
    .p2align 2
mb_header:
    .long MB_MAGIC
    .long MB_FLAGS
    .long -(MB_MAGIC + MB_FLAGS)
    .long mb_header         /* header_addr */
    .long __image_start     /* load_addr */
    .long __load_end_phys   /* load_end_addr */
    .long __bss_end_phys    /* bss_end_addr */
    .long mb_start          /* entry_addr */

#define MB2_MAGIC     0xE85250D6
#define MB2_ARCH_I386 0 /* 32-bit protected mode entry */
#define MB2_TAG_END   0
#define MB2_TAG_ADDR  2
#define MB2_TAG_ENTRY 3

    .p2align 3
mb2_header:
    .long MB2_MAGIC
    .long MB2_ARCH_I386
    .long mb2_header_end - mb2_header
    .long -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    .p2align 3
    .short MB2_TAG_ADDR, 0
    .long 24
    .long mb2_header        /* header_addr */
    .long __image_start     /* load_addr */
    .long __load_end_phys   /* load_end_addr */
    .long __bss_end_phys    /* bss_end_addr */
    .p2align 3
    .short MB2_TAG_ENTRY, 0
    .long 12
    .long mb_start          /* entry_addr */
    .p2align 3
    .short MB2_TAG_END, 0
    .long 8
mb2_header_end:
